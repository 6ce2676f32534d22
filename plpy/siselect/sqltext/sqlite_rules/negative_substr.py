"""substr(x, -n) counts from the end of the string in SQLite, not in PostgreSQL; and
substr(x, y, -n) returns the n characters before position y in SQLite, where PostgreSQL
fails ("negative substring length not allowed", SQLSTATE 22011)."""

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.sqltext.sqlite_rules.template import template
from siselect.sqltext.sqlite_rules.walk import walk


def negative_substr(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """A negative start becomes a position counted from the end; a length that may be
    negative becomes the span before the start (PostgreSQL clips a span that begins before
    the first character as SQLite does)."""
    for node in walk(tree, exp.Substring):
        start = node.args.get("start")
        if isinstance(start, exp.Neg) and isinstance(start.this, exp.Literal):
            start = template("LENGTH(_x) + 1 - _n", _x=node.this, _n=start.this)
            node.set("start", start)
        length = node.args.get("length")
        if start is None or length is None or (
                isinstance(length, exp.Literal) and length.is_number):
            continue
        if isinstance(length, exp.Neg) and isinstance(length.this, exp.Literal):
            node.set("start", template("_s - _n", _s=start, _n=length.this))
            node.set("length", length.this)
            continue
        node.set("start", template("CASE WHEN _n < 0 THEN _s + _n ELSE _s END",
                                   _s=start, _n=length))
        node.set("length", template("ABS(_n)", _n=length))
    return tree
