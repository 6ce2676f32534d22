"""A scalar subquery a statement repeats is evaluated once (siselect.runtime.shared_subqueries),
with the same answer, and only when that is safe: on a real PostgreSQL, each text's answer
compared with the original's, and the number of scans of the subquery's table read off the
executed plan."""

import psycopg
import pytest

from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.runtime import shared_subqueries
from siselect.runtime.errors import QueryFailed
from siselect.runtime.shared_subqueries import evaluated_once

SCHEMA = "shared_subqueries"
LOWEST = "(SELECT MIN(b.amount) FROM budget AS b)"


@pytest.fixture(scope="module")
def db(dsn: str):
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        conn.execute(f"CREATE SCHEMA {SCHEMA}")
        conn.execute(f"SET search_path TO {SCHEMA}")
        conn.execute("CREATE TABLE budget (id int PRIMARY KEY, amount numeric, label text)")
        conn.execute("INSERT INTO budget SELECT g, (g * 37) % 101, 'b' || g "
                     "FROM generate_series(1, 500) AS g")
        conn.execute("CREATE TABLE expense (id int PRIMARY KEY, budget int, cost numeric)")
        conn.execute("INSERT INTO expense SELECT g, 1 + g % 500, g % 13 "
                     "FROM generate_series(1, 2000) AS g")
        conn.execute("ANALYZE")
        yield conn
        conn.execute(f"DROP SCHEMA {SCHEMA} CASCADE")


def answer(db, sql: str) -> list[tuple]:
    return sorted(db.execute(sql).fetchall(), key=repr)


def scans_of(db, sql: str, table: str) -> int:
    """How many times the executed plan read ``table`` (every InitPlan that ran)."""
    (plan,), = db.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}").fetchone()

    def count(node: dict) -> int:
        here = int(node.get("Relation Name") == table and node.get("Actual Loops", 0) > 0)
        return here + sum(count(child) for child in node.get("Plans", []))

    return count(plan["Plan"])


REPEATED = [
    # compare_affinity's shape: one operand tested in several branches of a CASE
    f"SELECT e.id FROM expense AS e JOIN budget AS k ON e.budget = k.id WHERE CASE WHEN "
    f"{LOWEST} IS NULL THEN NULL WHEN k.amount > 50 THEN k.amount = {LOWEST} ELSE "
    f"k.amount + 1 = {LOWEST} + 1 END",
    # in the select list and in a CTE of the statement's own WITH
    f"WITH cheap AS (SELECT x.id FROM budget AS x WHERE x.amount <= {LOWEST} + 3) "
    f"SELECT c.id, {LOWEST} AS lowest FROM cheap AS c",
    f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT n.i + 1 FROM n WHERE n.i < 3) "
    f"SELECT n.i, {LOWEST} AS lowest FROM n WHERE n.i > {LOWEST} - 1",
    # a set operation at the top
    f"SELECT x.id FROM budget AS x WHERE x.amount = {LOWEST} UNION "
    f"SELECT y.id FROM budget AS y WHERE y.amount = {LOWEST} + 1",
    # text before the copies that is not ASCII: the parser counts bytes, the scanner not
    f"SELECT 'été ✓' AS word, x.id FROM budget AS x WHERE x.amount = {LOWEST} "
    f"OR x.amount = {LOWEST} + 2",
    # copies of a subquery that holds copies of another: the outer ones are taken
    f"SELECT x.id FROM budget AS x WHERE x.amount = (SELECT MIN(y.amount) FROM budget AS y "
    f"WHERE y.amount > {LOWEST}) OR x.amount = (SELECT MIN(y.amount) FROM budget AS y "
    f"WHERE y.amount > {LOWEST}) + {LOWEST}",
    # a subquery with a WITH of its own
    "SELECT x.id FROM budget AS x WHERE x.amount = (WITH c AS (SELECT b.amount FROM budget AS "
    "b) SELECT MIN(c.amount) FROM c) OR x.amount = (WITH c AS (SELECT b.amount FROM budget "
    "AS b) SELECT MIN(c.amount) FROM c) + 1",
    # a LATERAL subquery that reads its sibling: still nothing outside the copy
    "SELECT x.id FROM budget AS x WHERE x.amount = (SELECT MIN(d.c) FROM budget AS y, "
    "LATERAL (SELECT y.amount AS c) AS d) OR x.amount = (SELECT MIN(d.c) FROM budget AS y, "
    "LATERAL (SELECT y.amount AS c) AS d) + 1",
    # set operations inside the copies, in a derived table and at their top
    "SELECT x.id FROM budget AS x WHERE x.amount = (SELECT MIN(u.a) FROM (SELECT b.amount AS "
    "a FROM budget AS b UNION ALL SELECT e.cost FROM expense AS e) AS u) OR x.amount = (SELECT "
    "MIN(u.a) FROM (SELECT b.amount AS a FROM budget AS b UNION ALL SELECT e.cost FROM expense "
    "AS e) AS u) + 1",
    "SELECT x.id FROM budget AS x WHERE x.amount = (SELECT b.amount FROM budget AS b UNION "
    "SELECT e.cost FROM expense AS e ORDER BY 1 LIMIT 1) OR x.amount = (SELECT b.amount FROM "
    "budget AS b UNION SELECT e.cost FROM expense AS e ORDER BY 1 LIMIT 1) + 1",
    # a copy inside a derived table and in a subquery's own join
    f"SELECT d.id FROM (SELECT x.id FROM budget AS x JOIN expense AS e ON e.budget = x.id "
    f"WHERE x.amount = {LOWEST}) AS d WHERE d.id > {LOWEST}",
]


@pytest.mark.parametrize("sql", REPEATED)
def test_a_repeated_subquery_runs_once_with_the_same_answer(db, sql):
    rewritten = evaluated_once(sql)
    assert rewritten != sql
    assert answer(db, rewritten) == answer(db, sql)
    assert scans_of(db, sql, "budget") > scans_of(db, rewritten, "budget") >= 1


def test_an_output_column_keeps_its_name(db):
    # An unaliased select-list item is named after the subquery's column ("min", here in
    # a derived table whose column the outer query reads by that name): it stays as written.
    sql = (f"SELECT d.min, d.id FROM (SELECT {LOWEST}, x.id FROM budget AS x WHERE x.amount "
           f"= {LOWEST} OR x.amount = {LOWEST} + 1) AS d")
    rewritten = evaluated_once(sql)
    assert rewritten != sql and "SELECT (SELECT MIN(b.amount)" in rewritten
    names = [c.name for c in db.execute(f"SELECT * FROM ({rewritten}) AS q LIMIT 0").description]
    assert names == ["min", "id"]
    assert answer(db, rewritten) == answer(db, sql)
    assert scans_of(db, sql, "budget") > scans_of(db, rewritten, "budget")


def test_the_expensive_copies_are_gone_from_the_plan(db):
    sql = REPEATED[0]
    # One scan of budget for the join, one for the subquery: not one per copy.
    assert scans_of(db, sql, "budget") == 4
    assert scans_of(db, evaluated_once(sql), "budget") == 2


NOT_REPEATED = {
    "one copy": f"SELECT x.id FROM budget AS x WHERE x.amount = {LOWEST}",
    "correlated": "SELECT x.id FROM budget AS x WHERE x.amount = (SELECT MIN(e.cost) FROM "
                  "expense AS e WHERE e.budget = x.id) OR x.amount = (SELECT MIN(e.cost) "
                  "FROM expense AS e WHERE e.budget = x.id) + 1",
    # x inside the derived table is not its sibling (no LATERAL): it is the outer x
    "correlated through a derived table": "SELECT x.id FROM budget AS x WHERE x.amount = "
        "(SELECT MIN(d.c) FROM budget AS x, (SELECT x.amount AS c) AS d) OR x.amount = "
        "(SELECT MIN(d.c) FROM budget AS x, (SELECT x.amount AS c) AS d) + 1",
    "correlated in its own WITH": "SELECT x.id FROM budget AS x WHERE x.amount = (WITH c AS "
        "(SELECT e.cost FROM expense AS e WHERE e.budget = x.id) SELECT MIN(c.cost) FROM c) OR "
        "x.amount = (WITH c AS (SELECT e.cost FROM expense AS e WHERE e.budget = x.id) SELECT "
        "MIN(c.cost) FROM c) + 1",
    "correlated in a branch of a set operation": "SELECT x.id FROM budget AS x WHERE x.amount "
        "= (SELECT MIN(u.a) FROM (SELECT b.amount AS a FROM budget AS b UNION ALL SELECT x.id) "
        "AS u) OR x.amount = (SELECT MIN(u.a) FROM (SELECT b.amount AS a FROM budget AS b UNION "
        "ALL SELECT x.id) AS u) + 1",
    "unqualified": "SELECT x.id FROM budget AS x WHERE x.amount = (SELECT MIN(cost) FROM "
                   "expense) OR x.amount = (SELECT MIN(cost) FROM expense) + 1",
    "volatile": "SELECT x.id FROM budget AS x WHERE x.amount < (SELECT MAX(b.amount) * "
                "random() FROM budget AS b) OR x.amount > (SELECT MAX(b.amount) * random() "
                "FROM budget AS b)",
    "reads no table": "SELECT x.id FROM budget AS x WHERE x.amount = (SELECT 5) "
                      "OR x.amount = (SELECT 5) + 1",
    "reads the statement's own CTE": "WITH c AS (SELECT b.amount FROM budget AS b) SELECT "
        "x.id FROM budget AS x WHERE x.amount = (SELECT MIN(c.amount) FROM c) OR x.amount "
        "= (SELECT MIN(c.amount) FROM c) + 1",
    "not a scalar subquery": "SELECT x.id FROM budget AS x WHERE x.id IN (SELECT e.budget "
        "FROM expense AS e) AND EXISTS (SELECT e.budget FROM expense AS e)",
}


@pytest.mark.parametrize("sql", NOT_REPEATED.values(), ids=NOT_REPEATED.keys())
def test_what_is_not_a_safe_copy_is_left_as_it_is(db, sql):
    assert evaluated_once(sql) == sql
    db.execute(sql).fetchall()  # each of them runs as it is


def test_text_that_is_not_one_select_is_left_to_the_checker():
    for sql in [f"SELECT {LOWEST}; SELECT {LOWEST}", f"SELECT {LOWEST} + {LOWEST} FROM",
                f"DELETE FROM budget WHERE amount > {LOWEST} OR amount < {LOWEST}"]:
        assert evaluated_once(sql) == sql


def test_a_text_is_looked_at_once(monkeypatch):
    sql, plain = REPEATED[0], NOT_REPEATED["one copy"]
    first = evaluated_once(sql)
    evaluated_once(plain)
    monkeypatch.setattr(shared_subqueries, "_rewritten", lambda text: pytest.fail("parsed"))
    monkeypatch.setattr(shared_subqueries, "_may_repeat", lambda text: pytest.fail("looked"))
    assert evaluated_once(sql) == first
    # A text without copies comes back as the very object given (the executor's test).
    again = "".join(plain)
    assert evaluated_once(again) is again


def test_the_executor_runs_the_rewritten_text(dsn, db):
    def budget_scans() -> int:
        db.execute("SELECT pg_stat_clear_snapshot()")
        return db.execute("SELECT seq_scan FROM pg_stat_user_tables "
                          "WHERE schemaname = %s AND relname = 'budget'", (SCHEMA,)).fetchone()[0]

    def scans_by_executor(sql: str) -> tuple[list[tuple], int]:
        with connect(dsn, SCHEMA, statement_timeout_ms=30_000) as conn:
            before = budget_scans()
            rows = PsycopgExecutor(conn).run(sql).rows
            conn.execute("SELECT pg_stat_force_next_flush()")
        return sorted(rows, key=repr), budget_scans() - before

    # Three copies of the subquery and a filter on budget: each a sequential scan as written.
    sql = (f"SELECT x.id FROM budget AS x WHERE x.amount = {LOWEST} OR x.amount = {LOWEST} + 1 "
           f"OR x.amount = {LOWEST} + 2")
    rows, scans = scans_by_executor(sql)
    assert rows == answer(db, sql)
    assert scans == scans_of(db, evaluated_once(sql), "budget") == 2
    assert scans_of(db, sql, "budget") == 4


def test_a_refused_rewrite_falls_back_to_the_text_as_written(dsn, db, monkeypatch):
    from siselect.runtime import executor as executor_module

    sql = f"SELECT x.id FROM budget AS x WHERE x.amount = {LOWEST} OR x.amount = {LOWEST} + 1"
    # A rewrite PostgreSQL refuses for its form (here, a column that does not exist; in the
    # field, say, an extension's planner hook that refuses a CTE).
    monkeypatch.setattr(executor_module, "evaluated_once",
                        lambda text: text.replace("x.amount = ", "x.no_such_column = ", 1))
    with connect(dsn, SCHEMA, statement_timeout_ms=30_000) as conn:
        executor = PsycopgExecutor(conn)
        assert sorted(executor.run(sql).rows, key=repr) == answer(db, sql)
        # An error of the data is the same error as written: reported, not asked twice.
        ran: list[str] = []
        fetch = executor._fetch
        monkeypatch.setattr(executor, "_fetch", lambda text, *a, **k: ran.append(text)
                            or fetch(text, *a, **k))
        monkeypatch.setattr(executor_module, "evaluated_once",
                            lambda text: text.replace("1 / 1", "1 / 0"))
        with pytest.raises(QueryFailed) as failed:
            executor.run(f"SELECT 1 / 1 FROM budget AS x WHERE x.amount = {LOWEST}")
        assert failed.value.sqlstate == "22012" and len(ran) == 1
