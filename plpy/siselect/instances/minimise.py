"""Shrink a separating row set until it is 1-minimal (delta debugging, Zeller's ddmin).

Removing chunks first matters: starting sets reach thousands of rows for queries like
``ORDER BY COUNT(*) DESC LIMIT 1``, where testing one row at a time would be quadratic.
"""

from collections.abc import Callable, Sequence
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


def ddmin(items: Sequence[T], still_fails: Callable[[list[T]], bool]) -> list[T]:
    """A 1-minimal subsequence of ``items`` on which ``still_fails`` holds.

    ``still_fails(items)`` must be True on entry. The result is 1-minimal: removing any
    single element makes ``still_fails`` False.
    """
    current = list(items)
    n = 2
    while len(current) >= 2:
        deadline.check()  # each round builds O(len(current)) complements in Python
        chunks = _split(current, min(n, len(current)))
        reduced = False
        for chunk in chunks:
            if len(chunks) > 2 and still_fails(chunk):
                current, n, reduced = chunk, 2, True
                break
        if not reduced:
            for i in range(len(chunks)):
                deadline.check()
                complement = [x for j, c in enumerate(chunks) if j != i for x in c]
                if still_fails(complement):
                    current, n, reduced = complement, max(n - 1, 2), True
                    break
        if not reduced:
            if n >= len(current):
                break
            n = min(2 * n, len(current))
    return current
