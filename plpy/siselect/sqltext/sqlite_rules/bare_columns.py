"""Bare columns beside aggregates: SQLite takes them from one row of the group.

With MIN() or MAX() in the query, that row is the one holding the extreme value (of the
last such aggregate, as SQLite does); otherwise it is an arbitrary row of the group.
PostgreSQL rejects bare columns; each becomes the first element of an array aggregate
ordered like the MIN/MAX, which is exactly the value of that row (ties aside: the
nondeterminism check probes them).
"""

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.sqltext.sqlite_rules.aggregate_scope import (
    in_aggregate,
    is_aggregate,
    is_local_column,
    own_select,
)
from siselect.sqltext.sqlite_rules.template import template
from siselect.sqltext.sqlite_rules.walk import walk


def bare_columns(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """Replace columns that are neither grouped nor aggregated by the row SQLite picks."""
    for select in walk(tree, exp.Select):
        if isinstance(select, exp.Select) and is_aggregate(select):
            _rewrite_select(select)
    return tree


def _rewrite_select(select: exp.Select) -> None:
    keys = _group_keys(select)
    extreme = _last_min_max(select)
    parts = [*select.expressions, select.args.get("having"), select.args.get("order")]
    for part in parts:
        if part is None:
            continue
        for column in list(part.find_all(exp.Column)):
            if (own_select(column) is select and is_local_column(column, select)
                    and not in_aggregate(column, select) and not _grouped(column, keys, select)):
                column.replace(pick(column.copy(), extreme))


def pick(value: exp.Expr, extreme: exp.Expr | None) -> exp.Expr:
    """``value`` from the row holding ``extreme`` (a MIN or MAX), or from any row."""
    if extreme is None:
        return template("(ARRAY_AGG(_v))[1]", _v=value)
    direction = "DESC" if isinstance(extreme, exp.Max) else "ASC"
    return template(f"(ARRAY_AGG(_v ORDER BY _m {direction} NULLS LAST))[1]", _v=value,
                    _m=extreme.this)


def _group_keys(select: exp.Select) -> set[str]:
    group = select.args.get("group")
    keys: set[str] = set()
    for key in group.expressions if group is not None else []:
        if isinstance(key, exp.Literal) and key.is_int:
            index = int(key.this) - 1
            if 0 <= index < len(select.expressions):
                key = select.expressions[index].unalias()
        elif isinstance(key, exp.Column) and not key.table:
            named = next((p.unalias() for p in select.expressions
                          if p.alias.lower() == key.name.lower()), None)
            keys.add(key.sql())
            key = named if named is not None else key
        keys.add(key.sql())
    return keys


def _grouped(column: exp.Column, keys: set[str], select: exp.Select) -> bool:
    node: exp.Expr | None = column
    while node is not None and node is not select:
        if node.sql() in keys:
            return True
        node = node.parent
    return False


def _last_min_max(select: exp.Select) -> exp.Expr | None:
    found = None
    for projection in select.expressions:
        for agg in projection.find_all(exp.Min, exp.Max):
            if own_select(agg) is select and not agg.expressions:
                found = agg
    return found
