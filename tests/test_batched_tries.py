"""Row sets tested in batches (issue 18): minimisation and the growing proposals fetch the
answers of the sets they are about to test together, one statement per query for up to
AHEAD_MOST sets (instances/batch.py, Pair.prefetch), instead of one statement per query and
set. The sets tested, their order, the tries counted and the instance stay as they were;
only the statements are fewer (superhero x100, batches of up to 16: task 720 1,642 -> 636
statements, 741 693 -> 287)."""

import pytest

from conftest import CountingExecutor
from siselect.instances import separate as separation
from siselect.instances.batch import batch_sql, run_together
from siselect.instances.minimise import AHEAD_MOST, ddmin
from siselect.instances.pair import BATCHES_FAILED_MOST, Pair
from siselect.instances.shadow import Bound, restricted_sql
from siselect.runtime import rowids
from siselect.runtime.catalog import load_catalog
from siselect.sqltext.transpile import to_tree

# Publishers with more than 20 heroes against those with more than 10 counted over a left
# join: the golden pair whose minimisation tests hundreds of sets.
HAVING = (
    "SELECT p.publisher_name, COUNT(*) FROM superhero s JOIN publisher p "
    "ON s.publisher_id = p.id GROUP BY p.publisher_name HAVING COUNT(*) > 20",
    "SELECT p.publisher_name, COUNT(s.id) FROM publisher p LEFT JOIN superhero s "
    "ON s.publisher_id = p.id GROUP BY p.publisher_name HAVING COUNT(*) > 10",
)
# A ratio whose denominator is 0 on the sets without a tall hero: q1 fails there (22012),
# so batches holding such a set fail and their sets run alone.
RATIO = (
    "SELECT 100 / COUNT(*) FROM superhero WHERE height_cm > 200",
    "SELECT COUNT(*) FROM superhero WHERE height_cm > 190",
)


NEEDED = set(range(0, 400, 10))  # 40 of 400: the last round tests 40 complements


def _tested(items, ahead=None):
    """ddmin's result, and its tests and what ``ahead`` was shown, in the order they came."""
    events = []

    def still_fails(subset):
        fails = NEEDED.issubset(subset)
        events.append(("test", list(subset), fails))
        return fails

    def seen(batch):
        events.append(("ahead", [list(s) for s in batch], None))

    return ddmin(items, still_fails, seen if ahead else None), events


def test_ddmin_shown_its_subsets_ahead_tests_the_same_ones_in_the_same_order():
    items = list(range(400))
    plain, plain_events = _tested(items)
    result, events = _tested(items, ahead=True)
    assert result == plain == sorted(NEEDED)
    assert [e for e in events if e[0] == "test"] == plain_events
    shown = [(i, e[1]) for i, e in enumerate(events) if e[0] == "ahead"]
    assert shown, "no batch was shown ahead"
    assert max(len(b) for _, b in shown) == AHEAD_MOST
    assert min(len(b) for _, b in shown) >= 2
    # Each batch is what is tested next, in that order, as far as the tests go (a round
    # stops at its first subset that fails: the rest of its batch is never tested).
    for i, batch in shown:
        after = []
        for kind, subset, fails in events[i + 1:i + 1 + len(batch)]:
            assert kind == "test"
            after.append(subset)
            if fails:
                break
        assert batch[:len(after)] == after


def _without_timings(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "timings"}


@pytest.mark.parametrize("pair", [HAVING, RATIO], ids=["having", "ratio"])
def test_a_separation_runs_fewer_statements_for_the_same_instance(executor, monkeypatch, pair):
    counting = CountingExecutor(executor)
    batched = separation.separate(counting, *pair)
    statements = counting.statements
    with monkeypatch.context() as m:
        m.setattr(Pair, "prefetch", lambda self, row_sets: None)
        counting.statements = 0
        alone = separation.separate(counting, *pair)
    assert batched["status"] == "separated"
    assert _without_timings(batched) == _without_timings(alone)
    if pair is HAVING:
        assert batched["tries"] > 100
        assert statements < 0.6 * counting.statements
    else:
        # Sets on which q1 fails: the batches holding one fail, at most BATCHES_FAILED_MOST
        # a pair, and their sets run alone, as before.
        assert batched.get("tries_failed", 0) > 0
        assert statements <= counting.statements + BATCHES_FAILED_MOST


def test_a_batch_gives_each_set_the_rows_its_own_statement_gives(executor):
    texts = [Bound("SELECT superhero_name FROM superhero WHERE id < 4 ORDER BY id DESC"),
             Bound("SELECT superhero_name FROM superhero WHERE false"),
             Bound("SELECT superhero_name FROM superhero WHERE id BETWEEN 10 AND 12 ORDER BY id")]
    together = run_together(executor, texts, 1000)
    assert together is not None
    for text, rows in zip(texts, together, strict=True):
        alone = executor.run(text.sql)
        assert (rows.columns, rows.rows) == (alone.columns, alone.rows)
    assert [len(r.rows) for r in together] == [3, 0, 3]
    assert batch_sql(texts)[0].sql.count("UNION ALL") == 2


def test_a_batch_binds_each_sets_row_ids_and_is_one_text_whatever_they_are(executor):
    """Row sets of one shape give one batch text, their row ids bound in its parameters,
    numbered on across the branches, whatever order the sets come in."""
    catalog = load_catalog(executor)
    tree = to_tree("SELECT superhero_name FROM superhero", "postgres", catalog)
    ids = [int(r) for (r,) in executor.run(
        f"SELECT {rowids.row_id(catalog.tables['superhero'], catalog.number('superhero'), 't')}"
        " FROM superhero AS t ORDER BY id LIMIT 6").rows]
    sets = [restricted_sql(tree, catalog, {"superhero": chunk})
            for chunk in (ids[:1], ids[1:3], ids[3:6])]
    first, _ = batch_sql(sets)
    again, _ = batch_sql([sets[2], sets[0], sets[1]])
    assert first.sql == again.sql and "$3" in first.sql and len(first.params) == 3
    together = run_together(executor, sets, 1000)
    assert together is not None
    assert [len(r.rows) for r in together] == [1, 2, 3]
    for text, rows in zip(sets, together, strict=True):
        assert rows.rows == executor.run(text.sql, params=text.params).rows


def test_a_batch_that_fails_on_one_set_gives_nothing(executor):
    texts = [Bound("SELECT 1 / COUNT(*) FROM superhero WHERE false"),
             Bound("SELECT 1 / COUNT(*) FROM superhero")]
    assert run_together(executor, texts, 1000) is None
    # Rows past the limit: nothing either (each set then runs alone, as before).
    assert run_together(executor, [Bound("SELECT id FROM superhero"), Bound("SELECT 1")],
                        10) is None


def test_the_inner_tie_probes_of_a_row_set_run_as_one_statement(executor, monkeypatch):
    """A query that cuts ordered rows below its top level (the tallest hero, taken in a
    derived table) is probed on each D' it separates on, the ties broken several ways:
    one statement for all of them, the same verdict as one statement each (student_club x100
    1365: 198 of its statements were these probes)."""
    catalog = load_catalog(executor)
    cut = to_tree("SELECT s.superhero_name FROM superhero AS s JOIN (SELECT id FROM superhero "
                  "ORDER BY height_cm DESC LIMIT 1) AS t ON t.id = s.id", "postgres", catalog)
    other = to_tree("SELECT superhero_name FROM superhero WHERE height_cm > 1000", "postgres",
                    catalog)
    tallest = [r[0] for r in executor.run(
        "SELECT ctid::text FROM superhero WHERE height_cm = 30480").rows]
    assert len(tallest) == 2  # Surtur and Ymir tie for the greatest height
    counting = CountingExecutor(executor)
    for rows, tied in ((tallest, True), (tallest[:1], False)):
        verdicts, statements = [], []
        for batched in (True, False):
            with monkeypatch.context() as m:
                if not batched:  # as if the batch had failed: each probe alone, as before
                    m.setattr("siselect.instances.pair.run_together", lambda *a, **k: None)
                pair = Pair(counting, catalog, (cut, other))
                counting.statements = 0
                verdicts.append(pair._inner_ties(cut, {"superhero": rows}))
                statements.append(counting.statements)
        assert verdicts == [tied, tied]
        # Alone, the probes stop at the first two cuts that differ (two where it ties).
        assert statements[0] == 1 and statements[1] >= (2 if tied else 3), statements
