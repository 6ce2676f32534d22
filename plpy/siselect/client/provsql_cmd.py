"""``siselect provsql enable|disable --db NAME``: prepare a loaded database for ProvSQL.

enable: the provsql extension (created if missing), the helper schema, provenance on every
table of schema NAME with its token-to-row mapping, and ``provsql.active = off`` as the
database default (tracking changes ordinary answers; the witness function turns it on for
itself). Re-running it refreshes the mapping after the data changed.
disable: provenance off on NAME's tables; when no loaded database uses ProvSQL any more,
the helper schema, the database default and the extensions enable created go too.
"""

import argparse

import psycopg
import psycopg.errors

from siselect.client.runner_role import grant_provsql
from siselect.runtime.errors import ConfigError, InvalidInput
from siselect.runtime.executor import quote_ident
from siselect.witnesses.provsql import SCHEMA, install_sql, track_sql, untrack_sql
from siselect.witnesses.provsql.status import LOADED


def _one(conn: psycopg.Connection, sql: str, params: tuple = ()):
    row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


def _check_ready(conn: psycopg.Connection, schema: str) -> None:
    if not _one(conn, "SELECT count(*) FROM pg_available_extensions WHERE name = 'provsql'"):
        raise ConfigError("the ProvSQL extension is not installed on this server")
    if _one(conn, LOADED) is None:
        raise ConfigError(
            "ProvSQL must be preloaded: add shared_preload_libraries = 'provsql' to the "
            "server's configuration and restart it"
        )
    if not _one(conn, "SELECT count(*) FROM pg_namespace WHERE nspname = %s", (schema,)):
        raise InvalidInput(f"no loaded database named {schema!r} (no such schema)")


def _missing_extensions(conn: psycopg.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT n FROM unnest(ARRAY['uuid-ossp', 'provsql']) AS n "
        "WHERE n NOT IN (SELECT extname FROM pg_extension)"
    ).fetchall()
    return [r[0] for r in rows]


def enable(conn: psycopg.Connection, schema: str) -> int:
    """Prepare loaded database ``schema`` for the ProvSQL backend; the number of tables."""
    _check_ready(conn, schema)
    with conn.transaction():
        created = _missing_extensions(conn)
        # ProvSQL calls public.uuid_generate_v5: uuid-ossp must live in public, not in
        # the loaded database's schema that heads this connection's search_path.
        conn.execute('CREATE EXTENSION IF NOT EXISTS "uuid-ossp" SCHEMA public')
        conn.execute("CREATE EXTENSION IF NOT EXISTS provsql")
        conn.execute(install_sql())
        for name in created:
            conn.execute(
                f"INSERT INTO {SCHEMA}.created_extension VALUES (%s) ON CONFLICT DO NOTHING",
                (name,),
            )
        tables = _one(conn, track_sql(schema))
        grant_provsql(conn)
        database = _one(conn, "SELECT current_database()")
        conn.execute(f"ALTER DATABASE {quote_ident(database)} SET provsql.active = off")
    # add_provenance rewrote every row; reclaim the old versions (outside a transaction).
    for (table,) in conn.execute(
        "SELECT format('%%I.%%I', schemaname, tablename) FROM pg_tables WHERE schemaname = %s",
        (schema,),
    ).fetchall():
        conn.execute(f"VACUUM (ANALYZE) {table}")
    return int(tables or 0)


def disable(conn: psycopg.Connection, schema: str) -> int:
    """Undo :func:`enable` for ``schema``; the number of tables that lose provenance."""
    if _one(conn, "SELECT to_regclass(%s)", (f"{SCHEMA}.token_row",)) is None:
        return 0
    with conn.transaction():
        tables = _one(conn, untrack_sql(schema))
        if _one(conn, f"SELECT count(*) FROM {SCHEMA}.token_row") == 0:
            _remove_helpers(conn)
    return int(tables or 0)


def _remove_helpers(conn: psycopg.Connection) -> None:
    created = [r[0] for r in conn.execute(f"SELECT name FROM {SCHEMA}.created_extension")]
    conn.execute(f"DROP SCHEMA {SCHEMA} CASCADE")
    database = _one(conn, "SELECT current_database()")
    conn.execute(f"ALTER DATABASE {quote_ident(database)} RESET provsql.active")
    tracked_elsewhere = _one(
        conn,
        "SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
        "WHERE a.attname = 'provsql' AND NOT a.attisdropped AND c.relkind = 'r' "
        "AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass "
        "AND d.objid = c.oid AND d.deptype = 'e')",  # not the extension's own tables
    )
    if tracked_elsewhere:
        return  # someone else's tables still use ProvSQL: keep the extension
    for name in ("provsql", "uuid-ossp"):
        if name in created:
            try:
                with conn.transaction():  # a savepoint: a dependent object keeps it, no harm
                    conn.execute(f"DROP EXTENSION IF EXISTS {quote_ident(name)}")
            except psycopg.errors.DependentObjectsStillExist:
                pass


def run(args: argparse.Namespace) -> int:
    """The subcommand: enable or disable, then one line saying what changed."""
    from siselect.client.options import connect_db

    with connect_db(args, runner=False) as conn:
        if args.action == "enable":
            count = enable(conn, args.db)
            print(f"{args.db}: provenance on {count} tables; the ProvSQL backend can serve it")
        else:
            count = disable(conn, args.db)
            print(f"{args.db}: provenance removed from {count} tables")
    return 0
