"""Where a column sits relative to the aggregates of its own SELECT."""

from sqlglot import exp

from siselect.sqltext.sqlite_rules.sqlite_type import _sources


def own_select(node: exp.Expr) -> exp.Select | None:
    return node.find_ancestor(exp.Select)


def is_aggregate(select: exp.Select) -> bool:
    """Whether ``select`` groups rows: GROUP BY, or an aggregate of its own outside OVER."""
    if select.args.get("group") is not None:
        return True
    parts = [*select.expressions, select.args.get("having")]
    return any(aggregates_of(p, select) for p in parts if p is not None)


# SQLite aggregates that sqlglot keeps as anonymous functions.
_ANONYMOUS_AGGREGATES = {"TOTAL"}


def is_aggregate_call(node: exp.Expr) -> bool:
    return isinstance(node, exp.AggFunc) or (
        isinstance(node, exp.Anonymous) and node.name.upper() in _ANONYMOUS_AGGREGATES)


def aggregates_of(part: exp.Expr, select: exp.Select) -> list[exp.Expr]:
    """Aggregates in ``part`` that belong to ``select`` (not to a subquery, not windowed)."""
    return [a for a in part.find_all(exp.AggFunc, exp.Anonymous)
            if is_aggregate_call(a) and own_select(a) is select
            and a.find_ancestor(exp.Window, exp.Select) is select]


def in_aggregate(node: exp.Expr, select: exp.Select) -> bool:
    """Whether ``node`` is inside an aggregate (or window) of ``select``."""
    parent = node.parent
    while parent is not None and parent is not select:
        if isinstance(parent, exp.Window) or is_aggregate_call(parent):
            return True
        parent = parent.parent
    return False


def is_local_column(column: exp.Column, select: exp.Select) -> bool:
    """Whether ``column`` reads a source of ``select`` (not an outer query's, not an alias)."""
    sources = _sources(select)
    if column.table:
        return column.table.lower() in sources
    aliases = {p.alias.lower() for p in select.expressions if p.alias}
    return column.name.lower() not in aliases and bool(sources)
