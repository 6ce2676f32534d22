"""``siselect separate``: a few real rows on which two queries disagree."""

import argparse

from siselect.client.exit_codes import NO_RESULT, OK, epilog
from siselect.client.options import (
    candidates_file_option,
    candidates_from,
    common,
    connect_db,
    emit_json,
    separation_options,
)
from siselect.runtime.errors import InvalidInput
from siselect.sqltext.transpile import DIALECTS
from siselect.witnesses import BACKENDS


def add_parser(sub) -> None:
    p = sub.add_parser("separate", help="find a few real rows on which two queries disagree",
                       epilog=epilog([NO_RESULT]),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("queries", nargs="*", metavar="SQL",
                   help="the two queries Q1 and Q2 (or --candidates-file)")
    candidates_file_option(p)
    p.add_argument("--dialect", choices=DIALECTS, default="postgres")
    p.add_argument("--strategy", choices=["minimal", "paper"], default="minimal")
    p.add_argument("--max-rows", type=int, default=30, help="largest instance to return")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="where witnesses come from: auto (ProvSQL if usable, else lineage)")
    p.add_argument(
        "--with-references",
        action="store_true",
        help="add the rows that kept rows reference through foreign keys",
    )
    p.add_argument("--json", action="store_true", help="last line: the result object")
    common(p)


def run(args: argparse.Namespace) -> int:
    from siselect.client.pgexec import PsycopgExecutor
    from siselect.client.progress import SearchProgress
    from siselect.client.render import separation_text
    from siselect.instances.separate import separate

    options = separation_options(args)
    queries = candidates_from(args, args.queries)
    if len(queries) != 2:
        raise InvalidInput(f"separate takes two queries, got {len(queries)}")
    with connect_db(args) as conn:
        progress = SearchProgress()
        try:
            result = separate(PsycopgExecutor(conn), queries[0], queries[1], options,
                              progress=progress)
        finally:
            progress.close()
    if args.json:
        emit_json(result)
    else:
        print(separation_text(result))
    return OK if result["status"] in ("separated", "same_answer") else NO_RESULT
