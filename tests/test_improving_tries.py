"""Minimising an instance of a better rank stops at IMPROVING_TRIES sets or once half the
pair's budget is spent, whichever comes first (separate._Best, separate._time_left).

The better rank found only in a set of hundreds of rows (the whole lineage, say) that
halving does not shrink (its halves are one table each) was minimised for up to 300 sets
nearly that large: european_football_2's top-5 leagues spent its whole pair budget on sets of
3,000 rows that cost seconds each, and the duel failed where a fitting instance of the next
rank was in hand. Counting sets by their rows instead stopped that, but also cut short the
minimisations that reach a meaningful instance from a few hundred rows (two yardstick duels
went to degenerate instances and one correct candidate lost); time is what the limit is for.
"""

import time
from dataclasses import replace

import pytest

from conftest import CountingExecutor, loaded_executor, sqlite_file_from
from siselect.instances import separate as separation
from siselect.instances.meaning import DEGENERATE, MEANINGFUL, Meaning
from siselect.instances.pair import Pair
from siselect.instances.witness_cache import WitnessCache
from siselect.runtime import rowids
from siselect.runtime.catalog import load_catalog

SCHEMA = "improving_tries"
BIG = 40  # matches of each league but the small ones, which have one


def league_data(small: int) -> str:
    """Six leagues: the first ``small`` with one match each, the others with BIG."""
    return (
        "CREATE TABLE league (id INTEGER PRIMARY KEY, name TEXT);\n"
        "CREATE TABLE match (id INTEGER PRIMARY KEY, league_id INTEGER);\n"
        + "".join(f"INSERT INTO league VALUES ({i}, 'L{i}');\n" for i in range(1, 7))
        + "".join(f"INSERT INTO match (league_id) VALUES ({i});\n" * (1 if i <= small else BIG)
                  for i in range(1, 7))
    )


# Both queries answer only on a league of BIG matches and the first league: BIG + 3 rows,
# above max_rows = 4; the first league and its match alone are a degenerate instance (q1
# answers nothing) of 2 rows.
DATA = league_data(1)
Q1 = ("SELECT l.name FROM league AS l JOIN match AS m ON m.league_id = l.id "
      f"GROUP BY l.name HAVING COUNT(*) >= {BIG}")
Q2 = Q1.replace(f">= {BIG}", ">= 1")


@pytest.fixture(scope="module")
def leagues(dsn: str, tmp_path_factory):
    with loaded_executor(dsn, sqlite_file_from(tmp_path_factory, SCHEMA, DATA), SCHEMA) \
            as executor:
        yield executor


def rows_of(executor, catalog) -> dict[int, tuple[list[int], int]]:
    """Each league's match row ids and its own row id."""
    def ids(sql: str) -> list[tuple[int, int]]:
        out = []
        for key, tid, table in executor.run(sql).rows:
            block, offset = (int(x) for x in tid.strip("()").split(","))
            out.append((key, rowids.encode(catalog.number(table), block, offset)))
        return out

    matches = ids("SELECT league_id, ctid::text, 'match' FROM match ORDER BY id")
    own = dict(ids("SELECT id, ctid::text, 'league' FROM league ORDER BY id"))
    return {k: ([r for key, r in matches if key == k], own[k]) for k in own}


def best_of(executor) -> tuple[separation._Best, dict[int, tuple[list[int], int]]]:
    catalog = load_catalog(executor)
    pair = Pair(executor, catalog, separation.parse_pair(Q1, Q2, "sqlite", catalog))
    on_d = (pair.run(pair.trees[0]), pair.run(pair.trees[1]))
    return separation._Best(pair, Meaning.of(pair.trees, on_d, [])), rows_of(executor, catalog)


def test_a_better_rank_out_of_reach_stops_when_half_the_budget_is_spent(leagues):
    counting = CountingExecutor(leagues)
    best, leagues_rows = best_of(counting)
    # Table by table, as the whole lineage lists them: either half is one table, no answer.
    whole = [r for m, _ in leagues_rows.values() for r in m] + \
        [own for _, own in leagues_rows.values()]
    first = leagues_rows[1][0] + [leagues_rows[1][1]]  # one match: q1 answers nothing
    assert best.consider(whole) == MEANINGFUL
    assert best.consider(first) == DEGENERATE
    counting.statements, before = 0, best.pair.tests
    # With half the budget gone, no set of the better rank is tested: the fitting instance
    # of the next rank at once (it tested 302 sets, 604 statements, with time to spare).
    found = best.minimised(max_rows=4, time_left=lambda: False)
    assert sorted(found) == sorted(first)
    assert best.pair.tests - before <= 3
    with_time = best_of(counting)[0]
    with_time.consider(whole)
    with_time.consider(first)
    counting.statements, before = 0, with_time.pair.tests
    assert sorted(with_time.minimised(max_rows=4)) == sorted(first)
    # with time, the better rank was minimised first (to a 1-minimal set above max_rows, in
    # 140 sets; 300, IMPROVING_TRIES, before ddmin stopped trying chunks that split chunks
    # which failed alone), then the next rank's
    assert with_time.pair.tests - before > 30  # without time: at most 3


def test_the_search_bounds_the_minimisation_by_the_pairs_budget(leagues, monkeypatch):
    """Through separate_pair: the minimisation is told whether half the pair's budget is
    left, by the pair's own deadline (here 24 s of a 60 s budget)."""
    told = []
    minimised = separation._Best.minimised

    def spy(self, max_rows, time_left=lambda: True, **how):
        told.append(time_left())
        return minimised(self, max_rows, time_left, **how)

    monkeypatch.setattr(separation._Best, "minimised", spy)
    catalog = load_catalog(leagues)
    options = separation.Options(dialect="sqlite", max_rows=4, budget_seconds=60).check()
    trees = separation.parse_pair(Q1, Q2, "sqlite", catalog)
    for seconds_left, expected in ((24, False), (59, True)):
        pair = Pair(leagues, catalog, trees, deadline=time.monotonic() + seconds_left)
        result = separation.separate_pair(pair, pair.run(trees[0]), pair.run(trees[1]),
                                          options)
        assert result["status"] == "separated" and told[-1] is expected


def test_a_better_rank_within_its_tries_is_still_minimised(leagues):
    best, leagues_rows = best_of(leagues)
    # With max_rows = 50 the sets above it count one or a few tries each: ddmin reaches the
    # better rank's BIG + 3 rows (a big league, the first league and its match).
    whole = [r for m, own in leagues_rows.values() for r in [*m, own]]
    assert best.consider(whole) == MEANINGFUL
    found = best.minimised(max_rows=50)
    assert len(found) == BIG + 3 and best.rank_of(found) == MEANINGFUL
    assert set(leagues_rows[1][0]) <= set(found)


def test_a_minimisation_held_to_max_rows_then_settled_runs_no_set_twice(leagues):
    """The search holds every level to max_rows first (``settle=False``) and settles for the
    last level above it only when the targeted proposals find nothing that fits: taken up
    again, the minimisation runs no query on a set it tested (the pair keeps their
    answers), and ends where it would have ended at once."""
    best, leagues_rows = best_of(leagues)
    whole = [r for m, own in leagues_rows.values() for r in [*m, own]]
    first = leagues_rows[1][0] + [leagues_rows[1][1]]  # 2 rows, degenerate
    best.consider(whole)
    best.consider(first)
    assert best.minimised(max_rows=1, settle=False) is None  # nothing fits 1 row
    before = best.pair.tests
    settled = best.minimised(max_rows=1)
    assert best.pair.tests == before
    at_once = best_of(leagues)[0]
    at_once.consider(whole)
    at_once.consider(first)
    assert sorted(settled) == sorted(at_once.minimised(max_rows=1)) == sorted(first)


def test_a_learned_level_is_minimised_still_where_a_set_of_it_fits(leagues):
    """Skipping a level the pair learned does not fit (``skip``) never throws away a set of
    it that fits max_rows already: only a larger start set is left unminimised."""
    best, leagues_rows = best_of(leagues)
    whole = [r for m, own in leagues_rows.values() for r in [*m, own]]
    first = leagues_rows[1][0] + [leagues_rows[1][1]]  # 2 rows, degenerate
    assert best.consider(whole) == MEANINGFUL and best.consider(first) == DEGENERATE
    before = best.pair.tests
    assert sorted(best.minimised(max_rows=50, skip={MEANINGFUL})) == sorted(first)
    assert best.pair.tests - before <= 3  # the whole lineage's ddmin is not run
    fits = first + leagues_rows[2][0] + [leagues_rows[2][1]]  # a big league: BIG + 3 rows
    assert best.consider(fits) == MEANINGFUL and len(fits) == BIG + 3
    found = best.minimised(max_rows=50, skip={MEANINGFUL})
    assert best.rank_of(found) == MEANINGFUL and len(found) <= 50


# Two leagues of one match each: a pair separated again away from the first one's rows
# still finds a meaningful instance (a big league and the second), as large as before.
TWO_SMALL = league_data(2)


@pytest.fixture(scope="module")
def two_small(dsn: str, tmp_path_factory):
    with loaded_executor(dsn, sqlite_file_from(tmp_path_factory, SCHEMA + "_two", TWO_SMALL),
                         SCHEMA + "_two") as executor:
        yield executor


def test_a_level_that_did_not_fit_is_not_minimised_again_on_the_pairs_next_instance(two_small):
    """A pair separated again away from its earlier instance (the tournament's next
    instance: a new Pair on the same witness cache) does not minimise again the level its
    first search could not bring under max_rows: a big league's rows are what the HAVING
    needs wherever they are looked for. A search that is not a next instance minimises
    it as before."""
    catalog = load_catalog(two_small)
    trees = separation.parse_pair(Q1, Q2, "sqlite", catalog)
    options = separation.Options(dialect="sqlite", max_rows=4).check()
    cache = WitnessCache()

    def separated(exclude: tuple[int, ...], cache: WitnessCache) -> tuple[dict, int]:
        pair = Pair(two_small, catalog, trees, witnesses=cache)
        on_d = (pair.run(trees[0]), pair.run(trees[1]))
        result = separation.separate_pair(pair, *on_d, replace(options, exclude=exclude))
        assert result["status"] == "separated" and result["degenerate"]
        assert len(result["row_ids"]) <= 4
        return result, pair.tests

    first, first_tests = separated((), cache)
    assert cache.learned(separation.UNFIT_LEVELS, trees) == {MEANINGFUL}
    away = tuple(sorted(first["row_ids"]))
    again, again_tests = separated(away, cache)
    assert not set(again["row_ids"]) & set(away)
    # the same next instance in a tournament that learned nothing minimises the meaningful
    # level again, to no use
    unlearned, unlearned_tests = separated(away, WitnessCache())
    assert sorted(unlearned["row_ids"]) == sorted(again["row_ids"])
    assert again_tests < unlearned_tests - 60  # 35 sets against 124
    assert again_tests < first_tests
