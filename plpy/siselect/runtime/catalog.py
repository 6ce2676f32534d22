"""What the core needs to know about the database: tables, columns, types, keys, comments.

Read once per call from PostgreSQL's catalogs, for the tables visible on the caller's
search_path (the loaded database's schema) and those of the schemas the queries name
(:mod:`siselect.runtime.named_schemas`), through the executor's internal queries.
Every relation also gets the rule by which siselect identifies its rows (``identity``,
see :mod:`siselect.runtime.rowids` and docs/instances.md, "Row identity").
"""

import bisect
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from siselect.runtime import relations
from siselect.runtime.errors import SiselectError
from siselect.runtime.executor import Executor


@dataclass
class Column:
    name: str
    type: str  # PostgreSQL type name as format_type() prints it, e.g. "bigint", "text"
    comment: str | None = None
    # SQLite's declared affinity where the loaded type does not tell it (a column declared
    # numeric that holds some text is loaded as text): recorded by the loader
    affinity: str | None = None


@dataclass
class ForeignKey:
    columns: list[str]
    ref_table: str
    ref_columns: list[str]


#: How the rows of a relation are identified (docs/instances.md, "Row identity"):
#: ``ctid`` (a plain table, a materialised view), ``leaf`` (``tableoid`` with ``ctid``: a
#: partitioned table, a table with inheritance children), ``content`` (the row's values and
#: its occurrence among equal rows: a foreign table, a view read as it is), ``inline`` (a view
#: read through its definition: its rows are those of the relations it reads).
IDENTITIES = ("ctid", "leaf", "content", "inline")


@dataclass
class Table:
    schema: str
    name: str
    columns: list[Column] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    foreign_keys: list[ForeignKey] = field(default_factory=list)
    kind: str = "r"  # pg_class.relkind
    identity: str = "ctid"  # one of IDENTITIES
    oid: int = 0
    # ``leaf`` identity: the relations that hold its rows (oids), in table-number order
    members: list[int] = field(default_factory=list)
    # ``inline`` identity: the view's definition (SQL, its relations schema-qualified)
    definition: str | None = None
    # why a view is not read through its definition (``content`` identity), for notes
    opaque_reason: str | None = None
    # the column the loader filled with SQLite's implicit rowid (a table without INTEGER
    # PRIMARY KEY): SQLite's ``rowid``, not one of the table's own columns (``*`` omits it)
    rowid: str | None = None

    @property
    def span(self) -> int:
        """How many table numbers the relation takes: one per member for ``leaf``."""
        return max(len(self.members), 1) if self.identity == "leaf" else 1

    def column(self, name: str) -> Column | None:
        """Find a column by name: exact first, then case-insensitively (SQLite's rule), where
        that names one column alone (PostgreSQL may hold ``"Name"`` and ``name`` side by
        side: neither is more the one meant than the other)."""
        for col in self.columns:
            if col.name == name:
                return col
        lowered = name.lower()
        folded = [c for c in self.columns if c.name.lower() == lowered]
        return folded[0] if len(folded) == 1 else None


@dataclass
class Catalog:
    tables: dict[str, Table] = field(default_factory=dict)
    # the schemas read, in the order in which a name in an earlier one hides later ones
    schemas: list[str] = field(default_factory=list)
    # {table: columns, ctid included, the caller may not read}; None until
    # siselect.runtime.privileges looks them up
    denied: dict[str, frozenset[str]] | None = None
    _numbers: tuple[list[int], list[str]] | None = field(default=None, repr=False,
                                                        compare=False)

    def table(self, name: str) -> Table | None:
        """Find a table by name: exact first, then case-insensitively."""
        if name in self.tables:
            return self.tables[name]
        lowered = name.lower()
        return next((t for n, t in self.tables.items() if n.lower() == lowered), None)

    def relation(self, name: str, schema: str | None) -> Table | None:
        """The relation a query's reference names: :meth:`table`, and when the reference
        names a schema, only the relation of that name in that schema (never another
        schema's relation of the same name, which PostgreSQL would not read)."""
        found = self.table(name)
        return found if found is None or schema is None or found.schema == schema else None

    def _numbering(self) -> tuple[list[int], list[str]]:
        """Each relation's first table number, and its name, in name order (kept until a
        relation is added: group_rows asks once per row id)."""
        if self._numbers is None or len(self._numbers[1]) != len(self.tables):
            starts, names, start = [], sorted(self.tables), 1
            for name in names:
                starts.append(start)
                start += self.tables[name].span
            self._numbers = (starts, names)
        return self._numbers

    def forget_numbers(self) -> None:
        """Number the relations afresh at the next ask (the set of relations changed)."""
        self._numbers = None

    def number(self, name: str) -> int:
        """A stable small number for a table (1-based, by sorted name), used in witness ids.

        A relation of ``leaf`` identity takes one number per member (its first is this one),
        so numbers are consecutive ranges in name order."""
        starts, names = self._numbering()
        return starts[names.index(name)]

    def by_number(self, number: int) -> Table:
        """The relation whose range of table numbers holds ``number``."""
        starts, names = self._numbering()
        at = bisect.bisect_right(starts, number) - 1
        table = self.tables[names[at]] if at >= 0 else None
        if table is None or number >= starts[at] + table.span:
            raise KeyError(number)
        return table

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
SELECT n.nspname AS schema_name, c.relname AS table_name, k.contype::text AS kind,
       ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY u(n, i)
             JOIN pg_catalog.pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n
             ORDER BY u.i) AS columns,
       r.relname AS ref_table, rn.nspname AS ref_schema,
       ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY u(n, i)
             JOIN pg_catalog.pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n
             ORDER BY u.i) AS ref_columns
FROM pg_catalog.pg_constraint k
JOIN pg_catalog.pg_class c ON c.oid = k.conrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_class r ON r.oid = k.confrelid
LEFT JOIN pg_catalog.pg_namespace rn ON rn.oid = r.relnamespace
WHERE k.contype IN ('p', 'f') AND n.nspname = ANY ($1::text[])
ORDER BY c.relname, k.conname
"""


def load_catalog(executor: Executor, also: Sequence[str] = ()) -> Catalog:
    """The tables on the search_path, then those of the schemas ``also`` names; a name in
    an earlier schema hides later ones."""
    schemas = [*executor.schemas, *(s for s in dict.fromkeys(also) if s not in executor.schemas)]
    catalog = Catalog(schemas=schemas)
    columns = executor.run_internal(_TABLES_SQL, [schemas])
    for schema, rel, col, typ, comment, _num, _rank in columns:
        table = catalog.tables.get(rel)
        if table is None:
            table = catalog.tables[rel] = Table(schema, rel)
        elif table.schema != schema:
            continue
        table.columns.append(Column(col, typ, comment))
    _declared_affinities(executor, catalog)
    _identify(executor, catalog)
    for schema, rel, kind, cols, ref, ref_schema, ref_cols in executor.run_internal(
            _KEYS_SQL, [schemas]):
        table = catalog.tables.get(rel)
        if table is None or table.schema != schema:
            continue  # a relation another schema's of the same name hides
        if kind == "p":
            table.primary_key = list(cols)
        elif ref is not None and catalog.relation(ref, ref_schema) is not None:
            table.foreign_keys.append(ForeignKey(list(cols), ref, list(ref_cols)))
    return catalog


def _identify(executor: Executor, catalog: Catalog) -> None:
    """Each relation's kind, oid and row identity (see :data:`IDENTITIES`)."""
    tables = list(catalog.tables.values())
    if not tables:
        return
    params = [[t.schema for t in tables], [t.name for t in tables]]
    views: dict[int, tuple[Table, bool]] = {}  # oid: (view, whether security_invoker)
    for name, oid, kind, members, foreign, definition, barrier, invoker in \
            executor.run_internal(relations.RELATIONS_SQL, params):
        table = catalog.tables[name]
        table.oid, table.kind = int(oid), kind
        table.identity = relations.identity(kind, len(members), bool(foreign))
        if table.identity == "leaf":
            table.members = [int(m) for m in members]
        if kind == "v":
            table.definition = definition
            views[table.oid] = (table, bool(invoker))
            # A barrier keeps the caller's conditions away from rows the view removes;
            # read through its definition, the view would lose it.
            table.opaque_reason = "a security-barrier view" if barrier else None
            table.identity = "content" if barrier else "inline"
    if views:
        _inline_views(executor, catalog, views)


def _inline_views(executor: Executor, catalog: Catalog,
                  views: dict[int, tuple[Table, bool]]) -> None:
    """Views read through their definition only where that shows the caller what the view
    shows: every relation it reads is on the search_path and readable by the caller, and
    none has row-level security (unless the view checks as its caller, security_invoker)."""
    by_oid = {t.oid: t for t in catalog.tables.values()}
    deps: dict[int, list[tuple[int, bool, bool]]] = {oid: [] for oid in views}
    for view, dep, readable, rls in executor.run_internal(relations.DEPENDENCIES_SQL,
                                                          [list(views)]):
        deps[int(view)].append((int(dep), bool(readable), bool(rls)))
    for oid, (view, invoker) in views.items():
        if view.identity != "inline":
            continue
        reason = relations.opaque_reason(
            [(by_oid.get(dep), readable, rls) for dep, readable, rls in deps[oid]], invoker)
        known = {(t.schema, t.name) for dep, _, _ in deps[oid]
                 if (t := by_oid.get(dep)) is not None}
        definition = None if reason else relations.qualified(view.definition or "", known)
        if reason is None and definition is None:
            reason = "siselect cannot read its definition"
        elif definition is not None:
            reason = _refused(executor, definition)
        view.definition = definition
        if reason:
            view.identity, view.opaque_reason = "content", reason


def _refused(executor: Executor, definition: str) -> str | None:
    """Why siselect may not run a view's definition as part of a query (a function that
    the call policy refuses, say), or None: then the view is read as it is."""
    try:
        executor.run(f"SELECT * FROM ({definition}) AS v LIMIT 0")
    except SiselectError as exc:
        return f"siselect may not run its definition ({exc.message})"
    return None


_MARK_SQL = """
SELECT pg_catalog.obj_description(n.oid, 'pg_namespace') AS mark
FROM pg_catalog.pg_namespace n WHERE n.nspname = ($1::text[])[1]
"""


def _declared_affinities(executor: Executor, catalog: Catalog) -> None:
    """Affinities and implicit rowids the loader recorded in the schema's comment (a JSON
    object with an ``affinity`` map: table -> column -> affinity, and a ``rowid`` map:
    table -> column); other comments are not ours."""
    for (text,) in executor.run_internal(_MARK_SQL, [executor.schemas]):
        try:
            mark = json.loads(text) if text else None
        except ValueError:
            return
        if not isinstance(mark, dict):
            return
        _implicit_rowids(catalog, executor.schemas[0], mark.get("rowid"))
        found = mark.get("affinity")
        if not isinstance(found, dict):
            return
        for rel, columns in found.items():
            table = catalog.tables.get(rel)
            if table is None or table.schema != executor.schemas[0] or \
                    not isinstance(columns, dict):
                continue
            for col in table.columns:
                col.affinity = columns.get(col.name) or col.affinity


def _implicit_rowids(catalog: Catalog, schema: str, found: object) -> None:
    if not isinstance(found, dict):
        return
    for rel, column in found.items():
        table = catalog.tables.get(rel)
        if table is not None and table.schema == schema and \
                any(c.name == column for c in table.columns):
            table.rowid = column
