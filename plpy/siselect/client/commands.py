"""Subcommands: each adds its parser (``SPECS``) and registers its handler."""

import argparse

from ..executor import Rows
from ..provsql_backend import BACKENDS
from ..transpile import DIALECTS, to_postgres, to_tree
from .cli import command, common, connect_db, emit_json, info, path_arg, resolve_dsn
from .render import text_table

SPECS: list = []


def spec(fn):
    SPECS.append(fn)
    return fn


@spec
def _server(sub) -> None:
    p = sub.add_parser("server", help="start, inspect or stop the embedded PostgreSQL")
    p.add_argument("action", choices=["start", "status", "stop", "dsn"],
                   help="dsn: print the DSN of the running cluster")
    p.add_argument("--admin", action="store_true",
                   help="print the superuser's DSN (loading, administration) instead of the "
                   "runner role's, which candidates run as")


@command("server")
def server(args: argparse.Namespace) -> int:
    from .embedded import cluster, ensure_database

    local = cluster()

    def dsn() -> str:  # names the passfile; no password in it
        return local.dsn() if args.admin else local.runner_dsn()

    if args.action == "start":
        info("started" if local.start() else "already running")
        info(f"data directory: {local.datadir}; passwords: {local.passfile}")
        ensure_database(local)
        print(dsn())
        return 0
    if args.action in ("status", "dsn"):
        if local.running():
            if args.action == "status":
                print(f"running on port {local.port()}, data directory {local.datadir}")
            print(dsn())
            return 0
        message = f"not running (data directory {local.datadir})"
        info(message) if args.action == "dsn" else print(message)
        return 3
    print("stopped" if local.stop() else "not running")
    return 0


@spec
def _load(sub) -> None:
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


@command("load")
def load_cmd(args: argparse.Namespace) -> int:
    from .loader import load
    from .pgexec import connect

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
    from ..nondeterminism import check, static_reason
    from .pgexec import PsycopgExecutor

    with connect_db(args) as conn:
        executor = PsycopgExecutor(conn)
        catalog = load_catalog(executor) if args.dialect == "sqlite" else None
        tree = to_tree(args.query, args.dialect, catalog)
        result: Rows = executor.run(tree.sql(dialect="postgres"), max_rows=args.max_rows)
        reason = static_reason(tree)
        if reason is None and not result.truncated:
            reason = check(lambda variant: executor.run(variant.sql(dialect="postgres")), tree)
    if args.json:
        emit_json({"columns": result.columns, "rows": result.rows, "truncated": result.truncated,
                   "nondeterministic": reason is not None, "nondeterministic_reason": reason})
    else:
        print(text_table(result.columns, result.rows))
        if reason is not None:
            print(f"note: nondeterministic: {reason}")
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

        with connect(resolve_dsn(args, runner=True), args.db) as conn:
            catalog = load_catalog(PsycopgExecutor(conn))
    print(to_postgres(args.query, args.dialect, catalog))
    return 0


@spec
def _separate(sub) -> None:
    p = sub.add_parser("separate", help="find a few real rows on which two queries disagree")
    p.add_argument("q1")
    p.add_argument("q2")
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


@command("separate")
def separate_cmd(args: argparse.Namespace) -> int:
    from ..separation import options_from, separate
    from .pgexec import PsycopgExecutor
    from .render import separation_text

    options = options_from(
        dialect=args.dialect,
        strategy=args.strategy,
        max_rows=args.max_rows,
        seed=args.seed,
        backend=args.backend,
        with_references=args.with_references,
    )
    with connect_db(args) as conn:
        result = separate(PsycopgExecutor(conn), args.q1, args.q2, options)
    if args.json:
        emit_json(result)
    else:
        print(separation_text(result))
    return 0 if result["status"] in ("separated", "same_answer") else 2


@spec
def _tournament(sub) -> None:
    p = sub.add_parser("tournament", help="select one candidate by a round-robin tournament")
    p.add_argument("candidates", nargs="+", metavar="SQL")
    p.add_argument("--question", required=True)
    p.add_argument("--evidence")
    p.add_argument("--judge", choices=["llm", "reference", "none"], default="llm")
    p.add_argument("--reference", metavar="SQL", help="a trusted query (the reference judge's)")
    p.add_argument("--dialect", choices=DIALECTS, default="postgres")
    p.add_argument("--strategy", choices=["minimal", "paper"], default="minimal")
    p.add_argument("--max-rows", type=int, default=30)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--backend", choices=BACKENDS, default="auto")
    p.add_argument("--with-references", action=argparse.BooleanOptionalAction, default=True,
                   help="show the judge the rows D' references through foreign keys (default: on)")
    p.add_argument("--report", metavar="FILE", help="write the report (.md or .html)")
    p.add_argument("--json", action="store_true", help="last line: the result object")
    llm_options(p)
    common(p)


def llm_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "LLM endpoint (default: $SISELECT_LLM_URL, $SISELECT_LLM_MODEL, $OPENAI_API_KEY)"
    )
    g.add_argument(
        "--llm-url", help="base URL of an OpenAI-compatible API, e.g. http://host:8000/v1"
    )
    g.add_argument("--llm-model")
    g.add_argument("--llm-config", metavar="FILE", help="JSON file with the endpoint settings")
    g.add_argument("--votes", type=int, help="judge calls per duel, majority wins (default 3)")
    g.add_argument("--temperature", type=float)
    g.add_argument("--top-p", type=float)
    g.add_argument(
        "--llm-param",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="extra request field passed through, e.g. top_k=20 (repeatable)",
    )
    g.add_argument(
        "--format",
        choices=["json", "markdown", "sql"],
        help="how D' is shown to the LLM (default json)",
    )


def llm_config_from(args: argparse.Namespace):
    """The endpoint configuration: file, then environment, then flags (last wins)."""
    import json
    import os

    from ..errors import InvalidInput
    from ..llm import LLMConfig

    config = (
        LLMConfig.from_file(args.llm_config) if args.llm_config else LLMConfig.from_env(os.environ)
    )
    extra = dict(config.extra)
    for item in args.llm_param:
        key, _, value = item.partition("=")
        if not key or not _:
            raise InvalidInput(f"--llm-param expects KEY=VALUE, got {item!r}")
        try:
            extra[key] = json.loads(value)
        except ValueError:
            extra[key] = value
    overrides = {
        "base_url": args.llm_url,
        "model": args.llm_model,
        "votes": args.votes,
        "temperature": args.temperature,
        "top_p": args.top_p,
        "format": args.format,
        "extra": extra,
    }
    return config.merged(**{k: v for k, v in overrides.items() if v is not None})


@command("tournament")
def tournament_cmd(args: argparse.Namespace) -> int:
    from ..catalog import load_catalog
    from ..judges import make_judge
    from ..separation import options_from
    from ..tournament import run_tournament
    from .pgexec import PsycopgExecutor
    from .render import tournament_text

    options = options_from(
        dialect=args.dialect,
        strategy=args.strategy,
        max_rows=args.max_rows,
        seed=args.seed,
        backend=args.backend,
        with_references=args.with_references,
    )
    with connect_db(args) as conn:
        executor = PsycopgExecutor(conn)
        catalog = load_catalog(executor)
        reference = to_tree(args.reference, args.dialect, catalog) if args.reference else None
        config = llm_config_from(args) if args.judge == "llm" else None
        judge = make_judge(args.judge, reference, config)
        result = run_tournament(
            executor,
            args.candidates,
            args.question,
            args.evidence,
            judge,
            options,
            args.reference,
            catalog,
        )
    if args.report:
        write_report(result, args.report)
    if args.json:
        emit_json(result)
    else:
        print(tournament_text(result))
    return 0


def write_report(result: dict, path: str) -> None:
    from pathlib import Path

    from ..report import markdown_report
    from .report_html import html_report

    target = Path(path)
    text = (
        html_report(result)
        if target.suffix.lower() in (".html", ".htm")
        else markdown_report(result)
    )
    target.write_text(text, encoding="utf-8")
    info(f"report written to {target}")


@spec
def _bench(sub) -> None:
    from .bench import add_parser

    add_parser(sub)


@command("bench")
def bench_cmd(args: argparse.Namespace) -> int:
    from .bench import bench_command

    return bench_command(args)


@spec
def _plot(sub) -> None:
    from .plot import add_parser

    add_parser(sub)


@command("plot")
def plot_cmd(args: argparse.Namespace) -> int:
    from .plot import plot_command

    return plot_command(args)


@spec
def _provsql(sub) -> None:
    p = sub.add_parser("provsql", help="prepare (or release) a loaded database for ProvSQL")
    p.add_argument("action", choices=["enable", "disable"])
    common(p)


@command("provsql")
def provsql_cmd(args: argparse.Namespace) -> int:
    from .provsql_cmd import run

    return run(args)
