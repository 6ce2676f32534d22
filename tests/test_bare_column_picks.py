"""Answers that differ only by the row a bare column takes its value from separate nothing.

SQLite lets a grouped query name a column outside its GROUP BY and takes the value from
one row of the group; the rewrite writes ``(ARRAY_AGG(v))[1]``, whose row is the plan's.
Two candidates that rank the same group first (``COUNT(language)`` against
``COUNT(DISTINCT language)``: yardstick card_games 523, seed 2) then differ on D only in
that value, and on a D' only where their plans feed the group's rows in another order: the
search minimised 3,000 rows to 2,081 such rows and reported a failure, where a judge could
tell nothing. A pick made explicit by an ``ORDER BY`` inside the aggregate still separates.
"""

from siselect.instances import separate
from siselect.instances.pair import Pair
from siselect.runtime import rowids
from siselect.runtime.catalog import load_catalog
from siselect.sqltext.nondeterminism import PICKS
from siselect.sqltext.transpile import to_tree

ANY_NAME = ("SELECT publisher_id, (ARRAY_AGG(superhero_name))[1] FROM superhero "
            "WHERE publisher_id = {p} GROUP BY publisher_id")
# The same pick, its rows fed in the opposite order: the plan picks another hero.
ANY_NAME_REVERSED = ANY_NAME.replace(
    "FROM superhero", "FROM (SELECT * FROM superhero ORDER BY id DESC) AS s")
LAST_NAME = ("SELECT publisher_id, (ARRAY_AGG(superhero_name ORDER BY superhero_name DESC))[1] "
             "FROM superhero WHERE publisher_id = {p} GROUP BY publisher_id")
FIRST_NAME = LAST_NAME.replace(" DESC", "")


def _two_heroes(executor) -> tuple[int, list[int]]:
    """A publisher and two of its heroes, the first by storage order and id having the
    smaller name: reading them in either order picks a different name."""
    publisher, first, second = executor.run(
        "SELECT a.publisher_id, a.ctid::text, b.ctid::text FROM superhero a JOIN superhero b "
        "ON a.publisher_id = b.publisher_id AND a.ctid < b.ctid AND a.id < b.id "
        "AND a.superhero_name < b.superhero_name ORDER BY a.id, b.id LIMIT 1").rows[0]
    number = load_catalog(executor).number("superhero")
    return publisher, [rowids.encode(number, *(int(x) for x in tid.strip("()").split(",")))
                       for tid in (first, second)]


def _pair(executor, q1: str, q2: str) -> Pair:
    catalog = load_catalog(executor)
    return Pair(executor, catalog, (to_tree(q1, "postgres", catalog),
                                    to_tree(q2, "postgres", catalog)))


def test_a_row_set_on_which_only_the_picks_differ_separates_nothing(executor):
    publisher, rows = _two_heroes(executor)
    pair = _pair(executor, ANY_NAME.format(p=publisher), ANY_NAME_REVERSED.format(p=publisher))
    a1, a2 = pair.answers_on(rows)
    assert pair.differ(a1, a2)  # each plan picks the hero it reads first
    assert pair.separation(rows) is None
    assert pair.picks_explain(a1, a2, pair.grouped(frozenset(rows)))


def test_a_pick_against_a_determined_answer_separates(executor):
    """One answer is a rule (the last name), the other the plan's pick: where they differ,
    the judge can say which the question asks for (card_games 392, seed 2: cards by their
    ruling date, the earliest against any one of a card's dates)."""
    publisher, rows = _two_heroes(executor)
    pair = _pair(executor, ANY_NAME.format(p=publisher), LAST_NAME.format(p=publisher))
    assert pair.separation(rows) is not None


def test_picks_made_explicit_still_separate(executor):
    publisher, rows = _two_heroes(executor)
    pair = _pair(executor, FIRST_NAME.format(p=publisher), LAST_NAME.format(p=publisher))
    found = pair.separation(rows)
    assert found is not None
    assert [r[1] for r in found[0].rows] != [r[1] for r in found[1].rows]


def test_a_pair_that_differs_on_d_only_by_its_picks_is_reported_so(executor):
    """Not 'separated' on a D' where the plans happened to pick other rows, nor a failed
    search: the answers on D are each one of several, which the duel's record says."""
    publisher, _ = _two_heroes(executor)
    q1, q2 = ANY_NAME.format(p=publisher), ANY_NAME_REVERSED.format(p=publisher)
    on_d = [executor.run(q).rows for q in (q1, q2)]
    assert on_d[0] != on_d[1]
    found = separate.separate(executor, q1, q2, separate.Options(dialect="postgres"))
    assert found["status"] == "nondeterministic"
    assert found["reason"] == f"q1: {PICKS}; q2: {PICKS}"
