"""Write an instance into a schema so a user can query it (the one writing function).

Every call writes into a schema of its own that did not exist before: never into
``pg_temp``, which PostgreSQL searches before every other schema, so tables written there
would hide the caller's tables of the same names from then on (and a second call would
collide with the first).
"""

import secrets
from typing import Any

from siselect.instances.render import tables
from siselect.runtime.catalog import Catalog, Table
from siselect.runtime.errors import InvalidInput
from siselect.runtime.executor import quote_ident

PREFIX = "siselect_instance_"


def fresh_name() -> str:
    """A schema name no earlier call used (48 random bits; a collision fails cleanly)."""
    return PREFIX + secrets.token_hex(6)


def _check_columns(name: str, columns: list[Any], table: Table) -> None:
    if not all(isinstance(c, str) for c in columns):
        raise InvalidInput(f"instance table {name!r}: column names must be strings")
    if len(set(columns)) != len(columns):
        raise InvalidInput(f"instance table {name!r}: a column is named twice")
    known = {c.name for c in table.columns}
    unknown = [c for c in columns if c not in known]
    if unknown:
        raise InvalidInput(
            f"instance table {name!r}: table {table.name!r} has no column {unknown[0]!r}",
            "42703",
        )


def statements(
    instance: Any, catalog: Catalog, schema: str | None
) -> tuple[str, list[tuple[str, Any]]]:
    """The schema to create (``schema``, or a fresh name) and the ``(sql, jsonb rows or
    None)`` pairs that create it and one table per instance table.

    Tables copy the column types of the database's table of the same name; rows are
    inserted from JSON with ``jsonb_populate_recordset``, so values keep their types.
    A malformed instance is refused before anything is written (22023).
    """
    if not isinstance(instance, dict) or not instance:
        raise InvalidInput("the instance must be a non-empty JSON object {table: {columns, rows}}")
    if schema is not None and (not schema or len(schema.encode()) > 63):
        raise InvalidInput(f"invalid schema name {schema!r}", "42602")
    name = fresh_name() if schema is None else schema
    target = quote_ident(name)
    # Without IF NOT EXISTS: an existing schema (one of the caller's) is never written to.
    result: list[tuple[str, Any]] = [(f"CREATE SCHEMA {target}", None)]
    seen: set[str] = set()
    for table_name, columns, rows in tables(instance):
        table = catalog.table(table_name)
        if table is None:
            raise InvalidInput(
                f"the instance names table {table_name!r}, which is not on the search_path",
                "42P01",
            )
        if table.name in seen:
            raise InvalidInput(f"the instance names table {table.name!r} twice")
        seen.add(table.name)
        _check_columns(table_name, instance[table_name]["columns"], table)
        qualified = f"{target}.{quote_ident(table.name)}"
        source = f"{quote_ident(table.schema)}.{quote_ident(table.name)}"
        result.append((f"CREATE TABLE {qualified} (LIKE {source})", None))
        records = [dict(zip(columns, row, strict=True)) for row in rows]
        result.append(
            (
                f"INSERT INTO {qualified} SELECT * FROM "
                f"pg_catalog.jsonb_populate_recordset(NULL::{qualified}, $1)",
                records,
            )
        )
    return name, result
