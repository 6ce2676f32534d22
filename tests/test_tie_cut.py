"""The tie check of a separation decided by the WITH TIES answer where that is exact.

A query whose only tie-sensitive part is its top-level ``ORDER BY ... LIMIT`` hangs on ties
exactly when its ``FETCH FIRST ... WITH TIES`` form returns more rows: separate's
``_tie_only`` then needs one statement on D, not the check's four tie-breaking probes.
These tests hold the reasons to the check's own, and count the statements on D.
"""

import re

import pytest

from conftest import CountingExecutor, row_ids
from siselect.instances import separate
from siselect.instances.pair import Pair
from siselect.instances.ties import tie_explained, with_ties
from siselect.runtime.catalog import load_catalog
from siselect.sqltext import nondeterminism
from siselect.sqltext.transpile import to_tree


def _pair(executor, q1: str, q2: str) -> tuple[Pair, CountingExecutor]:
    counting = CountingExecutor(executor)
    catalog = load_catalog(executor)
    trees = (to_tree(q1, "sqlite", catalog), to_tree(q2, "sqlite", catalog))
    pair = Pair(counting, catalog, trees)
    counting.statements = 0
    return pair, counting


def _check_only(pair: Pair, a1, a2) -> str | None:
    """What ``_tie_only`` decided before: the check's probes on every query, then the WITH
    TIES answers when a query has a reason."""
    reasons = {}
    for label, tree in zip(("q1", "q2"), pair.trees, strict=True):
        reason = nondeterminism.static_reason(tree) or nondeterminism.check(pair.run_strict,
                                                                            tree)
        if reason:
            reasons[label] = reason
    if not reasons:
        return None
    relaxed = [pair.run_strict(with_ties(t)) for t in pair.trees]
    if tie_explained(a1, a2, *relaxed):
        return "; ".join(f"{k}: {v}" for k, v in reasons.items())
    return None


def _both_ways(executor, q1: str, q2: str) -> tuple[str | None, int, str | None, int]:
    """The old and the new verdict of ``_tie_only``, each with its statements on D."""
    pair, counting = _pair(executor, q1, q2)
    a1, a2 = (pair.run_strict(t) for t in pair.trees)
    counting.statements = 0
    old = _check_only(pair, a1, a2)
    old_statements = counting.statements
    counting.statements = 0
    new = separate._tie_only(pair, a1, a2)
    return old, old_statements, new, counting.statements


# Surtur and Ymir share the greatest height (30480); ids are unique.
UNTIED = "SELECT superhero_name FROM superhero ORDER BY id LIMIT 3"
UNTIED_OTHER = "SELECT superhero_name FROM superhero ORDER BY id DESC LIMIT 3"
TIED = "SELECT superhero_name FROM superhero ORDER BY height_cm DESC LIMIT 1"
TIED_BROKEN = "SELECT superhero_name FROM superhero ORDER BY height_cm DESC, id DESC LIMIT 1"


def test_an_untied_cut_takes_one_statement_not_four(executor):
    old, old_statements, new, new_statements = _both_ways(executor, UNTIED, UNTIED_OTHER)
    assert old is None and new is None
    assert (old_statements, new_statements) == (8, 2)


def test_a_tied_cut_keeps_its_reason_and_reuses_the_with_ties_answer(executor):
    old, old_statements, new, new_statements = _both_ways(executor, TIED, TIED_BROKEN)
    assert old is not None and "LIMIT cut" in old
    assert new == old
    # q1: its WITH TIES answer (kept for tie_explained) and the check's probes, two (the
    # ascending and descending tie-breaks differ, which decides); q2: its WITH TIES answer
    # alone, where the check ran its four probes (no tie shows).
    assert (old_statements, new_statements) == (8, 4)


def test_answers_of_different_sizes_take_no_statement(executor):
    """No tie explains a difference in size: the check's probes are not run."""
    old, old_statements, new, new_statements = _both_ways(
        executor, TIED, "SELECT superhero_name FROM superhero ORDER BY height_cm DESC LIMIT 2")
    assert old is None and new is None
    assert old_statements > 0 and new_statements == 0


def test_a_tie_that_explains_nothing_skips_the_probes(executor):
    """A tied cut whose answer no tie turns into the other's: the WITH TIES answers say so,
    and the check's probes on D are left out (the verdict is None either way)."""
    other = "SELECT full_name FROM superhero ORDER BY height_cm DESC LIMIT 1"
    old, old_statements, new, new_statements = _both_ways(executor, TIED, other)
    assert old is None and new is None
    # Old: q1's WITH TIES answer and its probes, q2's WITH TIES answer and its probes (two
    # each: both tie, and the first two tie-breaks differ).
    assert (old_statements, new_statements) == (6, 2)


def test_no_with_ties_run_without_a_top_level_limit(executor):
    """A query without a top-level LIMIT is its own WITH TIES form: its answer on D serves."""
    q1 = ("SELECT publisher_id, superhero_name FROM superhero GROUP BY publisher_id "
          "ORDER BY publisher_id")
    q2 = "SELECT publisher_id, full_name FROM superhero GROUP BY publisher_id ORDER BY 1"
    pair, counting = _pair(executor, q1, q2)
    a1, a2 = (pair.run_strict(t) for t in pair.trees)
    counting.statements, counting.texts = 0, []
    assert separate._tie_only(pair, a1, a2) is None
    # The answers on D show that no tie explains the difference: no WITH TIES form runs.
    # What runs is whether the picks of the bare columns do (four picks of each query's
    # ARRAY_AGG, every one ordered, none cut).
    assert counting.statements == 8
    assert not any("WITH TIES" in text.upper() for text in counting.texts)
    assert all(re.search(r"ARRAY_AGG\([^()]+ ORDER BY ", text, re.IGNORECASE)
               for text in counting.texts)


@pytest.mark.parametrize("sql", [
    UNTIED, TIED, TIED_BROKEN,
    # Tied rows with one output: the check finds nothing, and decides it still.
    "SELECT height_cm FROM superhero ORDER BY height_cm DESC LIMIT 1",
    # Fewer rows than the LIMIT: nothing is cut.
    "SELECT superhero_name FROM superhero WHERE id < 3 ORDER BY id LIMIT 10",
    "SELECT publisher_id, COUNT(*) FROM superhero GROUP BY publisher_id "
    "ORDER BY COUNT(*) DESC LIMIT 2",
    "SELECT publisher_id, COUNT(*) FROM superhero GROUP BY publisher_id "
    "ORDER BY COUNT(*) LIMIT 2",
    "SELECT DISTINCT publisher_id FROM superhero ORDER BY publisher_id LIMIT 2",
    # Shapes the WITH TIES answer does not decide: the check runs as before.
    "SELECT superhero_name FROM superhero ORDER BY height_cm DESC LIMIT 1 OFFSET 1",
    "SELECT superhero_name FROM superhero ORDER BY height_cm DESC, id LIMIT 1 OFFSET 1",
    "SELECT superhero_name FROM superhero WHERE id IN (SELECT id FROM superhero "
    "ORDER BY height_cm DESC LIMIT 1) ORDER BY id LIMIT 1",
    "SELECT superhero_name, MIN(weight_kg) FROM superhero GROUP BY publisher_id "
    "ORDER BY publisher_id LIMIT 2",
    "SELECT publisher_id, GROUP_CONCAT(superhero_name) FROM superhero GROUP BY publisher_id "
    "ORDER BY publisher_id LIMIT 2",
    "SELECT * FROM superhero ORDER BY height_cm DESC LIMIT 1",
])
def test_every_query_keeps_the_checks_reason(executor, sql):
    """Paired with a query of another answer, so that the tie check is asked."""
    other = "SELECT 'nobody' AS name"
    for q1, q2 in ((sql, other), (other, sql)):
        old, old_statements, new, new_statements = _both_ways(executor, q1, q2)
        assert new == old
        assert new_statements <= old_statements + 1


def test_only_the_top_cut_is_decided_by_with_ties(executor):
    catalog = load_catalog(executor)

    def shape(sql):
        return nondeterminism.only_top_cut(to_tree(sql, "sqlite", catalog))

    s = "superhero"
    assert shape(f"SELECT superhero_name FROM {s} ORDER BY height_cm LIMIT 3")
    assert shape(f"SELECT publisher_id, COUNT(*) FROM {s} GROUP BY publisher_id "
                 "ORDER BY 2 DESC LIMIT 1")
    assert not shape(f"SELECT superhero_name FROM {s} ORDER BY height_cm LIMIT 3 OFFSET 1")
    assert not shape(f"SELECT superhero_name FROM {s} ORDER BY height_cm")
    assert not shape(f"SELECT id FROM {s} WHERE id IN (SELECT id FROM {s} ORDER BY height_cm "
                     "LIMIT 1) ORDER BY id LIMIT 1")
    assert not shape(f"SELECT publisher_id, GROUP_CONCAT(superhero_name) FROM {s} "
                     "GROUP BY publisher_id ORDER BY publisher_id LIMIT 1")
    assert not shape(f"SELECT id, ROW_NUMBER() OVER (ORDER BY height_cm) FROM {s} "
                     "ORDER BY id LIMIT 1")
    # A bare column: which row of the group gives it is the engine's choice.
    assert not shape(f"SELECT publisher_id, superhero_name FROM {s} GROUP BY publisher_id "
                     "ORDER BY publisher_id LIMIT 1")


# The powers of one hero at the head of gender_id, where hundreds of heroes tie: which one
# is picked decides how many rows the answer has. The other query cuts the joined rows
# instead, and returns one.
CUT_INSIDE = ("SELECT p.power_name FROM hero_power hp JOIN superpower p ON p.id = hp.power_id "
              "JOIN (SELECT id FROM superhero ORDER BY gender_id LIMIT 1) m "
              "ON hp.hero_id = m.id")
CUT_JOINED = ("SELECT p.power_name FROM hero_power hp JOIN superpower p ON p.id = hp.power_id "
              "JOIN superhero s ON s.id = hp.hero_id ORDER BY s.gender_id LIMIT 1")


def test_a_search_that_fails_where_a_tie_decides_an_answer_on_d_says_so(executor):
    """A tie at a cut below the top level decides how many rows an answer has, so no
    WITH TIES answer tells before the search; when the search then finds nothing (here
    every power row is left out), the pair is reported as one whose answer on D is one of
    several, not as a failure of the search."""
    catalog = load_catalog(executor)
    trees = tuple(to_tree(q, "postgres", catalog) for q in (CUT_INSIDE, CUT_JOINED))
    pair = Pair(executor, catalog, trees)
    on_d = tuple(pair.run_strict(t) for t in trees)
    assert len(on_d[0].rows) > 1 and len(on_d[1].rows) == 1
    powers = row_ids(executor, catalog, "hero_power", order_by=None)
    found = separate.separate_pair(Pair(executor, catalog, trees), *on_d,
                                   separate.Options(exclude=tuple(powers)))
    assert found["status"] == "nondeterministic"
    assert found["reason"].startswith("no separating instance was found")
    assert found["reason"].endswith("q1: rows tie on the ORDER BY keys at the LIMIT cut")
    assert separate.separate_pair(Pair(executor, catalog, trees), *on_d,
                                  separate.Options())["status"] == "separated"


# Any one row of 750 x 750 (LIMIT without ORDER BY): its WITH TIES form is the whole cross
# join, 562,500 rows, more than siselect compares (MAX_ANSWER_ROWS).
ANY_OF_MANY = "SELECT a.superhero_name FROM superhero a CROSS JOIN superhero b LIMIT 1"
MARKED = "SELECT superhero_name || '!' FROM superhero ORDER BY id LIMIT 1"


def test_answers_with_ties_too_large_on_d_leave_the_decision_to_each_instance(executor):
    """Whether a tie explains the difference cannot be read on D, where the WITH TIES
    answer is too large: the search goes on, and each instance's own tie check decides
    (no name is the other's with '!', so a small D' separates). Before, the pair ended in
    the error 54000 (yardstick debit_card_specializing x100, task 1526)."""
    found = separate.separate(executor, ANY_OF_MANY, MARKED)
    assert found["status"] == "separated" and 1 <= found["rows"] <= 4
    assert all(r[0].endswith("!") for r in found["answers"]["q2"]["rows"])


def test_a_row_set_whose_answers_with_ties_are_too_large_separates_nothing(executor):
    """On a D' of every hero the WITH TIES answer is as large as on D: no tie can be ruled
    out there, so that set does not separate; on three heroes it does."""
    catalog = load_catalog(executor)
    trees = tuple(to_tree(q, "postgres", catalog) for q in (ANY_OF_MANY, MARKED))
    pair = Pair(executor, catalog, trees)
    heroes = row_ids(executor, catalog, "superhero")
    assert pair.separation(heroes) is None
    assert pair.separation(heroes[:3]) is not None
