"""What the commands share: connections, common options, output helpers."""

import argparse
import json
import os
import sys
from pathlib import Path


def info(message: str) -> None:
    """Progress and notes go to stderr, so stdout stays parseable."""
    print(message, file=sys.stderr, flush=True)


def resolve_dsn(args: argparse.Namespace, runner: bool = False) -> str:
    """--dsn, then $SISELECT_DSN, then the embedded cluster (started on demand): as its
    superuser, or with ``runner`` as the unprivileged role candidates run as."""
    dsn = getattr(args, "dsn", None) or os.environ.get("SISELECT_DSN")
    if dsn:
        return dsn
    from siselect.client.embedded import cluster, ready

    local = cluster()
    started, admin = ready(local)
    if started:
        info(f"started the embedded PostgreSQL under {local.home}")
    return local.runner_dsn() if runner else admin


def connect_db(args: argparse.Namespace, runner: bool = True):
    """The connection a command works on: candidates run as the runner role (see
    ``runner_role``); ``runner=False`` for loading and administration. A ``--db`` that
    names no schema this role may use is refused, listing the loaded ones."""
    from siselect.client.pgexec import connect

    conn = connect(
        resolve_dsn(args, runner),
        getattr(args, "db", None),
        getattr(args, "statement_timeout", None),
    )
    try:
        if getattr(args, "db", None):
            require_database(conn, args.db)
    except BaseException:
        conn.close()
        raise
    return conn


def require_database(conn, name: str) -> None:
    """Without this an unknown name is only a search_path entry PostgreSQL skips: every
    candidate then fails on "relation does not exist", and ``SELECT 1`` wins."""
    from siselect.client.runner_role import loaded_schemas
    from siselect.runtime.errors import InvalidInput

    found = conn.execute(
        "SELECT pg_catalog.has_schema_privilege(oid, 'USAGE') FROM pg_catalog.pg_namespace "
        "WHERE nspname = %s", (name,),
    ).fetchone()
    if found is not None and found[0]:
        return
    loaded = sorted(loaded_schemas(conn))
    listed = ", ".join(loaded) if loaded else "none (siselect load FILE.sqlite)"
    problem = "no database" if found is None else "you may not use the database"
    raise InvalidInput(f"{problem} {name!r}; loaded databases: {listed}", "3F000")


def candidates_file_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--candidates-file", metavar="FILE",
        help="read candidates from FILE (- for standard input): a JSON array of strings, or "
        "SQL statements separated by semicolons as psql reads them",
    )


def candidates_from(args: argparse.Namespace, given: list[str]) -> list[str]:
    """The candidates on the command line followed by those of ``--candidates-file``."""
    from siselect.client.candidates_file import parse_candidates, read_text
    from siselect.runtime.errors import InvalidInput

    if not args.candidates_file:
        return list(given)
    found = parse_candidates(read_text(args.candidates_file), getattr(args, "dialect", "postgres"))
    if not found:
        raise InvalidInput(f"the candidates file {args.candidates_file} holds no statement")
    return [*given, *found]


def writable_output(path: str | Path, suffixes: tuple[str, ...] | None = None) -> Path:
    """Checked before any work starts, so that a long run does not end in a failed write:
    the folder exists and may be written, the name is no folder, the suffix is known."""
    from siselect.runtime.errors import InvalidInput

    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if suffixes is not None and target.suffix.lower() not in suffixes:
        raise InvalidInput(f"{target}: the name must end in {' or '.join(suffixes)}")
    if target.is_dir():
        raise InvalidInput(f"{target} is a folder, not a file", "58030")
    if not folder.is_dir():
        raise InvalidInput(f"cannot write {target}: the folder {folder} does not exist", "58030")
    if not os.access(folder, os.W_OK | os.X_OK) or (
        target.exists() and not os.access(target, os.W_OK)
    ):
        raise InvalidInput(f"cannot write {target}: permission denied", "58030")
    return target


def emit_json(obj: object) -> None:
    print(json.dumps(obj, default=str, ensure_ascii=False))

def common(p: argparse.ArgumentParser, db: bool = True) -> None:
    p.add_argument(
        "--dsn",
        help="connection string of an existing server "
        "(default: $SISELECT_DSN, else the embedded cluster)",
    )
    if db:
        p.add_argument("--db", required=True, help="name of a loaded database (its schema)")
        p.add_argument(
            "--statement-timeout",
            type=int,
            default=60_000,
            metavar="MS",
            help="per-query time limit in milliseconds (default 60000)",
        )

def path_arg(value: str) -> Path:
    return Path(value)

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

    from siselect.runtime.errors import InvalidInput
    from siselect.selection.llm import LLMConfig

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


def separation_options(args: argparse.Namespace):
    """The separation options of ``separate`` and ``tournament``, from their flags."""
    from siselect.instances.separate import options_from

    return options_from(
        dialect=args.dialect,
        strategy=args.strategy,
        max_rows=args.max_rows,
        seed=args.seed,
        backend=args.backend,
        with_references=args.with_references,
    )


def rules_options(p: argparse.ArgumentParser) -> None:
    """The tournament's rules (docs/selection.md); unset: the strategy's defaults."""
    g = p.add_argument_group("tournament rules (default: the --strategy's, see docs/selection.md)")
    g.add_argument("--grouping", choices=["exact", "paper"],
                   help="groups by BIRD's sets of row tuples (exact) or the paper's "
                   "normalised answers")
    g.add_argument("--scoring", choices=["evidence", "points"],
                   help="consistency prior and weighted verdicts (evidence) or round-robin "
                   "points")
    g.add_argument("--schedule", choices=["adaptive", "round-robin"],
                   help="skip pairs that cannot change the winner (adaptive) or play all")
    g.add_argument("--instances", type=int, metavar="N",
                   help="most instances a pair is judged on (drawn, against the "
                   "consistency prior or not yet sure: separated again); 2N-1 for a pair "
                   "whose verdicts went both ways")


def rules_from_args(args: argparse.Namespace):
    """The tournament's rules from the flags of :func:`rules_options`."""
    from siselect.selection.rules import rules_from

    return rules_from(grouping=args.grouping, scoring=args.scoring, schedule=args.schedule,
                      instances=args.instances)
