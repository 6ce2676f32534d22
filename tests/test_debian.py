"""The Debian package's sources agree with the tree. Building, installing, upgrading and
removing the package is scripts/package_test.sh's job (.ci/run, after make test): it
replaces the server's files, so it cannot run among these tests."""

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

import siselect

ROOT = Path(__file__).resolve().parent.parent
DEBIAN = ROOT / "debian"


def test_the_package_version_is_the_extensions():
    newest = (DEBIAN / "changelog").read_text().splitlines()[0]
    assert re.match(r"siselect \(([^)]+)\)", newest)[1] == siselect.__version__


def test_copyright_covers_every_direct_dependency_of_the_core():
    """Their own dependencies are checked on the built package (scripts/package_test.sh)."""
    copyright_text = (DEBIAN / "copyright").read_text()
    core = tomllib.loads((ROOT / "plpy" / "pyproject.toml").read_text())["project"]
    for requirement in core["dependencies"]:
        name = re.split(r"[<>=\[ ;]", requirement)[0].lower().replace("-", "_")
        assert f"build/python/{name}-*.dist-info/*" in copyright_text, name


def _release_0_1_0() -> str:
    script = (ROOT / "scripts" / "build_deb.sh").read_text()
    return re.search(r"^release_0_1_0=([0-9a-f]{40})$", script, re.M)[1]


def _at(commit: str, path: str) -> str:
    run = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{path}"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        pytest.skip(f"commit {commit} is not in this clone: {run.stderr.strip()}")
    return run.stdout


def test_the_0_1_0_package_is_built_from_the_0_1_0_release():
    commit = _release_0_1_0()
    assert '__version__ = "0.1.0"' in _at(commit, "plpy/siselect/__init__.py")
    assert "default_version = '0.1.0'" in _at(commit, "extension/siselect.control")
    # The script kept in the tree is the one that shipped.
    kept = (ROOT / "sql" / "siselect--0.1.0.sql").read_text()
    assert _at(commit, "sql/siselect--0.1.0.sql") == kept
