"""META.json, for publishing on PGXN, against a JSON Schema written from the PGXN Meta
Spec 1.0.0 (tests/fixtures/pgxn/), and against the repository it describes."""

import copy
import json
import re
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parent.parent
META = json.loads((ROOT / "META.json").read_text())
SCHEMA = json.loads((ROOT / "tests" / "fixtures" / "pgxn" / "meta-1.0.0.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(
    SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def control(extension: str) -> dict[str, str]:
    text = (ROOT / "extension" / f"{extension}.control").read_text()
    return dict(re.findall(r"^(\w+)\s*=\s*'?([^'\n]*)'?\s*$", text, re.M))


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_meta_json_follows_the_pgxn_meta_spec():
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
              for e in VALIDATOR.iter_errors(META)]
    assert errors == []


def _without(key):
    def change(meta):
        del meta[key]
    return change


def _set(path, value):
    def change(meta):
        *parents, last = path
        target = meta
        for p in parents:
            target = target[p]
        target[last] = value
    return change


# Each of these breaks one rule of the spec: the schema must refuse every one.
BROKEN = {
    "no license": _without("license"),
    "no provides": _without("provides"),
    "no meta-spec": _without("meta-spec"),
    "a name with a slash": _set(["name"], "si/select"),
    "a one-character name": _set(["name"], "s"),
    "a version that is not SemVer": _set(["version"], "0.2"),
    "a leading zero in a version": _set(["version"], "0.02.0"),
    "an unknown license": _set(["license"], "wtfpl"),
    "a provided extension without a file": _set(["provides", "siselect"], {"version": "0.2.0"}),
    "a file outside the distribution": _set(["provides", "siselect", "file"], "../x.sql"),
    "an unknown prereq phase": _set(["prereqs", "install"], {"requires": {"pgtap": "0"}}),
    "an unknown relationship": _set(["prereqs", "runtime", "needs"], {"pgtap": "0"}),
    "a bad version range": _set(["prereqs", "runtime", "requires", "PostgreSQL"], "~15"),
    "an unknown release status": _set(["release_status"], "beta"),
    "an unknown top-level key": _set(["homepage"], "https://example.org"),
    "a meta-spec of another major version": _set(["meta-spec", "version"], "2.0.0"),
}


@pytest.mark.parametrize("why", sorted(BROKEN))
def test_the_schema_refuses_what_the_spec_forbids(why):
    meta = copy.deepcopy(META)
    BROKEN[why](meta)
    assert not VALIDATOR.is_valid(meta)


@pytest.mark.parametrize("allowed", [
    {"license": ["mit", "postgresql"]},
    {"license": {"MIT": "https://opensource.org/licenses/MIT"}},
    {"maintainer": ["a <a@example.org>", "b <b@example.org>"]},
    {"x_siselect": {"anything": True}},
    {"version": "1.0.0-beta1"},
])
def test_the_schema_accepts_what_the_spec_allows(allowed):
    assert VALIDATOR.is_valid({**META, **allowed})


def test_the_distribution_version_is_siselects():
    import siselect  # the Python distributions take their version from it (pyproject)

    assert META["version"] == control("siselect")["default_version"] == siselect.__version__


@pytest.mark.parametrize("name", sorted(META["provides"]))
def test_each_provided_extension_has_its_control_files_version_and_its_files(name):
    provided = META["provides"][name]
    assert provided["version"] == control(name)["default_version"]
    for key in ("file", "docfile"):
        if key in provided:
            assert (ROOT / provided[key]).is_file(), f"{name}: {key} {provided[key]} is missing"


def test_every_extension_in_the_tree_is_provided():
    controls = {p.stem for p in (ROOT / "extension").glob("*.control")}
    assert controls == set(META["provides"])


@pytest.mark.parametrize("name", sorted(META["provides"]))
def test_the_extensions_a_control_file_requires_are_prerequisites(name):
    runtime = META["prereqs"]["runtime"]
    named = set(runtime.get("requires", {})) | set(runtime.get("recommends", {}))
    required = {r.strip() for r in control(name).get("requires", "").split(",") if r.strip()}
    # siselect_tap's requirements include siselect itself, which this distribution provides.
    assert required - set(META["provides"]) <= named


def test_no_index_names_directories_that_exist():
    for directory in META["no_index"]["directory"]:
        assert (ROOT / directory).is_dir(), directory
