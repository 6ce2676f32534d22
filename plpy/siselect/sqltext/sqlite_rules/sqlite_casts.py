"""CAST as SQLite does it: malformed numbers read as their numeric prefix (or 0), reals
truncate toward zero when cast to INTEGER, and integers are 64-bit."""

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.sqltext.sqlite_rules.as_number import as_number
from siselect.sqltext.sqlite_rules.as_text import as_text
from siselect.sqltext.sqlite_rules.sqlite_type import REAL, TEXT, Typer
from siselect.sqltext.sqlite_rules.walk import replace, walk
from siselect.sqltext.sqlite_types import affinity

_D = exp.DataType.Type
_INTEGER_TYPES = (_D.INT, _D.BIGINT, _D.SMALLINT, _D.TINYINT)
_REAL_TYPES = (_D.DOUBLE, _D.FLOAT, _D.DECIMAL)
_TEXT_TYPES = (_D.TEXT, _D.VARCHAR, _D.CHAR, _D.NVARCHAR, _D.NCHAR)


def sqlite_casts(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """Rewrite CASTs to INTEGER, REAL/NUMERIC and TEXT to SQLite's conversions."""
    typer = Typer(catalog)
    for node in walk(tree, exp.Cast):
        if not isinstance(node, exp.Cast):
            continue
        target = node.to.this
        source = typer(node.this)
        new: exp.Expr | None
        if target in _INTEGER_TYPES:
            new = _to_integer(node.this, source.kind)
        elif target in _REAL_TYPES:
            new = (as_number(node.this) if source.kind == TEXT
                   else exp.cast(node.this, "double precision"))
        elif target in _TEXT_TYPES:
            new = exp.cast(as_text(node.this, source), "text")
        else:
            new = _by_affinity(node, source.kind)
            if new is None:
                continue
        tree = replace(node, new, tree)
    return tree


def _by_affinity(node: exp.Cast, kind: str | None) -> exp.Expr | None:
    """A type PostgreSQL may not know (UNSIGNED, ...): SQLite casts by its name's affinity."""
    if node.to.this in (_D.DATE, _D.DATETIME, _D.TIMESTAMP, _D.BOOLEAN, _D.JSON):
        name = node.to.this.value
    else:
        name = node.to.sql("sqlite")
    found = affinity(name)
    if found == "INTEGER":
        return _to_integer(node.this, kind)
    if found == "TEXT":
        return exp.cast(node.this, "text")
    if found in ("REAL", "NUMERIC"):
        return as_number(node.this) if kind == TEXT else exp.cast(node.this, "double precision")
    return None


def _to_integer(value: exp.Expr, kind: str | None) -> exp.Expr:
    if kind == TEXT:
        return as_number(value, integer=True)
    if kind == REAL or kind is None:
        return exp.cast(exp.func("TRUNC", exp.cast(value, "double precision")), "bigint")
    return exp.cast(value, "bigint")
