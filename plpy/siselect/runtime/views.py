"""Views read through their definition: each reference replaced by the view's query.

A view of ``inline`` identity (see :mod:`siselect.runtime.relations`) has no rows of its
own to identify: its rows are made of the rows of the relations it reads, which the caller
may read too. Expanding the reference into a derived table under the reference's own
name (and column aliases) lets the witnesses and D' reach those rows; the view's
definition names its relations with their schema, so no CTE of the query can capture them.
"""

from collections.abc import Iterator
from functools import lru_cache

import sqlglot
from sqlglot import exp

from siselect.runtime.catalog import Catalog, Table
from siselect.runtime.named_schemas import relation_of

MAX_DEPTH = 32  # views over views; PostgreSQL has no cycles, this only bounds a bad catalog


@lru_cache(maxsize=256)
def _parsed(definition: str) -> exp.Query:
    tree = sqlglot.parse_one(definition, read="postgres")
    assert isinstance(tree, exp.Query)
    return tree


def _cte_names(tree: exp.Expr) -> set[str]:
    return {cte.alias_or_name for cte in tree.find_all(exp.CTE)}


def relation_reads(tree: exp.Expr, catalog: Catalog) -> Iterator[tuple[exp.Table, str]]:
    """Each place ``tree`` reads a relation of the catalog, with that relation's name (as in
    the catalog), a CTE's own name left out (views are read as they are: expand them
    first, :func:`expand`)."""
    ctes = _cte_names(tree)
    for table in tree.find_all(exp.Table):
        if table.name in ctes and not table.db:
            continue
        found = relation_of(catalog, table)
        if found is not None:
            yield table, found.name


def inline_view(table: exp.Table, catalog: Catalog) -> Table | None:
    """The catalog's view of ``inline`` identity that ``table`` names, if it names one."""
    if not isinstance(table.this, exp.Identifier):
        return None
    found = relation_of(catalog, table)
    if found is None or found.identity != "inline" or found.definition is None:
        return None
    return found


def expand(tree: exp.Query, catalog: Catalog) -> exp.Query:
    """``tree`` with every reference to an ``inline`` view replaced by its definition
    (``tree`` itself when it reads none)."""
    if not any(t.identity == "inline" for t in catalog.tables.values()):
        return tree
    result = tree.copy()
    for _ in range(MAX_DEPTH):
        ctes = _cte_names(result)
        found = [(t, v) for t in result.find_all(exp.Table)
                 if not (t.name in ctes and not t.db)
                 and (v := inline_view(t, catalog)) is not None]
        if not found:
            return result
        for table, view in found:
            assert view.definition is not None
            alias = table.args.get("alias")
            ident = alias.this.copy() if alias is not None and alias.this else table.this.copy()
            columns = [c.copy() for c in alias.columns] if alias is not None else []
            table.replace(exp.Subquery(this=_parsed(view.definition).copy(),
                                       alias=exp.TableAlias(this=ident, columns=columns)))
    return result


__all__ = ["expand", "inline_view"]
