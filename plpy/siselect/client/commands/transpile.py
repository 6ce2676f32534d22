"""``siselect transpile``: the PostgreSQL text of a query."""

import argparse

from siselect.client.options import resolve_dsn
from siselect.sqltext.transpile import DIALECTS, to_postgres


def add_parser(sub) -> None:
    p = sub.add_parser("transpile", help="print the PostgreSQL text of a query")
    p.add_argument("query")
    p.add_argument("--dialect", choices=DIALECTS, default="sqlite")
    p.add_argument("--db", help="a loaded database, for column names and types")
    p.add_argument("--dsn")


def run(args: argparse.Namespace) -> int:
    catalog = None
    if args.db:
        from siselect.client.pgexec import PsycopgExecutor, connect
        from siselect.runtime.catalog import load_catalog

        with connect(resolve_dsn(args, runner=True), args.db) as conn:
            catalog = load_catalog(PsycopgExecutor(conn))
    print(to_postgres(args.query, args.dialect, catalog))
    return 0
