"""Candidates whose answers differ only in column order (issue 15, point 4): exact grouping
puts them in different groups, their duel gets a non-empty instance, and the comparator
prefers the answer in the judge's column order (BIRD counts the other wrong)."""

import pytest

from siselect.runtime.answers import (
    judge_matches,
    matches_judge,
    matches_judge_in_order,
    same_in_order,
)
from test_selection_rules import run

QUESTION = "What is the tallest height of each publisher's heroes?"
PUBLISHER_FIRST = "SELECT publisher_id, MAX(height_cm) FROM superhero GROUP BY publisher_id"
HEIGHT_FIRST = "SELECT MAX(height_cm), publisher_id FROM superhero GROUP BY publisher_id"
# The gold, written another way, in the publisher-first order.
REFERENCE = "SELECT s.publisher_id, MAX(s.height_cm) AS tallest FROM superhero s GROUP BY 1"


@pytest.mark.parametrize("candidates", [[PUBLISHER_FIRST, HEIGHT_FIRST],
                                        [HEIGHT_FIRST, PUBLISHER_FIRST]])
def test_the_reference_judge_picks_its_own_column_order_whatever_the_input_order(
        executor, candidates):
    result = run(executor, candidates, REFERENCE, question=QUESTION)
    assert [g["members"] for g in result["groups"]] == [[0], [1]]
    assert result["winner"]["sql"] == PUBLISHER_FIRST
    duel = result["duels"][0]
    assert duel["separation"] == "separated"
    assert "column order" in duel["reason"]
    assert duel["rows"] >= 1 and duel["answers"]["a"]["rows"] and duel["answers"]["b"]["rows"]
    assert duel["matched"] == [candidates.index(PUBLISHER_FIRST)]
    assert duel["verdict"] == "ab"[candidates.index(PUBLISHER_FIRST)]


def test_a_judge_in_neither_column_order_leaves_the_duel_drawn(executor):
    three = "SELECT publisher_id, MAX(height_cm), MIN(weight_kg) FROM superhero " \
            "GROUP BY publisher_id"
    swapped = "SELECT MAX(height_cm), publisher_id, MIN(weight_kg) FROM superhero " \
              "GROUP BY publisher_id"
    judge = "SELECT MIN(weight_kg), MAX(height_cm), publisher_id FROM superhero " \
            "GROUP BY publisher_id"
    result = run(executor, [three, swapped], judge, question=QUESTION)
    judged = [d for d in result["duels"] if d.get("judge")]
    assert judged and all(d["separation"] == "separated" for d in judged)
    assert all(d["verdict"] == "draw" and d["matched"] == [0, 1] for d in judged)


def test_matches_judge_in_order_under_the_judges_tolerance():
    ours, swapped = [(1, 0.333333), (2, 0.666667)], [(0.333333, 1), (0.666667, 2)]
    judge = [["1", "0.33"], ["2", "0.67"]]
    assert matches_judge(ours, judge) and matches_judge(swapped, judge)
    assert matches_judge_in_order(ours, judge)
    assert not matches_judge_in_order(swapped, judge)
    assert not matches_judge_in_order([(1, 0.34), (2, 0.67)], judge)  # past 2 decimals
    assert matches_judge_in_order([], [])
    assert same_in_order([(1, "a")], [(1.0, "a")]) and not same_in_order([(1, "a")], [("a", 1)])


def test_judge_matches_prefers_the_judges_order_and_falls_back_when_none_is_in_it():
    judge = [["x", "1", "2"]]
    assert judge_matches([[("x", 1, 2)], [(1, "x", 2)], None], judge) == [True, False, False]
    assert judge_matches([[(2, 1, "x")], [(1, "x", 2)]], judge) == [True, True]
    assert judge_matches([[(1, "x", 2)], [("y", 1, 2)]], judge) == [True, False]


def test_judge_matches_prefers_the_side_with_the_judges_null_row():
    # Both match a NULL row once NULL rows are dropped; only one has it.
    assert judge_matches([[(None,)], []], [[None]]) == [True, False]
    assert judge_matches([[(None,)], []], []) == [False, True]
    assert judge_matches([[(None,)], None], []) == [True, False], "alone, it still matches"
    assert judge_matches([[(None,)], [(None,)]], [["null"]]) == [True, True]


def test_the_reference_judge_counts_a_null_row_as_a_row_even_alone():
    """A trusted query's answer is SQL's: one NULL row and no row are two answers (BIRD's
    rule), so a candidate answering a NULL row no longer matches a reference answering no
    row when it is the only one near it (yardstick formula_1 975 and 1015: a wrong
    candidate's NULL year won duels against the one right on D, on instances where the
    gold found no row). An LLM's reply keeps the leniency; a noisy judge keeps its inner
    judge's comparison."""
    import random

    from siselect.runtime.answers import REFERENCE_TOLERANCE
    from siselect.runtime.executor import Rows
    from siselect.selection.judges import NoisyJudge, ReferenceJudge
    from siselect.selection.tournament import verdict

    exact = ReferenceJudge.tolerance
    assert exact == REFERENCE_TOLERANCE and exact.null_rows
    assert judge_matches([[(None,)], None], [], exact) == [False, False]
    assert judge_matches([[(None,)], [(1,)]], [[None]], exact) == [True, False]
    assert not matches_judge([(1,), (None,)], [[1]], exact)
    assert matches_judge([(1,), (None,)], [[1], [None]], exact)
    assert matches_judge([(None, None)], [[None, None]], exact)
    null_year, a_year = Rows(["year"], [(None,)]), Rows(["year"], [(59,)])
    assert verdict([], null_year, a_year)[0] == "a"  # an LLM's "nothing" may be either
    assert verdict([], null_year, a_year, exact) == ("draw",
                                                     "neither answer matches the judge's")
    assert verdict([[None]], null_year, a_year, exact)[0] == "a"
    noisy = NoisyJudge(ReferenceJudge(None), 0.2, random.Random(1), [])
    assert noisy.tolerance == exact


def test_the_llm_judges_written_answer_is_compared_by_the_same_rule():
    """The verdict an LLM's reply (text, its own precision and tolerance) gets between two
    column orders: its order wins; a reply in neither order is a draw, as before."""
    from siselect.runtime.executor import Rows
    from siselect.selection.llm import LLMConfig, LLMJudge
    from siselect.selection.tournament import verdict

    with LLMJudge(LLMConfig(base_url="http://127.0.0.1:9/v1")) as judge:
        tolerance = judge.tolerance  # no request is sent: only its comparison is used
    ours = Rows(["publisher_id", "max", "min"], [(4, 170, 0.3333333)])
    swapped = Rows(["max", "publisher_id", "min"], [(170, 4, 0.3333333)])
    side, why = verdict([["170", "4", "0.33"]], ours, swapped, tolerance)
    assert side == "b" and "column order" in why
    assert verdict([["4", "170", "0.33"]], ours, swapped, tolerance)[0] == "a"
    assert verdict([["0.33", "4", "170"]], ours, swapped, tolerance) == (
        "draw", "both answers match the judge's")


def test_a_column_order_duel_is_meaningful_and_judged_once(executor):
    """Both answers on its D' are non-empty and are D's own rows: the instance keeps the
    question's meaning, so one verdict of the reference judge settles the duel (before,
    the probe against an empty answer ranked every instance degenerate: three instances,
    each weighed a quarter)."""
    result = run(executor, [PUBLISHER_FIRST, HEIGHT_FIRST], REFERENCE, question=QUESTION)
    judged = [d for d in result["duels"] if d.get("judge")]
    assert len(judged) == 1, [d.get("again") for d in result["duels"]]
    assert judged[0]["meaning"] == "meaningful" and not judged[0].get("degenerate")
    assert judged[0]["verdict"] == "a"
