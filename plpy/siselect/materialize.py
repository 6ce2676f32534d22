"""Write an instance into a schema so a user can query it (the one writing function)."""

from typing import Any

from .catalog import Catalog
from .errors import InvalidInput
from .executor import quote_ident


def statements(
    instance: dict[str, Any], catalog: Catalog, schema: str | None
) -> list[tuple[str, Any]]:
    """``(sql, jsonb rows or None)`` pairs creating one table per instance table.

    Tables copy the column types of the database's table of the same name; rows are
    inserted from JSON with ``jsonb_populate_recordset``, so values keep their types.
    """
    if not isinstance(instance, dict) or not instance:
        raise InvalidInput("the instance must be a non-empty JSON object {table: {columns, rows}}")
    target = "pg_temp" if schema is None else quote_ident(schema)
    result: list[tuple[str, Any]] = []
    if schema is not None:
        result.append((f"CREATE SCHEMA IF NOT EXISTS {target}", None))
    for name, data in instance.items():
        table = catalog.table(name)
        if table is None:
            raise InvalidInput(
                f"the instance names table {name!r}, which is not on the search_path", "42P01"
            )
        columns = data.get("columns") if isinstance(data, dict) else None
        rows = data.get("rows") if isinstance(data, dict) else None
        if not isinstance(columns, list) or not isinstance(rows, list):
            raise InvalidInput(f'table {name!r}: expected {{"columns": [...], "rows": [...]}}')
        qualified = f"{target}.{quote_ident(table.name)}"
        source = f"{quote_ident(table.schema)}.{quote_ident(table.name)}"
        result.append((f"CREATE TABLE {qualified} (LIKE {source})", None))
        records = [dict(zip(columns, row, strict=True)) for row in rows]
        result.append(
            (
                f"INSERT INTO {qualified} SELECT * FROM "
                f"jsonb_populate_recordset(NULL::{qualified}, $1)",
                records,
            )
        )
    return result
