"""Rendering a separating instance D' for people and for the LLM judge.

An instance is ``{table: {"columns": [name, ...], "rows": [[value, ...], ...]}}`` holding
real rows with canonical values (see :mod:`siselect.runtime.values`). The paper found JSON the
format an LLM reads best, then Markdown, then SQL INSERTs; all three are here.
"""

import json
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from siselect.runtime.errors import InvalidInput
from siselect.runtime.executor import quote_ident, quote_literal

Instance = dict[str, dict[str, Any]]


def tables(instance: Instance) -> Iterator[tuple[str, list[str], list[Sequence[Any]]]]:
    """``(table, columns, rows)`` for each table, after checking the instance's shape."""
    if not isinstance(instance, dict):
        raise InvalidInput("an instance must be an object {table: {columns, rows}}")
    for name, data in instance.items():
        columns = data.get("columns") if isinstance(data, dict) else None
        rows = data.get("rows") if isinstance(data, dict) else None
        if not isinstance(columns, list) or not isinstance(rows, list):
            raise InvalidInput(f"instance table {name!r} needs a list of columns and of rows")
        for row in rows:
            if not isinstance(row, list | tuple) or len(row) != len(columns):
                raise InvalidInput(f"a row of instance table {name!r} does not have "
                                   f"{len(columns)} values")
        yield str(name), [str(c) for c in columns], rows


def instance_size(instance: Instance) -> int:
    """The number of rows in the instance, over all its tables."""
    return sum(len(rows) for _, _, rows in tables(instance))


def _json_value(value: Any) -> Any:
    # JSON has no infinities; NaN never reaches here (canonical values map it to NULL).
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def to_json(instance: Instance) -> str:
    """Each table as a list of row objects ``{column: value}``, one row a line."""
    parts = []
    for name, columns, rows in tables(instance):
        lines = [_json({c: _json_value(v) for c, v in zip(columns, row, strict=True)})
                 for row in rows]
        body = "[]" if not lines else "[\n    " + ",\n    ".join(lines) + "\n  ]"
        parts.append(f"  {_json(name)}: {body}")
    return "{\n" + ",\n".join(parts) + "\n}" if parts else "{}"


def value_text(value: Any) -> str:
    """A canonical value as people and the judge read it: NULL, true/false, "" for the
    empty string (an empty cell would read as a missing value), JSON for the rest."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value == "":
        return '""'
    return value if isinstance(value, str) else _json(_json_value(value))


def _markdown_cell(value: Any, escape: Callable[[str], str] | None = None) -> str:
    text = value_text(value)
    # ``escape`` (reports) handles backslashes itself, with the rest of Markdown's syntax.
    text = escape(text) if escape else text.replace("\\", "\\\\")
    text = text.replace("|", "\\|")
    return text.replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>")


def markdown_table(columns: Sequence[Any], rows: Sequence[Sequence[Any]],
                   escape: Callable[[str], str] | None = None) -> str:
    """A Markdown table: a header, a rule and a line a row, every cell escaped so that it
    stays one cell ("" for no columns); ``escape`` also applies to each cell's text."""
    if not columns:
        return ""
    lines = ["| " + " | ".join(_markdown_cell(c, escape) for c in columns) + " |",
             "|" + " --- |" * len(columns)]
    lines += ["| " + " | ".join(_markdown_cell(v, escape) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def to_markdown(instance: Instance, level: int = 3,
                escape: Callable[[str], str] | None = None) -> str:
    """One Markdown table per database table, under a heading (of ``level``) with its
    name and row count."""
    parts = []
    for name, columns, rows in tables(instance):
        count = f"{len(rows)} row" + ("" if len(rows) == 1 else "s")
        heading = f"{'#' * level} {_markdown_cell(name, escape)} ({count})"
        table = markdown_table(columns, rows, escape)
        parts.append(f"{heading}\n\n{table}" if table else heading)
    return "\n\n".join(parts)


def sql_literal(value: Any) -> str:
    """A PostgreSQL literal for a canonical value, correct whatever
    standard_conforming_strings says."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return repr(value)
        return "'NaN'::float8" if math.isnan(value) else f"'{value}'::float8"
    if isinstance(value, list | tuple):
        if not value:
            return "'{}'"
        return "ARRAY[" + ", ".join(sql_literal(v) for v in value) + "]"
    text = value if isinstance(value, str) else _json(value)
    if "\\" in text:
        return "E" + quote_literal(text.replace("\\", "\\\\"))
    return quote_literal(text)


def to_sql_inserts(instance: Instance, schema: str | None = None) -> str:
    """INSERT statements, one per table, with quoted identifiers and literals; a table
    without rows gets a comment saying so."""
    statements = []
    for name, columns, rows in tables(instance):
        target = quote_ident(name)
        if schema is not None:
            target = f"{quote_ident(schema)}.{target}"
        if not rows:
            # Flattened so that a name holding a line break cannot end the comment early.
            statements.append(f"-- {' '.join(target.splitlines())}: no rows")
            continue
        values = ",\n  ".join("(" + ", ".join(sql_literal(v) for v in row) + ")" for row in rows)
        column_list = ", ".join(quote_ident(c) for c in columns)
        statements.append(f"INSERT INTO {target} ({column_list}) VALUES\n  {values};")
    return "\n".join(statements)


FORMATS: dict[str, Callable[[Instance], str]] = {
    "json": to_json,
    "markdown": to_markdown,
    "sql": to_sql_inserts,
}


def render(instance: Instance, fmt: str = "json") -> str:
    """The instance in one of :data:`FORMATS` ("json", "markdown", "sql")."""
    try:
        renderer = FORMATS[fmt]
    except KeyError:
        raise InvalidInput(f"unknown instance format {fmt!r}; use one of "
                           f"{', '.join(FORMATS)}") from None
    return renderer(instance)
