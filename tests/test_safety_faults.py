"""Issue 7, point 4: faults. The LLM endpoint down, slow, trickling, failing or answering
garbage or a huge body; a candidate that times out in the middle of a tournament;
pg_cancel_backend on a running tournament; a client that vanishes. Each ends in bounded
time with a clear status or error and leaves no transaction, lock or object behind."""

import signal
import subprocess
import sys
import threading
import time

import psycopg
import pytest

from chat_server import Reply
from conftest import names_allowed
from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.instances.separate import Options
from siselect.runtime.executor import quote_ident
from siselect.selection.judges import NoJudge
from siselect.selection.tournament import run_tournament

# The shared fixtures (admin, chat, hostile, probe, ...) load as a plugin, once;
# their module must be marked for assertion rewriting before it is imported.
pytest.register_assert_rewrite("safety_fixtures")
pytest_plugins = ["safety_fixtures"]

from safety_fixtures import (  # noqa: E402
    OWNERS,
    assert_clean,
    db_state,
    fast_llm,
    llm_settings,
    owners_sql,
    refused_url,
    wait_for,
)

ANSWER = '{"rows": [["nobody"]]}'
CANDIDATES = [owners_sql("score > 0"), owners_sql("score > 1"), owners_sql("score = 0")]
# Fast on D (15 rows); on any D' of fewer than 10 rows it sleeps: it times out only in
# the middle of the tournament, while its pair is being separated.
SLOW_ON_INSTANCES = owners_sql(
    f"id > 5 AND CASE WHEN (SELECT count(*) FROM {quote_ident(OWNERS)}) < 10 "
    "THEN (SELECT 1 FROM pg_sleep({})) = 1 ELSE true END"
)
HANG = 20.0  # seconds: what tells a hang from slowness on a loaded two-core machine


@pytest.fixture(scope="module", autouse=True)
def sleep_allowed(dsn):
    """SLOW_ON_INSTANCES sleeps: pg_sleep is volatile, so an administrator must allow it."""
    with names_allowed(dsn, ("pg_catalog", "pg_sleep"), why="test_safety_faults"):
        yield

# name -> (what the endpoint does, LLM settings beyond fast_llm's)
ENDPOINT_FAULTS = {
    "down": (None, {}),
    "slow": (Reply(content=ANSWER, delay=4.0), {"read_timeout": 0.5, "deadline": 1.0}),
    "trickling": (Reply(content=ANSWER, trickle=0.05), {"read_timeout": 1.0, "deadline": 1.5}),
    "garbage": (Reply(body=b"\x00\xff<html>not json at all"), {}),
    "not a completion": (Reply(body=b'{"object": "error", "choices": []}'), {}),
    "huge body": (Reply(body=b'{"x": "' + b"y" * 3_000_000 + b'"}'),
                  {"max_response_bytes": 1_000_000}),
    "huge body, no length": (Reply(body=b"z" * 3_000_000, declare_length=False),
                             {"max_response_bytes": 1_000_000}),
    "server errors": (Reply(status=503, body=b'{"error": {"message": "overloaded"}}'),
                      {"retries": 2, "backoff": 0.05}),
}


def tournament_sql(candidates: list[str], schema: str) -> tuple[str, tuple]:
    return ("SELECT siselect.tournament(%s, 'Which owners?', search_path => %s)",
            (candidates, schema))


@pytest.mark.parametrize("fault", list(ENDPOINT_FAULTS))
def test_endpoint_faults_give_draws_in_bounded_time(admin, hostile, chat, fault):
    reply, settings = ENDPOINT_FAULTS[fault]
    url = refused_url() if reply is None else chat.base_url
    if reply is not None:
        chat.respond_with(lambda request: reply)
    before = db_state(admin)
    with llm_settings(admin, **fast_llm(url, **settings)):
        started = time.monotonic()
        result = admin.execute(*tournament_sql(CANDIDATES, hostile)).fetchone()[0]
        elapsed = time.monotonic() - started
    assert elapsed < HANG
    assert len(result["duels"]) == 3 and result["winner"] is not None
    for duel in result["duels"]:
        assert duel["verdict"] == "draw"
        assert duel["judge"]["rows"] is None and duel["judge"]["error"]
    assert result["decided_by"].startswith(("consistency", "input order"))
    assert_clean(admin, before)


def test_a_candidate_timing_out_mid_tournament_server_side(admin, hostile):
    """Inside the server only the caller's statement_timeout can stop a query: the call
    ends with 57014 and the session goes on."""
    before = db_state(admin)
    admin.execute("SET statement_timeout = '2s'")
    try:
        started = time.monotonic()
        with pytest.raises(psycopg.errors.QueryCanceled):
            # judge none: with no endpoint configured, the llm judge is refused at once.
            admin.execute(tournament_sql(
                [CANDIDATES[0], SLOW_ON_INSTANCES.format(30)], hostile)[0].replace(
                    "search_path", "judge => 'none', search_path"),
                [[CANDIDATES[0], SLOW_ON_INSTANCES.format(30)], hostile])
        assert time.monotonic() - started < HANG
    finally:
        admin.execute("RESET statement_timeout")
    assert admin.execute("SELECT 1").fetchone() == (1,)
    assert_clean(admin, before)


def test_a_candidate_timing_out_mid_tournament_client_side(dsn, admin, hostile):
    """Outside, each query has its own limit: the pair ends in a draw that says why."""
    before = db_state(admin)
    with connect(dsn, hostile, statement_timeout_ms=500) as conn:
        started = time.monotonic()
        result = run_tournament(PsycopgExecutor(conn),
                                [CANDIDATES[0], SLOW_ON_INSTANCES.format(30)], "Which owners?",
                                None, NoJudge(), Options())
        assert time.monotonic() - started < HANG
    (duel,) = result["duels"]
    assert duel["separation"] == "error" and "57014" in duel["reason"]
    assert result["winner"] is not None
    assert_clean(admin, before)


def backend_busy(admin: psycopg.Connection, pid: int) -> bool:
    row = admin.execute("SELECT state FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
    return bool(row) and row[0] == "active"


def run_in_thread(dsn: str, sql: str, args: tuple) -> tuple[threading.Thread, dict, int]:
    """Start ``sql`` on a new connection in a thread; returns it, its outcome, its pid."""
    conn = psycopg.connect(dsn, autocommit=True)
    outcome: dict = {"conn": conn}

    def work() -> None:
        try:
            outcome["result"] = conn.execute(sql, args).fetchone()
        except psycopg.Error as exc:
            outcome["error"] = exc
        outcome["ended"] = time.monotonic()

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread, outcome, conn.info.backend_pid


LLM_DELAY = 3.0  # seconds each LLM request takes


@pytest.mark.parametrize("where", ["in SQL", "in the LLM call"])
def test_pg_cancel_backend_ends_a_running_tournament(dsn, admin, hostile, chat, where):
    before = db_state(admin)
    chat.respond_with(lambda request: Reply(content=ANSWER, delay=LLM_DELAY))
    candidates = ([CANDIDATES[0], SLOW_ON_INSTANCES.format(60)] if where == "in SQL"
                  else CANDIDATES)
    # Three votes a duel: the cancel must not wait for the votes still to come.
    settings = fast_llm(chat.base_url, read_timeout=10.0, deadline=10.0, votes=3,
                        early_stop=False)
    with llm_settings(admin, **settings):
        thread, outcome, pid = run_in_thread(dsn, *tournament_sql(candidates, hostile))
        try:
            if where == "in SQL":
                assert wait_for(lambda: backend_busy(admin, pid), 10)
                time.sleep(1.0)  # well into the duel, in pg_sleep on D'
            else:
                assert wait_for(lambda: bool(chat.chat_requests()), HANG)
            cancelled = time.monotonic()
            assert admin.execute("SELECT pg_cancel_backend(%s)", (pid,)).fetchone()[0]
            thread.join(HANG)
            assert not thread.is_alive(), "the cancelled call did not end"
            assert isinstance(outcome.get("error"), psycopg.errors.QueryCanceled), outcome
            # An HTTP call in progress is not interruptible: the call ends after it.
            assert outcome["ended"] - cancelled < 2 * LLM_DELAY
            assert outcome["conn"].execute("SELECT 1").fetchone() == (1,)
        finally:
            outcome["conn"].close()
    assert_clean(admin, before)


CLIENT = """
import sys, psycopg
conn = psycopg.connect(sys.argv[1], autocommit=True)
conn.execute(sys.argv[2])
print(conn.info.backend_pid, flush=True)
conn.execute("SELECT siselect.tournament(%s, 'q', judge => 'none', search_path => %s)",
             ([sys.argv[3], sys.argv[4]], sys.argv[5]))
"""


@pytest.mark.parametrize("setting", [
    "SET client_connection_check_interval = '200ms'",
    "SET statement_timeout = '3s'",
], ids=["connection check", "statement timeout"])
def test_a_vanished_client_ends_its_backend(dsn, admin, hostile, setting):
    """The client is killed mid-call: its backend ends, noticing the lost connection (with
    client_connection_check_interval) or at the call's statement_timeout at the latest."""
    before = db_state(admin)
    with subprocess.Popen(
        [sys.executable, "-c", CLIENT, dsn, setting, CANDIDATES[0],
         SLOW_ON_INSTANCES.format(60), hostile],
        stdout=subprocess.PIPE, text=True,
    ) as client:
        try:
            assert client.stdout is not None
            pid = int(client.stdout.readline())
            assert wait_for(lambda: backend_busy(admin, pid), 10)
            time.sleep(0.5)
        finally:
            client.send_signal(signal.SIGKILL)
            client.wait(10)
    killed = time.monotonic()

    def gone() -> bool:
        return admin.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s",
                             (pid,)).fetchone()[0] == 0

    assert wait_for(gone, HANG), "the backend of the vanished client is still there"
    assert time.monotonic() - killed < HANG
    assert_clean(admin, before)
