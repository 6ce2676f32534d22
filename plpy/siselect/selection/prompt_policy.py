"""What an administrator allows a prompt to carry: columns whose values never leave the
server (masked, the judge told so) and an estimated size limit.

D' holds real rows, and the judge may be a hosted model. Masking happens on the instance,
before it is rendered, so no format can leak a masked value; the size is estimated from
the rendered messages (about four characters a token, the usual rule for English text
and JSON) because the true count is known only once the endpoint has read them.
"""

import dataclasses
import json
import math
from typing import Any

from siselect.selection.verdict import JudgeContext

MASK = "(masked)"
MASK_NOTE = (f"Values shown as {MASK} are withheld by the database's administrator: they "
             f"never leave the server. Where such a value belongs in your answer, write "
             f"\"{MASK}\".")
CHARS_PER_TOKEN = 4


def _matches(rule: str, table: str, column: str) -> bool:
    """``table.column``, or ``*.column`` for that column in any table (case-insensitive)."""
    want_table, _, want_column = rule.lower().rpartition(".")
    return want_column == column.lower() and want_table in ("*", table.lower())


def masked(context: JudgeContext, rules: list[str]) -> tuple[JudgeContext, bool]:
    """The context with the values of masked columns replaced; and whether any was."""
    if not rules:
        return context, False
    instance: dict[str, dict[str, Any]] = {}
    hit = False
    for table, data in context.instance.items():
        columns = data.get("columns", [])
        hidden = {i for i, c in enumerate(columns) if any(_matches(r, table, str(c))
                                                          for r in rules)}
        hit = hit or bool(hidden and data.get("rows"))
        rows = [[MASK if i in hidden and v is not None else v for i, v in enumerate(row)]
                for row in data.get("rows", [])]
        instance[table] = {**data, "rows": rows}
    return dataclasses.replace(context, instance=instance), hit


def without_rowids(context: JudgeContext) -> JudgeContext:
    """The context without the columns that hold a loaded SQLite table's implicit rowid
    (``Table.rowid``, docs/identifiers.md): SQLite never shows that column, so neither the
    question's author nor the schema the judge is told of has it."""
    instance: dict[str, dict[str, Any]] = {}
    for name, data in context.instance.items():
        table = context.catalog.table(name)
        columns = data.get("columns", [])
        if table is None or table.rowid is None or table.rowid not in columns:
            instance[name] = data
            continue
        drop = columns.index(table.rowid)
        instance[name] = {**data, "columns": [c for i, c in enumerate(columns) if i != drop],
                          "rows": [[v for i, v in enumerate(row) if i != drop]
                                   for row in data.get("rows", [])]}
    return dataclasses.replace(context, instance=instance)


def masked_names(instance: dict[str, dict[str, Any]], rules: list[str]) -> list[str]:
    """The columns of ``instance`` (as table.column) that ``rules`` mask."""
    return [f"{table}.{column}" for table, data in sorted(instance.items())
            for column in data.get("columns", [])
            if any(_matches(r, table, str(column)) for r in rules)]


def estimated_tokens(messages: list[dict[str, str]]) -> int:
    return math.ceil(len(json.dumps(messages, ensure_ascii=False)) / CHARS_PER_TOKEN)
