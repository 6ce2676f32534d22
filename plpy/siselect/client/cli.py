"""The ``siselect`` command line: a table of subcommands, one module each."""

import argparse
import os
import sys

from siselect import __version__
from siselect.client import exit_codes
from siselect.client.commands import (
    bench,
    bench_compare,
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
    "tournament": tournament, "bench": bench, "bench-compare": bench_compare, "plot": plot,
    "provsql": provsql,
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="siselect",
        description="Pick the right SQL candidate by looking at the data.",
        epilog=exit_codes.epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
        code = COMMANDS[args.command].run(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except SiselectError as exc:
        print(f"siselect: error: {exc.message} (SQLSTATE {exc.sqlstate})", file=sys.stderr)
        return exit_codes.ERROR
    except KeyboardInterrupt:
        print("siselect: interrupted", file=sys.stderr)
        return exit_codes.INTERRUPTED
    except Exception as exc:  # psycopg connection errors and the like: one line, no traceback
        if os.environ.get("SISELECT_DEBUG"):
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"siselect: error: {first}", file=sys.stderr)
        return exit_codes.ERROR


def _quiet_broken_pipe() -> int:
    """The reader went away (``| head``): what is still buffered cannot be written, and
    Python would say so at exit; point stdout at /dev/null so that it stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is no file (captured in tests): nothing to flush
        pass
    return exit_codes.BROKEN_PIPE
