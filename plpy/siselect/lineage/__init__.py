"""Lineage backend: the witnesses of a query's answer, computed by PostgreSQL itself.

A witness of an answer row is a set of base rows, one per base-table occurrence, that
together produce it; for an aggregate, each input row of a group in the answer is a witness
of that group. :func:`witness_query` rewrites a query (sqlglot, PostgreSQL dialect) into one
that returns those witnesses as sorted ``bigint[]`` of row ids (:mod:`siselect.rowids`), each
with a cheaper key to compare them by, at about the cost of the query itself: ctids ride
along as extra columns; the answer's own aggregate block returns the rows it groups (see
:mod:`.groups`); other aggregates gather them with ``array_agg`` in the same pass, an outer
query unnests them (see :mod:`.rep`).

Exact: joins of every kind, WHERE/HAVING, GROUP BY, DISTINCT, ORDER BY ... LIMIT, CASE,
derived tables and CTEs (aggregated or not), UNION, positive IN/EXISTS/scalar subqueries
that are uncorrelated or correlated through equalities (decorrelated into a grouped LEFT
JOIN), MIN/MAX scalar subqueries (witnessed by the rows reaching the extreme), aggregates
with FILTER/DISTINCT. Over-approximated, and named in :attr:`Lineage.notes`: negated and
other subqueries (the rows they read are listed as witnesses of their own), EXCEPT (its right
side likewise), INTERSECT, OFFSET (the skipped rows are kept), window functions (the row
itself), two or more aggregated FROM items in one block (their witnesses listed apart rather
than multiplied, see :mod:`.crossed`).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlglot import exp

from ..catalog import Catalog
from ..executor import Executor, Trusting
from ..pgcheck import Name
from .analysis import repeats_rows
from .context import Context, Env, UnsupportedLineage
from .query import rewrite_query, witness_rows


@dataclass
class Lineage:
    """SQL returning one row per witness (column ``w bigint[]``), and how exact it is.

    ``keyed_sql``, when given: the same witnesses with a second column ``k bigint``, a key
    equal for equal witnesses that costs less to compute than ``w`` (see
    :mod:`siselect.search`).
    """

    sql: str
    exact: bool = True
    notes: list[str] = field(default_factory=list)
    keyed_sql: str | None = None
    # What the ProvSQL backend adds: calls of its own helpers, and the query texts those
    # helpers run (checked like any text siselect sends, see Executor.run).
    allow: frozenset[Name] = frozenset()
    inner: tuple[str, ...] = ()


def executor_for(executor: Executor, lineages: Sequence[Lineage]) -> Executor:
    """``executor``, trusting what the witness queries of ``lineages`` add to the text."""
    allow = frozenset().union(*(lin.allow for lin in lineages))
    inner = tuple(text for lin in lineages for text in lin.inner)
    if not allow and not inner:
        return executor
    return Trusting(executor, allow, inner)


def witness_query(tree: exp.Query, catalog: Catalog) -> Lineage:
    """The witnesses of ``tree``'s answer on the database ``catalog`` describes.

    Raises :class:`UnsupportedLineage` for queries it cannot rewrite (recursive CTEs, ...).
    """
    ctx = Context(catalog)
    ctx.may_repeat = repeats_rows(tree)
    rewritten = rewrite_query(tree, Env(ctx), top=True)
    parts = [witness_rows(rewritten, ctx), *ctx.extras]
    with_ = f"WITH {', '.join(ctx.ctes)} " if ctx.ctes else ""
    if len(parts) == 1 and not ctx.may_repeat:
        # Different rows give different witnesses here: no need to deduplicate.
        keyed = f"{with_}{parts[0]}"
    else:
        union = " UNION ALL ".join(f"({p})" for p in parts)
        keyed = f"{with_}SELECT DISTINCT w, k FROM ({union}) AS __all"
    # The key is not computed where not read (the subquery is pulled up, or its column
    # dropped, by the planner).
    return Lineage(f"SELECT w FROM ({keyed}) AS __w", ctx.exact, ctx.notes, keyed_sql=keyed)


__all__ = ["Lineage", "UnsupportedLineage", "witness_query"]
