"""``siselect bench-compare A B``: two finished bench runs side by side."""

import argparse

from siselect.client.options import path_arg


def add_parser(sub) -> None:
    from siselect.client.exit_codes import epilog

    p = sub.add_parser(
        "bench-compare", help="compare two finished bench runs: figures, and the tasks that "
        "flipped per method and why", epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", type=path_arg, metavar="A", help="the --out folder of the first run")
    p.add_argument("b", type=path_arg, metavar="B", help="the --out folder of the second run")
    p.add_argument("--html", metavar="FILE", help="also write the comparison as an HTML page")
    p.add_argument("--json", action="store_true", help="last line: the comparison as JSON")


def run(args: argparse.Namespace) -> int:
    from siselect.client.bench.compare import compare, compare_html, compare_text
    from siselect.client.exit_codes import OK
    from siselect.client.options import emit_json, info, writable_output

    page = writable_output(args.html, (".html", ".htm")) if args.html else None
    result = compare(args.a, args.b, page.parent if page is not None else None)
    if page is not None:
        page.write_text(compare_html(result), encoding="utf-8")
        info(f"comparison written to {page}")
    if args.json:
        emit_json(result)
    else:
        print(compare_text(result))
    return OK
