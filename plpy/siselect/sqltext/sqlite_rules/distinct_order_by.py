"""SELECT DISTINCT ... ORDER BY a column not selected: SQLite orders each distinct row by
the value of the first row that produced it; PostgreSQL rejects the query.

The DISTINCT becomes a GROUP BY of the selected expressions and each unselected sort key
an array aggregate's first element (any row's value: the nondeterminism check probes
whether the choice matters).
"""

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.sqltext.sqlite_rules.aggregate_scope import is_aggregate
from siselect.sqltext.sqlite_rules.bare_columns import pick
from siselect.sqltext.sqlite_rules.walk import walk


def distinct_order_by(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """Rewrite DISTINCT with unselected ORDER BY keys into GROUP BY."""
    for select in walk(tree, exp.Select):
        if not isinstance(select, exp.Select):
            continue
        distinct = select.args.get("distinct")
        order = select.args.get("order")
        if distinct is None or distinct.args.get("on") is not None or order is None:
            continue
        if any(p.is_star for p in select.expressions):
            continue
        unselected = [o for o in order.expressions if not _selected(o.this, select)]
        if not unselected:
            continue
        if is_aggregate(select):
            if _groups_are_selected(select):
                select.set("distinct", None)  # one row per group already: DISTINCT is moot
            continue
        select.set("distinct", None)
        select.set("group", exp.Group(expressions=[p.unalias().copy()
                                                  for p in select.expressions]))
        for ordered in unselected:
            ordered.set("this", pick(ordered.this.copy(), None))
    return tree


def _groups_are_selected(select: exp.Select) -> bool:
    group = select.args.get("group")
    if group is None:
        return False
    return all(_selected(key, select) for key in group.expressions)


def _selected(key: exp.Expr, select: exp.Select) -> bool:
    if isinstance(key, exp.Literal) and key.is_int:
        return True
    text = key.sql()
    for projection in select.expressions:
        if projection.unalias().sql() == text:
            return True
        if isinstance(key, exp.Column) and not key.table and projection.alias and (
                projection.alias.lower() == key.name.lower()):
            return True
    return False
