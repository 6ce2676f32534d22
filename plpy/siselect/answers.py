"""Comparing answers (paper section III): are two result sets the same answer?

Rows that are entirely NULL are dropped, duplicates are dropped, and rows are compared as
a set, each row as a multiset of its values, so neither row order nor column order
matters: BIRD questions rarely say whether they want DISTINCT, NOT NULL or a column order.

Numbers compare with a :class:`Tolerance`. Two whole numbers compare exactly (ids 1000000
and 1000001 differ at any relative tolerance); otherwise they are equal within a relative
tolerance, and for answers written by an LLM also at the precision the LLM wrote: it
writes 0.33 where SQL returns 0.3333.

>>> same_answer([(1, "a"), (1, "a")], [("a", 1.0)])
True
>>> matches_judge([(0.333333,)], [["0.33"]])
True
>>> same_answer([(1000000,)], [(1000001,)])
False
"""

import json
import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

Number = int | float


@dataclass(frozen=True)
class Tolerance:
    """How loosely values compare.

    ``relative``/``absolute``: numbers that are not both whole are equal when
    ``|a - b| <= max(absolute, relative * max(|a|, |b|))``.
    ``min_decimals``: when set, a number ``a`` also equals ``b`` when ``a`` rounds to ``b``
    at the number of decimals ``b`` was written with, but at least ``min_decimals``
    (``b`` is the second answer's value: the judge's).
    ``lenient_text``: text that spells a number counts as that number ("42", "1,234"),
    surrounding blanks are ignored and "null"/"none" mean NULL: for answers written by
    a person or an LLM rather than returned by SQL.
    """

    relative: float = 1e-6
    absolute: float = 0.0
    min_decimals: int | None = None
    lenient_text: bool = False


#: SQL answer against SQL answer (candidates on D or on D').
SQL_TOLERANCE = Tolerance()
#: SQL answer against the judge's answer.
JUDGE_TOLERANCE = Tolerance(min_decimals=2, lenient_text=True)

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_GROUPED = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_NULL_WORDS = {"null", "none"}


def parse_number(text: str) -> Number | None:
    """The number ``text`` spells (blanks around allowed, "1,234" too), else None."""
    text = text.strip()
    if _GROUPED.fullmatch(text):
        text = text.replace(",", "")
    elif not _NUMBER.fullmatch(text):
        return None
    if any(c in text for c in ".eE"):
        value = float(text)
        return value if math.isfinite(value) else None
    return int(text)


# A row as a multiset: its non-numeric values as sorted (kind, text) pairs (kind 0 NULL,
# 1 text, 2 composite) and its numbers, sorted. Plain tuples: answers on D can have
# 100,000 rows, and a NamedTuple costs a third of the time it takes to build one.
NormalRow = tuple[tuple[tuple[int, str], ...], tuple[Number, ...]]

_NULL = (0, "")


def _value(value: Any, lenient: bool) -> tuple[int, str] | Number:
    """A number, or a sortable (kind, text) pair for everything else."""
    if value is None:
        return _NULL
    if isinstance(value, bool):
        return int(value)  # SQLite has no booleans: `a > b` answers 1 or 0
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return _NULL if math.isnan(value) else value
    if isinstance(value, str):
        return _text(value, lenient)
    if isinstance(value, list | tuple | dict):
        return (2, json.dumps(value, sort_keys=True, default=str))
    return (1, str(value))


def _text(value: str, lenient: bool) -> tuple[int, str] | Number:
    if not lenient:
        return (1, value)
    stripped = value.strip()
    if stripped.lower() in _NULL_WORDS:
        return _NULL
    number = parse_number(stripped)
    return (1, stripped) if number is None else number


def normal_row(row: Sequence[Any], tolerance: Tolerance = SQL_TOLERANCE) -> NormalRow | None:
    """``row`` as ``(others, numbers)`` (see :data:`NormalRow`), or None when every value
    is NULL."""
    others: list[tuple[int, str]] = []
    numbers: list[Number] = []
    lenient = tolerance.lenient_text
    for value in row:
        kind = type(value)
        # The common cases first, inline; everything else goes through _value.
        if kind is int or (kind is float and value == value):
            numbers.append(value)
        elif kind is str and not lenient:
            others.append((1, value))
        else:
            v = _value(value, lenient)
            if isinstance(v, tuple):
                others.append(v)
            else:
                numbers.append(v)
    if not numbers and all(o == _NULL for o in others):
        return None
    others.sort()
    numbers.sort()
    return tuple(others), tuple(numbers)


def normalise(rows: Iterable[Sequence[Any]], tolerance: Tolerance = SQL_TOLERANCE
              ) -> frozenset[NormalRow]:
    """The answer as a set of rows: all-NULL rows and duplicates gone, column order ignored."""
    normal = (normal_row(row, tolerance) for row in rows)
    return frozenset(r for r in normal if r is not None)


def _round_significant(x: Number) -> Number:
    if isinstance(x, int) or not math.isfinite(x):
        return x
    return float(f"{x:.9g}")


def answer_key(rows: Iterable[Sequence[Any]]) -> frozenset[NormalRow]:
    """A hashable key for grouping answers on D: the normalised rows, floats rounded to
    9 significant digits (exact-ish: values that straddle a rounding boundary differ)."""
    return frozenset(
        (others, tuple(_round_significant(x) for x in numbers))
        for others, numbers in normalise(rows)
    )


def _is_whole(x: Number) -> bool:
    return isinstance(x, int) or (math.isfinite(x) and x.is_integer())


def _as_float(x: Number) -> float:
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _decimals(x: Number) -> int:
    """How many decimals ``x`` was written with (repr of a float is the shortest that
    reads back, so 0.33 parsed from a reply gives 2)."""
    if isinstance(x, int) or not math.isfinite(x):
        return 0
    exponent = Decimal(repr(x)).as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def numbers_match(a: Number, b: Number, tolerance: Tolerance) -> bool:
    """``a`` equals ``b`` under ``tolerance`` (``b``'s written precision counts, see
    :class:`Tolerance`)."""
    if a == b:
        return True
    if _is_whole(a) and _is_whole(b):
        return False
    fa, fb = _as_float(a), _as_float(b)
    if not (math.isfinite(fa) and math.isfinite(fb)):
        return False
    diff = abs(fa - fb)
    if diff <= max(tolerance.absolute, tolerance.relative * max(abs(fa), abs(fb))):
        return True
    if tolerance.min_decimals is None:
        return False
    places = max(tolerance.min_decimals, _decimals(b))
    return diff <= 0.5 * 10.0**-places * (1 + 1e-9)


def _radius(x: float, tolerance: Tolerance) -> float:
    """An upper bound on ``|x - y|`` for any ``y`` that may match ``x`` either way round."""
    if not math.isfinite(x):
        return 0.0
    rel = tolerance.relative
    radius = tolerance.absolute + rel * abs(x) / max(1e-12, 1 - rel)
    if tolerance.min_decimals is not None:
        radius += 0.5 * 10.0**-tolerance.min_decimals * (1 + 1e-6)
    return radius * (1 + 1e-9) + 1e-300


class _Index:
    """Rows grouped by their non-numeric part and arity, sorted by their smallest number,
    so a tolerant lookup inspects only rows whose smallest number is close."""

    def __init__(self, rows: Iterable[NormalRow]):
        buckets: dict[tuple, list[tuple[float, tuple[Number, ...]]]] = {}
        for others, numbers in rows:
            first = _as_float(numbers[0]) if numbers else 0.0
            buckets.setdefault((others, len(numbers)), []).append((first, numbers))
        for bucket in buckets.values():
            bucket.sort(key=lambda item: item[0])
        self.buckets = buckets

    def has_match(self, probe: NormalRow, tolerance: Tolerance, probe_first: bool) -> bool:
        others, numbers = probe
        bucket = self.buckets.get((others, len(numbers)))
        if not bucket:
            return False
        if not numbers:
            return True
        x = _as_float(numbers[0])
        r = _radius(x, tolerance)
        lo = bisect_left(bucket, x - r, key=lambda item: item[0])
        hi = bisect_right(bucket, x + r, key=lambda item: item[0])
        for _, candidate in bucket[lo:hi]:
            a, b = (numbers, candidate) if probe_first else (candidate, numbers)
            if all(numbers_match(u, v, tolerance) for u, v in zip(a, b, strict=True)):
                return True
        return False


def _covered(probes: Iterable[NormalRow], others: Iterable[NormalRow], tolerance: Tolerance,
             probes_first: bool) -> bool:
    index = _Index(others)
    return all(index.has_match(p, tolerance, probes_first) for p in probes)


def same_answer(a_rows: Iterable[Sequence[Any]], b_rows: Iterable[Sequence[Any]],
                tolerance: Tolerance = SQL_TOLERANCE) -> bool:
    """Whether two answers are the same set of rows under ``tolerance``: every row of
    each has an equal row in the other."""
    a, b = normalise(a_rows, tolerance), normalise(b_rows, tolerance)
    if a == b:
        return True
    return _covered(a, b, tolerance, True) and _covered(b, a, tolerance, False)


def contained_in(rows: Iterable[Sequence[Any]], other_rows: Iterable[Sequence[Any]],
                 tolerance: Tolerance = SQL_TOLERANCE) -> bool:
    """Whether every (normalised) row of ``rows`` has an equal row in ``other_rows``."""
    return _covered(normalise(rows, tolerance), normalise(other_rows, tolerance), tolerance, True)


def matches_judge(sql_rows: Iterable[Sequence[Any]], judge_rows: Iterable[Sequence[Any]],
                  tolerance: Tolerance = JUDGE_TOLERANCE) -> bool:
    """Whether a query's answer on D' is the judge's answer: numeric text counts as numbers
    and a number the judge wrote with few decimals matches the query's value rounded so."""
    return same_answer(sql_rows, judge_rows, tolerance)
