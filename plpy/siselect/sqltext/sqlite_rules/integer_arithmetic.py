"""Keep SQLite's number types through aggregates and arithmetic.

PostgreSQL's SUM of bigint is numeric, so SUM(x) / COUNT(*) would divide decimals where
SQLite divides integers; AVG is always a float in SQLite; TOTAL is a float SUM that is 0
on no rows; ROUND rounds halves away from zero and returns a float; % truncates its
operands to integers and gives NULL on a zero divisor.
"""

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.sqltext.sqlite_rules.sqlite_type import BOOLEAN, INTEGER, REAL, Typer
from siselect.sqltext.sqlite_rules.template import template
from siselect.sqltext.sqlite_rules.walk import replace, walk


def integer_arithmetic(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """Type SUM, AVG, TOTAL, ROUND and % the way SQLite does."""
    typer = Typer(catalog)
    for node in walk(tree, exp.Sum, exp.Avg, exp.Round, exp.Mod, exp.Anonymous):
        new = _rewrite(node, typer)
        if new is not None:
            tree = replace(node, new, tree)
    return tree


def _rewrite(node: exp.Expr, typer: Typer) -> exp.Expr | None:
    if isinstance(node, exp.Sum):
        if typer(node.this).kind in (INTEGER, BOOLEAN):
            return _cast_outside(node, "bigint")
        return None
    if isinstance(node, exp.Avg):
        return _cast_outside(node, "double precision")
    if isinstance(node, exp.Round):
        digits = node.args.get("decimals")
        value = exp.cast(node.this, "numeric")
        rounded = exp.Round(this=value, decimals=digits) if digits is not None else exp.Round(
            this=value)
        return exp.cast(rounded, "double precision")
    if isinstance(node, exp.Mod):
        return _mod(node, typer)
    if isinstance(node, exp.Anonymous) and node.name.upper() == "TOTAL" and node.expressions:
        return template("CAST(COALESCE(SUM(_x), 0) AS DOUBLE PRECISION)", _x=node.expressions[0])
    return None


def _cast_outside(node: exp.Expr, to: str) -> exp.Expr | None:
    """Cast an aggregate's result; under a window the cast goes around the whole window."""
    if isinstance(node.parent, exp.Window):
        window = node.parent
        if not window.meta.get("sqlite_cast"):
            window.meta["sqlite_cast"] = True
            window.replace(exp.cast(window.copy(), to))
        return None
    if isinstance(node.parent, exp.Cast):
        return None
    return exp.cast(node.copy(), to)


def _mod(node: exp.Mod, typer: Typer) -> exp.Expr:
    left, right = typer(node.this), typer(node.expression)

    def integer(value: exp.Expr, kind: str | None) -> exp.Expr:
        if kind in (INTEGER, BOOLEAN):
            return value
        return exp.cast(exp.func("TRUNC", exp.cast(value, "double precision")), "bigint")
    result = exp.Mod(this=integer(node.this, left.kind),
                     expression=exp.Nullif(this=integer(node.expression, right.kind),
                                           expression=exp.Literal.number(0)))
    if REAL in (left.kind, right.kind):
        return exp.cast(result, "double precision")
    return result
