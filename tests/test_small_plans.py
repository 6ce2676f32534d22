"""Statements on a D' are planned for a few rows a table (``Executor.run(..., small=True)``).

A D' holds a few rows of each table, but its statement reads each whole table filtered by
row ids, and the planner guesses the rest: here, every budget of the D' is tied at the
minimum, the planner judges one to be, and nests a loop that reads all the expenses again
for each (student_club x100 task 1365: 60 s a statement, against 45 ms as a hash join).
"""

import psycopg
import pytest

from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.runtime.executor import SMALL_PLANS

SETTINGS = ("SELECT current_setting('enable_nestloop') AS a, current_setting('jit') AS b, "
            "current_setting('max_parallel_workers_per_gather') AS c")
SMALL = tuple(value for _, value in SMALL_PLANS)


def test_a_small_statement_runs_with_the_small_plans_settings_and_leaves_none(executor):
    before = executor.run(SETTINGS).rows
    assert before != [SMALL]  # the session's own settings: the test would show nothing
    assert executor.run(SETTINGS, small=True).rows == [SMALL]
    # Local to the statement's transaction, which is rolled back: nothing stays.
    assert executor.run(SETTINGS).rows == before
    assert executor.conn.execute("SHOW enable_nestloop").fetchone() == (before[0][0],)


SERVER = """DO $do$
{boot}
import json
from siselect.runtime.plpython import PlpyExecutor

executor = PlpyExecutor(plpy, {path!r})
query = {query!r}
got = [executor.run(query).rows, executor.run(query, small=True).rows, executor.run(query).rows,
       list(plpy.execute(query)[0].values())]
plpy.notice(json.dumps(got))
$do$ LANGUAGE plpython3u"""


def test_the_server_executor_plans_a_small_statement_alike(dsn, superhero):
    from safety_fixtures import server_notice

    before, small, again, after = server_notice(
        dsn, lambda boot: SERVER.format(boot=boot, path=superhero, query=SETTINGS))
    assert [tuple(r) for r in small] == [SMALL]
    assert before == again and tuple(before[0]) != SMALL
    assert tuple(before[0]) == tuple(after)  # the subtransaction's settings went with it


@pytest.fixture(scope="module")
def ties(dsn: str) -> str:
    """200,000 expenses and 200,000 budgets, 4,000 of them tied at the least remaining."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS small_plans CASCADE")
        conn.execute("CREATE SCHEMA small_plans")
        conn.execute("CREATE TABLE small_plans.budget (budget_id text PRIMARY KEY, "
                     "remaining real)")
        conn.execute("CREATE TABLE small_plans.expense (link text, cost real)")
        conn.execute("INSERT INTO small_plans.budget SELECT 'b' || i, CASE WHEN i <= 4000 "
                     "THEN 0 ELSE i END FROM generate_series(1, 200000) AS i")
        conn.execute("INSERT INTO small_plans.expense SELECT 'b' || (1 + i % 200000), i "
                     "FROM generate_series(1, 200000) AS i")
        conn.execute("ANALYZE small_plans.budget")
        conn.execute("ANALYZE small_plans.expense")
        conn.execute("GRANT USAGE ON SCHEMA small_plans TO PUBLIC")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA small_plans TO PUBLIC")
    return "small_plans"


def _ids(conn: psycopg.Connection, sql: str) -> str:
    return "'{" + ",".join(f'"{tid}"' for (tid,) in conn.execute(sql).fetchall()) + "}'"


def test_a_join_on_a_d_prime_of_thousands_of_tied_rows_is_not_a_nested_loop(dsn, ties):
    with psycopg.connect(dsn, autocommit=True) as conn:
        budgets = _ids(conn, "SELECT ctid FROM small_plans.budget WHERE remaining = 0")
        expenses = _ids(conn, "SELECT e.ctid FROM small_plans.expense AS e JOIN "
                              "small_plans.budget AS b ON e.link = b.budget_id "
                              "WHERE b.remaining = 0")

    def restricted(table: str, ids: str) -> str:
        return f"(SELECT * FROM small_plans.{table} AS t WHERE t.ctid = ANY(CAST({ids} AS tid[])))"

    query = (f"SELECT e.cost FROM {restricted('expense', expenses)} AS e JOIN "
             f"{restricted('budget', budgets)} AS b ON e.link = b.budget_id WHERE b.remaining = "
             f"(SELECT MIN(remaining) FROM {restricted('budget', budgets)} AS m)")
    # Planned as PL/Python plans a cursor (no parallel workers), within a time a nested loop
    # over the expenses for each tied budget (about a minute here) does not fit in.
    with connect(dsn, ties, statement_timeout_ms=15_000) as connection:
        connection.execute("SET max_parallel_workers_per_gather = 0")
        rows = PsycopgExecutor(connection).run(query, small=True).rows
    assert len(rows) == 4000
