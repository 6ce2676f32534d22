"""Issue 18: separation does not get worse with the size of D (targeted proposals)."""

import psycopg
import pytest
from tests.test_witness_cache import LINEAGE, built

from conftest import CountingExecutor
from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.instances.separate import Options, separate
from siselect.instances.targeted import value_proposals, value_sql
from siselect.instances.witness_cache import WitnessCache
from siselect.runtime.catalog import load_catalog
from siselect.sqltext.transpile import to_tree

ROWS = 60_000  # more than the fallbacks' 20,000 rows and than any pool


@pytest.fixture(scope="module")
def large(dsn):
    """A generated table: two kinds of rows, 30,001 and 30,000 of them, and a sample pool
    of 48 of each: every balanced proposal counts as many of one kind as of the other."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA IF NOT EXISTS targeted")
        conn.execute("DROP TABLE IF EXISTS targeted.item")
        conn.execute("CREATE TABLE targeted.item AS SELECT i AS id, 1 + (i % 2) AS kind, "
                     f"i % 97 AS grp FROM generate_series(0, {ROWS}) AS g(i)")
        conn.execute("ANALYZE targeted.item")
    with connect(dsn, "targeted", statement_timeout_ms=60_000) as connection:
        yield PsycopgExecutor(connection)


def test_counts_of_two_large_disjoint_sets_separate_on_one_row(large):
    q1 = "SELECT COUNT(*) FROM item WHERE kind = 1"
    q2 = "SELECT COUNT(DISTINCT id) FROM item WHERE kind = 2"
    assert [large.run(q).rows[0][0] for q in (q1, q2)] == [30_001, 30_000]
    result = separate(large, q1, q2, Options())
    assert result["status"] == "separated", result.get("reason")
    assert result["rows"] == 1 and result["meaning"] == "meaningful"
    answers = result["answers"]
    assert sorted([answers["q1"]["rows"], answers["q2"]["rows"]]) == [[[0]], [[1]]]


@pytest.fixture(scope="module")
def owners(dsn):
    """10,000 owners of 200 names (50 an owner), each with 1 to 10 items (55,000 items):
    no owner has more than 15 items, every name has more. A random sample of items spreads
    over the names: no 16 of one name among the pool's 48."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA IF NOT EXISTS targeted")
        conn.execute("DROP TABLE IF EXISTS targeted.owner, targeted.thing")
        conn.execute("CREATE TABLE targeted.owner AS SELECT i AS id, 'n' || (i % 200) AS name "
                     "FROM generate_series(0, 9999) AS g(i)")
        conn.execute("CREATE TABLE targeted.thing AS SELECT o.id AS owner_id, j "
                     "FROM targeted.owner AS o, generate_series(0, o.id % 10) AS g(j)")
        conn.execute("ANALYZE targeted.owner")
        conn.execute("ANALYZE targeted.thing")
    with connect(dsn, "targeted", statement_timeout_ms=60_000) as connection:
        yield PsycopgExecutor(connection)


BY_OWNER = ("SELECT o.name FROM owner AS o JOIN (SELECT owner_id FROM thing GROUP BY "
            "owner_id HAVING COUNT(*) > 15) AS t ON o.id = t.owner_id")
BY_NAME = ("SELECT o.name FROM owner AS o JOIN thing AS t ON o.id = t.owner_id "
           "GROUP BY o.name HAVING COUNT(*) > 15")


def test_a_having_threshold_is_crossed_by_one_group_concentrated(owners):
    by_owner, by_name = BY_OWNER, BY_NAME
    assert owners.run(by_owner).rows == [] and len(owners.run(by_name).rows) == 200
    result = separate(owners, by_owner, by_name, Options())
    assert result["status"] == "separated", result.get("reason")
    # Sixteen things of owners of one name: two owners of ten things need 18 rows, sixteen
    # owners of one thing 32 (over max_rows).
    assert result["rows"] <= 30
    names = {row[1] for row in result["instance"]["owner"]["rows"]}
    assert len(names) == 1 and len(result["instance"]["thing"]["rows"]) == 16
    assert result["answers"]["q2"]["rows"] == [[names.pop()]]


def test_a_values_witnesses_are_fetched_once_per_tournament(owners):
    """A pair separated again (away from its first instance) asks for the same values'
    witnesses: with the tournament's cache they are fetched once, and give the same rows."""
    catalog = load_catalog(owners)
    trees = [to_tree(q, "postgres", catalog) for q in (BY_OWNER, BY_NAME)]
    cache = WitnessCache()
    lineages = [cache.lineage(LINEAGE, t, catalog) for t in trees]
    pool = cache.pool(owners, lineages, 0)
    counting = CountingExecutor(owners)
    rounds = [list(value_proposals(counting, catalog, trees, lineages, pool, 120,
                                   cache=cache)) for _ in range(2)]
    assert rounds[0] and rounds[0] == rounds[1]
    values = [t for t in counting.texts if " IN (SELECT " in t]
    assert values and len(values) == len(set(values))  # none run twice
    # Without the cache every round runs them again.
    again = CountingExecutor(owners)
    assert list(value_proposals(again, catalog, trees, lineages, pool, 120)) == rounds[0]
    assert [t for t in again.texts if " IN (SELECT " in t] == values


# Heroes of more than 15 powers, grouped by name (a CTE the planner cannot pull up: every
# witness is built in the subquery) against grouped by hero.
HEROES_BY_NAME = ("SELECT s.full_name FROM superhero AS s JOIN hero_power AS hp "
                  "ON s.id = hp.hero_id GROUP BY s.full_name HAVING COUNT(hp.hero_id) > 15")
HEROES_BY_HERO = ("SELECT s.full_name FROM superhero AS s JOIN (SELECT hero_id FROM hero_power "
                  "GROUP BY hero_id HAVING COUNT(*) > 15) AS hp ON s.id = hp.hero_id")


@pytest.mark.parametrize("table, column, value", [("superhero", "full_name", "-"),
                                                  ("hero_power", "power_id", 1),
                                                  ("superpower", "id", 1)])  # read by neither
def test_a_values_witnesses_are_built_for_the_witnesses_holding_it_only(table, column, value,
                                                                         executor):
    """Issue 18: a value's statement built every witness of its side to find the few that
    hold the value (superhero x100 task 720: 340,500 of them for 56,100); with the lineage's
    deferred form it tests the row ids of the value's relation and builds those only.
    Same witnesses in the same order."""
    catalog = load_catalog(executor)
    own, other = (LINEAGE.witness_query(to_tree(q, "postgres", catalog), catalog)
                  for q in (HEROES_BY_NAME, HEROES_BY_HERO))
    assert own.deferred is not None
    texts = [value_sql(own.keyed_sql, other.keyed_sql, catalog, table, column, value, 120,
                       form) for form in (None, own.deferred)]
    assert executor.run(texts[0]).rows == executor.run(texts[1]).rows
    counts = []
    for text in texts:
        (plan,), = executor.conn.execute(
            f"EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) {text}").fetchone()
        counts.append(built(plan["Plan"]))
    everyone = executor.run(f"SELECT count(*) FROM ({own.keyed_sql}) AS __a").rows[0][0]
    holding = executor.run(f"SELECT count(*) FROM ({texts[1].rsplit(' ORDER BY', 1)[0]}) "
                           "AS __h").rows[0][0]
    assert counts[0] >= everyone > holding >= counts[1], (counts, everyone, holding)
