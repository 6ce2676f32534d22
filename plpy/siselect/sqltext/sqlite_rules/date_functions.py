"""SQLite's date and time functions (strftime, date, datetime, time, julianday, 'now').

A SQLite time value is text in ISO-8601 form, a Julian day number, or 'now' (UTC); a
value it cannot read gives NULL rather than an error. Each call becomes a PostgreSQL
timestamp expression formatted with TO_CHAR or EXTRACT. 'localtime' and 'utc' modifiers
are taken as no-ops: the results are those of a server whose time zone is UTC.
"""

import re

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.sqltext.sqlite_rules.sqlite_type import INTEGER, NUMBER, REAL, TEXT, Typer
from siselect.sqltext.sqlite_rules.template import template
from siselect.sqltext.sqlite_rules.walk import replace, walk

# The ISO-8601 forms SQLite reads (date, optional time with optional fraction).
TIME_VALUE = (r"^\s*\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
              r"([ T]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?)?\s*Z?\s*$")
_FUNCTIONS = {"STRFTIME", "DATE", "DATETIME", "TIME", "JULIANDAY", "UNIXEPOCH"}
_TO_CHAR = {"d": "DD", "f": "SS.MS", "H": "HH24", "j": "DDD", "m": "MM", "M": "MI",
            "S": "SS", "Y": "YYYY"}
_COMPUTED = {
    "w": "CAST(CAST(EXTRACT(DOW FROM _t) AS INTEGER) AS TEXT)",
    "W": "LPAD(CAST(CAST(FLOOR((EXTRACT(DOY FROM _t) + 6 - "
         "MOD(CAST(EXTRACT(DOW FROM _t) AS INTEGER) + 6, 7)) / 7) AS INTEGER) AS TEXT), 2, '0')",
    "s": "CAST(CAST(FLOOR(EXTRACT(EPOCH FROM _t)) AS BIGINT) AS TEXT)",
    "J": "CAST(CAST(EXTRACT(JULIAN FROM _t) AS DOUBLE PRECISION) - 0.5 AS TEXT)",
}
_FORMATS = {"DATE": "YYYY-MM-DD", "DATETIME": "YYYY-MM-DD HH24:MI:SS", "TIME": "HH24:MI:SS"}
_SHIFT = re.compile(r"^([-+]?\d+(\.\d+)?)\s+(day|hour|minute|second|month|year)s?$")
_NOW = "CAST(NOW() AT TIME ZONE 'UTC' AS TIMESTAMP)"
_NULL_TS = "CAST(NULL AS TIMESTAMP)"


def date_functions(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """Rewrite SQLite's date functions and CURRENT_* values to PostgreSQL expressions."""
    typer = Typer(catalog)
    for node in walk(tree, exp.TimeToStr, exp.Date, exp.Anonymous, exp.CurrentTimestamp,
                     exp.CurrentDate, exp.CurrentTime):
        call = _call(node)
        if call is None:
            continue
        name, args = call
        new = _rewrite(name, args, typer)
        if new is not None:
            tree = replace(node, new, tree)
    return tree


def _call(node: exp.Expr) -> tuple[str, list[exp.Expr]] | None:
    now = exp.Literal.string("now")
    if isinstance(node, exp.TimeToStr):
        value = node.this.this if isinstance(node.this, exp.TsOrDsToTimestamp) else node.this
        return "STRFTIME", [node.args["format"], value]
    if isinstance(node, exp.Date):
        return "DATE", [node.this, *node.expressions]
    if isinstance(node, exp.CurrentTimestamp):
        return "DATETIME", [now]
    if isinstance(node, exp.CurrentDate):
        return "DATE", [now]
    if isinstance(node, exp.CurrentTime):
        return "TIME", [now]
    if isinstance(node, exp.Anonymous) and node.name.upper() in _FUNCTIONS:
        return node.name.upper(), list(node.expressions)
    return None


def _rewrite(name: str, args: list[exp.Expr], typer: Typer) -> exp.Expr | None:
    fmt = None
    if name == "STRFTIME":
        if not args or not isinstance(args[0], exp.Literal):
            return None
        fmt, args = args[0].this, args[1:]
    if not args:
        args = [exp.Literal.string("now")]
    ts = timestamp(args[0], args[1:], typer)
    if name == "JULIANDAY":
        return template("CAST(EXTRACT(JULIAN FROM _t) AS DOUBLE PRECISION) - 0.5", _t=ts)
    if name == "UNIXEPOCH":
        return template("CAST(FLOOR(EXTRACT(EPOCH FROM _t)) AS BIGINT)", _t=ts)
    if name == "STRFTIME":
        return strftime(fmt or "", ts)
    return template(f"TO_CHAR(_t, '{_FORMATS[name]}')", _t=ts)


def timestamp(value: exp.Expr, modifiers: list[exp.Expr], typer: Typer) -> exp.Expr:
    """A PostgreSQL timestamp for a SQLite time value and modifiers (NULL if unreadable)."""
    mods: list[str | exp.Expr] = [
        m.this.strip().lower() if isinstance(m, exp.Literal) and m.is_string else m
        for m in modifiers]
    kind = typer(value).kind
    if mods and mods[0] == "unixepoch":
        mods = mods[1:]
        ts = template("CAST(TO_TIMESTAMP(_x) AT TIME ZONE 'UTC' AS TIMESTAMP)", _x=value)
    elif isinstance(value, exp.Literal) and value.is_string:
        ts = _literal_timestamp(value.this)
    elif kind in (INTEGER, REAL, NUMBER):
        # A Julian day number; SQLite knows days 0 to 9999-12-31 and gives NULL beyond.
        ts = template("CASE WHEN _x >= 0 AND _x < 5373484.5 THEN CAST(TO_TIMESTAMP("
                      "(_x - 2440587.5) * 86400) AT TIME ZONE 'UTC' AS TIMESTAMP) END", _x=value)
    else:
        text = value if kind == TEXT else exp.cast(value, "text")
        ts = template(f"CASE WHEN _x ~ '{TIME_VALUE}' THEN CAST(_x AS TIMESTAMP) END", _x=text)
    for mod in mods:
        ts = _modify(ts, mod)
    return ts


def _literal_timestamp(text: str) -> exp.Expr:
    if text.strip().lower() == "now":
        return template(_NOW)
    if re.match(TIME_VALUE, text):
        return exp.cast(exp.Literal.string(text.strip().rstrip("Z").strip()), "timestamp")
    return template(_NULL_TS)


def _modify(ts: exp.Expr, mod: str | exp.Expr) -> exp.Expr:
    if isinstance(mod, exp.Expr):
        # Computed at run time: SQLite's '+N unit' forms are valid PostgreSQL intervals.
        return template("_t + CAST(_m AS INTERVAL)", _t=ts, _m=mod)
    shift = _SHIFT.match(mod)
    if shift:
        amount, unit = shift.group(1), shift.group(3)
        if unit in ("month", "year") and "." not in amount:
            # SQLite moves the month field and lets the day overflow (Jan 31 + 1 month is
            # Mar 2 or 3); PostgreSQL clamps to the month's end. Add the months to the
            # first of the month, then the offset of the day within it.
            months = int(amount) * (12 if unit == "year" else 1)
            return template(f"DATE_TRUNC('month', _t) + CAST('{months} months' AS INTERVAL) "
                            "+ (_t - DATE_TRUNC('month', _t))", _t=ts)
        return template(f"_t + CAST('{amount} {unit}' AS INTERVAL)", _t=ts)
    if mod.startswith("start of "):
        unit = mod[len("start of "):].strip()
        if unit in ("month", "year", "day"):
            return template(f"DATE_TRUNC('{unit}', _t)", _t=ts)
    if mod in ("localtime", "utc"):
        return ts
    return template(_NULL_TS)  # SQLite gives NULL for a modifier it does not know


def strftime(fmt: str, ts: exp.Expr) -> exp.Expr:
    """SQLite's strftime format as TO_CHAR pieces and computed fields joined with ||."""
    pieces: list[exp.Expr] = []
    pattern = ""
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        code = fmt[i + 1] if ch == "%" and i + 1 < len(fmt) else None
        i += 2 if code is not None else 1
        if code is None:
            pattern += _quoted(ch)
        elif code == "%":
            pattern += _quoted("%")
        elif code in _TO_CHAR:
            pattern += _TO_CHAR[code]
        elif code in _COMPUTED:
            pieces.extend(_to_char(ts, pattern))
            pattern = ""
            pieces.append(template(_COMPUTED[code], _t=ts))
        else:
            return exp.Null()  # SQLite returns NULL for an unknown substitution
    pieces.extend(_to_char(ts, pattern))
    if not pieces:
        return template("CASE WHEN _t IS NULL THEN NULL ELSE '' END", _t=ts)
    result = pieces[0]
    for piece in pieces[1:]:
        result = exp.DPipe(this=result, expression=piece)
    return result


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("'", "''") + '"'


def _to_char(ts: exp.Expr, pattern: str) -> list[exp.Expr]:
    if not pattern:
        return []
    return [template(f"TO_CHAR(_t, '{pattern}')", _t=ts)]
