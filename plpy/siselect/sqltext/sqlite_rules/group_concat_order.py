"""GROUP_CONCAT without ORDER BY: the order of the concatenated values is the engine's.

SQLite concatenates values in the order rows reach the aggregate, which it leaves
unspecified (its documentation says so: it follows the plan's scan or index order, and
for DISTINCT the first occurrences); PostgreSQL's STRING_AGG does the same with its own
plans (and sorts for DISTINCT). Such an answer is not a function of the data alone.

The transpiled STRING_AGG is ordered by the concatenated value itself, ascending, and the
sort key is marked generated. So on PostgreSQL two candidates that concatenate the same
values give the same text whatever their plans (an answer never differs only by an order
SQLite leaves open), and the nondeterminism check reverses that key: where the answer
changes (a group holds two different values) the query is flagged, as ties are.
An explicit ``GROUP_CONCAT(x ORDER BY y)`` (SQLite 3.44) keeps its order.
"""

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.sqltext.sqlite_rules.template import GENERATED
from siselect.sqltext.sqlite_rules.walk import walk


def group_concat_order(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """Order each GROUP_CONCAT that has no ORDER BY by its own value (a generated key)."""
    for node in walk(tree, exp.GroupConcat):
        arg = node.this
        if arg is None or isinstance(arg, exp.Order):
            continue
        values = arg.expressions if isinstance(arg, exp.Distinct) else [arg]
        if len(values) != 1:
            continue
        key = exp.Ordered(this=values[0].copy(), desc=False, nulls_first=False)
        key.meta[GENERATED] = True
        node.set("this", exp.Order(this=arg.copy(), expressions=[key]))
    return tree
