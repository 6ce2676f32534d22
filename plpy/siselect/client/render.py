"""Plain-text tables for the terminal."""

from collections.abc import Sequence
from typing import Any


def cell(value: Any) -> str:
    return "NULL" if value is None else str(value)


def text_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], limit: int = 50) -> str:
    """A boxed-less aligned table like psql's, with a row count footer."""
    shown = [[cell(v) for v in row] for row in rows[:limit]]
    widths = [len(c) for c in columns]
    for row in shown:
        widths = [max(w, len(v)) for w, v in zip(widths, row, strict=True)]
    line = " | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))
    rule = "-+-".join("-" * w for w in widths)
    body = [" | ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in shown]
    more = f" (showing {limit})" if len(rows) > limit else ""
    noun = "row" if len(rows) == 1 else "rows"
    return "\n".join([line, rule, *body, f"({len(rows)} {noun}{more})"])
