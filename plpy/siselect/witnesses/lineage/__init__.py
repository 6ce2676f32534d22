"""Lineage backend: the witnesses of a query's answer, computed by PostgreSQL itself.

A witness of an answer row is a set of base rows, one per base-table occurrence, that
together produce it; for an aggregate, each input row of a group in the answer is a witness
of that group. :func:`witness_query` rewrites a query (sqlglot, PostgreSQL dialect) into one
that returns those witnesses as sorted ``bigint[]`` of row ids (:mod:`..runtime.rowids`),
each with a cheaper key to compare them by, at about the cost of the query itself: ctids ride
along as extra columns; the answer's own aggregate block returns the rows it groups (see
:mod:`.groups`); other aggregates gather them with ``array_agg`` in the same pass, an outer
query unnests them (see :mod:`.rep`). A top-level cut (``ORDER BY ... LIMIT``, a bare
``LIMIT``) narrows the grouped derived tables and CTEs it reads to the groups its rows read
before they gather (see :mod:`.cut`).

Exact: joins of every kind, WHERE/HAVING, GROUP BY, DISTINCT, ORDER BY ... LIMIT, CASE,
derived tables and CTEs (aggregated or not), UNION, positive IN/EXISTS/scalar subqueries
that are uncorrelated or correlated through equalities (decorrelated into a grouped LEFT
JOIN), MIN/MAX scalar subqueries (witnessed by the rows reaching the extreme), aggregates
with FILTER/DISTINCT. Over-approximated, and named in :attr:`Lineage.notes`: negated and
other subqueries (the rows they read are listed as witnesses of their own), EXCEPT (its right
side likewise), INTERSECT, OFFSET (the skipped rows are kept), window functions (the row
with each row of its partition, see :mod:`.windows`), two or more aggregated FROM items in
one block (their witnesses listed apart rather than multiplied, see :mod:`.crossed`).
Anything else (a recursive CTE): every row of the relations read (see :mod:`.every_row`).

Every kind of relation has witnesses: rows are identified as docs/instances.md ("Row
identity") says, views read through their definition are expanded first.
"""

from dataclasses import replace

from sqlglot import exp

from siselect.runtime import views
from siselect.runtime.catalog import Catalog
from siselect.runtime.executor import Executor
from siselect.witnesses.interface import Lineage
from siselect.witnesses.lineage.analysis import repeats_rows
from siselect.witnesses.lineage.context import Context, Env, UnsupportedLineage
from siselect.witnesses.lineage.every_row import every_row
from siselect.witnesses.lineage.query import rewrite_query
from siselect.witnesses.lineage.rows import witness_forms


def witness_query(tree: exp.Query, catalog: Catalog) -> Lineage:
    """The witnesses of ``tree``'s answer on the database ``catalog`` describes.

    A query it cannot rewrite (a recursive CTE, ...) gets every row of the relations it
    reads as its witnesses (:mod:`.every_row`), named in the notes.
    """
    tree = views.expand(tree, catalog)  # a view read through its definition: its rows
    try:
        return _rewritten(tree, catalog)
    except UnsupportedLineage as exc:
        return every_row(tree, catalog, exc.message.removeprefix("lineage: "))


def _rewritten(tree: exp.Query, catalog: Catalog) -> Lineage:
    ctx = Context(catalog, rewrite=rewrite_query)
    ctx.may_repeat = repeats_rows(tree)
    rewritten = rewrite_query(tree, Env(ctx), top=True)
    main = witness_forms(rewritten, ctx)
    parts = [main.select, *ctx.extras]
    with_ = f"WITH {', '.join(ctx.ctes)} " if ctx.ctes else ""
    union = " UNION ALL ".join(f"({p})" for p in parts)
    if len(parts) == 1:
        raw, raw_deferred = f"{with_}{parts[0]}", replace(main.deferred,
                                                          sql=f"{with_}{main.deferred.sql}")
    else:
        raw, raw_deferred = f"{with_}SELECT w, k FROM ({union}) AS __all", None
    # The key is not computed where not read (the subquery is pulled up, or its column
    # dropped, by the planner).
    if len(parts) == 1 and not ctx.may_repeat:
        # Different rows give different witnesses here: no need to deduplicate.
        return Lineage(f"SELECT w FROM ({raw}) AS __w", ctx.exact, ctx.notes, keyed_sql=raw,
                       deferred=raw_deferred)
    keyed = f"{with_}SELECT DISTINCT w, k FROM ({union}) AS __all"
    return Lineage(f"SELECT w FROM ({keyed}) AS __w", ctx.exact, ctx.notes, keyed_sql=keyed,
                   raw_sql=raw, raw_deferred=raw_deferred)


class LineageBackend:
    """The built-in backend: runs anywhere PostgreSQL runs."""

    name = "lineage"
    label = "lineage"

    def usable(self, executor: Executor) -> str | None:
        return None

    def witness_query(self, tree: exp.Query, catalog: Catalog) -> Lineage:
        return witness_query(tree, catalog)


__all__ = ["Lineage", "LineageBackend", "UnsupportedLineage", "witness_query"]
