"""Issue 7, point 2: the functions run with the caller's privileges and a pinned
search_path, only members of siselect_user may call them, a role learns no row it cannot
read (not through an instance, a report or the LLM's prompt), and the LLM settings are
out of an ordinary role's reach."""

import json
import os
import stat
from pathlib import Path

import psycopg
import pytest

from chat_server import ChatServer
from siselect.runtime.executor import quote_ident

# The shared fixtures (admin, chat, hostile, probe, ...) load as a plugin, once;
# their module must be marked for assertion rewriting before it is imported.
pytest.register_assert_rewrite("safety_fixtures")
pytest_plugins = ["safety_fixtures"]

from safety_fixtures import (  # noqa: E402
    assert_clean,
    db_state,
    dsn_as,
    fast_llm,
    llm_settings,
)

# Superusers only; the judge audit, superusers and members of siselect_auditor.
ADMIN_ONLY = {"set_llm_config", "llm_config", "judge_audit_entries"}
SALARIES = [731_337, 842_448, 953_559, 164_660]
HIDDEN = [f"HIDDEN-NOTE-{i}" for i in range(4)]
API_KEY = "sk-safety-test-0123456789"


@pytest.fixture(scope="module")
def roles(dsn: str, superhero: str):
    """``reader``: a member of siselect_user who may read superhero, payroll's id and name
    (not salary) and, through row-level security, only its own notes; ``outsider``: may
    read superhero but is no member of siselect_user."""
    suffix = os.getpid()
    reader, outsider = f"safety_reader_{suffix}", f"safety_outsider_{suffix}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        for role in (reader, outsider):
            conn.execute(f"CREATE ROLE {quote_ident(role)} LOGIN")
            conn.execute(f"GRANT USAGE ON SCHEMA superhero TO {quote_ident(role)}")
            conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA superhero TO {quote_ident(role)}")
        conn.execute(f"GRANT siselect_user TO {quote_ident(reader)}")
        conn.execute("CREATE SCHEMA safety_secret")
        conn.execute("CREATE TABLE safety_secret.payroll "
                     "(id int PRIMARY KEY, name text, salary int)")
        conn.execute("INSERT INTO safety_secret.payroll SELECT i, 'employee ' || i, s "
                     "FROM unnest(%s::int[]) WITH ORDINALITY AS u(s, i)", (SALARIES,))
        conn.execute("CREATE TABLE safety_secret.notes (id int PRIMARY KEY, owner text, body text)")
        conn.execute(
            "INSERT INTO safety_secret.notes VALUES (1, %s, 'mine one'), (2, %s, 'mine two'), "
            "(3, %s, 'mine three'), (4, 'someone', %s), (5, 'someone', %s), "
            "(6, 'someone', %s), (7, 'someone', %s)", (reader, reader, reader, *HIDDEN),
        )
        conn.execute("ALTER TABLE safety_secret.notes ENABLE ROW LEVEL SECURITY")
        conn.execute("CREATE POLICY own ON safety_secret.notes USING (owner = current_user)")
        conn.execute(f"GRANT USAGE ON SCHEMA safety_secret TO {quote_ident(reader)}")
        conn.execute(f"GRANT SELECT (id, name) ON safety_secret.payroll TO {quote_ident(reader)}")
        conn.execute(f"GRANT SELECT ON safety_secret.notes TO {quote_ident(reader)}")
    yield {"reader": reader, "outsider": outsider}
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA safety_secret CASCADE")
        for role in (reader, outsider):
            conn.execute(f"DROP OWNED BY {quote_ident(role)}")
            conn.execute(f"DROP ROLE {quote_ident(role)}")


def connect_as(dsn: str, role: str) -> psycopg.Connection:
    """A connection as ``role`` whose search_path is the secret schema (its "database")."""
    conn = psycopg.connect(dsn_as(dsn, role), autocommit=True)
    conn.execute("SET search_path TO safety_secret")
    return conn


def functions(admin: psycopg.Connection) -> list[tuple[str, str, bool, list[str]]]:
    return admin.execute(
        "SELECT p.proname, p.oid::regprocedure::text, p.prosecdef, coalesce(p.proconfig, '{}') "
        "FROM pg_proc p WHERE p.pronamespace = 'siselect'::regnamespace ORDER BY 1"
    ).fetchall()


def test_functions_run_as_the_caller_with_a_pinned_search_path(admin):
    found = functions(admin)
    assert {"separate", "tournament", "tournament_report", "materialize"} <= {f[0] for f in found}
    for _, signature, definer, config in found:
        assert not definer, f"{signature} is SECURITY DEFINER"
        assert "search_path=pg_catalog, pg_temp" in config, f"{signature}: {config}"


def test_execute_is_granted_to_siselect_user_only(admin, roles):
    public = admin.execute(
        "SELECT p.oid::regprocedure::text FROM pg_proc p, aclexplode(coalesce(p.proacl, "
        "acldefault('f', p.proowner))) AS a WHERE p.pronamespace = 'siselect'::regnamespace "
        "AND a.grantee = 0 AND a.privilege_type = 'EXECUTE'"
    ).fetchall()
    assert public == []
    for name, signature, _, _ in functions(admin):
        may = {
            role: admin.execute("SELECT has_function_privilege(%s, %s, 'EXECUTE')",
                                (roles[role], signature)).fetchone()[0]
            for role in ("reader", "outsider")
        }
        assert may == {"reader": name not in ADMIN_ONLY, "outsider": False}, signature


def test_an_outsider_cannot_call_anything(dsn, roles, superhero):
    with connect_as(dsn, roles["outsider"]) as conn:
        for call in ["SELECT siselect.version()",
                     "SELECT siselect.separate('SELECT 1', 'SELECT 2')",
                     "SELECT siselect.tournament(ARRAY['SELECT 1'], 'q', judge => 'none')",
                     "SELECT siselect.llm_config()"]:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(call)


def leaks(value: object, secrets: list) -> list[str]:
    """The secrets that appear in ``value`` (a result, a report, an error text)."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return [str(s) for s in secrets if str(s) in text]


def test_no_select_privilege_means_a_permission_error(admin, dsn, roles):
    before = db_state(admin)
    salary = "SELECT salary FROM payroll WHERE id > 1"
    everything = "SELECT * FROM payroll"
    with connect_as(dsn, roles["reader"]) as conn:
        for q1, q2 in [(salary, "SELECT salary FROM payroll"),
                       (everything, "SELECT 1")]:
            with pytest.raises(psycopg.errors.InsufficientPrivilege) as caught:
                conn.execute("SELECT siselect.separate(%s, %s)", (q1, q2))
            assert leaks(str(caught.value) + str(caught.value.diag.message_detail), SALARIES) == []
        result = conn.execute(
            "SELECT siselect.tournament(%s, 'Who earns most?', judge => 'none')",
            ([salary, everything, "SELECT max(salary) FROM payroll"],),
        ).fetchone()[0]
        assert {d["sqlstate"] for d in result["dropped"]} == {"42501"}
        assert result["winner"] is None
        report = conn.execute("SELECT siselect.tournament_report(%s)", (json.dumps(result),))
        assert leaks(result, SALARIES) == leaks(report.fetchone()[0], SALARIES) == []
        # The reference judge runs its query on each D' with the caller's privileges too.
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as caught:
            conn.execute(
                "SELECT siselect.tournament(%s, 'q', judge => 'reference', reference => %s)",
                (["SELECT body FROM notes", "SELECT body FROM notes WHERE id > 2"], salary),
            )
        assert leaks(str(caught.value), SALARIES) == []
    assert_clean(admin, before)


def test_column_privileges_hold_for_instances(admin, dsn, roles):
    """An instance is made of whole rows, so queries over the readable columns of a table
    with an unreadable column get a permission error, without values."""
    with connect_as(dsn, roles["reader"]) as conn, \
            pytest.raises(psycopg.errors.InsufficientPrivilege) as caught:
        conn.execute(
            "SELECT siselect.separate(%s, %s)",
            ("SELECT name FROM payroll WHERE id > 1", "SELECT name FROM payroll"),
        )
    assert leaks(str(caught.value), SALARIES) == []
    assert caught.value.diag.message_detail is None


def test_row_level_security_hides_rows_from_instances_reports_and_the_llm(
    admin, dsn, roles, chat
):
    before = db_state(admin)
    chat.respond_with(lambda request: '{"rows": [["mine one"]]}')
    q1 = "SELECT body FROM notes WHERE id > 1"
    q2 = "SELECT body FROM notes"
    q3 = "SELECT body FROM notes WHERE id < 3"
    with llm_settings(admin, **fast_llm(chat.base_url, api_key=API_KEY)), \
            connect_as(dsn, roles["reader"]) as conn:
        separated = conn.execute("SELECT siselect.separate(%s, %s)", (q1, q2)).fetchone()[0]
        assert separated["status"] == "separated"
        for table in separated["instance"].values():
            assert all(row[1] == roles["reader"] for row in table["rows"])
        result = conn.execute(
            "SELECT siselect.tournament(%s, 'Which notes are there?')", ([q1, q2, q3],)
        ).fetchone()[0]
        report = conn.execute(
            "SELECT siselect.tournament_report(%s)", (json.dumps(result),)
        ).fetchone()[0]
    assert chat.chat_requests(), "the LLM judge was asked"
    prompts = [r.body for r in chat.chat_requests()]
    for seen in (separated, result, report, prompts):
        assert leaks(seen, HIDDEN) == []
    assert leaks(result, [API_KEY]) == leaks(report, [API_KEY]) == []
    assert_clean(admin, before)


def settings_file(admin: psycopg.Connection) -> Path:
    return Path(admin.execute("SHOW data_directory").fetchone()[0]) / "siselect" / "llm.json"


def test_the_llm_settings_file_is_private(admin, chat):
    path = settings_file(admin)
    if not os.access(path.parent.parent, os.X_OK):
        pytest.skip(f"the server's data directory {path.parent.parent} is not open to this user")
    with llm_settings(admin, **fast_llm(chat.base_url, api_key=API_KEY)):
        mode = stat.S_IMODE(path.stat().st_mode)
        folder = stat.S_IMODE(path.parent.stat().st_mode)
    assert mode & 0o077 == 0, f"{path} is open to others ({oct(mode)})"
    assert folder & 0o077 == 0, f"{path.parent} is open to others ({oct(folder)})"


def test_the_llm_settings_are_out_of_reach(admin, dsn, roles, chat):
    reader = quote_ident(roles["reader"])
    with ChatServer() as evil, llm_settings(admin, **fast_llm(chat.base_url, api_key=API_KEY)):
        chat.respond_with(lambda request: '{"rows": [[1]]}')
        shown = admin.execute("SELECT siselect.llm_config()").fetchone()[0]
        assert shown["base_url"] == chat.base_url and API_KEY not in json.dumps(shown)
        path = settings_file(admin)
        admin.execute(f"GRANT EXECUTE ON FUNCTION siselect.llm_config(), "
                      f"siselect.set_llm_config(jsonb) TO {reader}")
        try:
            with connect_as(dsn, roles["reader"]) as conn:
                for call, args in [
                    ("SELECT siselect.llm_config()", ()),
                    ("SELECT siselect.set_llm_config(%s::jsonb)",
                     (json.dumps({"base_url": evil.base_url}),)),
                    ("SELECT siselect.set_llm_config(NULL)", ()),
                    ("SELECT pg_read_file(%s)", (str(path),)),
                    ("SELECT pg_read_file('siselect/llm.json')", ()),
                    ("SELECT pg_ls_dir('siselect')", ()),
                    (f"COPY (SELECT '{{}}') TO '{path}'", ()),
                ]:
                    with pytest.raises(psycopg.errors.InsufficientPrivilege):
                        conn.execute(call, args)
                # Settings an ordinary role can make do not redirect the judge.
                for name in ("siselect.llm_url", "siselect.base_url", "siselect.api_key"):
                    conn.execute("SELECT set_config(%s, %s, false)", (name, evil.base_url))
                conn.execute(
                    "SELECT siselect.tournament(%s, 'How many?', search_path => 'superhero')",
                    (["SELECT count(*) FROM superhero WHERE height_cm > 200",
                      "SELECT count(*) FROM superhero WHERE height_cm >= 198"],),
                )
        finally:
            admin.execute(f"REVOKE EXECUTE ON FUNCTION siselect.llm_config(), "
                          f"siselect.set_llm_config(jsonb) FROM {reader}")
        assert admin.execute("SELECT siselect.llm_config()").fetchone()[0]["base_url"] == \
            chat.base_url
        assert chat.chat_requests() and evil.chat_requests() == []
        auth = chat.chat_requests()[0].headers.get("Authorization", "")
        assert auth == f"Bearer {API_KEY}"
