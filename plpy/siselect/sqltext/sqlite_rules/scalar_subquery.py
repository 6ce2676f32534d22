"""A subquery used as a value takes its first row in SQLite; PostgreSQL fails on a second one.

``x = (SELECT id FROM t WHERE ...)`` where the subquery returns several rows compares with
the first row SQLite produces, and PostgreSQL raises "more than one row returned by a
subquery used as an expression" (SQLSTATE 21000). The subquery gets ``LIMIT 1``, marked
generated: which row it keeps is the engine's choice, so the nondeterminism check probes
it with the data (it is not flagged for its text alone: most such subqueries return one
row). Subqueries that are sources (FROM, JOIN, CTEs) or sets (IN, EXISTS, ANY/ALL) keep
their rows.
"""

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.sqltext.sqlite_rules.aggregate_scope import is_aggregate
from siselect.sqltext.sqlite_rules.template import GENERATED
from siselect.sqltext.sqlite_rules.walk import walk

# Parents for which a subquery stands for a set of rows, not a value.
_ROW_SOURCES = (exp.From, exp.Join, exp.CTE, exp.In, exp.Exists, exp.Any, exp.All,
                exp.SetOperation, exp.Lateral, exp.Subquery)


def scalar_subquery(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """Put ``LIMIT 1`` on every subquery used as a value that may return several rows."""
    for node in walk(tree, exp.Subquery):
        query = node.this
        if isinstance(node.parent, _ROW_SOURCES) or not isinstance(query, exp.Select):
            continue
        if query.args.get("limit") is not None or query.args.get("offset") is not None:
            continue
        if is_aggregate(query) and query.args.get("group") is None:
            continue  # one row exactly
        limit = exp.Limit(expression=exp.Literal.number(1))
        limit.meta[GENERATED] = True
        query.set("limit", limit)
    return tree
