"""substr(x, -n) counts from the end of the string in SQLite, not in PostgreSQL."""

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.sqltext.sqlite_rules.template import template
from siselect.sqltext.sqlite_rules.walk import walk


def negative_substr(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """A negative start becomes a position counted from the end."""
    for node in walk(tree, exp.Substring):
        start = node.args.get("start")
        if isinstance(start, exp.Neg) and isinstance(start.this, exp.Literal):
            node.set("start", template("LENGTH(_x) + 1 - _n", _x=node.this, _n=start.this))
    return tree
