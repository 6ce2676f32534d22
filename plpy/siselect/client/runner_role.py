"""``siselect_runner``: the role the embedded cluster runs candidates as.

A LOGIN role without attributes (no superuser, CREATEDB, CREATEROLE, REPLICATION or
BYPASSRLS), a member of ``siselect_user``, that reads the loaded schemas (granted as each
is loaded) and what the ProvSQL backend uses. PostgreSQL's own privilege checks thus apply
to every candidate: ``pg_read_file``, another schema's tables, ``COPY ... PROGRAM`` are
refused. The embedded cluster creates the role (see ``embedded``); on any other server it
usually does not exist, and these grants are skipped: its administrator grants its roles.
"""

import json

import psycopg

from siselect.client.load_mark import MARK
from siselect.runtime.executor import quote_ident

RUNNER = "siselect_runner"
# ProvSQL's own schema, and the helpers ``siselect provsql enable`` installs.
PROVSQL_SCHEMAS = ("provsql", "siselect_provsql")


def _exists(conn: psycopg.Connection) -> bool:
    row = conn.execute("SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = %s", (RUNNER,))
    return row.fetchone() is not None


def _grant_schema(conn: psycopg.Connection, schema: str, functions: bool = False) -> None:
    schema_ = quote_ident(schema)
    conn.execute(f"GRANT USAGE ON SCHEMA {schema_} TO {RUNNER}")
    conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema_} TO {RUNNER}")
    if functions:
        conn.execute(f"GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA {schema_} TO {RUNNER}")


def grant_loaded(conn: psycopg.Connection, schema: str) -> None:
    """Let the runner read loaded database ``schema`` (in the caller's transaction)."""
    if _exists(conn):
        _grant_schema(conn, schema)


def grant_provsql(conn: psycopg.Connection) -> None:
    """Let the runner use ProvSQL and the witness helpers, where they are installed.

    Granted again after every ``provsql enable``: it may have created tables there."""
    if not _exists(conn):
        return
    present = conn.execute(
        "SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname = ANY(%s)",
        (list(PROVSQL_SCHEMAS),),
    ).fetchall()
    for (schema,) in present:
        _grant_schema(conn, schema, functions=True)


def _ungranted(conn: psycopg.Connection, schemas: list[str]) -> list[str]:
    rows = conn.execute(
        "SELECT nspname FROM pg_catalog.pg_namespace "
        "WHERE nspname = ANY(%s) AND NOT pg_catalog.has_schema_privilege(%s, oid, 'USAGE')",
        (schemas, RUNNER),
    ).fetchall()
    return [r[0] for r in rows]


def loaded_schemas(conn: psycopg.Connection) -> list[str]:

    found = []
    for name, comment in conn.execute(
        "SELECT nspname, pg_catalog.obj_description(oid, 'pg_namespace') "
        "FROM pg_catalog.pg_namespace WHERE pg_catalog.obj_description(oid, 'pg_namespace') "
        "LIKE %s", (f"%{MARK}%",),
    ).fetchall():
        try:
            mark = json.loads(comment)
        except ValueError:
            continue
        if isinstance(mark, dict) and mark.get("mark") == MARK:
            found.append(name)
    return found


def prepare(conn: psycopg.Connection) -> None:
    """In a database where siselect is installed: the runner is a member of siselect_user
    and may read what was loaded (or ProvSQL-enabled) before it existed. Grants only what
    is missing, so that the common case writes no catalog row."""
    if not _exists(conn):
        return
    member = conn.execute(
        "SELECT pg_catalog.pg_has_role(%s, 'siselect_user', 'MEMBER')", (RUNNER,)
    ).fetchone()
    with conn.transaction():
        if member is None or not member[0]:
            conn.execute(f"GRANT siselect_user TO {RUNNER}")
        for schema in _ungranted(conn, loaded_schemas(conn)):
            _grant_schema(conn, schema)
        if _ungranted(conn, list(PROVSQL_SCHEMAS)):
            grant_provsql(conn)
