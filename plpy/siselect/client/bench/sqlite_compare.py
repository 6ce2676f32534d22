"""Run a query on SQLite and compare its result with PostgreSQL's, as BIRD compares answers.

Results compare as multisets of rows; numbers compare with a relative tolerance (SQLite
computes in doubles where PostgreSQL may use numeric), and an integer equals the float of
the same value (SQLite's AVG is always a float, PostgreSQL's SUM of bigint an integer).
Used by the differential tests and the transpiling benchmarks.

One difference cannot be translated away: a SQLite column may hold numbers and text at
once (COALESCE(int, text), IIF(c, 'yes', 0), a UNION of both), where a PostgreSQL column
has one type, so the transpiler makes it text. ``numbers_as_text=True`` compares such
results with text that reads as a number taken as that number.
"""

import math
import re
import sqlite3
import time
from collections import Counter
from pathlib import Path

from siselect.runtime.values import canonical

REL_TOL = 1e-9


def open_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection to a SQLite file, decoding text leniently like the loader."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    db.text_factory = lambda b: b.decode("utf-8", errors="replace")
    return db


def sqlite_rows(db: sqlite3.Connection, sql: str, timeout_s: float | None = None) -> list[tuple]:
    """The rows SQLite returns, with values in the canonical form of :mod:`siselect.runtime.values`.

    With ``timeout_s``, a query running longer is interrupted (sqlite3.OperationalError).
    """
    if timeout_s is not None:
        deadline = time.monotonic() + timeout_s
        db.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        return [tuple(canonical(v) for v in row) for row in db.execute(sql).fetchall()]
    finally:
        db.set_progress_handler(None, 0)


def _key(value) -> object:
    """A hashable stand-in that equal values share (numbers rounded to ~12 digits)."""
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        if isinstance(value, float) and math.isinf(value):
            return ("num", value)
        if value == 0:
            return ("num", 0.0)
        digits = 11 - int(math.floor(math.log10(abs(value))))
        return ("num", round(float(value), digits))
    return ("val", value)


def _close(a, b) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(float(a), float(b), rel_tol=REL_TOL, abs_tol=1e-12)
    return a == b


_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def _as_number(value):
    if isinstance(value, str) and _NUMBER.match(value):
        return float(value)
    return value


def same_rows(left: list[tuple], right: list[tuple], numbers_as_text: bool = False) -> bool:
    """True when both results hold the same rows the same number of times (order aside)."""
    if len(left) != len(right):
        return False
    if numbers_as_text:
        left = [tuple(_as_number(v) for v in row) for row in left]
        right = [tuple(_as_number(v) for v in row) for row in right]
    if Counter(tuple(_key(v) for v in r) for r in left) == Counter(
            tuple(_key(v) for v in r) for r in right):
        return True
    # Rounding can split two close numbers across a boundary: match rows greedily then.
    remaining = list(right)
    for row in left:
        match = next((i for i, other in enumerate(remaining) if len(other) == len(row) and
                      all(_close(a, b) for a, b in zip(row, other, strict=True))), None)
        if match is None:
            return False
        remaining.pop(match)
    return True
