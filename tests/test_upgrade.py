"""0.1.0 is the first released version: installing it and updating gives what a fresh
install of the current version gives, object for object."""

import urllib.parse

import psycopg
import pytest
from pytest_postgresql.janitor import DatabaseJanitor

from siselect import __version__

# Everything a DBA could tell apart between two installs of the extension's objects.
_OBJECTS = """
SELECT 'function' AS kind, p.oid::regprocedure::text AS name,
       pg_get_functiondef(p.oid) || coalesce(array_to_string(p.proacl, ','), '')
       || coalesce(obj_description(p.oid, 'pg_proc'), '') AS definition
FROM pg_proc p WHERE p.pronamespace = 'siselect'::regnamespace
UNION ALL
SELECT 'relation', c.relname::text,
       c.relkind::text || coalesce(array_to_string(c.relacl, ','), '')
       || coalesce(obj_description(c.oid, 'pg_class'), '')
       || coalesce((SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                                      || a.attnotnull::text, ', ' ORDER BY a.attnum)
                    FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0), '')
FROM pg_class c WHERE c.relnamespace = 'siselect'::regnamespace
UNION ALL
SELECT 'config', c.relname::text, coalesce(array_to_string(e.extcondition, ','), '')
FROM pg_extension e JOIN pg_class c ON c.oid = ANY (e.extconfig) WHERE e.extname = 'siselect'
ORDER BY 1, 2
"""


@pytest.fixture
def fresh_database(cluster_dsn):
    """Makes empty databases on the test cluster, dropped at the end."""
    url = urllib.parse.urlparse(cluster_dsn)
    made = []

    def make(name: str) -> str:
        janitor = DatabaseJanitor(user=url.username or "postgres", host=url.hostname,
                                  port=url.port, dbname=name, password=url.password)
        janitor.init()
        made.append(janitor)
        return url._replace(path=f"/{name}").geturl()

    yield make
    for janitor in made:
        janitor.drop()


def test_update_from_0_1_0_equals_a_fresh_install(fresh_database):
    upgraded, fresh = fresh_database("siselect_upgraded"), fresh_database("siselect_fresh")
    with psycopg.connect(upgraded, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION plpython3u")
        conn.execute("CREATE EXTENSION siselect VERSION '0.1.0'")
        # The 0.1.0 functions find the newer Python package and say what to do.
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="ALTER EXTENSION"):
            conn.execute("SELECT siselect.version()")
        conn.execute("ALTER EXTENSION siselect UPDATE")
        assert conn.execute("SELECT siselect.version()").fetchone()[0] == __version__
        assert conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'siselect'"
        ).fetchone()[0] == __version__
        after_update = conn.execute(_OBJECTS).fetchall()
    with psycopg.connect(fresh, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION siselect CASCADE")
        after_install = conn.execute(_OBJECTS).fetchall()
    assert after_update == after_install
    assert any(kind == "relation" and name == "allowed_names" for kind, name, _ in after_install)


def test_candidate_functions_run_read_only_by_their_definition(conn):
    """The read-only transaction is a property of the functions, restored on return."""
    configs = dict(conn.execute(
        "SELECT proname, array_to_string(proconfig, ' ') FROM pg_proc "
        "WHERE pronamespace = 'siselect'::regnamespace"
    ).fetchall())
    for name in ("separate", "tournament"):
        assert "transaction_read_only=on" in configs[name]
        assert "standard_conforming_strings=on" in configs[name]
    with conn.transaction(force_rollback=True):
        conn.execute("CREATE TEMP TABLE before_call (a int)")
        conn.execute("SELECT siselect.separate('SELECT 1', 'SELECT 2')")
        assert conn.execute("SHOW transaction_read_only").fetchone()[0] == "off"
        conn.execute("CREATE TEMP TABLE after_call (a int)")  # still writable after it


def test_a_broken_copy_of_the_extension_is_reinstalled(fresh_database):
    """A private cluster whose siselect functions cannot load their package (objects of
    the same version number from another build) is repaired by ensure_database."""
    from siselect.client.embedded import ensure_database

    dsn = fresh_database("siselect_broken")
    url = urllib.parse.urlparse(dsn)

    class TestCluster:
        def dsn(self, database):
            return url._replace(path=f"/{database}").geturl()

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION siselect CASCADE")
        conn.execute("CREATE OR REPLACE FUNCTION siselect.version() RETURNS text "
                     "LANGUAGE plpython3u AS $$\nfrom siselect.server import call\n$$")
        with pytest.raises(psycopg.Error, match="No module named"):
            conn.execute("SELECT siselect.version()")
    ensure_database(TestCluster(), "siselect_broken")
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SELECT siselect.version()").fetchone()[0] == __version__
