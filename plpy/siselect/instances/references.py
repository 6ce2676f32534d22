"""Real rows out of the database: the instance itself, and rows around it."""

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from siselect.instances.pair import group_rows
from siselect.instances.shadow import base_tables, rows_sql
from siselect.runtime import privileges, rowids
from siselect.runtime.catalog import Catalog, ForeignKey
from siselect.runtime.errors import QueryFailed
from siselect.runtime.executor import Executor, quote_ident
from siselect.runtime.privileges import readable_columns


def fetch_instance(executor: Executor, catalog: Catalog, rows: Sequence[int]) -> dict[str, Any]:
    """``{table: {"columns": [...], "rows": [[...], ...]}}`` for encoded row ids.

    Each id is one row shown: an id that finds no row (the data changed since) or several
    would make the instance differ from D', so that is an error rather than a silent
    difference."""
    instance: dict[str, Any] = {}
    for table, ids in sorted(group_rows(rows, catalog).items()):
        # Only what the caller may read: column-level grants leave the others out.
        result = executor.run(rows_sql(catalog, table, ids, ordered=True))
        if len(result.rows) != len(ids):
            raise QueryFailed(
                f"the {len(ids)} row ids of {table} found {len(result.rows)} rows: "
                "the data changed during the call", "40001")
        instance[table] = {"columns": result.columns, "rows": [list(r) for r in result.rows]}
    return instance


def rowids_where(executor: Executor, catalog: Catalog, table: str, where: str,
                 limit: int | None = None) -> list[int]:
    """The row ids of ``table``'s rows (its alias ``t``) that meet ``where``."""
    found = catalog.tables[table]
    number = catalog.number(table)
    source = rowids.source(found, readable_columns(catalog, table))
    sql = f"SELECT {rowids.row_id(found, number, 't')} FROM {source} AS t WHERE {where}"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [int(r) for (r,) in executor.run(sql).rows]


def referenced_rows(
    executor: Executor, catalog: Catalog, trees: Sequence[exp.Expr], limit: int
) -> list[int] | None:
    """Every row of every table the queries read, or None when that exceeds ``limit``.

    Each table is read with a LIMIT of what is left of ``limit`` plus one, so no more than
    ``limit + 1`` row ids are ever fetched, however large the tables."""
    return rows_of_tables(executor, catalog, tables_read(trees, catalog), limit)


def tables_read(trees: Sequence[exp.Expr], catalog: Catalog) -> tuple[str, ...]:
    """The tables the queries read, in first-seen order."""
    tables: list[str] = []
    for tree in trees:
        tables += [t for t in base_tables(tree, catalog) if t not in tables]
    return tuple(tables)


def rows_of_tables(executor: Executor, catalog: Catalog, tables: tuple[str, ...], limit: int
                   ) -> list[int] | None:
    """Every row of ``tables`` (in that order), or None when more than ``limit``. The rows
    are counted first, up to ``limit + 1`` (no row id built): on a large D the tables
    always hold more, and building 20,001 row ids to learn it costs a scan of its own."""
    counted = 0
    for table in tables:
        source = rowids.source(catalog.tables[table], readable_columns(catalog, table))
        counted += int(executor.run(f"SELECT count(*) AS n FROM (SELECT FROM {source} AS t "
                                    f"LIMIT {int(limit - counted) + 1}) AS t").rows[0][0])
        if counted > limit:
            return None
    result: list[int] = []
    for table in tables:
        result += rowids_where(executor, catalog, table, "true", limit - len(result) + 1)
        if len(result) > limit:
            return None
    return result


def declared_keys(executor: Executor, catalog: Catalog) -> list[tuple[str, ForeignKey]]:
    """Every declared foreign key as ``(table, reference)``, its referenced table named as
    the catalog names it, where the caller may read both sides."""
    privileges.denied(executor, catalog)
    keys = []
    for name, table in catalog.tables.items():
        for fk in table.foreign_keys:
            found = catalog.table(fk.ref_table)
            if found is not None and privileges.can_read(catalog, found.name, fk.ref_columns) \
                    and privileges.can_read(catalog, name, fk.columns):
                keys.append((name, ForeignKey(fk.columns, found.name, fk.ref_columns)))
    return keys


def referenced_closure(
    executor: Executor, catalog: Catalog, rows: Sequence[int],
    undeclared: Sequence[tuple[str, ForeignKey]] = (),
) -> tuple[list[int], list[str]]:
    """``rows`` plus, transitively, the rows they reference through foreign keys (declared,
    or ``undeclared``: ``(table, reference)`` that D keeps undeclared, :mod:`.integrity`); and the
    referenced tables left out because the caller may not read them (or the keys)."""
    privileges.denied(executor, catalog)
    closure = set(rows)
    frontier = set(rows)
    unreadable: list[str] = []
    while frontier:
        added: set[int] = set()
        for table, ids in group_rows(frontier, catalog).items():
            keeping = catalog.tables[table]
            for fk in [*keeping.foreign_keys, *(r for t, r in undeclared if t == table)]:
                found = catalog.table(fk.ref_table)
                if found is None:
                    continue
                ref = found.name
                if not (privileges.can_read(catalog, ref, fk.ref_columns)
                        and privileges.can_read(catalog, table, fk.columns)):
                    if ref not in unreadable:
                        unreadable.append(ref)
                    continue
                local = ", ".join(f"k.{quote_ident(c)}" for c in fk.columns)
                remote = ", ".join(f"t.{quote_ident(c)}" for c in fk.ref_columns)
                source = rowids.source(keeping, readable_columns(catalog, table))
                kept = rowids.matches(keeping, catalog.number(table), "k", ids)
                where = f"({remote}) IN (SELECT {local} FROM {source} AS k WHERE {kept})"
                added.update(rowids_where(executor, catalog, ref, where))
        frontier = added - closure
        closure |= frontier
    return sorted(closure), unreadable
