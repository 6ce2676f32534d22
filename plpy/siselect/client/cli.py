"""The ``siselect`` command line: a table of subcommands, one module each."""

import argparse
import os
import sys

from siselect import __version__
from siselect.client.commands import (
    bench,
    load,
    plot,
    provsql,
    separate,
    server,
    sql,
    tournament,
    transpile,
)
from siselect.runtime.errors import SiselectError

# In the order --help lists them.
COMMANDS = {
    "server": server, "load": load, "sql": sql, "transpile": transpile, "separate": separate,
    "tournament": tournament, "bench": bench, "plot": plot, "provsql": provsql,
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="siselect",
        description="Pick the right SQL candidate by looking at the data.",
    )
    parser.add_argument("--version", action="version", version=f"siselect {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS.values():
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command].run(args)
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
