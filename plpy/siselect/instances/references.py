"""Real rows out of the database: the instance itself, and rows around it."""

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from siselect.instances.pair import group_rows
from siselect.instances.shadow import base_tables, tid_array
from siselect.runtime import privileges, rowids
from siselect.runtime.catalog import Catalog
from siselect.runtime.executor import Executor, quote_ident
from siselect.runtime.privileges import readable_columns


def _source(catalog: Catalog, table: str) -> str:
    found = catalog.tables[table]
    return f"{quote_ident(found.schema)}.{quote_ident(found.name)}"


def fetch_instance(executor: Executor, catalog: Catalog, rows: Sequence[int]) -> dict[str, Any]:
    """``{table: {"columns": [...], "rows": [[...], ...]}}`` for encoded row ids."""
    instance: dict[str, Any] = {}
    for table, ctids in sorted(group_rows(rows, catalog).items()):
        # Only what the caller may read: column-level grants leave the others out.
        cols = ", ".join(quote_ident(c) for c in readable_columns(catalog, table))
        result = executor.run(
            f"SELECT {cols} FROM {_source(catalog, table)} "
            f"WHERE ctid = ANY({tid_array(ctids)}) ORDER BY ctid"
        )
        instance[table] = {"columns": result.columns, "rows": [list(r) for r in result.rows]}
    return instance


def _rowids_of(executor: Executor, catalog: Catalog, table: str, where: str,
               limit: int | None = None) -> list[int]:
    sql = (
        f"SELECT {rowids.rowid_sql(catalog.number(table), 't')} "
        f"FROM {_source(catalog, table)} AS t WHERE {where}"
    )
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [int(r) for (r,) in executor.run(sql).rows]


def referenced_rows(
    executor: Executor, catalog: Catalog, trees: Sequence[exp.Expr], limit: int
) -> list[int] | None:
    """Every row of every table the queries read, or None when that exceeds ``limit``.

    Each table is read with a LIMIT of what is left of ``limit`` plus one, so no more than
    ``limit + 1`` row ids are ever fetched, however large the tables."""
    tables = []
    for tree in trees:
        tables += [t for t in base_tables(tree, catalog) if t not in tables]
    result: list[int] = []
    for table in tables:
        result += _rowids_of(executor, catalog, table, "true", limit - len(result) + 1)
        if len(result) > limit:
            return None
    return result


def referenced_closure(
    executor: Executor, catalog: Catalog, rows: Sequence[int]
) -> tuple[list[int], list[str]]:
    """``rows`` plus, transitively, the rows they reference through foreign keys; and the
    referenced tables left out because the caller may not read them (or the keys)."""
    privileges.denied(executor, catalog)
    closure = set(rows)
    frontier = set(rows)
    unreadable: list[str] = []
    while frontier:
        added: set[int] = set()
        for table, ctids in group_rows(frontier, catalog).items():
            for fk in catalog.tables[table].foreign_keys:
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
                where = (
                    f"({remote}) IN (SELECT {local} FROM {_source(catalog, table)} AS k "
                    f"WHERE k.ctid = ANY({tid_array(ctids)}))"
                )
                added.update(_rowids_of(executor, catalog, ref, where))
        frontier = added - closure
        closure |= frontier
    return sorted(closure), unreadable
