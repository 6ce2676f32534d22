"""``siselect tournament``: one candidate chosen by a tournament (docs/selection.md)."""

import argparse
import sys

from siselect.client.exit_codes import JUDGE_FAILED, NO_RESULT, OK, epilog
from siselect.client.options import (
    candidates_file_option,
    candidates_from,
    common,
    connect_db,
    emit_json,
    info,
    llm_config_from,
    llm_options,
    rules_from_args,
    rules_options,
    separation_options,
    writable_output,
)
from siselect.runtime.errors import InvalidInput
from siselect.selection.report_view import Inputs, judge_failure
from siselect.sqltext.transpile import DIALECTS, to_tree
from siselect.witnesses import BACKENDS

REPORT_SUFFIXES = (".md", ".html", ".htm")


def add_parser(sub) -> None:
    p = sub.add_parser("tournament",
                       help="select one candidate by a tournament of separating-instance duels",
                       epilog=epilog([NO_RESULT, JUDGE_FAILED]),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("candidates", nargs="*", metavar="SQL",
                   help="the candidates (or --candidates-file)")
    candidates_file_option(p)
    p.add_argument("--question", required=True)
    p.add_argument("--evidence")
    p.add_argument("--judge", choices=["llm", "reference", "none"], default="llm")
    p.add_argument("--reference", metavar="SQL", help="a trusted query (the reference judge's)")
    p.add_argument("--counts", metavar="N,N,...", type=_counts,
                   help="how often each candidate was produced, in their order, when they "
                        "were deduplicated: the consistency prior sums them (default: 1 each)")
    p.add_argument("--dialect", choices=DIALECTS, default="postgres")
    p.add_argument("--strategy", choices=["minimal", "paper"], default="minimal")
    p.add_argument("--max-rows", type=int, default=30)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--backend", choices=BACKENDS, default="auto")
    p.add_argument("--with-references", action=argparse.BooleanOptionalAction, default=True,
                   help="show the judge the rows D' references through foreign keys (default: on)")
    p.add_argument("--report", metavar="FILE", help="write the report (.md or .html)")
    p.add_argument("--json", action="store_true", help="last line: the result object")
    rules_options(p)
    llm_options(p)
    common(p)


def run(args: argparse.Namespace) -> int:
    from siselect.client.pgexec import PsycopgExecutor
    from siselect.client.progress import RoundProgress
    from siselect.client.render import tournament_text
    from siselect.runtime.catalog import load_catalog
    from siselect.selection.judges import make_judge
    from siselect.selection.tournament import check_inputs, run_tournament

    report = writable_output(args.report, REPORT_SUFFIXES) if args.report else None
    candidates = candidates_from(args, args.candidates)
    if not candidates:
        raise InvalidInput("no candidates: give them as arguments or with --candidates-file")
    check_inputs(candidates, args.question, args.counts)
    options = separation_options(args)
    rules = rules_from_args(args)
    with connect_db(args) as conn:
        executor = PsycopgExecutor(conn)
        catalog = load_catalog(executor)
        reference = to_tree(args.reference, args.dialect, catalog) if args.reference else None
        config = llm_config_from(args) if args.judge == "llm" else None
        judge = make_judge(args.judge, reference, config)
        progress = RoundProgress()
        try:
            result = run_tournament(
                executor,
                candidates,
                args.question,
                args.evidence,
                judge,
                options,
                args.reference,
                catalog,
                rules=rules,
                counts=args.counts,
                progress=progress,
            )
        finally:
            progress.close()
    failure = judge_failure(result)
    if failure:
        # First, before any winner: that winner is only the fallback's.
        print(f"siselect: the judge could not answer: {failure}", file=sys.stderr if args.json
              else sys.stdout, flush=True)
    if report is not None:
        write_report(result, report, Inputs(candidates, args.evidence, args.reference,
                                            args.dialect))
    if args.json:
        emit_json(result)
    else:
        print(tournament_text(result))
    if failure:
        return JUDGE_FAILED
    return NO_RESULT if result.get("winner") is None else OK


def _counts(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"counts are whole numbers separated by commas, not {text!r}") from None


def write_report(result: dict, target, inputs: Inputs) -> None:
    from siselect.client.report_html import html_report
    from siselect.selection.report import markdown_report

    text = (
        html_report(result, inputs)
        if target.suffix.lower() in (".html", ".htm")
        else markdown_report(result, inputs)
    )
    target.write_text(text, encoding="utf-8")
    info(f"report written to {target}")
