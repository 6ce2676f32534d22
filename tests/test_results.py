"""The result contract: the published JSON Schemas are the types' own, serialise refuses a
result that breaks them, and typed results go to JSON and back unchanged."""

import json

import jsonschema
import pytest

from conftest import FIXTURES, ROOT, schema_valid
from siselect.client import schemas
from siselect.client.bench import metrics
from siselect.client.bench.record import BenchSummary
from siselect.runtime.results import (
    SCHEMA_VERSION,
    ResultShapeError,
    SeparationResult,
    TournamentResult,
    as_dict,
    from_dict,
    serialise,
    to_json,
)

GOLDEN = FIXTURES / "golden"


@pytest.mark.parametrize("name", sorted(schemas.schemas()))
def test_committed_schema_is_what_the_types_generate(name):
    committed = (ROOT / "docs" / "schema" / name).read_text(encoding="utf-8")
    assert committed == schemas.render(schemas.schemas()[name]), (
        f"docs/schema/{name} is stale: run PYTHONPATH=plpy python3 -m siselect.client.schemas"
    )
    jsonschema.Draft202012Validator.check_schema(json.loads(committed))


def test_generator_writes_every_kind(tmp_path):
    written = schemas.main([str(tmp_path)])
    assert written == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"{kind}.schema.json" for kind in schemas.KINDS)


def golden(name):
    """A recorded result with the timings the recording left out put back."""
    result = json.loads((GOLDEN / f"{name}.json").read_text()) | {"timings": {"total": 0.1}}
    for duel in result.get("duels", []):
        duel["timings"] = {"total": 0.1}
    return result


def test_serialise_stamps_the_version():
    result = serialise(SeparationResult, golden("separate_0"))
    assert result["schema_version"] == SCHEMA_VERSION == "0.2.0"
    schema_valid("separation", result)


def test_serialise_refuses_an_unknown_field_and_a_missing_one():
    result = golden("separate_0") | {"instnace": {}}
    del result["tries"]
    with pytest.raises(ResultShapeError) as caught:
        serialise(SeparationResult, result)
    assert caught.value.sqlstate == "XX000"
    assert "SeparationResult.instnace: unknown field" in caught.value.message
    assert "SeparationResult.tries: missing" in caught.value.message


def test_serialise_checks_nested_records():
    result = golden("tournament")
    result["duels"][0]["judge"]["vote"] = []
    with pytest.raises(ResultShapeError, match=r"duels\[0\]\.judge\.vote: unknown field"):
        serialise(TournamentResult, result)


def test_schema_refuses_what_the_contract_forbids():
    bad = serialise(SeparationResult, golden("separate_0")) | {"status": "maybe"}
    with pytest.raises(jsonschema.ValidationError):
        schema_valid("separation", bad)


@pytest.mark.parametrize(("cls", "name"), [(SeparationResult, "separate_2"),
                                           (TournamentResult, "tournament")])
def test_typed_results_round_trip(cls, name):
    data = serialise(cls, golden(name))
    typed = from_dict(cls, data)
    assert isinstance(typed, cls)
    assert as_dict(typed) == data
    assert json.loads(to_json(typed)) == data


def test_typed_fields_are_nested_types():
    typed = from_dict(TournamentResult, serialise(TournamentResult, golden("tournament")))
    assert typed.winner is not None and typed.winner.index == 0
    assert typed.duels[0].judge.rows == [[0]]
    assert typed.groups[0].members == [0, 1, 2]
    # A field a result may leave out stays out, rather than turning into a null.
    assert "reason" not in as_dict(typed)


def test_bench_summary_golden_fits_its_type():
    summary = json.loads((GOLDEN / "bench_summary.json").read_text()) | {
        "pair_seconds": {"median": 0.1, "p95": 0.2},
        "task_seconds": {"median": 0.1, "p95": 0.2}, "elapsed_seconds": 1.0}
    schema_valid("bench_summary", serialise(BenchSummary, summary))


def test_separation_rate_counts_every_pair():
    statuses = ["separated", "separated", "failed", "timeout", "nondeterministic", "error"]
    assert metrics.separation_rate(statuses) == pytest.approx(2 / 6)
    assert metrics.separation_rate(statuses, 3) == 0.333
    assert metrics.separation_rate([]) is None


def test_accuracy_and_spread():
    assert metrics.accuracy([True, False, True, True], 6) == 0.75
    assert metrics.accuracy([]) is None
    assert metrics.spread([1, 2, 3, 4, 100]) == {"median": 3, "p95": pytest.approx(80.8),
                                                  "max": 100}
    assert metrics.spread([], ("median", "p95")) == {"median": None, "p95": None}
