"""Text as SQLite reads it as a number: the longest numeric prefix, else 0."""

import re

from sqlglot import exp

from siselect.sqltext.sqlite_rules.template import template

# What SQLite's text-to-number conversion accepts at the start of a string.
NUMBER_PREFIX = r"^\s*([-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)"
INTEGER_PREFIX = r"^\s*([-+]?\d+)"
# A whole string that SQLite's NUMERIC affinity turns into a number.
WHOLE_NUMBER = r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$"

_PREFIX_SQL = ("CASE WHEN _x IS NULL THEN NULL ELSE CAST(COALESCE(SUBSTRING(_x FROM '{re}'), '0') "
               "AS {type}) END")


def as_number(node: exp.Expr, integer: bool = False) -> exp.Expr:
    """``node`` (text) as the number SQLite arithmetic or CAST would make of it."""
    if isinstance(node, exp.Literal) and node.is_string:
        match = re.match(INTEGER_PREFIX if integer else NUMBER_PREFIX, node.this)
        text = match.group(1) if match else "0"
        return exp.Literal.number(int(text) if integer else _number_text(text))
    sql = _PREFIX_SQL.format(re=INTEGER_PREFIX if integer else NUMBER_PREFIX,
                             type="BIGINT" if integer else "DOUBLE PRECISION")
    return template(sql, _x=node)


def _number_text(text: str) -> str:
    value = float(text)
    return str(int(value)) if re.fullmatch(r"[-+]?\d+", text.strip()) else repr(value)


def numeric_affinity(literal: exp.Literal) -> exp.Expr | None:
    """A text literal under NUMERIC affinity: a number literal if it reads whole as one."""
    if not re.match(WHOLE_NUMBER, literal.this):
        return None
    value = float(literal.this)
    if value == int(value) and abs(value) < 2**63:
        return exp.Literal.number(int(value))
    return exp.Literal.number(repr(value))
