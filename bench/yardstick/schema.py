"""BIRD's schema file (dev_tables.json) as tables, columns and keys."""

import json
from dataclasses import dataclass, field
from pathlib import Path

from . import TABLES_JSON


@dataclass
class Column:
    table: str
    name: str
    type: str  # as in dev_tables.json: integer, real, text, date, datetime
    index: int  # position in column_names_original
    references: "Column | None" = None


@dataclass
class Table:
    name: str
    columns: list[Column] = field(default_factory=list)
    primary_key: list[Column] = field(default_factory=list)

    def column(self, name: str) -> Column | None:
        wanted = name.lower()
        return next((c for c in self.columns if c.name.lower() == wanted), None)


@dataclass
class Schema:
    db_id: str
    tables: list[Table]

    def table(self, name: str) -> Table | None:
        wanted = name.lower()
        return next((t for t in self.tables if t.name.lower() == wanted), None)


def read_schemas(path: Path = TABLES_JSON) -> dict[str, Schema]:
    return {d["db_id"]: _schema(d) for d in json.loads(path.read_text(encoding="utf-8"))}


def _schema(d: dict) -> Schema:
    tables = [Table(name) for name in d["table_names_original"]]
    columns: dict[int, Column] = {}
    for index, ((t, name), ctype) in enumerate(zip(d["column_names_original"],
                                                  d["column_types"], strict=True)):
        if t < 0:
            continue
        column = Column(tables[t].name, name, ctype, index)
        tables[t].columns.append(column)
        columns[index] = column
    for key in d["primary_keys"]:
        members = key if isinstance(key, list) else [key]
        owner = next(t for t in tables if t.name == columns[members[0]].table)
        owner.primary_key = [columns[m] for m in members]
    for child, parent in d["foreign_keys"]:
        # BIRD lists a few keys twice and a few pointing at the column itself; keep the first.
        if child != parent and columns[child].references is None:
            columns[child].references = columns[parent]
    return Schema(d["db_id"], tables)
