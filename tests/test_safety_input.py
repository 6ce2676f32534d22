"""Issue 7, point 1: candidate SQL is one read-only SELECT, checked by the parser and
enforced by PostgreSQL, time-limited, with capped answers; hostile names and values in
the data travel as data."""

import json
import math
import time

import psycopg
import pytest

from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.dispatch import jsonb_text
from siselect.instances.separate import Options, separate
from siselect.runtime.errors import NotASelect, QueryFailed, SiselectError
from siselect.runtime.executor import Param, Rows, quote_ident
from siselect.runtime.plpython import _values
from siselect.selection.judges import NoJudge
from siselect.selection.tournament import run_tournament
from siselect.sqltext.check import parse_select

# The shared fixtures (admin, chat, hostile, probe, ...) load as a plugin, once;
# their module must be marked for assertion rewriting before it is imported.
pytest.register_assert_rewrite("safety_fixtures")
pytest_plugins = ["safety_fixtures"]

from safety_fixtures import (  # noqa: E402
    KIND_COL,
    OWNERS,
    PETS,
    assert_clean,
    corpus,
    db_state,
    owners_sql,
)

WRITES = corpus("writes.sql")
WRITE_FUNCTIONS = corpus("write_functions.sql")
SIDE_EFFECTS = corpus("side_effects.sql")
TALL = "SELECT count(*) FROM superhero WHERE height_cm > 200"
TALLISH = "SELECT count(*) FROM superhero WHERE height_cm >= 198"
# Slow without a volatile function (those are refused before anything runs).
SLEEPY = "SELECT count(*) AS n FROM generate_series(1, 3000000000) AS g"
HUGE = "SELECT g FROM generate_series(1, 200000) AS g"
# Limits a hang is told apart from slowness by, on a loaded two-core machine.
HANG = 20.0


@pytest.mark.parametrize("dialect", ["postgres", "sqlite"])
@pytest.mark.parametrize("sql", WRITES + SIDE_EFFECTS, ids=lambda s: s[:40])
def test_the_check_refuses_writes_and_side_effects(sql, dialect):
    with pytest.raises(NotASelect) as caught:
        parse_select(sql, dialect)
    assert caught.value.sqlstate in {"25006", "42601"}


@pytest.mark.parametrize(("sql", "sqlstate"), [
    # PostgreSQL reads it, sqlglot cannot: the query is fine, siselect lacks the feature.
    ("SELECT height_cm FROM superhero ORDER BY height_cm USING > LIMIT 2", "0A000"),
    ("SELECT height_cm FROM superhero ORDER BY height_cm USIN > LIMIT 2", "42601"),
    ("CLUSTER superhero.colour", "25006"),  # PostgreSQL's verdict: not a SELECT
])
def test_a_query_sqlglot_cannot_read_is_told_apart(sql, sqlstate):
    with pytest.raises(NotASelect) as caught:
        parse_select(sql, "postgres")
    assert caught.value.sqlstate == sqlstate
    assert ("siselect's SQL reader (sqlglot)" in caught.value.message) == (sqlstate == "0A000")


@pytest.mark.parametrize("sql", WRITE_FUNCTIONS, ids=lambda s: s[:40])
def test_the_check_cannot_see_what_a_function_does(sql):
    """These pass the parser: PostgreSQL's read-only transaction is what stops them."""
    parse_select(sql, "postgres")


def _refusals(run, entries: list[str]) -> list[str]:
    """The entries that ``run`` did not refuse (empty when every one was refused)."""
    accepted = []
    for sql in entries:
        try:
            run(sql)
        except (SiselectError, psycopg.Error):
            continue
        accepted.append(sql)
    return accepted


def test_postgres_refuses_writes_past_the_check_client_side(dsn, admin, superhero, probe):
    before = db_state(admin)
    with connect(dsn, superhero, statement_timeout_ms=10_000) as conn:
        executor = PsycopgExecutor(conn)
        accepted = _refusals(executor.run, WRITES + WRITE_FUNCTIONS)
        assert not accepted, "accepted:\n" + "\n".join(accepted)

        def unchecked(sql: str) -> Rows:  # past pglast and the call policy
            return executor._fetch(sql, None)

        accepted = _refusals(unchecked, WRITES + WRITE_FUNCTIONS)
        assert not accepted, "accepted past the checks:\n" + "\n".join(accepted)
        with pytest.raises(QueryFailed) as caught:
            unchecked("SELECT safety_probe.write_probe()")
        assert caught.value.sqlstate == "25006"
        with pytest.raises(QueryFailed) as caught:
            unchecked("SELECT 1) AS _q; SET transaction_read_only = off; DELETE FROM colour; "
                      "SELECT * FROM (SELECT 1")
        assert caught.value.sqlstate == "42601"  # one statement per call, by the protocol
    assert_clean(admin, before)


COUNT_ROWS = "SELECT count(*) FROM superhero AS t WHERE t.ctid = ANY($1::tid[])"


def test_parameters_are_siselects_row_ids_and_values_stay_data(dsn, admin, superhero, probe):
    """Row ids travel as parameters: a text runs only with exactly its parameters bound (a
    candidate's own ``$1`` is refused before anything runs), and a value is never read as
    SQL, whatever it holds."""
    before = db_state(admin)
    with connect(dsn, superhero, statement_timeout_ms=10_000) as conn:
        executor = PsycopgExecutor(conn)
        two = Param("tid[]", '{"(0,1)","(0,2)"}')
        for sql, params in [("SELECT $1::int", ()), (COUNT_ROWS, ()),
                            ("SELECT 1", (two,)), (COUNT_ROWS, (two, two))]:
            with pytest.raises(NotASelect) as refused:
                executor.run(sql, params=params)
            assert refused.value.sqlstate == "42601"
        assert executor.run(COUNT_ROWS, params=(two,)).rows == [(2,)]
        hostile = Param("tid[]", "{}'::tid[]); DELETE FROM colour; SELECT ('{\"(0,1)\"}")
        with pytest.raises(QueryFailed) as caught:
            executor.run(COUNT_ROWS, params=(hostile,))
        assert caught.value.sqlstate == "22P02"  # a bad array, not a statement
    # In the server a value is bound as the list of its elements: what is not one is dropped.
    assert _values((hostile, Param("bigint[]", "{7,8}"))) == [["(0,1)"], [7, 8]]
    assert_clean(admin, before)


def test_postgres_refuses_writes_past_the_check_server_side(dsn, admin, superhero, probe):
    before = db_state(admin)

    def raw_run(sql: str) -> None:
        admin.execute("SELECT safety_probe.raw_run(%s, %s)", (sql, superhero))

    accepted = _refusals(raw_run, WRITES + WRITE_FUNCTIONS)
    assert not accepted, "accepted:\n" + "\n".join(accepted)
    for sql in WRITE_FUNCTIONS:
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            raw_run(sql)
    # Closing the executor's wrapping parenthesis would smuggle a second statement into
    # SPI: a cursor opens on one statement only.
    with pytest.raises(psycopg.errors.InvalidCursorDefinition):
        raw_run("SELECT 1) AS _q; DELETE FROM colour; SELECT * FROM (SELECT 1")
    with pytest.raises(psycopg.Error):
        raw_run("SELECT 1) AS _q; SET LOCAL transaction_read_only = off; "
                "DELETE FROM colour; SELECT * FROM (SELECT 1")
    assert_clean(admin, before)


@pytest.mark.parametrize("allowed", [False, True], ids=["refused", "allowed-by-admin"])
def test_write_functions_through_separate_and_tournament(admin, superhero, probe, allowed):
    """Functions outside pg_catalog are refused by the call policy (42501); one that an
    administrator allows still cannot write: the functions run read-only (25006)."""
    before = db_state(admin)
    expected = psycopg.errors.ReadOnlySqlTransaction if allowed else \
        psycopg.errors.InsufficientPrivilege
    if allowed:
        admin.execute("INSERT INTO siselect.allowed_names (schema_name, name) "
                      "SELECT 'safety_probe', proname FROM pg_proc "
                      "WHERE pronamespace = 'safety_probe'::regnamespace "
                      "UNION VALUES ('pg_catalog', 'nextval'), ('pg_catalog', 'setval')")
    try:
        for sql in WRITE_FUNCTIONS:
            with pytest.raises(expected):
                admin.execute("SELECT siselect.separate(%s, %s, search_path => %s)",
                              (sql, TALL, superhero))
        result = admin.execute(
            "SELECT siselect.tournament(%s, 'How many tall heroes?', judge => 'none', "
            "search_path => %s)", (WRITE_FUNCTIONS + [TALL], superhero)
        ).fetchone()[0]
    finally:
        admin.execute("DELETE FROM siselect.allowed_names")
    assert {d["sqlstate"] for d in result["dropped"]} == {"25006" if allowed else "42501"}
    assert len(result["dropped"]) == len(WRITE_FUNCTIONS)
    assert result["winner"]["index"] == len(WRITE_FUNCTIONS)
    assert_clean(admin, before)


def test_side_effects_never_reach_the_server(admin, superhero):
    before = db_state(admin)
    for sql in SIDE_EFFECTS:
        with pytest.raises(psycopg.Error) as caught:
            admin.execute("SELECT siselect.separate(%s, %s, search_path => %s)",
                          (sql, TALL, superhero))
        assert caught.value.sqlstate in {"25006", "42601"}, sql
    result = admin.execute(
        "SELECT siselect.tournament(%s, 'q', judge => 'none', search_path => %s)",
        (SIDE_EFFECTS, superhero),
    ).fetchone()[0]
    assert result["winner"] is None and len(result["dropped"]) == len(SIDE_EFFECTS)
    mine = admin.execute(
        "SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory'"
    ).fetchone()[0]
    assert mine == 0
    assert admin.execute("SHOW statement_timeout").fetchone()[0] == "0"
    assert_clean(admin, before)


def test_rollback_undoes_what_a_read_only_query_may_change(dsn, admin, superhero, probe):
    """Past the check, a query can still change settings or create large objects in a
    read-only transaction: both executors roll every query back."""
    before = db_state(admin)
    with connect(dsn, superhero, statement_timeout_ms=7_000) as conn:
        executor = PsycopgExecutor(conn)
        for sql in ("SELECT set_config('statement_timeout', '0', false)",
                    "SELECT set_config('search_path', 'pg_catalog', false)",
                    "SELECT lo_create(0)"):
            with pytest.raises(NotASelect):  # the check refuses them first
                executor.run(sql)
            executor._fetch(sql, None)
        assert conn.execute("SHOW statement_timeout").fetchone()[0] == "7s"
        assert executor.run("SELECT count(*) FROM colour").rows[0][0] > 0
    admin.execute("SELECT safety_probe.raw_run(%s, %s)",
                  ("SELECT set_config('work_mem', '77MB', false)", superhero))
    admin.execute("SELECT safety_probe.raw_run(%s, %s)", ("SELECT lo_create(0)", superhero))
    with admin.transaction(force_rollback=True):
        admin.execute("SELECT safety_probe.raw_run(%s, %s)",
                      ("SELECT set_config('work_mem', '78MB', true)", superhero))
        assert admin.execute("SHOW work_mem").fetchone()[0] not in {"77MB", "78MB"}
    assert admin.execute("SHOW work_mem").fetchone()[0] != "77MB"
    assert_clean(admin, before)


# ---- time limits and caps ----------------------------------------------------------------


def test_server_call_ends_at_the_callers_statement_timeout(admin, superhero):
    before = db_state(admin)
    admin.execute("SET statement_timeout = '1s'")
    try:
        for call, args in [
            ("SELECT siselect.separate(%s, %s, search_path => %s)", (SLEEPY, TALL, superhero)),
            ("SELECT siselect.tournament(%s, 'q', judge => 'none', search_path => %s)",
             ([TALL, SLEEPY, TALLISH], superhero)),
        ]:
            started = time.monotonic()
            with pytest.raises(psycopg.errors.QueryCanceled):
                admin.execute(call, args)
            assert time.monotonic() - started < HANG
        assert admin.execute("SELECT 1").fetchone() == (1,)
    finally:
        admin.execute("RESET statement_timeout")
    assert_clean(admin, before)


def test_client_per_query_limit(dsn, admin, superhero):
    before = db_state(admin)
    with connect(dsn, superhero, statement_timeout_ms=500) as conn:
        executor = PsycopgExecutor(conn)
        started = time.monotonic()
        with pytest.raises(QueryFailed) as caught:
            separate(executor, SLEEPY, TALL)
        assert caught.value.sqlstate == "57014"
        result = run_tournament(executor, [SLEEPY, TALL, TALLISH], "How many?", None,
                                NoJudge(), Options())
        assert time.monotonic() - started < HANG
    assert [(d["index"], d["sqlstate"]) for d in result["dropped"]] == [(0, "57014")]
    assert result["winner"] is not None
    assert_clean(admin, before)


TOP = "SELECT superhero_name FROM superhero ORDER BY height_cm DESC, id LIMIT {}"


@pytest.mark.parametrize("q1, q2", [(TALL, TALLISH), (TOP.format(3), TOP.format(4))],
                         ids=["aggregates", "top rows"])
def test_budget_spent_is_a_status(executor, q1, q2):
    result = separate(executor, q1, q2, Options(budget_seconds=1e-9))
    assert result["status"] == "timeout"
    assert "budget" in result["reason"]


def test_answers_are_capped(admin, executor, superhero):
    with pytest.raises(QueryFailed) as caught:
        separate(executor, HUGE, TALL)
    assert caught.value.sqlstate == "54000"
    with pytest.raises(psycopg.errors.ProgramLimitExceeded):
        admin.execute("SELECT siselect.separate(%s, %s, search_path => %s)",
                      (HUGE, TALL, superhero))
    result = admin.execute(
        "SELECT siselect.tournament(%s, 'q', judge => 'none', search_path => %s)",
        ([HUGE, TALL, TALLISH], superhero),
    ).fetchone()[0]
    assert [(d["index"], d["sqlstate"]) for d in result["dropped"]] == [(0, "54000")]


# ---- hostile names and values ------------------------------------------------------------


def _as_jsonb(row) -> list:
    """A row as jsonb spells it: an infinite float is the text "Infinity" (the server's
    results are jsonb, the client's Python values)."""
    def value(v):
        if isinstance(v, float) and not math.isfinite(v):
            return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
        return v

    return [value(v) for v in row]


def _rows_of(admin: psycopg.Connection, schema: str, table: str) -> list[list]:
    cur = admin.execute(f"SELECT * FROM {quote_ident(schema)}.{quote_ident(table)}")
    return [_as_jsonb(r) for r in cur.fetchall()]


def _check_instance(admin, schema: str, result: dict) -> None:
    assert result["status"] == "separated", result
    for table, data in result["instance"].items():
        assert table in {OWNERS, PETS}
        stored = _rows_of(admin, schema, table)
        for row in data["rows"]:
            assert _as_jsonb(row) in stored, f"{table}: {row} is not a row of the database"


JOIN = (f"SELECT p.{quote_ident(KIND_COL)} FROM {quote_ident(PETS)} AS p "
        f"JOIN {quote_ident(OWNERS)} AS o ON o.id = p.owner WHERE o.score {{}} 1")


@pytest.mark.parametrize("q1, q2", [
    (owners_sql("score > 1"), owners_sql("score >= 1")),
    (JOIN.format(">"), JOIN.format(">=")),
], ids=["one table", "join"])
def test_hostile_names_and_values_separate_as_data(dsn, admin, hostile, probe, q1, q2):
    before = db_state(admin)
    server = admin.execute(
        "SELECT siselect.separate(%s, %s, search_path => %s)", (q1, q2, hostile)
    ).fetchone()[0]
    _check_instance(admin, hostile, server)
    with connect(dsn, hostile, statement_timeout_ms=30_000) as conn:
        client = separate(PsycopgExecutor(conn), q1, q2)
    _check_instance(admin, hostile, client)
    # The server's result is jsonb (an infinite float is the text "Infinity").
    spelled = json.loads(jsonb_text(client))
    for part in ("status", "instance", "answers", "rows"):
        assert spelled[part] == server[part], part
    assert probe.fired_tags() == []
    assert_clean(admin, before)
