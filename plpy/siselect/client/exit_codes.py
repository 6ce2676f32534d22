"""The exit codes of the ``siselect`` command, one meaning each; ``--help`` and the
README list them from :data:`CODES`, so the three cannot drift apart."""

OK = 0
ERROR = 1  # bad input, a refused query, a failed connection: one line with its SQLSTATE
USAGE = 2  # argparse's own: an unknown option, a missing argument
NOT_RUNNING = 3  # server status|dsn: the embedded cluster is not running
NO_RESULT = 4  # separate: no instance and no verdict; tournament: every candidate failed;
# plot: no figure the runs support
JUDGE_FAILED = 5  # tournament: the judge could not answer; the result names its fallback
INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)
BROKEN_PIPE = 141  # the reader closed the output (| head): quiet, as 128 + SIGPIPE

CODES = {
    OK: "done",
    ERROR: "an error: bad input, a refused or failing query, an unknown --db, no connection "
    "(one line on stderr, with its SQLSTATE)",
    USAGE: "a usage error (unknown option, missing argument)",
    NOT_RUNNING: "server status/dsn: the embedded cluster is not running",
    NO_RESULT: "separate: the queries could not be separated or compared (e.g. a "
    "nondeterministic pair); tournament: every candidate failed (each reason listed); plot: "
    "the runs support no figure (each reason listed)",
    JUDGE_FAILED: "tournament: the judge could not answer (unreachable, circuit breaker "
    "open); the winner shown is only the fallback, --json keeps the whole result",
    INTERRUPTED: "interrupted (Ctrl-C)",
    BROKEN_PIPE: "the output was closed early (e.g. | head); nothing is printed",
}


def epilog(codes: list[int] | None = None) -> str:
    """The exit-code table for a ``--help`` epilog (all codes, or those of one command)."""
    chosen = sorted(CODES) if codes is None else sorted(set(codes) | {OK, ERROR, USAGE})
    lines = [f"  {code:>3}  {CODES[code]}" for code in chosen]
    return "exit codes:\n" + "\n".join(lines)
