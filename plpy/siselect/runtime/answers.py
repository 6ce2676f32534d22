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

import gc
import itertools
import json
import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from siselect.runtime import deadline

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
    ``null_rows``: in :func:`matches_judge`, a row of NULLs only is a row, as under BIRD's
    rule (one NULL row, e.g. ``SUM`` over nothing, and no row differ); by default such a
    row is dropped, since a person or an LLM may write either for "nothing".
    """

    relative: float = 1e-6
    absolute: float = 0.0
    min_decimals: int | None = None
    lenient_text: bool = False
    null_rows: bool = False


#: SQL answer against SQL answer (candidates on D or on D').
SQL_TOLERANCE = Tolerance()
#: SQL answer against SQL answer as any judge's comparison sees them (each judge's tolerance
#: reads numeric text as its number): two answers equal so cannot be told apart by a verdict.
SEEN_BY_JUDGE = replace(SQL_TOLERANCE, lenient_text=True)
#: SQL answer against the judge's answer.
JUDGE_TOLERANCE = Tolerance(min_decimals=2, lenient_text=True)
#: SQL answer against a trusted query's answer (the reference judge's): a NULL row counts.
REFERENCE_TOLERANCE = replace(JUDGE_TOLERANCE, null_rows=True)

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


def as_seen_by_judge(rows: frozenset[NormalRow]) -> tuple[frozenset[NormalRow], bool]:
    """An answer normalised under :data:`SQL_TOLERANCE` as :data:`SEEN_BY_JUDGE` would
    have normalised it, and whether a row of it became all NULL ('null' as text): read from
    the normalised rows, not the answer's own (answers on D' are normalised once)."""
    if not any(kind == 1 for others, _ in rows for kind, _ in others):
        return rows, False
    seen: set[NormalRow] = set()
    nulled = False
    for others, numbers in rows:
        kept, more = [], list(numbers)
        for kind, text in others:
            v = _text(text, True) if kind == 1 else (kind, text)
            if isinstance(v, tuple):
                kept.append(v)
            else:
                more.append(v)
        if not more and all(o == _NULL for o in kept):
            nulled = True
            continue
        seen.add((tuple(sorted(kept)), tuple(sorted(more))))
    return frozenset(seen), nulled


def normalise(rows: Iterable[Sequence[Any]], tolerance: Tolerance = SQL_TOLERANCE
              ) -> frozenset[NormalRow]:
    """The answer as a set of rows: all-NULL rows and duplicates gone, column order ignored."""
    normal = (normal_row(row, tolerance) for row in _checked(rows))
    return frozenset(r for r in normal if r is not None)


def _checked(rows: Iterable[Sequence[Any]]) -> Iterator[Sequence[Any]]:
    """``rows``, checking the deadline every 4096 (normalising is a long Python loop)."""
    for n, row in enumerate(rows):
        if n & 4095 == 4095:
            deadline.check()
        yield row


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


#: Significant digits numbers keep in :func:`exact_key`: past float noise (sums in another
#: order differ near the 16th digit), short of any difference a question asks about.
EXACT_DIGITS = 9


def _canonical(value: Any, digits: int) -> Any:
    """``value`` for :func:`exact_key`: numbers (whole, fractional, Decimal, bool) as one
    kind, fractional ones rounded to ``digits`` significant digits; text as it is."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float | Decimal):
        x = float(value)
        if not math.isfinite(x):
            return None if math.isnan(x) else x
        if x.is_integer() and abs(x) < 2**53:
            return int(x)
        rounded = float(f"{x:.{digits}g}")
        return int(rounded) if rounded.is_integer() and abs(rounded) < 2**53 else rounded
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def exact_key(rows: Iterable[Sequence[Any]], digits: int = EXACT_DIGITS
              ) -> frozenset[tuple[Any, ...]]:
    """A hashable key for grouping answers on D by BIRD's execution-accuracy rule: the set
    of row tuples (column order counts; duplicates and row order do not; NULL rows stay),
    numbers rounded to ``digits`` significant digits. Rounding, unlike a tolerance, is
    transitive: answers with equal keys are one group whatever the order they come in."""
    return frozenset(tuple(_canonical(v, digits) for v in row) for row in _checked(rows))


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
    if type(a) is float and type(b) is float and not (a.is_integer() and b.is_integer()):
        # The common case first: two fractional floats within the relative tolerance.
        diff = abs(a - b)
        if diff <= tolerance.relative * max(abs(a), abs(b)) and diff != math.inf:
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


Cell = tuple[str, Number]  # a cell of fractional numbers: never equal to a number


class _Cells:
    """Cells of the number line under a tolerance: two numbers that may match lie in the
    same cell or in adjacent ones, so a lookup hashes instead of scanning.

    Numbers are mapped by ``t``, whose slope ``1 / (A + R|x|)`` shrinks where the
    tolerance ``A + R max(|x|, |y|)`` grows; two numbers that match are then at most
    ``1 / (1 - R)`` apart (``reach``), whatever their magnitude or signs. A cell is
    ``8 * reach`` wide, so a number needs its neighbour cell only near a cell's edge.
    """

    def __init__(self, tolerance: Tolerance):
        md = tolerance.min_decimals
        self.a = tolerance.absolute + (0.5 * 10.0**-md * (1 + 1e-6) if md is not None else 0.0)
        self.r = tolerance.relative
        # Past a relative tolerance of 1/2 nearly everything matches: cells do not help.
        self.usable = 0.0 <= self.r < 0.5 and self.a >= 0.0
        self.exact = self.r == 0.0 and self.a == 0.0
        self.reach = (1.0 / (1.0 - self.r)) * (1 + 1e-6) + 1e-9 if self.usable else 0.0
        self.width = 8 * self.reach if self.usable else 1.0

        # ``t`` is inlined in ``key`` when R > 0 as ``f(k |x|) * s + off``: for A > 0 with
        # f = log1p, for A = 0 with f = log (off keeps t of the smallest number positive).
        self._f = math.log1p if self.a > 0.0 else math.log
        inline = self.usable and self.r > 0.0
        self._k = (self.r / self.a if self.a > 0.0 else 1.0) if inline else 0.0
        self._s = 1.0 / (self.r * self.width) if inline else 0.0
        self._off = 800.0 * self._s if inline and self.a == 0.0 else 0.0
        # Beyond ``big``, k |x| could overflow (and the whole line is beyond when not inline).
        self._big = (1e300 / self._k if self.a > 0.0 else math.inf) if inline else 0.0

    def scaled(self, x: float) -> float:
        """``t(x)`` in cell widths; ``x`` finite, and non-zero when ``A`` is 0."""
        ax, r, a = abs(x), self.r, self.a
        if not self.usable or self.exact:
            return 0.0  # cells are not used
        if ax < self._big:
            v = self._f(self._k * ax) * self._s + self._off
        elif r == 0.0:
            v = ax / a / self.width
        else:  # A > 0, R > 0, k |x| overflows: log1p(y) = log(y) to the last digit
            v = (math.log(r) + math.log(ax) - math.log(a)) / r / self.width
        return v if x >= 0 else -v

    def cell(self, x: float) -> Cell:
        """The cell of a finite fractional number (a tuple: never equal to a number)."""
        return ("f", x if self.exact else math.floor(self.scaled(x)))

    def near(self, x: float) -> list[Cell]:
        """The cells in which a fractional number matching ``x`` may lie."""
        if not math.isfinite(x) or (x == 0.0 and self.a == 0.0):
            return []  # only itself matches, and it is whole or infinite
        if self.exact:
            return [("f", x)]
        v = self.scaled(x)
        c = math.floor(v)
        out: list[Cell] = [("f", c)]
        frac, edge = v - c, self.reach / self.width
        if frac < edge:
            out.append(("f", c - 1))
        if frac > 1 - edge:
            out.append(("f", c + 1))
        return out

    def key(self, numbers: tuple[Number, ...]) -> tuple:
        """A row's hash key: per number, itself when whole or infinite, else its cell.
        The cell of the usual case is computed inline, as ``scaled`` does: this runs for
        every row of an answer."""
        k, s, off, big, f = self._k, self._s, self._off, self._big, self._f
        floor, other = math.floor, self._other
        return tuple([
            x if type(x) is int or x.is_integer()  # type: ignore[union-attr]
            else ("f", floor(f(k * x) * s + off)) if 0.0 < x < big
            else ("f", floor(-(f(-k * x) * s + off))) if -big < x < 0.0
            else other(x) for x in numbers
        ])

    def _other(self, x: float) -> float | Cell:
        return x if math.isinf(x) else self.cell(x)


def _whole_or_special(x: Number) -> bool:
    """Compared by equality only with its own kind: whole numbers against whole numbers
    exactly, infinities only with themselves."""
    return type(x) is int or x.is_integer() or not math.isfinite(x)  # type: ignore[union-attr]


MAX_KEYS = 64  # cell combinations tried for one row before scanning instead
MAX_WHOLES = 8  # whole numbers within reach of a fractional one before scanning instead


def _numbers_match(probe: tuple[Number, ...], row: tuple[Number, ...], tolerance: Tolerance,
                   probe_first: bool) -> bool:
    a, b = (probe, row) if probe_first else (row, probe)
    rel, inf = tolerance.relative, math.inf
    for u, v in zip(a, b, strict=True):
        if u == v:
            continue
        # numbers_match's common case inline: two finite floats, not both whole, within
        # the relative tolerance (this runs for every row of an answer).
        if (type(u) is float and type(v) is float
                and abs(u - v) <= rel * max(abs(u), abs(v)) < inf
                and not (u.is_integer() and v.is_integer())):
            continue
        if not numbers_match(u, v, tolerance):
            return False
    return True


class _Group:
    """The rows of one answer that share their non-numeric part and arity, for the probes
    that find no match under their own key: the keys their numbers may match are looked
    up (neighbour cells; whole numbers near a fraction), and a probe whose keys multiply
    past :data:`MAX_KEYS` scans the rows near it on its most selective number instead."""

    def __init__(self, side: "_Side", arity: int):
        self.side = side
        self.arity = arity
        self.ids: list[int] = []
        self.by_key: dict[tuple, list[int]] = {}
        self._present: list[set] | None = None
        self._wholes: list[list[Number]] | None = None
        self._sorted: list[list[tuple[float, int]]] | None = None

    def add(self, i: int, key: tuple) -> None:
        self.ids.append(i)
        self.by_key.setdefault(key, []).append(i)

    @property
    def present(self) -> list[set]:
        if self._present is None:
            self._present = [{k[j] for k in self.by_key} for j in range(self.arity)]
        return self._present

    def _wholes_at(self, j: int) -> list[Number]:
        if self._wholes is None:
            self._wholes = [sorted(k for k in p if not isinstance(k, tuple) and math.isfinite(k))
                            for p in self.present]
        return self._wholes[j]

    def keys_for(self, x: Number, j: int) -> list | None:
        """The keys at position ``j`` of rows whose ``j``-th number may match ``x``; None
        when there are too many to enumerate."""
        present, near = self.present[j], self.side.cells.near
        if _whole_or_special(x):
            keys: list = [x] if x in present else []
            return keys + [c for c in near(_as_float(x)) if c in present]
        keys = [c for c in near(x) if c in present]
        wholes = self._wholes_at(j)
        if wholes:
            r = _radius(x, self.side.tolerance)
            lo, hi = bisect_left(wholes, x - r), bisect_right(wholes, x + r)
            if hi - lo > MAX_WHOLES:
                return None
            keys += wholes[lo:hi]
        return keys

    def match(self, numbers: tuple[Number, ...], own: tuple, probe_first: bool) -> int:
        """The id of a row matching ``numbers`` (whose own key, already tried, is ``own``),
        or -1."""
        if not self.side.cells.usable:
            return self._scan(numbers, probe_first)
        per_position, combos = [], 1
        for j, x in enumerate(numbers):
            keys = self.keys_for(x, j)
            if keys is None:
                return self._scan(numbers, probe_first)
            if not keys:
                return -1
            combos *= len(keys)
            if combos > MAX_KEYS:
                return self._scan(numbers, probe_first)
            per_position.append(keys)
        rows, tolerance = self.side.rows, self.side.tolerance
        for key in itertools.product(*per_position):
            if key != own:
                for i in self.by_key.get(key, ()):
                    if _numbers_match(numbers, rows[i][1], tolerance, probe_first):
                        return i
        return -1

    def _scan(self, numbers: tuple[Number, ...], probe_first: bool) -> int:
        """The rows whose number at the most selective position is near the probe's."""
        rows, tolerance = self.side.rows, self.side.tolerance
        if not numbers:
            return self.ids[0] if self.ids else -1
        if self._sorted is None:
            self._sorted = [sorted((_as_float(rows[i][1][j]), i) for i in self.ids)
                            for j in range(self.arity)]
        best: tuple[int, int, list[tuple[float, int]]] | None = None
        for j, x in enumerate(numbers):
            fx = _as_float(x)
            r = _radius(fx, tolerance)
            column = self._sorted[j]
            lo = bisect_left(column, (fx - r, -1))
            hi = bisect_right(column, (fx + r, math.inf))
            if best is None or hi - lo < best[1] - best[0]:
                best = (lo, hi, column)
        assert best is not None
        lo, hi, column = best
        for n, (_, i) in enumerate(column[lo:hi]):
            if n & 1023 == 1023:
                deadline.check()
            if _numbers_match(numbers, rows[i][1], tolerance, probe_first):
                return i
        return -1


class _Side:
    """One answer's normalised rows, hashed under their keys (see :class:`_Cells`) when
    first probed; rows that miss under their own key go to their :class:`_Group`."""

    def __init__(self, rows: frozenset[NormalRow], cells: _Cells, tolerance: Tolerance):
        self.set, self.rows = rows, list(rows)
        self.cells, self.tolerance = cells, tolerance
        self._index: dict[tuple, list[int]] | None = None
        self._groups: dict[tuple, _Group] | None = None

    def index(self) -> dict[tuple, list[int]]:
        if self._index is None:
            key, index = self.cells.key, dict[tuple, list[int]]()
            for i, (text, numbers) in enumerate(self.rows):
                if i & 4095 == 4095:
                    deadline.check()
                index.setdefault((text, key(numbers)), []).append(i)
            self._index = index
        return self._index

    def group(self, text: tuple, arity: int) -> _Group | None:
        if self._groups is None:
            self._groups = {}
            for (t, key), ids in self.index().items():
                group = self._groups.get((t, len(key)))
                if group is None:
                    group = self._groups[t, len(key)] = _Group(self, len(key))
                for i in ids:
                    group.add(i, key)
        return self._groups.get((text, arity))

    def nearby(self, text: tuple, numbers: tuple[Number, ...], own: tuple,
               probe_first: bool) -> int:
        """The id of a row matching ``(text, numbers)`` under another key than its own
        ``own``, or -1."""
        group = self.group(text, len(numbers))
        return -1 if group is None else group.match(numbers, own, probe_first)


def _cover(probes: Iterable[NormalRow], side: _Side, probes_first: bool) -> set[int] | None:
    """The ids of the rows of ``side`` that match the probes, or None when a probe has no
    match. Each probe first tries the rows under its own key (inline: once per row)."""
    matched: set[int] = set()
    index, key, rows, tolerance = side.index(), side.cells.key, side.rows, side.tolerance
    for n, (text, numbers) in enumerate(probes):
        if n & 1023 == 1023:
            deadline.check()
        own = key(numbers)
        for i in index.get((text, own), ()):
            if _numbers_match(numbers, rows[i][1], tolerance, probes_first):
                break
        else:
            i = side.nearby(text, numbers, own, probes_first)
            if i < 0:
                return None
        matched.add(i)
    return matched


@contextmanager
def _no_gc() -> Iterator[None]:
    """Comparing builds hundreds of thousands of tuples next to the fetched answers; each
    automatic collection would walk all of them (more than doubling the time). The tuples
    form no cycles, so nothing waits for a collection."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def same_answer(a_rows: Iterable[Sequence[Any]], b_rows: Iterable[Sequence[Any]],
                tolerance: Tolerance = SQL_TOLERANCE) -> bool:
    """Whether two answers are the same set of rows under ``tolerance``: every row of
    each has an equal row in the other.

    Rows equal outright are matched by hashing; the rest through :class:`_Side`. Matching
    is the same relation both ways round, so the rows of ``b`` matched from ``a`` need no
    second look: in the usual case ``b`` is never indexed at all.
    """
    with _no_gc():
        return same_normalised(normalise(a_rows, tolerance), normalise(b_rows, tolerance),
                               tolerance)


def normal_answer(rows: Iterable[Sequence[Any]], tolerance: Tolerance = SQL_TOLERANCE
                  ) -> tuple[frozenset[NormalRow], bool]:
    """:func:`normalise` and :func:`has_null_row` of one answer, in one pass over its rows
    (an answer on D compared in many duels is normalised once)."""
    with _no_gc():
        normal = [normal_row(row, tolerance) for row in _checked(rows)]
        return frozenset(r for r in normal if r is not None), None in normal


def same_normalised(a: frozenset[NormalRow], b: frozenset[NormalRow],
                    tolerance: Tolerance = SQL_TOLERANCE) -> bool:
    """:func:`same_answer` of two answers already normalised (:func:`normalise`)."""
    with _no_gc():
        if a == b:
            return True
        if _unmatchable(a, b) or _unmatchable(b, a):
            return False
        cells = _Cells(tolerance)
        side_a, side_b = _Side(a, cells, tolerance), _Side(b, cells, tolerance)
        matched = _cover((r for r in a if r not in b), side_b, True)
        if matched is None:
            return False
        rest = (r for i, r in enumerate(side_b.rows) if i not in matched and r not in a)
        return _cover(rest, side_a, False) is not None


def _unmatchable(a: frozenset[NormalRow], b: frozenset[NormalRow]) -> bool:
    """Whether a row of ``a`` without numbers is missing from ``b``: no tolerance matches
    it with another row, so the answers differ, decided without indexing ``b`` (two
    answers of 30,000 names each: a quarter of a second otherwise)."""
    return any(not numbers and (others, numbers) not in b for others, numbers in a)


def contained_in(rows: Iterable[Sequence[Any]], other_rows: Iterable[Sequence[Any]],
                 tolerance: Tolerance = SQL_TOLERANCE) -> bool:
    """Whether every (normalised) row of ``rows`` has an equal row in ``other_rows``."""
    with _no_gc():
        probes, others = normalise(rows, tolerance), normalise(other_rows, tolerance)
        side = _Side(others, _Cells(tolerance), tolerance)
        return _cover((r for r in probes if r not in others), side, True) is not None


def matches_judge(sql_rows: Iterable[Sequence[Any]], judge_rows: Iterable[Sequence[Any]],
                  tolerance: Tolerance = JUDGE_TOLERANCE) -> bool:
    """Whether a query's answer on D' is the judge's answer: numeric text counts as numbers
    and a number the judge wrote with few decimals matches the query's value rounded so."""
    if not tolerance.null_rows:
        return same_answer(sql_rows, judge_rows, tolerance)
    ours, theirs = list(sql_rows), list(judge_rows)
    return has_null_row(ours, tolerance) == has_null_row(theirs, tolerance) and \
        same_answer(ours, theirs, tolerance)


def _column(rows: Sequence[Sequence[Any]], j: int) -> list[tuple[Any]]:
    return [(row[j],) for row in rows]


def same_in_order(a_rows: Iterable[Sequence[Any]], b_rows: Iterable[Sequence[Any]],
                  tolerance: Tolerance = SQL_TOLERANCE) -> bool:
    """:func:`same_answer`, and column by column too: the values at each position of ``a``
    are the values at that position of ``b`` (under ``tolerance``). Two answers that are
    the same but for column order are not the same in order (BIRD counts one of them
    wrong)."""
    a, b = list(a_rows), list(b_rows)
    if not same_answer(a, b, tolerance):
        return False
    widths = {len(row) for row in a} | {len(row) for row in b}
    if len(widths) > 1:
        return False
    width = widths.pop() if widths else 0
    return all(same_answer(_column(a, j), _column(b, j), tolerance) for j in range(width))


def matches_judge_in_order(sql_rows: Iterable[Sequence[Any]],
                           judge_rows: Iterable[Sequence[Any]],
                           tolerance: Tolerance = JUDGE_TOLERANCE) -> bool:
    """:func:`matches_judge`, with the query's columns in the judge's column order."""
    return same_in_order(sql_rows, judge_rows, tolerance)


def has_null_row(rows: Iterable[Sequence[Any]], tolerance: Tolerance = SQL_TOLERANCE) -> bool:
    """Whether an answer holds a row of NULLs only: a row under BIRD's rule, which
    :func:`same_answer` and :func:`contained_in` drop."""
    return any(normal_row(r, tolerance) is None for r in rows)


def judge_matches(answers: Sequence[Sequence[Sequence[Any]] | None],
                  judge_rows: Sequence[Sequence[Any]],
                  tolerance: Tolerance = JUDGE_TOLERANCE) -> list[bool]:
    """Which answers (None: an error) match the judge's. Among several that match, those
    that match more closely match and the others do not, when any does: first in the
    judge's column order, then with a row of NULLs where the judge has one and only there
    (one NULL row, e.g. ``SUM`` over nothing, and no row are two answers under BIRD's rule,
    though the comparison drops NULL rows). A judge's answer that matches only one side
    keeps the comparison's leniency."""
    matched = [a is not None and matches_judge(a, judge_rows, tolerance) for a in answers]
    judge_null = has_null_row(judge_rows, tolerance)
    closer = (lambda a: matches_judge_in_order(a, judge_rows, tolerance),
              lambda a: has_null_row(a, tolerance) == judge_null)
    for close in closer:
        if sum(matched) < 2:
            break
        refined = [m and a is not None and close(a) for a, m in zip(answers, matched, strict=True)]
        matched = refined if any(refined) else matched
    return matched
