"""Tournaments on superhero with the reference and the absent judge."""

import pytest

from conftest import schema_valid, untimed
from siselect.instances.separate import Options
from siselect.runtime.catalog import load_catalog
from siselect.runtime.errors import InvalidInput
from siselect.selection import tournament
from siselect.selection.judges import NoJudge, ReferenceJudge
from siselect.selection.report import markdown_report
from siselect.selection.rules import Rules
from siselect.sqltext.transpile import to_tree

QUESTION = "How many superheroes are taller than 200 cm?"
RIGHT = "SELECT COUNT(*) FROM superhero WHERE height_cm > 200"
WRONG_BOUNDARY = "SELECT COUNT(*) FROM superhero WHERE height_cm >= 198"
WRONG_ALL = "SELECT COUNT(*) FROM superhero"
CANDIDATES = [WRONG_BOUNDARY, RIGHT, WRONG_ALL, RIGHT.replace("200", "200.0")]


def run_tournament(*args, **kwargs):
    """Every tournament these tests run, checked against the published JSON Schema."""
    return schema_valid("tournament", tournament.run_tournament(*args, **kwargs))


def reference(executor):
    catalog = load_catalog(executor)
    return ReferenceJudge(to_tree(RIGHT, "postgres", catalog))


def test_reference_judge_picks_the_right_candidate(executor):
    result = run_tournament(executor, CANDIDATES, QUESTION, None, reference(executor), Options(),
                            rules=Rules(scoring="points", schedule="round-robin"))
    assert result["winner"]["index"] == 1
    assert result["winner"]["sql"] == RIGHT
    sizes = sorted(g["size"] for g in result["groups"])
    assert sizes == [1, 1, 2]
    assert len(result["duels"]) == 3
    right_group = next(g for g in result["groups"] if 1 in g["members"])
    assert right_group["score"] == 2.0
    for duel in result["duels"]:
        if duel["verdict"] != "draw":
            assert duel["instance"] and duel["judge"]["rows"] is not None


def test_a_search_that_used_its_budget_still_has_its_instance_judged(executor, monkeypatch):
    """The budget bounds a pair's search; the members and the judge run on the D' it found
    even when the search used the budget up (yardstick european_football_2 1032 under a
    busy machine: the reference judge's run on D' raised 57014 and ended the tournament)."""
    import time

    searched = tournament.separate_pair

    def spent(pair, *args, **kwargs):
        found = searched(pair, *args, **kwargs)
        pair.deadline = time.monotonic() - 1.0
        return found

    monkeypatch.setattr(tournament, "separate_pair", spent)
    result = run_tournament(executor, CANDIDATES, QUESTION, None, reference(executor), Options())
    assert result["winner"]["index"] == 1
    assert all(d["verdict"] != "draw" for d in result["duels"])


def test_no_judge_draws_and_falls_back_on_consistency(executor):
    result = run_tournament(executor, CANDIDATES, QUESTION, None, NoJudge(), Options())
    assert all(d["verdict"] == "draw" for d in result["duels"])
    assert result["winner"]["index"] == 1  # the group of size two
    assert result["decided_by"].startswith("consistency")
    assert any(d.get("instance") for d in result["duels"]), "D' is shown even without a judge"


def test_failing_candidates_drop_out_with_their_reason(executor):
    result = run_tournament(
        executor, ["SELECT nope FROM superhero", RIGHT, "DROP TABLE superhero"], QUESTION,
        None, reference(executor), Options())
    assert result["winner"]["index"] == 1
    dropped = {d["index"]: d["sqlstate"] for d in result["dropped"]}
    assert dropped == {0: "42703", 2: "25006"}


def test_same_seed_same_result(executor):
    runs = [untimed(run_tournament(executor, CANDIDATES, QUESTION, None, reference(executor),
                                   Options(seed=5))) for _ in range(2)]
    assert runs[0] == runs[1]


def test_report_shows_instances_and_scores(executor):
    result = run_tournament(executor, CANDIDATES, QUESTION, None, reference(executor), Options())
    text = markdown_report(result)
    assert "## Scores" in text and "Separating instance" in text and "| height_cm" in text


@pytest.mark.parametrize("candidates", [[], "SELECT 1"])
def test_bad_candidate_lists(executor, candidates):
    with pytest.raises(InvalidInput):
        run_tournament(executor, candidates, QUESTION, None, NoJudge(), Options())
