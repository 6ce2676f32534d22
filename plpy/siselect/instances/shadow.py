"""Evaluate a query on a sub-instance D' of D without writing anything.

Every reference to a base table is replaced by a subquery over the same table that
keeps only D''s rows (a TID scan), under the reference's own alias, so the query text
runs unchanged in a read-only transaction and on a hot standby.
"""

from collections.abc import Mapping, Sequence
from typing import TypeVar

from sqlglot import exp

from siselect.runtime import privileges
from siselect.runtime.catalog import Catalog
from siselect.runtime.errors import QueryFailed
from siselect.runtime.executor import quote_ident, quote_literal
from siselect.runtime.privileges import readable_columns, whole

E = TypeVar("E", bound=exp.Expr)


def _cte_names(tree: exp.Expr) -> set[str]:
    return {cte.alias_or_name for cte in tree.find_all(exp.CTE)}


def base_tables(tree: exp.Expr, catalog: Catalog) -> list[str]:
    """Names (as in the catalog) of the base tables a query reads, in first-seen order."""
    ctes = _cte_names(tree)
    seen: list[str] = []
    for table in tree.find_all(exp.Table):
        if table.name in ctes and not table.db:
            continue
        found = catalog.table(table.name)
        if found is not None and found.name not in seen:
            seen.append(found.name)
    return seen


def tid_array(ctids: Sequence[str]) -> str:
    return quote_literal("{" + ",".join(f'"{c}"' for c in ctids) + "}") + "::tid[]"


def restrict(tree: E, catalog: Catalog, rows: Mapping[str, Sequence[str]]) -> E:
    """A copy of ``tree`` reading only the rows ``{table: [ctid, ...]}`` of each base table.

    Tables absent from ``rows`` read as empty.
    """
    tree = tree.copy()
    ctes = _cte_names(tree)
    for table in list(tree.find_all(exp.Table)):
        if table.name in ctes and not table.db:
            continue
        found = catalog.table(table.name)
        if found is None:
            continue
        alias_node = table.args.get("alias")
        ident = (
            alias_node.this.copy()
            if alias_node is not None and alias_node.this
            else table.this.copy()
        )
        source = f"{quote_ident(found.schema)}.{quote_ident(found.name)}"
        # A caller who may read some columns only gets those: ``*`` would be refused.
        columns = (
            "*" if whole(catalog, found.name)
            else ", ".join(quote_ident(c) for c in readable_columns(catalog, found.name))
        )
        sub: exp.Expr = exp.maybe_parse(
            f"(SELECT {columns} FROM {source} "
            f"WHERE ctid = ANY({tid_array(rows.get(found.name, []))}))",
            dialect="postgres",
        )
        # Keep the reference's own identifier (quoted or not) so that column references resolve.
        table.replace(exp.Subquery(this=sub.unnest(), alias=exp.TableAlias(this=ident)))
    return tree


def require_row_ids(trees: tuple[exp.Query, ...], catalog: Catalog) -> None:
    """Refuse (42501, naming it) a table whose ``ctid`` the caller may not read: rows are
    found, kept and shown by it, so no instance can be built from that table."""
    for tree in trees:
        for table in base_tables(tree, catalog):
            if "ctid" in (catalog.denied or {}).get(table, ()):
                raise QueryFailed(
                    f"you may not read column {table}.ctid, by which siselect identifies "
                    f"rows: a separating instance needs SELECT on it (GRANT SELECT (ctid, "
                    f"...) ON {table})",
                    privileges.INSUFFICIENT_PRIVILEGE,
                )
