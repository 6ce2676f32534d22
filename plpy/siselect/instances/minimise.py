"""Shrink a separating row set until it is 1-minimal (delta debugging, Zeller's ddmin).

Removing chunks first matters: starting sets reach thousands of rows for queries like
``ORDER BY COUNT(*) DESC LIMIT 1``, where testing one row at a time would be quadratic.
"""

from collections.abc import Callable, Sequence
from functools import partial
from typing import TypeVar

from siselect.runtime import deadline

T = TypeVar("T")


def _split(items: Sequence[T], n: int) -> list[list[T]]:
    size, extra = divmod(len(items), n)
    chunks, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        chunks.append(list(items[start:end]))
        start = end
    return [c for c in chunks if c]


def ddmin(items: Sequence[T], still_fails: Callable[[list[T]], bool],
          ahead: Callable[[list[list[T]]], None] | None = None) -> list[T]:
    """A 1-minimal subsequence of ``items`` on which ``still_fails`` holds.

    ``still_fails(items)`` must be True on entry. The result is 1-minimal: removing any
    single element makes ``still_fails`` False. ``ahead``, when given, is shown the subsets
    about to be tested, in test order and in batches that double (the first alone, then 2,
    4, ... 16: most rounds stop at their first subset), before the first of them is tested:
    it may fetch what their tests need at once (one statement for many sets,
    :meth:`.pair.Pair.prefetch`). Which subsets are tested, in which order, and the result
    stay as they were: the tests still stop at the first subset that fails.
    """
    current = list(items)
    n = 2
    while len(current) >= 2:
        deadline.check()  # each round builds O(len(current)) complements in Python
        chunks = _split(current, min(n, len(current)))
        found: list[T] | None = None
        if len(chunks) > 2:
            found = _first(len(chunks), chunks.__getitem__, still_fails, ahead)
        if found is not None:
            current, n = found, 2
            continue
        found = _first(len(chunks), partial(_complement, chunks), still_fails, ahead)
        if found is not None:
            current, n = found, max(n - 1, 2)
            continue
        if n >= len(current):
            break
        n = min(2 * n, len(current))
    return current


AHEAD_FIRST, AHEAD_MOST = 1, 16


def _complement(chunks: list[list[T]], i: int) -> list[T]:
    deadline.check()  # O(len(current)) in Python
    return [x for j, c in enumerate(chunks) if j != i for x in c]


def _first(count: int, subset: Callable[[int], list[T]], still_fails: Callable[[list[T]], bool],
           ahead: Callable[[list[list[T]]], None] | None) -> list[T] | None:
    """The first of ``subset(0) .. subset(count - 1)`` that still fails, tested in order;
    ``ahead`` sees them batch by batch (built only as far as the tests reach)."""
    batch: list[list[T]] = []
    size = AHEAD_FIRST if ahead is not None else 1
    for i in range(count):
        if not batch:
            batch = [subset(j) for j in range(i, min(count, i + size))]
            if ahead is not None:
                size = min(2 * size, AHEAD_MOST)
                if len(batch) > 1:
                    ahead(batch)
        candidate = batch.pop(0)
        if still_fails(candidate):
            return candidate
    return None
