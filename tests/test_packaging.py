"""What ships where: the core alone in the server, the client with it from PyPI's point of
view, one version everywhere, and imports that go one way."""

import json
import os
import re
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest

import siselect

ROOT = Path(__file__).resolve().parent.parent
CLIENT_ONLY = {"psycopg", "matplotlib", "jinja2"}


def _project(path: Path) -> dict:
    return tomllib.loads(path.read_text())["project"]


def test_one_version_everywhere():
    control = (ROOT / "extension" / "siselect.control").read_text()
    assert re.search(r"default_version = '([^']+)'", control)[1] == siselect.__version__
    meta = json.loads((ROOT / "META.json").read_text())
    assert meta["provides"]["siselect"]["version"] == siselect.__version__
    # The SQL functions pass the version they were written for; the newest script, this one.
    chain = re.search(r"^CHAIN\s*=\s*(.*)$", (ROOT / "Makefile").read_text(), re.M)[1].split()
    assert chain[-1].endswith(f"--{siselect.__version__}.sql")
    assert f'"{siselect.__version__}"' in (ROOT / chain[-1]).read_text()


def test_the_core_distribution_is_the_client_minus_the_client():
    core, client = _project(ROOT / "plpy" / "pyproject.toml"), _project(ROOT / "pyproject.toml")
    assert core["dependencies"] == client["dependencies"][: len(core["dependencies"])]
    names = {re.split(r"[<>=\[ ]", d)[0].lower() for d in core["dependencies"]}
    assert not names & CLIENT_ONLY
    assert {re.split(r"[<>=\[ ]", d)[0].lower() for d in client["dependencies"]} >= CLIENT_ONLY


def test_the_servers_python_folder_holds_no_client(conn):
    """What `make install` put into the server: siselect's core and its dependencies."""
    boot = conn.execute(
        "SELECT prosrc FROM pg_proc WHERE proname = 'version' "
        "AND pronamespace = 'siselect'::regnamespace"
    ).fetchone()[0]
    folder = Path(re.search(r'"(/[^"]+/python-[^"]+)"', boot)[1])
    top = {p.name.lower() for p in folder.iterdir()}
    assert "siselect" in top and "sqlglot" in top and "pglast" in top
    assert not {t for t in top if t.split("-")[0] in CLIENT_ONLY}, sorted(top)
    assert not (folder / "siselect" / "client").exists()
    modules = sorted(str(p.relative_to(folder)) for p in (folder / "siselect").rglob("*.py"))
    assert modules and not [m for m in modules if "client" in m.split(os.sep)]


def test_imports_go_one_way():
    run = subprocess.run(
        [sys.executable, "-c",
         "import sys; from importlinter.cli import lint_imports_command; "
         "sys.exit(lint_imports_command())", "--no-cache"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT / "plpy")},
        capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:]
    assert "2 kept, 0 broken" in run.stdout


@pytest.mark.skipif(os.environ.get("SISELECT_SKIP_VENV") == "1",
                    reason="SISELECT_SKIP_VENV=1: no fresh virtual environment")
def test_pip_install_gives_a_working_cli(tmp_path):
    """In a fresh virtual environment (dependencies from the package registry)."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         str(ROOT)], capture_output=True, text=True, timeout=900,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    helped = subprocess.run([str(env_dir / "bin" / "siselect"), "--help"],
                            capture_output=True, text=True, timeout=120)
    assert helped.returncode == 0, helped.stderr
    assert "tournament" in helped.stdout and "separate" in helped.stdout
