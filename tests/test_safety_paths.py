"""siselect's own queries never resolve names on the caller's search_path, candidates see
the caller's path with pg_temp last, and literals mean what the checked text says."""

import psycopg
import pytest

from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.instances.separate import separate

TALL = "SELECT COUNT(*) FROM superhero WHERE height_cm > 200"
TALLISH = "SELECT COUNT(*) FROM superhero WHERE height_cm >= 190"


@pytest.fixture
def trap_schema(conn, superhero):
    """A schema on the caller's path with functions that match the arguments of catalog
    queries better than pg_catalog's polymorphic ones do; calling one is an error."""
    conn.execute("CREATE SCHEMA trap")
    for signature, returns in [("unnest(smallint[])", "SETOF smallint"),
                               ("array_position(text[], text)", "integer"),
                               ("array_position(name[], text)", "integer")]:
        conn.execute(
            f"CREATE FUNCTION trap.{signature} RETURNS {returns} LANGUAGE plpgsql AS "
            "$$BEGIN RAISE EXCEPTION 'trap function called'; END$$"
        )
    conn.execute("GRANT USAGE ON SCHEMA trap TO PUBLIC")
    yield f"{superhero}, trap, public"
    conn.execute("DROP SCHEMA trap CASCADE")


def test_internal_queries_ignore_functions_on_the_callers_path(conn, trap_schema):
    result = conn.execute(
        "SELECT siselect.separate(%s, %s, search_path => %s)", (TALL, TALLISH, trap_schema)
    ).fetchone()[0]
    assert result["status"] == "separated"
    tournament = conn.execute(
        "SELECT siselect.tournament(%s, 'How many?', judge => 'none', search_path => %s)",
        ([TALL, TALLISH], trap_schema),
    ).fetchone()[0]
    assert tournament["dropped"] == []


def test_client_internal_queries_ignore_functions_on_the_callers_path(dsn, trap_schema):
    with connect(dsn) as conn:
        conn.execute(f"SET search_path TO {trap_schema}")
        result = separate(PsycopgExecutor(conn), TALL, TALLISH)
    assert result["status"] == "separated"


def test_a_temporary_table_does_not_stand_in_for_the_callers_table(conn, superhero):
    """A temporary ``superhero`` (pg_temp is searched first unless placed) changes nothing."""
    expected = conn.execute(
        "SELECT siselect.separate(%s, %s, search_path => %s)", (TALL, TALLISH, superhero)
    ).fetchone()[0]
    with conn.transaction(force_rollback=True):
        conn.execute("CREATE TEMP TABLE superhero (height_cm integer)")
        conn.execute("INSERT INTO superhero VALUES (500), (500), (195)")
        got = conn.execute(
            "SELECT siselect.separate(%s, %s, search_path => %s)", (TALL, TALLISH, superhero)
        ).fetchone()[0]
    assert got["rows_on_d"] == expected["rows_on_d"]
    assert got["instance"] == expected["instance"]


@pytest.mark.parametrize("setting", ["on", "off"])
def test_backslashes_mean_the_same_whatever_the_callers_setting(conn, superhero, setting):
    q1 = r"SELECT COUNT(*) FROM superhero WHERE full_name <> 'a\'"
    q2 = r"SELECT COUNT(*) FROM superhero WHERE full_name <> 'a\' AND height_cm > 0"
    conn.execute(f"SET standard_conforming_strings = {setting}")
    try:
        result = conn.execute(
            "SELECT siselect.separate(%s, %s, search_path => %s)", (q1, q2, superhero)
        ).fetchone()[0]
    finally:
        conn.execute("RESET standard_conforming_strings")
    assert result["status"] == "separated"
    assert result["sql"]["q1"].endswith(r"<> 'a\'")


def test_settings_of_a_call_do_not_outlive_it(conn, superhero):
    conn.execute("SET standard_conforming_strings = off")
    try:
        conn.execute("SELECT siselect.separate(%s, %s, search_path => %s)",
                     (TALL, TALLISH, superhero))
        assert conn.execute("SHOW standard_conforming_strings").fetchone()[0] == "off"
        assert conn.execute("SHOW transaction_read_only").fetchone()[0] == "off"
    finally:
        conn.execute("RESET standard_conforming_strings")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("SELECT siselect.separate(%s, %s, search_path => %s)",
                     ("SELECT trap_never_defined FROM superhero WHERE siselect.version() > ''",
                      TALL, superhero))
