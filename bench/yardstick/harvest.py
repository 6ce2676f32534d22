"""The literals that queries compare each column with, harvested with sqlglot.

A filter selects something on synthetic data only if the values it names exist there; the
gold and candidate queries of a database say which values those are, and how they are
compared (equality, ranges, LIKE patterns, a year taken out of a date).
"""

from collections import defaultdict
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from .schema import Schema

#: Functions through which a comparison still says something about the column's values.
_TRANSPARENT = (exp.Cast, exp.TryCast, exp.Lower, exp.Upper, exp.Trim, exp.Paren)
_YEAR_FUNCS = (exp.TimeToStr, exp.Substring, exp.Year, exp.StrToTime, exp.Anonymous,
               exp.Left)

_OPS = {exp.EQ: "eq", exp.NEQ: "eq", exp.GT: "range", exp.GTE: "range", exp.LT: "range",
        exp.LTE: "range"}


@dataclass
class Literals:
    """What the queries say about one column."""
    equal: list[str | float] = field(default_factory=list)   # = <> IN
    ranges: list[str | float] = field(default_factory=list)  # < <= > >= BETWEEN
    like: list[str] = field(default_factory=list)            # LIKE / GLOB patterns
    years: list[int] = field(default_factory=list)           # strftime('%Y', col) = '2012'
    numeric_casts: int = 0                                    # CAST(col AS REAL), and the like

    def empty(self) -> bool:
        return not (self.equal or self.ranges or self.like or self.years or self.numeric_casts)


Harvest = dict[tuple[str, str], Literals]  # (table, column) as in the schema


def harvest(schema: Schema, queries: list[str]) -> Harvest:
    found: Harvest = defaultdict(Literals)
    for sql in queries:
        try:
            tree = sqlglot.parse_one(sql, read="sqlite")
        except sqlglot.errors.ParseError:
            continue
        if tree is not None:
            _harvest_tree(schema, tree, found)
    return dict(found)


def _literal(node: exp.Expression) -> str | float | None:
    while isinstance(node, exp.Paren | exp.Cast):
        node = node.this
    negative = isinstance(node, exp.Neg)
    if negative:
        node = node.this
    if not isinstance(node, exp.Literal):
        return None
    if node.is_string:
        return node.this
    try:
        value = float(node.this)
    except ValueError:
        return None
    return -value if negative else value


def _column_of(node: exp.Expression) -> tuple[exp.Column | None, bool]:
    """The column a side of a comparison is about, and whether a year is taken from it."""
    if isinstance(node, exp.Column):
        return node, False
    inner = node
    while isinstance(inner, _TRANSPARENT):
        inner = inner.this
    if isinstance(inner, exp.Column):
        return inner, False
    if isinstance(inner, _YEAR_FUNCS):
        columns = list(inner.find_all(exp.Column))
        if len(columns) == 1:
            return columns[0], True
    return None, False


def _resolver(schema: Schema, tree: exp.Expression):
    aliases: dict[str, str] = {}
    used: list[str] = []
    for table in tree.find_all(exp.Table):
        known = schema.table(table.name)
        if known is None:
            continue
        used.append(known.name)
        aliases[(table.alias or table.name).lower()] = known.name

    def resolve(column: exp.Column) -> list[tuple[str, str]]:
        if column.table:
            owner = aliases.get(column.table.lower())
            found = schema.table(owner).column(column.name) if owner else None  # type: ignore[union-attr]
            return [(found.table, found.name)] if found else []
        hits = []
        for name in dict.fromkeys(used):
            found = schema.table(name).column(column.name)  # type: ignore[union-attr]
            if found:
                hits.append((found.table, found.name))
        return hits

    return resolve


def _add(found: Harvest, keys: list[tuple[str, str]], kind: str, value: str | float,
         year: bool) -> None:
    for key in keys:
        lits = found[key]
        if year:
            text = str(value)[:4]
            if text.isdigit() and 1800 <= int(text) <= 2100:
                lits.years.append(int(text))
        elif kind == "like" and isinstance(value, str):
            lits.like.append(value)
        elif kind == "range":
            lits.ranges.append(value)
        else:
            lits.equal.append(value)


def _harvest_tree(schema: Schema, tree: exp.Expression, found: Harvest) -> None:
    resolve = _resolver(schema, tree)
    # A text column the queries read as a number holds numbers written as text (BIRD's
    # results.fastestLapSpeed, '218.300'), whether or not they compare it with one.
    for cast in tree.find_all(exp.Cast):
        if isinstance(cast.this, exp.Column) and cast.to.is_type(*exp.DataType.NUMERIC_TYPES):
            for key in resolve(cast.this):
                found[key].numeric_casts += 1
    for node in tree.find_all(exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like,
                              exp.ILike, exp.Glob, exp.Between, exp.In):
        if isinstance(node, exp.Between):
            column, year = _column_of(node.this)
            values = [_literal(node.args["low"]), _literal(node.args["high"])]
            kind = "range"
        elif isinstance(node, exp.In):
            column, year = _column_of(node.this)
            values = [_literal(e) for e in node.expressions]
            kind = "eq"
        else:
            column, year = _column_of(node.left)
            other = node.right
            if column is None:
                column, year = _column_of(node.right)
                other = node.left
            values = [_literal(other)]
            kind = "like" if isinstance(node, exp.Like | exp.ILike | exp.Glob) else _OPS[
                type(node)]
        if column is None:
            continue
        keys = resolve(column)
        for value in values:
            if value is not None:
                _add(found, keys, kind, value, year)
