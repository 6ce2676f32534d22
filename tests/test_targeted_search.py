"""Issue 18: separation does not get worse with the size of D (targeted proposals)."""

import psycopg
import pytest
from tests.test_witness_cache import LINEAGE

from conftest import CountingExecutor
from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.instances.separate import Options, separate
from siselect.instances.targeted import value_proposals
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
