"""The LLM judge's audit in the server: what left it, one record per completion sent,
read back through siselect.judge_audit by members of siselect_auditor; kept when the
caller rolls back; nothing written with the audit off."""

import hashlib
import json

import psycopg
import pytest

from siselect.selection.judge_audit import prompt_sha256

CANDIDATES = [f"SELECT superhero_name FROM superhero WHERE height_cm > {h}" for h in (200, 210)]
QUESTION = "Which heroes are taller than 2.1 m?"
TOURNAMENT = "SELECT siselect.tournament(%s, %s, judge => 'llm', search_path => %s)"
AUDIT = "SELECT * FROM siselect.judge_audit WHERE call_id IS NOT NULL ORDER BY sent_at"


@pytest.fixture
def admin(conn, chat):
    """A superuser session; ``configure(**settings)`` points the judge at the fake endpoint.
    The audit file is emptied first (records of earlier tests), the settings removed after."""
    chat.respond_with(lambda request: '{"rows": [["Hulk"]]}')
    _empty_audit(conn)
    yield conn
    conn.execute("SELECT siselect.set_llm_config(NULL)")


@pytest.fixture
def configure(admin, chat):
    def apply(**settings):
        admin.execute("SELECT siselect.set_llm_config(%s::jsonb)",
                      (json.dumps({"base_url": chat.base_url, "model": "audited",
                                   **settings}),))
    return apply


def _empty_audit(conn) -> None:
    # The file belongs to the server's OS user; the test truncates it through the server.
    conn.execute("""
        DO $$
        import os
        path = os.path.join(os.getcwd(), 'siselect', 'judge_audit.jsonl')
        if os.path.exists(path):
            os.truncate(path, 0)
        $$ LANGUAGE plpython3u""")


def rows(conn) -> list[dict]:
    with conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        return cur.execute(AUDIT).fetchall()


def test_one_record_per_completion_sent(admin, configure, chat, superhero):
    configure(audit="on")
    result = admin.execute(TOURNAMENT, (CANDIDATES, QUESTION, superhero)).fetchone()[0]
    sent = chat.chat_requests()
    audited = rows(admin)
    assert sent and len(audited) == len(sent) == result["judge_completions"]["sent"]
    assert sorted(r["prompt_sha256"] for r in audited) == \
        sorted(prompt_sha256(r.body["messages"]) for r in sent)
    assert sorted(r["vote"] for r in audited) == sorted(r.body["seed"] for r in sent)
    duel = next(d for d in result["duels"] if "instance" in d)
    for record in audited:
        assert record["endpoint"] == chat.base_url + "/chat/completions"
        assert record["model"] == "audited"
        assert record["tables"] == sorted(duel["instance"])
        assert record["columns"] == [f"{t}.{c}" for t in sorted(duel["instance"])
                                     for c in duel["instance"][t]["columns"]]
        assert record["masked_columns"] == [] and record["messages"] is None
        assert record["database_name"] == admin.info.dbname
        assert len({r["call_id"] for r in audited}) == 1
    body = json.dumps(sent[0].body["messages"], ensure_ascii=False, sort_keys=True,
                      separators=(",", ":")).encode()
    assert any(r["prompt_bytes"] == len(body) and r["prompt_sha256"] ==
               hashlib.sha256(body).hexdigest() for r in audited)


def test_full_audit_keeps_the_messages_and_the_masked_columns(admin, configure, chat, superhero):
    configure(audit="full", masked_columns=["*.full_name"])
    admin.execute(TOURNAMENT, (CANDIDATES, QUESTION, superhero))
    audited = rows(admin)
    assert audited
    sent = {prompt_sha256(r.body["messages"]): r.body["messages"] for r in chat.chat_requests()}
    for record in audited:
        assert record["messages"] == sent[record["prompt_sha256"]]
        assert record["masked_columns"] == ["superhero.full_name"]


def test_audit_off_writes_nothing(admin, configure, chat, superhero):
    configure()  # the default: off
    admin.execute(TOURNAMENT, (CANDIDATES, QUESTION, superhero))
    assert chat.chat_requests() and rows(admin) == []


def test_a_rolled_back_caller_keeps_the_records(admin, configure, chat, superhero, dsn):
    configure(audit="on")
    with psycopg.connect(dsn) as caller:  # not autocommit: the call runs in a transaction
        caller.execute(TOURNAMENT, (CANDIDATES, QUESTION, superhero))
        caller.rollback()
    assert len(rows(admin)) == len(chat.chat_requests()) > 0


def test_only_auditors_read_the_audit(admin, configure, chat, superhero):
    configure(audit="on")
    admin.execute(TOURNAMENT, (CANDIDATES, QUESTION, superhero))
    admin.execute("DROP ROLE IF EXISTS audit_reader")
    admin.execute("DROP ROLE IF EXISTS audit_outsider")
    admin.execute("CREATE ROLE audit_reader IN ROLE siselect_auditor")
    admin.execute("CREATE ROLE audit_outsider IN ROLE siselect_user")
    try:
        for outsider in ("audit_outsider", "siselect_user"):
            admin.execute(f"SET ROLE {outsider}")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                admin.execute(AUDIT)
            admin.execute("RESET ROLE")
        admin.execute("SET ROLE audit_reader")
        assert len(rows(admin)) == len(chat.chat_requests()) > 0
    finally:
        admin.execute("RESET ROLE")
        admin.execute("DROP ROLE audit_reader")
        admin.execute("DROP ROLE audit_outsider")


def test_an_unwritable_audit_sends_nothing(admin, configure, chat, superhero):
    """With the audit on, a record that cannot be written stops its request."""
    configure(audit="on")
    admin.execute("""
        DO $$
        import os
        path = os.path.join(os.getcwd(), 'siselect', 'judge_audit.jsonl')
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        if os.path.exists(path):
            os.remove(path)
        os.mkdir(path)
        $$ LANGUAGE plpython3u""")
    try:
        result = admin.execute(TOURNAMENT, (CANDIDATES, QUESTION, superhero)).fetchone()[0]
    finally:
        admin.execute("""
            DO $$
            import os
            os.rmdir(os.path.join(os.getcwd(), 'siselect', 'judge_audit.jsonl'))
            $$ LANGUAGE plpython3u""")
    assert not chat.chat_requests()
    votes = [v for d in result["duels"] for v in d.get("judge", {}).get("votes", [])]
    assert votes and all("judge audit could not be written" in v["error"] for v in votes)
