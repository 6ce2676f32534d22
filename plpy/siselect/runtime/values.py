"""Canonical Python values for query results, identical whichever driver fetched them.

psycopg and PL/Python map PostgreSQL types differently (dates, numerics, bytes); the
core compares and serialises answers, so both executors pass every value through
:func:`canonical`.
"""

import datetime
import decimal
import math
from typing import Any

#: Types :func:`canonical` returns as they are.
_AS_IS = frozenset({str, int, bool, type(None)})


def canonical(value: Any) -> Any:
    """Map a fetched value to int, float, str, bool or None (JSON-ready)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, decimal.Decimal):
        if value.is_nan():
            return None
        if value == value.to_integral_value() and abs(value) < 2**63:
            return int(value)
        return float(value)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return (
            value.isoformat(sep=" ") if isinstance(value, datetime.datetime) else value.isoformat()
        )
    if isinstance(value, bytes | bytearray | memoryview):
        return "\\x" + bytes(value).hex()
    if isinstance(value, list | tuple):
        if all(type(v) in _AS_IS for v in value):  # a sketch's 8,192 keys: 5 times faster
            return list(value)
        return [canonical(v) for v in value]
    return str(value)


def canonical_rows(rows: Any) -> list[tuple]:
    # Rows of text, whole numbers and NULLs only, the usual case, are taken as they are:
    # converting every value costs five times as much (30,000 names: 17 against 3 ms).
    out = []
    for row in rows:
        for value in row:
            if type(value) not in _AS_IS:
                out.append(tuple([canonical(v) for v in row]))
                break
        else:
            out.append(tuple(row))
    return out
