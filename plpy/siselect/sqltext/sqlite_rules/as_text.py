"""A value as SQLite turns it into text: integers plainly, reals with 15 digits and a '.0'."""

import sqlite3

from sqlglot import exp

from siselect.sqltext.sqlite_rules.sqlite_type import (
    BOOLEAN,
    INTEGER,
    NULL,
    NUMBER,
    REAL,
    TEXT,
    SqliteType,
)
from siselect.sqltext.sqlite_rules.template import template

# SQLite prints a real with 15 significant digits ("%!.15g"), and an integral one as '5.0';
# PostgreSQL prints the shortest exact form ('5', '0.30000000000000004'). Round in numeric
# to 15 digits, trim trailing zeros, keep one after the point. Outside the plain-notation
# range SQLite switches to exponents: PostgreSQL's own text is kept there.
_REAL_TEXT = """CASE WHEN _x IS NULL THEN NULL WHEN _x = 0 THEN '0.0'
WHEN ABS(_x) >= 1e15 OR ABS(_x) < 1e-4 THEN CAST(_x AS TEXT)
ELSE REGEXP_REPLACE(RTRIM(RTRIM(CAST(ROUND(CAST(_x AS NUMERIC),
  14 - CAST(FLOOR(LOG(CAST(ABS(_x) AS NUMERIC))) AS INTEGER)) AS TEXT), '0'), '.'),
  '^(-?[0-9]+)$', '\\1.0') END"""


def literal_text(literal: exp.Literal) -> str:
    """The text SQLite makes of a numeric literal (asked of SQLite itself)."""
    with sqlite3.connect(":memory:") as db:
        return str(db.execute(f"SELECT CAST({literal.this} AS TEXT)").fetchone()[0])


def as_text(node: exp.Expr, kind: SqliteType) -> exp.Expr:
    """``node`` converted to text the way SQLite converts it; unchanged when already text."""
    if kind.kind in (TEXT, NULL, None):
        return node
    if isinstance(node, exp.Literal) and not node.is_string:
        return exp.Literal.string(literal_text(node))
    if kind.kind == BOOLEAN:
        return template("CAST(CAST(_x AS INTEGER) AS TEXT)", _x=node)
    if kind.kind == INTEGER:
        return exp.cast(node, "text")
    if kind.kind in (REAL, NUMBER):
        return template(_REAL_TEXT, _x=node)
    return exp.cast(node, "text")
