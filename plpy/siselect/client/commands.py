"""Subcommands: each adds its parser (``SPECS``) and registers its handler."""

import argparse

from ..executor import Rows
from ..transpile import DIALECTS, to_postgres
from .cli import command, common, connect_db, emit_json, info, path_arg, resolve_dsn
from .render import text_table

SPECS = []


def spec(fn):
    SPECS.append(fn)
    return fn


@spec
def _server(sub) -> None:
    p = sub.add_parser("server", help="start, inspect or stop the embedded PostgreSQL")
    p.add_argument("action", choices=["start", "status", "stop"])


@command("server")
def server(args: argparse.Namespace) -> int:
    from .embedded import cluster, ensure_database

    local = cluster()
    if args.action == "start":
        info("started" if local.start() else "already running")
        info(f"data directory: {local.datadir}")
        print(ensure_database(local))
        return 0
    if args.action == "status":
        if local.running():
            print(f"running on port {local.port()}, data directory {local.datadir}")
            print(local.dsn())
            return 0
        print(f"not running (data directory {local.datadir})")
        return 3
    print("stopped" if local.stop() else "not running")
    return 0


@spec
def _load(sub) -> None:
    p = sub.add_parser("load", help="load a SQLite database (its tables become schema NAME)")
    p.add_argument("file", type=path_arg, help="the .sqlite file")
    p.add_argument("--name", help="name to load it under (default: the file's stem)")
    p.add_argument("--force", action="store_true", help="reload even if unchanged")
    common(p, db=False)


@command("load")
def load_cmd(args: argparse.Namespace) -> int:
    from .loader import load
    from .pgexec import connect

    with connect(resolve_dsn(args)) as conn:
        report = load(conn, args.file, args.name, say=info, force=args.force)
    for warning in report.warnings:
        info(f"warning: {warning}")
    total = sum(report.tables.values())
    if report.status == "unchanged":
        print(f"{report.name}: unchanged since the last load ({len(report.tables)} tables, "
              f"{total} rows); nothing to do")
    else:
        print(f"{report.name}: loaded {len(report.tables)} tables, {total} rows in "
              f"{report.seconds:.2f} s; every table's row count and checksum match the source")
    return 0


@spec
def _sql(sub) -> None:
    p = sub.add_parser("sql", help="run one read-only query and print its rows")
    p.add_argument("query")
    p.add_argument("--dialect", choices=DIALECTS, default="postgres")
    p.add_argument("--json", action="store_true", help="last line: one JSON object")
    p.add_argument("--max-rows", type=int, default=10_000)
    common(p)


@command("sql")
def sql_cmd(args: argparse.Namespace) -> int:
    from ..catalog import load_catalog
    from .pgexec import PsycopgExecutor

    with connect_db(args) as conn:
        executor = PsycopgExecutor(conn)
        catalog = load_catalog(executor) if args.dialect == "sqlite" else None
        text = to_postgres(args.query, args.dialect, catalog)
        result: Rows = executor.run(text, max_rows=args.max_rows)
    if args.json:
        emit_json({"columns": result.columns, "rows": result.rows, "truncated": result.truncated})
    else:
        print(text_table(result.columns, result.rows))
    return 0


@spec
def _transpile(sub) -> None:
    p = sub.add_parser("transpile", help="print the PostgreSQL text of a query")
    p.add_argument("query")
    p.add_argument("--dialect", choices=DIALECTS, default="sqlite")
    p.add_argument("--db", help="a loaded database, for column names and types")
    p.add_argument("--dsn")


@command("transpile")
def transpile_cmd(args: argparse.Namespace) -> int:
    catalog = None
    if args.db:
        from ..catalog import load_catalog
        from .pgexec import PsycopgExecutor, connect

        with connect(resolve_dsn(args), args.db) as conn:
            catalog = load_catalog(PsycopgExecutor(conn))
    print(to_postgres(args.query, args.dialect, catalog))
    return 0
