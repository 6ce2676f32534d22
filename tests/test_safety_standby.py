"""Issue 7, point 6: separate and tournament work inside BEGIN READ ONLY and on a hot
standby: a streaming replica of the test cluster, made with pg_basebackup and started on
loopback as the postgres OS user for this module, then removed."""

import json

import psycopg
import pytest

from conftest import server_neutral
from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.instances.separate import separate

# The shared fixtures (admin, chat, hostile, probe, ...) load as a plugin, once;
# their module must be marked for assertion rewriting before it is imported.
pytest.register_assert_rewrite("safety_fixtures")
pytest_plugins = ["safety_fixtures"]

from safety_fixtures import (  # noqa: E402
    assert_clean,
    db_state,
    fast_llm,
    leftovers,
    llm_settings,
    owners_sql,
    replica_unavailable,
    stable,
    start_replica,
    wait_for,
    wait_replayed,
    with_dbname,
)

TALL = "SELECT count(*) FROM superhero WHERE height_cm > 200"
TALLISH = "SELECT count(*) FROM superhero WHERE height_cm >= 198"
CANDIDATES = [TALLISH, TALL, "SELECT count(*) FROM superhero"]
SEPARATE = "SELECT siselect.separate(%s, %s, search_path => %s)"
TOURNAMENT = ("SELECT siselect.tournament(%s, 'How many heroes are taller than 200 cm?', "
              "judge => %s, reference => %s, search_path => 'superhero')")


@pytest.fixture(scope="module")
def replica(dsn: str, superhero: str, hostile: str):
    """A running hot standby of the test cluster; yields a DSN of the same database."""
    with psycopg.connect(dsn, autocommit=True) as primary:
        why = replica_unavailable(primary)
        if why:
            pytest.skip(f"no replica: {why}")
        standby = start_replica(dsn, primary)
    try:
        yield with_dbname(dsn, standby.port), standby
    finally:
        standby.stop()


@pytest.fixture
def standby(replica):
    with psycopg.connect(replica[0], autocommit=True) as conn:
        yield conn


def test_the_replica_is_a_streaming_hot_standby(admin, replica, standby):
    assert standby.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
    admin.execute("CREATE TABLE safety_streamed AS SELECT 42 AS answer")
    try:
        wait_replayed(replica[1], replica[0], admin)
        assert standby.execute("SELECT answer FROM safety_streamed").fetchone() == (42,)
    finally:
        admin.execute("DROP TABLE safety_streamed")
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        standby.execute("CREATE TABLE safety_refused (a int)")


def test_the_primarys_replayed_locks_are_not_the_standbys_leftovers(dsn, admin, replica,
                                                                   standby):
    """The startup process holds, until their commit is replayed, the locks the primary
    takes (its DDL, autovacuum truncating a table): they are not counted as leftovers,
    while a session of the standby that keeps a transaction open is."""
    admin.execute("CREATE TABLE safety_locked (a int)")
    try:
        with psycopg.connect(dsn) as holder:
            holder.execute("LOCK TABLE safety_locked IN ACCESS EXCLUSIVE MODE")
            held = ("SELECT count(*) FROM pg_catalog.pg_locks l "
                    "JOIN pg_catalog.pg_stat_activity a USING (pid) "
                    "WHERE a.backend_type = 'startup' AND l.mode = 'AccessExclusiveLock' "
                    "AND l.relation IS NOT NULL")
            assert wait_for(lambda: standby.execute(held).fetchone() != (0,), 30)
            assert leftovers(standby) == []
            with psycopg.connect(replica[0]) as reader:
                reader.execute("SELECT count(*) FROM superhero.colour").fetchone()
                assert any("holds a relation lock (AccessShareLock)" in found
                           for found in leftovers(standby))
            holder.rollback()
    finally:
        admin.execute("DROP TABLE safety_locked")


def test_separate_on_the_standby_matches_the_primary(admin, standby, hostile):
    before = db_state(standby)
    for q1, q2, schema in [(TALL, TALLISH, "superhero"),
                           (owners_sql("score > 1"), owners_sql("score >= 1"), hostile)]:
        on_primary = admin.execute(SEPARATE, (q1, q2, schema)).fetchone()[0]
        on_standby = standby.execute(SEPARATE, (q1, q2, schema)).fetchone()[0]
        assert on_standby["status"] == "separated"
        # The primary may preload ProvSQL where the standby does not: only the reason
        # why it could not serve may differ.
        assert stable(server_neutral(on_standby)) == stable(server_neutral(on_primary))
    assert_clean(standby, before)


@pytest.mark.parametrize("judge", ["reference", "none"])
def test_tournament_on_the_standby_matches_the_primary(admin, standby, judge):
    before = db_state(standby)
    reference = TALL if judge == "reference" else None
    on_primary = admin.execute(TOURNAMENT, (CANDIDATES, judge, reference)).fetchone()[0]
    on_standby = standby.execute(TOURNAMENT, (CANDIDATES, judge, reference)).fetchone()[0]
    assert len(on_standby["duels"]) == 3
    assert stable(server_neutral(on_standby)) == stable(server_neutral(on_primary))
    if judge == "reference":
        assert on_standby["winner"]["index"] == 1
    report = standby.execute("SELECT siselect.tournament_report(%s)",
                             (json.dumps(on_standby),)).fetchone()[0]
    assert "SELECT" in report
    assert_clean(standby, before)


def test_the_llm_judge_on_the_standby(standby, chat):
    chat.respond_with(lambda request: '{"rows": [[0]]}')
    before = db_state(standby)
    with llm_settings(standby, **fast_llm(chat.base_url)):
        result = standby.execute(TOURNAMENT, (CANDIDATES, "llm", None)).fetchone()[0]
    # Every duel that reached the judge asked once (one vote); two may show the judge the
    # same prompt, which a call sends once. A drawn pair may be separated again.
    sent = result["judge_completions"]
    judged = [d for d in result["duels"] if "judge" in d]
    assert len(chat.chat_requests()) == sent["sent"]
    assert sent["sent"] + sent["cached"] == len(judged) >= 3
    assert all("judge" in d and d["judge"]["rows"] == [[0]] for d in result["duels"])
    assert_clean(standby, before)


def test_the_client_on_the_standby(replica, standby):
    before = db_state(standby)
    with connect(replica[0], "superhero", statement_timeout_ms=30_000) as conn:
        result = separate(PsycopgExecutor(conn), TALL, TALLISH)
    assert result["status"] == "separated"
    assert_clean(standby, before)


def test_materialize_on_the_standby_is_refused_cleanly(admin, standby):
    before = db_state(standby)
    instance = admin.execute(SEPARATE, (TALL, TALLISH, "superhero")).fetchone()[0]["instance"]
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        standby.execute("SELECT siselect.materialize(%s, search_path => 'superhero')",
                        (json.dumps(instance),))
    assert leftovers(standby) == []
    assert_clean(standby, before)


@pytest.mark.parametrize("where", ["primary", "standby"])
def test_inside_begin_read_only(admin, standby, where):
    conn = admin if where == "primary" else standby
    before = db_state(conn)
    with conn.transaction():
        conn.execute("SET TRANSACTION READ ONLY")
        separated = conn.execute(SEPARATE, (TALL, TALLISH, "superhero")).fetchone()[0]
        chosen = conn.execute(TOURNAMENT, (CANDIDATES, "reference", TALL)).fetchone()[0]
        assert conn.execute("SHOW transaction_read_only").fetchone() == ("on",)
    assert separated["status"] == "separated"
    assert chosen["winner"]["index"] == 1
    assert_clean(conn, before)
