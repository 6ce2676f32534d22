"""A value as SQLite turns it into text: integers plainly, reals with 15 digits and a '.0'."""

import sqlite3

from sqlglot import exp

from .sqlite_type import BOOLEAN, INTEGER, NULL, REAL, TEXT, SqliteType
from .template import template

# SQLite prints an integral real as '5.0'; PostgreSQL prints the double 5 as '5'.
_REAL_TEXT = ("CASE WHEN _x = TRUNC(_x) AND ABS(_x) < 1e15 "
              "THEN CAST(CAST(_x AS NUMERIC) AS TEXT) || '.0' ELSE CAST(_x AS TEXT) END")


def literal_text(literal: exp.Literal) -> str:
    """The text SQLite makes of a numeric literal (asked of SQLite itself)."""
    with sqlite3.connect(":memory:") as db:
        return str(db.execute(f"SELECT CAST({literal.this} AS TEXT)").fetchone()[0])


def as_text(node: exp.Expression, kind: SqliteType) -> exp.Expression:
    """``node`` converted to text the way SQLite converts it; unchanged when already text."""
    if kind.kind in (TEXT, NULL, None):
        return node
    if isinstance(node, exp.Literal) and not node.is_string:
        return exp.Literal.string(literal_text(node))
    if kind.kind == BOOLEAN:
        return template("CAST(CAST(_x AS INTEGER) AS TEXT)", _x=node)
    if kind.kind == INTEGER:
        return exp.cast(node, "text")
    if kind.kind == REAL:
        return template(_REAL_TEXT, _x=node)
    return exp.cast(node, "text")
