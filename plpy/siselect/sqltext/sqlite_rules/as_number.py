"""Text as SQLite reads it as a number: the longest numeric prefix, else 0."""

import math
import re

from sqlglot import exp

from siselect.sqltext.sqlite_rules.template import template

# What SQLite's text-to-number conversion accepts at the start of a string.
NUMBER_PREFIX = r"^\s*([-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)"
INTEGER_PREFIX = r"^\s*([-+]?\d+)"
# A whole string that SQLite's NUMERIC affinity turns into a number.
WHOLE_NUMBER = r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$"

_INT64 = (-(2**63), 2**63 - 1)
# Beyond these a double is infinite (the largest double plus half a unit in the last
# place) or zero (half the smallest subnormal): PostgreSQL's cast raises there (22003),
# SQLite reads Inf or 0.0.
_OVERFLOW = "1.797693134862315807e308"
_UNDERFLOW = "2.5e-324"
# _t: a number's text; _r: the text it was read from. Under 200 characters and without an
# exponent of three digits, _t lies well inside both bounds and the plain cast serves.
# Otherwise its exact value (NUMERIC, the exponent capped at 999, inside NUMERIC's input
# range and far past both bounds) decides: zero, the text itself, or a signed Infinity.
_DOUBLE_SQL = (
    "CASE WHEN LENGTH(_r) < 200 AND _r !~ '[eE][-+]?\\d{3}' THEN CAST(_t AS DOUBLE PRECISION) "
    f"ELSE CAST(CASE WHEN ABS(_n) < {_UNDERFLOW} THEN '0' WHEN ABS(_n) < {_OVERFLOW} THEN _t "
    "ELSE REGEXP_REPLACE(_t, '^\\s*([-+]?).*$', '\\1Infinity') END AS DOUBLE PRECISION) END")
_NUMERIC_SQL = "CAST(REGEXP_REPLACE(_t, '([eE][-+]?)0*[1-9]\\d{3,}\\s*$', '\\1999') AS NUMERIC)"
# SQLite's CAST to INTEGER saturates at the 64-bit bounds; PostgreSQL's raises (22003).
_BIGINT_SQL = (f"CASE WHEN LENGTH(_r) < 19 THEN CAST(_t AS BIGINT) ELSE CAST(LEAST(GREATEST("
               f"CAST(_t AS NUMERIC), {_INT64[0]}), {_INT64[1]}) AS BIGINT) END")
_PREFIX_SQL = "CASE WHEN _x IS NULL THEN NULL ELSE _v END"


def as_number(node: exp.Expr, integer: bool = False) -> exp.Expr:
    """``node`` (text) as the number SQLite arithmetic or CAST would make of it."""
    if isinstance(node, exp.Literal) and node.is_string:
        match = re.match(INTEGER_PREFIX if integer else NUMBER_PREFIX, node.this)
        text = match.group(1) if match else "0"
        return _integer_literal(int(text)) if integer else _real_literal(text)
    pattern = INTEGER_PREFIX if integer else NUMBER_PREFIX
    prefix = template(f"COALESCE(SUBSTRING(_x FROM '{pattern}'), '0')", _x=node)
    value = template(_BIGINT_SQL, _t=prefix, _r=node) if integer else double(prefix, node)
    return template(_PREFIX_SQL, _x=node, _v=value)


def double(text: exp.Expr, read_from: exp.Expr | None = None) -> exp.Expr:
    """``text`` (a number's text, as the patterns above accept it, read from the text
    ``read_from``) as a double, as SQLite reads it: out of range is infinite or zero,
    never an error."""
    read_from = text if read_from is None else read_from
    if text.find(exp.Query) is None and read_from.find(exp.Query) is None:
        return _double(text, read_from)
    # The expression names its text six times: a subquery there (the MAX of stored numbers
    # compared with, itself holding a double) would be written, and run, six times, and
    # nested ones multiply (financial 95: 5.5 kB -> 23.6 kB of SQL, 3x its tournament).
    # Bound once in a derived table of one row instead (outer references still resolve).
    if read_from is text:
        return template(_BOUND_ONE_SQL, _a=text,
                        _d=_double(exp.column("_t", "_b"), exp.column("_t", "_b")))
    return template(_BOUND_SQL, _a=text, _c=read_from,
                    _d=_double(exp.column("_t", "_b"), exp.column("_r", "_b")))


_BOUND_SQL = "(SELECT _d FROM (SELECT _a AS _t, _c AS _r) AS _b)"
_BOUND_ONE_SQL = "(SELECT _d FROM (SELECT _a AS _t) AS _b)"


def _double(text: exp.Expr, read_from: exp.Expr) -> exp.Expr:
    return template(_DOUBLE_SQL, _t=text, _r=read_from, _n=template(_NUMERIC_SQL, _t=text))


def _integer_literal(value: int) -> exp.Expr:
    return exp.Literal.number(min(max(value, _INT64[0]), _INT64[1]))


def _real_literal(text: str) -> exp.Expr:
    value = float(text)
    if math.isinf(value):
        infinity = exp.cast(exp.Literal.string("Infinity"), "double precision")
        return exp.Neg(this=infinity) if value < 0 else infinity
    return exp.Literal.number(str(int(value)) if re.fullmatch(r"[-+]?\d+", text.strip())
                              else repr(value))


def numeric_affinity(literal: exp.Literal) -> exp.Expr | None:
    """A text literal under NUMERIC affinity: a number literal if it reads whole as one."""
    if not re.match(WHOLE_NUMBER, literal.this):
        return None
    value = float(literal.this)
    if math.isfinite(value) and value == int(value) and abs(value) < 2**63:
        return exp.Literal.number(int(value))
    return _real_literal(literal.this) if math.isinf(value) else exp.Literal.number(repr(value))
