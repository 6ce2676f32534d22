"""What the core needs to know about the database: tables, columns, types, keys, comments.

Read once per call from PostgreSQL's catalogs, for the tables visible on the caller's
search_path (the loaded database's schema), through the executor's internal queries.
"""

from dataclasses import dataclass, field

from siselect.runtime.executor import Executor


@dataclass
class Column:
    name: str
    type: str  # PostgreSQL type name as format_type() prints it, e.g. "bigint", "text"
    comment: str | None = None


@dataclass
class ForeignKey:
    columns: list[str]
    ref_table: str
    ref_columns: list[str]


@dataclass
class Table:
    schema: str
    name: str
    columns: list[Column] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    foreign_keys: list[ForeignKey] = field(default_factory=list)

    def column(self, name: str) -> Column | None:
        """Find a column by name: exact first, then case-insensitively (SQLite's rule)."""
        for col in self.columns:
            if col.name == name:
                return col
        lowered = name.lower()
        return next((c for c in self.columns if c.name.lower() == lowered), None)


@dataclass
class Catalog:
    tables: dict[str, Table] = field(default_factory=dict)
    # {table: columns, ctid included, the caller may not read}; None until
    # siselect.runtime.privileges looks them up
    denied: dict[str, frozenset[str]] | None = None

    def table(self, name: str) -> Table | None:
        """Find a table by name: exact first, then case-insensitively."""
        if name in self.tables:
            return self.tables[name]
        lowered = name.lower()
        return next((t for n, t in self.tables.items() if n.lower() == lowered), None)

    def number(self, name: str) -> int:
        """A stable small number for a table (1-based, by sorted name), used in witness ids."""
        return sorted(self.tables).index(name) + 1

    def by_number(self, number: int) -> Table:
        return self.tables[sorted(self.tables)[number - 1]]

    def types(self) -> dict[str, dict[str, str]]:
        """``{table: {column: type}}``, the mapping sqlglot's optimizer takes as a schema."""
        return {t.name: {c.name: c.type for c in t.columns} for t in self.tables.values()}


_TABLES_SQL = """
SELECT n.nspname, c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
       col_description(c.oid, a.attnum), a.attnum,
       array_position($1::text[], n.nspname::text) AS rank
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND n.nspname = ANY ($1::text[])
  -- Temporary tables are the session's, not the data's: they would shift table numbers.
  AND n.oid <> pg_catalog.pg_my_temp_schema()
  -- ProvSQL's token column on tracked tables is bookkeeping, not data
  AND NOT (a.attname = 'provsql' AND a.atttypid = 'uuid'::regtype
           AND EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'provsql'))
ORDER BY rank, c.relname, a.attnum
"""

_KEYS_SQL = """
-- Every output column named apart: the server's executor returns rows as dicts.
SELECT c.relname AS table_name, k.contype::text AS kind,
       ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY u(n, i)
             JOIN pg_catalog.pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n
             ORDER BY u.i) AS columns,
       r.relname AS ref_table,
       ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY u(n, i)
             JOIN pg_catalog.pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n
             ORDER BY u.i) AS ref_columns
FROM pg_catalog.pg_constraint k
JOIN pg_catalog.pg_class c ON c.oid = k.conrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_class r ON r.oid = k.confrelid
WHERE k.contype IN ('p', 'f') AND n.nspname = ($1::text[])[1]
ORDER BY c.relname, k.conname
"""


def load_catalog(executor: Executor) -> Catalog:
    """The tables on the search_path; a name in an earlier schema hides later ones."""
    catalog = Catalog()
    columns = executor.run_internal(_TABLES_SQL, [executor.schemas])
    for schema, rel, col, typ, comment, _num, _rank in columns:
        table = catalog.tables.get(rel)
        if table is None:
            table = catalog.tables[rel] = Table(schema, rel)
        elif table.schema != schema:
            continue
        table.columns.append(Column(col, typ, comment))
    for rel, kind, cols, ref, ref_cols in executor.run_internal(_KEYS_SQL, [executor.schemas]):
        table = catalog.tables.get(rel)
        if table is None:
            continue
        if kind == "p":
            table.primary_key = list(cols)
        elif ref is not None:
            table.foreign_keys.append(ForeignKey(list(cols), ref, list(ref_cols)))
    return catalog
