"""Issue 18: separation does not get worse with the size of D (targeted proposals)."""

import psycopg
import pytest

from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.instances.separate import Options, separate

ROWS = 60_000  # more than the fallbacks' 20,000 rows and than any pool


@pytest.fixture(scope="module")
def large(dsn):
    """A generated table: two kinds of rows, 30,000 and 30,001 of them, and a sample pool
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
    assert [r[0] for r in large.run(f"{q1} UNION ALL {q2}").rows] == [30_000, 30_001]
    result = separate(large, q1, q2, Options())
    assert result["status"] == "separated", result.get("reason")
    assert result["rows"] == 1 and result["meaning"] == "meaningful"
    answers = result["answers"]
    assert sorted([answers["q1"]["rows"], answers["q2"]["rows"]]) == [[[0]], [[1]]]
