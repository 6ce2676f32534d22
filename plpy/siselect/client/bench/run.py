"""``siselect bench``: the tournament and the baselines over a BIRD-format data set.

    siselect bench --tasks dev.json --candidates stage1.json --databases dev_databases/

Reads and checks the inputs (:mod:`.bench_inputs`), loads each database once, runs one
tournament and the baselines per task on worker threads (:mod:`.bench_pool`,
:mod:`.bench_task`), keeps each finished task in the output directory as it finishes
(:mod:`.bench_output`) and ends with the summary (:mod:`.bench_summary`).
"""

import argparse
import contextlib
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from siselect.client.bench.baselines import LLM_METHODS, METHODS
from siselect.client.bench.inputs import Task, load_inputs
from siselect.client.bench.output import OutDir
from siselect.client.bench.summary import summarise, summary_table
from siselect.client.progress import Progress
from siselect.runtime.errors import InvalidInput
from siselect.witnesses import BACKENDS

if TYPE_CHECKING:  # the harness proper is imported when a run starts, not to parse -h
    from siselect.client.bench.postgres_source import PostgresSource
    from siselect.client.bench.task import Outcome, Settings

Say = Callable[[str], None]


@dataclass
class BenchRun:
    """One invocation: inputs, where results go, how to run (see ``siselect bench -h``)."""

    tasks: Path
    candidates: Path
    databases: Path
    out: Path
    dsn: str | Callable[[], str]  # a callable is asked only once the inputs are checked
    settings: "Settings"
    limit: int | None = None
    workers: int = 1
    resume: bool = False
    force: bool = False
    label: str | None = None
    statement_timeout_ms: int = 60_000
    # Where tasks run, when not as ``dsn`` (which loads): the embedded cluster's runner role.
    runner_dsn: str | Callable[[], str] | None = None
    # --dialect postgres: the databases are schemas already on the server, nothing is loaded.
    source: "PostgresSource | None" = None


def _complete_factory(settings: "Settings") -> Callable[[], Callable | None]:
    """Per worker: the LLM call the baselines use (None when no LLM baseline runs)."""
    if not any(m in settings.baselines for m in LLM_METHODS):
        return lambda: None

    def make() -> Callable:
        from siselect.client.bench.baselines import chat_complete
        from siselect.selection.llm import ChatClient

        return chat_complete(ChatClient(settings.llm_config))

    return make


def run_bench(run: BenchRun, say: Say) -> dict[str, Any]:
    """Run (or resume) a benchmark; returns the summary, also written to summary.json."""
    from siselect.client.bench.pool import load_databases, run_tasks

    started = time.perf_counter()
    inputs = (run.source.inputs(run.tasks, run.candidates, run.limit) if run.source else
              load_inputs(run.tasks, run.candidates, run.databases, run.limit))
    for note in inputs.notes:
        say(note)
    if run.source:  # before the output folder is touched: a wrong map leaves nothing behind
        where = run.runner_dsn or run.dsn
        run.source.check(where() if callable(where) else where, inputs.tasks, say)
    fingerprint = {**inputs.fingerprint, **run.settings.fingerprint(), "label": run.label}
    out = OutDir(run.out)
    finished = out.start(fingerprint, run.resume, run.force)
    records = {t.key: finished[t.key] for t in inputs.tasks if t.key in finished}
    todo = [t for t in inputs.tasks if t.key not in records]
    if run.resume:
        say(f"resuming {run.out}: {len(records)} of {len(inputs.tasks)} tasks already done")
    dsn = run.dsn() if callable(run.dsn) else run.dsn
    runner_dsn = run.runner_dsn() if callable(run.runner_dsn) else run.runner_dsn or dsn
    if todo and not run.source:
        load_databases(dsn, {t.db_id: inputs.databases[t.db_id] for t in todo}, say)
    progress = Progress(len(inputs.tasks), len(records))
    for record in records.values():
        progress.count(record["status"] == "ok", record.get("hits", {}).get("tournament", False))

    def keep(task: Task, outcome: "Outcome") -> None:
        out.append(outcome.record, outcome.report)
        records[task.key] = outcome.record
        progress.update(outcome.record["status"] == "ok",
                        outcome.record.get("hits", {}).get("tournament", False))

    try:
        if todo:
            run_tasks(todo, run.workers, runner_dsn, run.statement_timeout_ms, run.settings,
                      _complete_factory(run.settings), keep)
    except BaseException:
        progress.close()
        out.close()
        say(f"stopped: {len(records)} of {len(inputs.tasks)} tasks are finished and kept in "
            f"{out.results}; run the same command with --resume to continue")
        raise
    progress.close()
    summary = summarise(list(records.values()), fingerprint, time.perf_counter() - started)
    out.finish(list(records.values()), summary)
    return summary


# ---- the command line -------------------------------------------------------------------


def add_parser(sub: Any) -> None:
    """The ``bench`` subcommand's arguments."""
    from siselect.client.options import common, llm_options, path_arg

    p = sub.add_parser("bench", help="run the tournament and the baselines over BIRD-format "
                       "tasks and candidates; report accuracy, coverage and instance sizes")
    p.add_argument("--tasks", type=path_arg, required=True, metavar="TASKS.json",
                   help="tasks as in BIRD's dev.json (question_id, db_id, question, evidence, SQL)")
    p.add_argument("--candidates", type=path_arg, required=True, metavar="CANDIDATES.json",
                   help="{question_id: [sql, ...]} in the --dialect")
    p.add_argument("--databases", type=path_arg, metavar="DIR",
                   help="DIR/<db_id>/<db_id>.sqlite (and database_description/ when present); "
                   "needed with --dialect sqlite")
    p.add_argument("--dialect", choices=["sqlite", "postgres"], default="sqlite",
                   help="of the gold SQL and the candidates: sqlite (BIRD's; databases loaded "
                   "from --databases) or postgres (BIRD mini-dev's PostgreSQL tasks; databases "
                   "are schemas already on the server)")
    p.add_argument("--schema-map", metavar="DB=SCHEMA,...",
                   help="--dialect postgres: the schema of each db_id (db_id=schema or "
                   "db_id=database.schema); a db_id not listed is a schema of that name")
    p.add_argument("--judge", choices=["reference", "llm", "none"], default="reference",
                   help="reference: the gold query's answer on D' (default)")
    p.add_argument("--judge-noise", default="0", metavar="P[,P...]",
                   help="replace the judge's answer by a wrong one with probability P (seeded); "
                   "several levels or --noise-seeds: noise curves, replayed on the noiseless "
                   "run's instances")
    p.add_argument("--noise-seeds", type=int, metavar="N",
                   help="replay the tournament with N noise seeds per level (noise curves)")
    p.add_argument("--noise-model", default="rival", metavar="MODEL[,MODEL]",
                   help="how the noise makes an answer wrong: rival (a rival candidate's "
                   "answer, default) or near-miss (off by one, a row dropped, a NULL)")
    p.add_argument("--baselines", default="consistency", metavar="LIST",
                   help=f"comma-separated, from {', '.join(METHODS)} (default consistency); "
                   "naive and pairwise ask the LLM endpoint")
    p.add_argument("--pairwise-share", type=float, metavar="F",
                   help="pairwise baseline: take the largest group at once when it holds at "
                   "least this share of the candidates (default: always adjudicate)")
    p.add_argument("--strategy", choices=["minimal", "paper"], default="minimal")
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="where witnesses come from: auto (ProvSQL if usable, else lineage)")
    p.add_argument("--max-rows", type=int, default=30, help="largest instance to accept")
    p.add_argument("--with-references", action=argparse.BooleanOptionalAction, default=True,
                   help="show the judge the rows D' references through foreign keys "
                        "(default: on)")
    p.add_argument("--pair-budget", type=float, default=300.0, metavar="SECONDS",
                   help="time limit for separating one pair (default 300)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, metavar="N", help="only the first N tasks (by id)")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="tasks run in parallel, one connection each (default 1)")
    p.add_argument("--out", type=path_arg, default=Path("siselect-bench"), metavar="DIR",
                   help="results.jsonl, reports/, summary.json (default ./siselect-bench)")
    p.add_argument("--resume", action="store_true", help="continue the run kept in --out")
    p.add_argument("--force", action="store_true", help="discard the results kept in --out")
    p.add_argument("--label", help="a name for this run in plots (e.g. the K it was made at)")
    p.add_argument("--statement-timeout", type=int, default=60_000, metavar="MS",
                   help="per-query time limit in milliseconds (default 60000)")
    p.add_argument("--llm-cache", metavar="FILE|off",
                   help="the LLM judge's completions kept between runs, so that a resumed or "
                   "repeated run sends none twice (default: SISELECT_LLM_CACHE_FILE, else "
                   f"{DEFAULT_LLM_CACHE})")
    p.add_argument("--json", action="store_true", help="last line: the summary as JSON")
    llm_options(p)
    common(p, db=False)


def _baselines(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in METHODS]
    if unknown:
        raise InvalidInput(f"unknown baseline {', '.join(unknown)}; use {', '.join(METHODS)}")
    return names


DEFAULT_LLM_CACHE = "$XDG_CACHE_HOME/siselect/llm-completions.sqlite"


def llm_cache(given: str | None, configured: str | None) -> str | None:
    """The persistent cache's file: --llm-cache (off: none), the configuration's, or the
    user's cache folder."""
    if given is not None:
        return None if given.lower() == "off" else given
    if configured:
        return configured
    import os

    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(home, "siselect", "llm-completions.sqlite")


def settings_from(args: argparse.Namespace) -> "Settings":
    """The run's settings from the command line (the LLM endpoint only when one is used)."""
    from siselect.client.bench import noise
    from siselect.client.bench.task import Settings
    from siselect.client.options import llm_config_from
    from siselect.instances.separate import Options

    baselines = _baselines(args.baselines)
    models = noise.parse_models(args.noise_model)
    judge_noise, replays = noise.plan(noise.parse_levels(args.judge_noise), args.noise_seeds,
                                      models)
    if (judge_noise or replays.levels) and args.judge == "none":
        raise InvalidInput("--judge-noise needs a judge that answers (reference or llm)")
    if replays.levels and args.judge != "reference":
        raise InvalidInput("noise curves (--noise-seeds) replay the reference judge only")
    if args.workers < 1:
        raise InvalidInput("--workers must be at least 1")
    uses_llm = args.judge == "llm" or any(b in LLM_METHODS for b in baselines)
    config = llm_config_from(args) if uses_llm else None
    if config is not None:
        import dataclasses

        config = dataclasses.replace(config, cache_file=llm_cache(args.llm_cache,
                                                                  config.cache_file))
    options = Options(dialect=args.dialect, strategy=args.strategy, max_rows=args.max_rows,
                      seed=args.seed, backend=args.backend,
                      with_references=args.with_references,
                      budget_seconds=args.pair_budget).check()
    runs = getattr(config, "votes", None) or 3
    return Settings(options=options, judge=args.judge, noise=judge_noise,
                    noise_model=models[0], replays=replays,
                    baselines=baselines, llm_config=config, pairwise_share=args.pairwise_share,
                    runs=runs)


@contextlib.contextmanager
def _terminate_like_interrupt() -> Iterator[None]:
    """While it lasts, ``kill`` (SIGTERM) stops a run as Ctrl-C does: running queries are
    cancelled and the finished tasks kept. (Shells start background jobs with SIGINT
    ignored, so SIGTERM is how one stops those.)"""
    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def source_from(args: argparse.Namespace) -> "PostgresSource | None":
    """Where the databases come from: None, SQLite files under --databases (loaded); with
    --dialect postgres, schemas already on the server (see :mod:`.postgres_source`)."""
    from siselect.client.bench.postgres_source import PostgresSource, parse_schema_map

    if args.dialect == "postgres":
        if args.databases is not None:
            raise InvalidInput("--databases is for SQLite files (--dialect sqlite); with "
                               "--dialect postgres the databases are schemas on the server "
                               "(--schema-map)")
        return PostgresSource(parse_schema_map(args.schema_map))
    if args.databases is None:
        raise InvalidInput("--databases DIR is needed with --dialect sqlite (BIRD's "
                           "DIR/<db_id>/<db_id>.sqlite)")
    if args.schema_map:
        raise InvalidInput("--schema-map is for --dialect postgres")
    return None


def bench_command(args: argparse.Namespace) -> int:
    """Handler of ``siselect bench``."""
    from siselect.client.bench.index import breakdown_text, dropped_lines, write_index
    from siselect.client.bench.output import read_results
    from siselect.client.options import emit_json, info, resolve_dsn

    settings = settings_from(args)
    run = BenchRun(args.tasks, args.candidates, args.databases, args.out,
                   lambda: resolve_dsn(args),
                   settings, args.limit, args.workers, args.resume, args.force, args.label,
                   args.statement_timeout, lambda: resolve_dsn(args, runner=True),
                   source_from(args))
    with _terminate_like_interrupt():
        summary = run_bench(run, info)
    print(summary_table(summary))
    _, records = read_results(run.out)
    print(breakdown_text(records, [m for m in summary["accuracy"] if m != "upper_bound"]))
    for line in dropped_lines(records):
        print(line)
    index = write_index(run.out, summary, records)
    info(f"results, reports and summary.json are in {run.out}; open {index}")
    if args.json:
        emit_json(summary)
    return 0
