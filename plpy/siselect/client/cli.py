"""The ``siselect`` command line."""

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from .. import __version__
from ..errors import SiselectError

Handler = Callable[[argparse.Namespace], int]
COMMANDS: dict[str, Handler] = {}


def command(name: str) -> Callable[[Handler], Handler]:
    def wrap(fn: Handler) -> Handler:
        COMMANDS[name] = fn
        return fn

    return wrap


def info(message: str) -> None:
    """Progress and notes go to stderr, so stdout stays parseable."""
    print(message, file=sys.stderr, flush=True)


def resolve_dsn(args: argparse.Namespace, runner: bool = False) -> str:
    """--dsn, then $SISELECT_DSN, then the embedded cluster (started on demand): as its
    superuser, or with ``runner`` as the unprivileged role candidates run as."""
    dsn = getattr(args, "dsn", None) or os.environ.get("SISELECT_DSN")
    if dsn:
        return dsn
    from .embedded import cluster, ensure_database

    local = cluster()
    if local.start():
        info(f"started the embedded PostgreSQL under {local.home}")
    admin = ensure_database(local)
    return local.runner_dsn() if runner else admin


def connect_db(args: argparse.Namespace, runner: bool = True):
    """The connection a command works on: candidates run as the runner role (see
    ``runner_role``); ``runner=False`` for loading and administration."""
    from .pgexec import connect

    return connect(
        resolve_dsn(args, runner),
        getattr(args, "db", None),
        getattr(args, "statement_timeout", None),
    )


def emit_json(obj: object) -> None:
    print(json.dumps(obj, default=str, ensure_ascii=False))


def build_parser() -> argparse.ArgumentParser:
    from . import commands  # noqa: F401 - registers the subcommands

    parser = argparse.ArgumentParser(
        prog="siselect",
        description="Pick the right SQL candidate by looking at the data.",
    )
    parser.add_argument("--version", action="version", version=f"siselect {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for spec in commands.SPECS:
        spec(sub)
    return parser


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


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except SiselectError as exc:
        print(f"siselect: error: {exc.message} (SQLSTATE {exc.sqlstate})", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("siselect: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # psycopg connection errors and the like: one line, no traceback
        if os.environ.get("SISELECT_DEBUG"):
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"siselect: error: {first}", file=sys.stderr)
        return 1


def path_arg(value: str) -> Path:
    return Path(value)
