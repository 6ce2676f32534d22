"""``siselect load``: a SQLite database into a schema."""

import argparse

from siselect.client.options import common, info, path_arg, resolve_dsn


def add_parser(sub) -> None:
    p = sub.add_parser("load", help="load a SQLite database (its tables become schema NAME)")
    p.add_argument("file", type=path_arg, help="the .sqlite file")
    p.add_argument("--name", help="name to load it under (default: the file's stem)")
    p.add_argument("--force", action="store_true", help="reload even if unchanged")
    p.add_argument(
        "--cascade",
        action="store_true",
        help="replace a schema loaded from another file, and drop the objects outside it "
        "that depend on it (listed); without it such a reload is refused",
    )
    common(p, db=False)


def run(args: argparse.Namespace) -> int:
    from siselect.client.loader import load
    from siselect.client.pgexec import connect

    with connect(resolve_dsn(args)) as conn:
        report = load(
            conn, args.file, args.name, say=info, force=args.force, cascade=args.cascade
        )
    for dropped in report.dropped:
        info(f"dropped (--cascade): {dropped}")
    for warning in report.warnings:
        info(f"warning: {warning}")
    total = sum(report.tables.values())
    if report.status == "unchanged":
        print(
            f"{report.name}: unchanged since the last load ({len(report.tables)} tables, "
            f"{total} rows); nothing to do"
        )
    else:
        print(
            f"{report.name}: loaded {len(report.tables)} tables, {total} rows in "
            f"{report.seconds:.2f} s; every table's row count and checksum match the source"
        )
    return 0
