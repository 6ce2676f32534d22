"""A near miss of the right answer: the benchmark judge's second noise model.

The rival model (:class:`~siselect.selection.judges.NoisyJudge`'s default) replaces the
judge's answer by a competing candidate's, as an LLM sharing a candidate's misreading would.
A near miss is almost right instead: a number off by one (a count miscounted), a row
dropped, a value NULLed. It exists to check selection against a kind of error it was never
tuned on, so nothing in siselect may be tuned against it: it only measures.
"""

import numbers
from collections.abc import Callable
from typing import Any

from siselect.runtime.answers import matches_judge

Rows = list[list[Any]]
KINDS = ("off_by_one", "row_dropped", "value_nulled")


def _cells(rows: Rows, keep: Callable[[Any], bool]) -> list[tuple[int, int]]:
    return [(i, j) for i, row in enumerate(rows) for j, v in enumerate(row) if keep(v)]


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


def _changed(kind: str, truth: Rows, rng: Any) -> Rows | None:
    rows = [list(r) for r in truth]
    if kind == "row_dropped":
        if len(rows) < 2:
            return None
        del rows[rng.randrange(len(rows))]
        return rows
    cells = _cells(rows, _is_number if kind == "off_by_one" else (lambda v: v is not None))
    if not cells:
        return None
    i, j = cells[rng.randrange(len(cells))]
    rows[i][j] = rows[i][j] + rng.choice((-1, 1)) if kind == "off_by_one" else None
    return rows


def near_miss(truth: Rows, rng: Any) -> tuple[str, Rows]:
    """``(kind, rows)``: ``truth`` changed by one of :data:`KINDS` (drawn from ``rng``) so
    that it no longer matches; an empty truth becomes one NULL row ("invented")."""
    kinds = list(KINDS)
    rng.shuffle(kinds)
    for kind in kinds:
        rows = _changed(kind, truth, rng)
        if rows is not None and not matches_judge(rows, truth) and \
                not matches_judge(truth, rows):
            return kind, rows
    return "invented", [[None]] if not truth else []
