"""``siselect sql``: one read-only query and its rows."""

import argparse

from siselect.client.options import common, connect_db, emit_json
from siselect.client.render import text_table
from siselect.runtime.executor import Rows
from siselect.sqltext.transpile import DIALECTS, to_tree


def add_parser(sub) -> None:
    p = sub.add_parser("sql", help="run one read-only query and print its rows")
    p.add_argument("query")
    p.add_argument("--dialect", choices=DIALECTS, default="postgres")
    p.add_argument("--json", action="store_true", help="last line: one JSON object")
    p.add_argument("--max-rows", type=int, default=10_000)
    common(p)


def run(args: argparse.Namespace) -> int:
    from siselect.client.pgexec import PsycopgExecutor
    from siselect.runtime.catalog import load_catalog
    from siselect.sqltext.nondeterminism import reason_on

    with connect_db(args) as conn:
        executor = PsycopgExecutor(conn)
        catalog = load_catalog(executor) if args.dialect == "sqlite" else None
        tree = to_tree(args.query, args.dialect, catalog)
        result: Rows = executor.run(tree.sql(dialect="postgres"), max_rows=args.max_rows)
        reason = reason_on(executor.run, tree, whole=not result.truncated)
    if args.json:
        emit_json({"columns": result.columns, "rows": result.rows, "truncated": result.truncated,
                   "nondeterministic": reason is not None, "nondeterministic_reason": reason})
    else:
        print(text_table(result.columns, result.rows))
        if reason is not None:
            print(f"note: nondeterministic: {reason}")
    return 0
