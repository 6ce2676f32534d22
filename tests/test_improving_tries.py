"""Minimising an instance of a better rank is bounded by its cost, not by its count of sets
alone (separate._Best, IMPROVING_TRIES): a set tested counts one try per max_rows rows.

The better rank found only in a set of hundreds of rows (the whole lineage, say) that
halving does not shrink (its halves are one table each) was minimised for up to 300 sets
nearly that large: european_football_2's top-5 leagues spent its whole pair budget on sets of
3,000 rows that cost seconds each, and the duel failed where a fitting instance of the next
rank was in hand.
"""

import pytest

from conftest import CountingExecutor, loaded_executor, sqlite_file_from
from siselect.instances import separate as separation
from siselect.instances.meaning import DEGENERATE, MEANINGFUL, Meaning
from siselect.instances.pair import Pair
from siselect.runtime import rowids
from siselect.runtime.catalog import load_catalog

SCHEMA = "improving_tries"
BIG = 40  # matches of each league but the first, which has one

# Both queries answer only on a league of BIG matches and the first league: BIG + 3 rows,
# above max_rows = 4; the first league and its match alone are a degenerate instance (q1
# answers nothing) of 2 rows.
DATA = (
    "CREATE TABLE league (id INTEGER PRIMARY KEY, name TEXT);\n"
    "CREATE TABLE match (id INTEGER PRIMARY KEY, league_id INTEGER);\n"
    + "".join(f"INSERT INTO league VALUES ({i}, 'L{i}');\n" for i in range(1, 7))
    + "".join(f"INSERT INTO match (league_id) VALUES ({i});\n" * (1 if i == 1 else BIG)
              for i in range(1, 7))
)
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


def test_a_better_rank_out_of_reach_costs_tries_by_its_rows(leagues):
    counting = CountingExecutor(leagues)
    best, leagues_rows = best_of(counting)
    # Table by table, as the whole lineage lists them: either half is one table, no answer.
    whole = [r for m, _ in leagues_rows.values() for r in m] + \
        [own for _, own in leagues_rows.values()]
    first = leagues_rows[1][0] + [leagues_rows[1][1]]  # one match: q1 answers nothing
    assert best.consider(whole) == MEANINGFUL
    assert best.consider(first) == DEGENERATE
    counting.statements, before = 0, best.pair.tests
    found = best.minimised(max_rows=4)
    # The fitting instance of the next rank, as before; but ddmin over the whole set stops
    # once its sets are worth 300 tries of 4 rows: 17 sets (it tested 302, 604 statements).
    assert sorted(found) == sorted(first)
    assert best.pair.tests - before <= 30
    assert counting.statements <= 60


def test_a_better_rank_within_its_tries_is_still_minimised(leagues):
    best, leagues_rows = best_of(leagues)
    # With max_rows = 50 the sets above it count one or a few tries each: ddmin reaches the
    # better rank's BIG + 3 rows (a big league, the first league and its match).
    whole = [r for m, own in leagues_rows.values() for r in [*m, own]]
    assert best.consider(whole) == MEANINGFUL
    found = best.minimised(max_rows=50)
    assert len(found) == BIG + 3 and best.rank_of(found) == MEANINGFUL
    assert set(leagues_rows[1][0]) <= set(found)
