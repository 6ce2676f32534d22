"""Create a BIRD database's tables, empty, from BIRD's schema file (``dev_tables.json``).

Only the schema of ten of BIRD's dev databases is available here; an empty copy is
enough to check that candidate SQL transpiles and executes. Column types follow the
loader's rule for a column whose stored values are unknown, names are kept exactly,
and keys are added where PostgreSQL accepts them. The schema carries the loader's mark
(with the digest of its JSON entry), so re-creating an unchanged one does nothing.
"""

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from siselect.client.loader import MARK, _schema_mark, recreate_schema, validate_name
from siselect.runtime.errors import InvalidInput, SiselectError
from siselect.runtime.executor import quote_ident, quote_literal
from siselect.sqltext.sqlite_types import pg_type


@dataclass
class EmptyTable:
    name: str
    columns: list[tuple[str, str]] = field(default_factory=list)  # (name, PostgreSQL type)
    primary_key: list[str] = field(default_factory=list)
    foreign_keys: list[tuple[str, str, str]] = field(default_factory=list)  # col, table, col


def read_entry(tables_json_path: Path, db_id: str) -> dict:
    """The entry of ``db_id`` in a BIRD/Spider-style ``tables.json``."""
    entries = json.loads(Path(tables_json_path).read_text(encoding="utf-8"))
    entry = next((e for e in entries if e.get("db_id") == db_id), None)
    if entry is None:
        known = ", ".join(sorted(e.get("db_id", "?") for e in entries))
        raise InvalidInput(f"{db_id!r} is not in {tables_json_path} (it has: {known})")
    return entry


def tables_of(entry: dict) -> list[EmptyTable]:
    """Tables, typed columns and keys described by one ``tables.json`` entry."""
    tables = [EmptyTable(name) for name in entry["table_names_original"]]
    columns = entry["column_names_original"]
    for (table_index, name), declared in zip(columns, entry["column_types"], strict=True):
        if table_index >= 0:
            tables[table_index].columns.append((name, pg_type(declared, set())))
    for key in entry.get("primary_keys", []):
        indices = key if isinstance(key, list) else [key]
        owner = {columns[i][0] for i in indices}
        if len(owner) == 1:
            tables[owner.pop()].primary_key = [columns[i][1] for i in indices]
    for local, remote in entry.get("foreign_keys", []):
        (table_index, name), (ref_index, ref_name) = columns[local], columns[remote]
        tables[table_index].foreign_keys.append(
            (name, entry["table_names_original"][ref_index], ref_name))
    return tables


def create_empty(conn: psycopg.Connection, tables_json_path: Path | str, db_id: str,
                 name: str | None = None) -> str:
    """Create schema ``name`` (default ``db_id``) with the empty tables of ``db_id``.

    Returns "created" or "unchanged". Refuses to touch a schema siselect did not create.
    """
    entry = read_entry(Path(tables_json_path), db_id)
    name = validate_name(name or db_id)
    digest = hashlib.sha256(json.dumps(entry, sort_keys=True).encode()).hexdigest()
    mark = _schema_mark(conn, name)
    if mark is False:
        raise SiselectError(
            f"the name {name!r} is taken by a schema siselect did not create", "42P06")
    if isinstance(mark, dict) and mark.get("sha256") == digest:
        return "unchanged"
    if isinstance(mark, dict) and not mark.get("empty"):
        raise SiselectError(f"schema {name!r} holds a loaded database; choose another name",
                            "42P06")
    tables = tables_of(entry)
    schema = quote_ident(name)
    with conn.transaction():
        recreate_schema(conn, name, mark is not None)
        for table in tables:
            cols = ", ".join(f"{quote_ident(c)} {t}" for c, t in table.columns)
            conn.execute(f"CREATE TABLE {schema}.{quote_ident(table.name)} ({cols})")
        for table in tables:
            if table.primary_key:
                keys = ", ".join(quote_ident(c) for c in table.primary_key)
                _attempt(conn, f"ALTER TABLE {schema}.{quote_ident(table.name)} "
                               f"ADD PRIMARY KEY ({keys})")
        for table in tables:
            for col, ref, ref_col in table.foreign_keys:
                _attempt(conn, f"ALTER TABLE {schema}.{quote_ident(table.name)} ADD FOREIGN KEY "
                               f"({quote_ident(col)}) REFERENCES {schema}.{quote_ident(ref)} "
                               f"({quote_ident(ref_col)})")
        text = json.dumps({"mark": MARK, "source": f"{Path(tables_json_path).resolve()}#{db_id}",
                           "sha256": digest, "tables": {t.name: 0 for t in tables},
                           "empty": True})
        conn.execute(f"COMMENT ON SCHEMA {schema} IS {quote_literal(text)}")
    return "created"


def _attempt(conn: psycopg.Connection, sql: str) -> bool:
    """Add a key if PostgreSQL accepts it (BIRD declares some it cannot: non-unique targets)."""
    try:
        with conn.transaction():
            conn.execute(sql)
        return True
    except psycopg.Error:
        return False
