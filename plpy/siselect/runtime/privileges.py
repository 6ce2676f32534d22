"""Which columns the caller may not read, so that siselect's own SQL asks for none of them.

A role may hold SELECT on some columns of a table only (column-level grants). PostgreSQL
then refuses ``SELECT *`` and any mention of another column, ``ctid`` included. siselect
identifies a table's rows by ``ctid`` (with ``tableoid`` for partitioned and inherited
tables), so a table whose ``ctid`` the caller may not read cannot take part in an
instance; the error says so and names it.
"""

from sqlglot import exp
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import traverse_scope
from sqlglot.schema import MappingSchema

from siselect.runtime.catalog import Catalog
from siselect.runtime.errors import QueryFailed
from siselect.runtime.executor import Executor

INSUFFICIENT_PRIVILEGE = "42501"
UNDEFINED_COLUMN = "42703"

_DENIED_SQL = """
SELECT c.relname::text, a.attname::text
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND NOT a.attisdropped
     AND (a.attnum > 0 OR a.attname IN ('ctid', 'tableoid'))
WHERE (n.nspname, c.relname) IN (
    SELECT * FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[])))
  AND NOT pg_catalog.has_column_privilege(c.oid, a.attnum, 'SELECT')
ORDER BY 1, a.attnum
"""


def denied(executor: Executor, catalog: Catalog) -> dict[str, frozenset[str]]:
    """``{table: columns the caller may not read}`` for the catalog's tables (looked up
    once per catalog); a table the caller may read whole is absent."""
    if catalog.denied is None:
        found: dict[str, set[str]] = {}
        tables = list(catalog.tables.values())
        if tables:
            params = [[t.schema for t in tables], [t.name for t in tables]]
            for table, column in executor.run_internal(_DENIED_SQL, params):
                found.setdefault(table, set()).add(column)
        catalog.denied = {t: frozenset(c) for t, c in found.items()}
    return catalog.denied


def readable_columns(catalog: Catalog, table: str) -> list[str]:
    """The columns of ``table`` the caller may read, in the table's order."""
    hidden = (catalog.denied or {}).get(table, frozenset())
    return [c.name for c in catalog.tables[table].columns if c.name not in hidden]


def whole(catalog: Catalog, table: str) -> bool:
    """Whether the caller may read every column of ``table``."""
    return not (catalog.denied or {}).get(table)


def can_read(catalog: Catalog, table: str, columns: list[str]) -> bool:
    """Whether the caller may read ``columns`` and what identifies the rows of ``table``
    (``ctid``, and ``tableoid`` where several relations hold its rows)."""
    hidden = (catalog.denied or {}).get(table, frozenset())
    system = {"ctid": {"ctid"}, "leaf": {"ctid", "tableoid"}}.get(
        catalog.tables[table].identity, set())
    return not hidden.intersection(system) and not hidden.intersection(columns)


def used_denied(tree: exp.Query, catalog: Catalog) -> list[str]:
    """``table.column`` for each column the query reads but the caller may not, in order
    of appearance; empty when the query cannot be analysed (PostgreSQL then decides)."""
    if not catalog.denied:
        return []
    try:
        mapping: dict[str, object] = dict(catalog.types())
        schema = MappingSchema(mapping, dialect="postgres", normalize=False)
        qualified = qualify(tree.copy(), schema=schema, dialect="postgres",
                            validate_qualify_columns=False, quote_identifiers=False)
        scopes = traverse_scope(qualified)
    except Exception:  # noqa: BLE001 - an analysis sqlglot cannot do is no finding
        return []
    found: list[str] = []
    for scope in scopes:
        for column in scope.columns:
            source = scope.sources.get(column.table)
            if not isinstance(source, exp.Table):
                continue
            table = catalog.table(source.name)
            if table is None:
                continue
            name = f"{table.name}.{column.name}"
            if column.name in (catalog.denied or {}).get(table.name, ()) and name not in found:
                found.append(name)
    return found


def explain(exc: QueryFailed, tree: exp.Query, catalog: Catalog) -> QueryFailed:
    """PostgreSQL's "permission denied for table" made to name the columns at fault; also
    its "column does not exist" on a sub-instance, whose tables show only the readable
    columns (see :func:`siselect.instances.shadow.restrict`)."""
    if exc.sqlstate not in (INSUFFICIENT_PRIVILEGE, UNDEFINED_COLUMN):
        return exc
    columns = used_denied(tree, catalog)
    if not columns:
        return exc
    message = exc.message if exc.sqlstate == INSUFFICIENT_PRIVILEGE else "permission denied"
    return QueryFailed(
        f"{message}: you may not read column{'s' if len(columns) > 1 else ''} "
        f"{', '.join(columns)}",
        INSUFFICIENT_PRIVILEGE,
        exc.detail,
    )
