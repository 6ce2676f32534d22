"""The byte cap per answer: a row cap alone lets 100,000 rows of 5 KB take gigabytes of
server memory, so an executor counts the bytes of the rows it has fetched, batch after
batch, and stops with SQLSTATE 54000 once they pass the cap.

Sizes are those of the Python objects the core keeps (each row tuple and its values, as
:func:`siselect.runtime.values.canonical_rows` makes them), which is what the backend's memory
holds; text dominates, so the count is close to the answer's text size plus ~50 bytes a
value.

>>> budget = AnswerBudget(limit=1_000)
>>> budget.add([("x" * 100,)] * 3) < 1_000
True
>>> budget.add([("x" * 100,)] * 10)  # doctest: +ELLIPSIS
Traceback (most recent call last):
siselect.runtime.errors.AnswerTooLarge: the answer takes more than 1000 bytes, ...
"""

import re
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from siselect.runtime.errors import AnswerTooLarge, InvalidInput

#: Default cap per answer. A pair keeps two answers on D, and peak memory adds the batch
#: being converted and the comparison's index: 128 MiB keeps a call well under 512 MB.
MAX_ANSWER_BYTES = 128 * 2**20
#: The setting that overrides it (a custom GUC in the server, an option in the CLI).
SETTING = "siselect.max_answer_bytes"

_UNITS = {"": 1, "b": 1, "kb": 2**10, "mb": 2**20, "gb": 2**30}
_AMOUNT = re.compile(r"\s*(\d+)\s*([kmg]?b?)\s*", re.IGNORECASE)


def rows_bytes(rows: Iterable[Sequence[Any]]) -> int:
    """Bytes the rows take as Python objects (row tuples and their values)."""
    size = sys.getsizeof
    return sum(size(row) + sum(map(size, row)) for row in rows)


def byte_limit(setting: str | None) -> int:
    """The cap a setting asks for ("64MB", "1048576", "512 kB"); the default when unset or
    empty. Refuses what is not a positive amount (22023)."""
    if setting is None or not setting.strip():
        return MAX_ANSWER_BYTES
    found = _AMOUNT.fullmatch(setting)
    if not found or int(found[1]) <= 0:
        raise InvalidInput(f"{SETTING} must be a positive number of bytes (with kB, MB or GB "
                           f"if wanted), not {setting!r}")
    return int(found[1]) * _UNITS[found[2].lower()]


class AnswerBudget:
    """The bytes of one answer, counted batch by batch as an executor fetches them."""

    def __init__(self, limit: int = MAX_ANSWER_BYTES):
        self.limit = limit
        self.used = 0

    def add(self, batch: Iterable[Sequence[Any]]) -> int:
        """Count ``batch``; the bytes so far, or :class:`AnswerTooLarge` past the cap."""
        self.used += rows_bytes(batch)
        if self.used > self.limit:
            raise AnswerTooLarge(
                f"the answer takes more than {self.limit} bytes, the most siselect keeps "
                f"({SETTING})"
            )
        return self.used


def session_limit(setting: str | None) -> int:
    """The cap in force for a session: its setting may lower the default, never raise it
    (any role can set a custom setting)."""
    return min(MAX_ANSWER_BYTES, byte_limit(setting))


BATCH = 1000  # rows fetched at a time


def fetch_capped(
    fetch: Callable[[int], Sequence[tuple]], max_rows: int | None, limit: int
) -> tuple[list[tuple], bool]:
    """Rows from ``fetch(n)`` (at most n rows a call) in batches, one more than ``max_rows``
    to tell whether the answer was cut, their bytes counted against ``limit`` as they come
    (:class:`AnswerTooLarge` past it); returns the rows kept and whether more existed."""
    wanted = None if max_rows is None else max_rows + 1
    budget = AnswerBudget(limit)
    data: list[tuple] = []
    while wanted is None or len(data) < wanted:
        size = BATCH if wanted is None else min(BATCH, wanted - len(data))
        batch = fetch(size)
        budget.add(batch)
        data.extend(batch)
        if len(batch) < size:
            break
    truncated = max_rows is not None and len(data) > max_rows
    return (data[:max_rows] if truncated else data), truncated
