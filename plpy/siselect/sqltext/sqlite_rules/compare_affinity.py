"""SQLite's comparison rules between text and numbers (datatype3.html, section 4.2).

Before comparing, SQLite converts an operand by affinity: a numeric column against text
reads the text as a number when it looks like one; a text column against a bare number
compares it as text ('10' > 5 is false). Values of different storage classes never
equal: every number sorts before every text. PostgreSQL refuses most of these mixes, so
each comparison is rewritten to the one SQLite performs.
"""

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.sqltext.sqlite_rules.as_number import WHOLE_NUMBER, double, numeric_affinity
from siselect.sqltext.sqlite_rules.as_text import as_text
from siselect.sqltext.sqlite_rules.sqlite_type import BOOLEAN, NULL, TEXT, SqliteType, Typer
from siselect.sqltext.sqlite_rules.template import template
from siselect.sqltext.sqlite_rules.walk import replace, walk

_NUMERIC_AFFINITY = ("INTEGER", "REAL", "NUMERIC")
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ,
                exp.NullSafeNEQ)
# The result of "number OP text" once both are non-null: numbers sort first.
_NUMBER_VS_TEXT: dict[type, bool] = {exp.EQ: False, exp.NEQ: True, exp.LT: True, exp.LTE: True,
                   exp.GT: False, exp.GTE: False, exp.NullSafeEQ: False, exp.NullSafeNEQ: True}
_MIRROR: dict[type, type] = {exp.LT: exp.GT, exp.GT: exp.LT, exp.LTE: exp.GTE, exp.GTE: exp.LTE}


def compare_affinity(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """Rewrite comparisons, IN lists and BETWEEN that mix text and numbers."""
    typer = Typer(catalog)
    for node in walk(tree, *_COMPARISONS, exp.In, exp.Between):
        if isinstance(node, exp.In):
            _in_list(node, typer)
        elif isinstance(node, exp.Between):
            tree = _between(node, typer, tree)
        else:
            new = compare(type(node), node.this, node.expression, typer, _filters(node))
            if new is not None:
                tree = replace(node, new, tree)
    return tree


def _filters(node: exp.Expr) -> bool:
    """Whether ``node`` only filters: a conjunct of a WHERE, a HAVING or a join's ON, where
    a row passes on TRUE alone, so FALSE and NULL mean the same."""
    while isinstance(node.parent, exp.And | exp.Paren) and not isinstance(node.parent,
                                                                           _Dynamic):
        node = node.parent
    parent = node.parent
    return isinstance(parent, exp.Where | exp.Having) or (
        isinstance(parent, exp.Join) and node.arg_key == "on")


def _numeric(t: SqliteType) -> bool:
    return t.numeric


def converted(left: exp.Expr, right: exp.Expr, typer: Typer
              ) -> tuple[exp.Expr, SqliteType, exp.Expr, SqliteType] | None:
    """Both operands after SQLite's affinity conversions, or None when types are unknown."""
    tl, tr = typer(left), typer(right)
    if tl.kind is None or tr.kind is None or NULL in (tl.kind, tr.kind):
        return None
    if tl.affinity in _NUMERIC_AFFINITY and tr.affinity in ("TEXT", "BLOB", None):
        right, tr = _to_numeric(right, tr)
    elif tr.affinity in _NUMERIC_AFFINITY and tl.affinity in ("TEXT", "BLOB", None):
        left, tl = _to_numeric(left, tl)
    elif tl.affinity == "TEXT" and tr.affinity is None:
        right, tr = _to_text(right, tr)
    elif tr.affinity == "TEXT" and tl.affinity is None:
        left, tl = _to_text(left, tl)
    # A copy: the operand stays in its tree, where later calls type it by its scope.
    if stores_numbers(tl) and not isinstance(left, _Dynamic):
        left = _Dynamic(this=left.copy())
    if stores_numbers(tr) and not isinstance(right, _Dynamic):
        right = _Dynamic(this=right.copy())
    return left, tl, right, tr


def stores_numbers(t: SqliteType) -> bool:
    """A column declared numeric but loaded as text: SQLite's affinity stored every value
    that looks like a number as a number, so each value's storage class is its look."""
    return t.kind == TEXT and t.affinity in _NUMERIC_AFFINITY


def compare(op: type, left: exp.Expr, right: exp.Expr, typer: Typer, filters: bool = False
            ) -> exp.Expr | None:
    """``left op right`` as SQLite evaluates it, or None when it needs no rewrite.
    ``filters``: only whether it is TRUE matters (:func:`_filters`)."""
    found = converted(left, right, typer)
    if found is None:
        return None
    new_left, tl, new_right, tr = found
    if tl.kind == BOOLEAN or tr.kind == BOOLEAN:
        return None  # boolean_context makes them integers
    if isinstance(new_left, _Dynamic) and isinstance(new_right, _Dynamic):
        return _both_dynamic(op, new_left.this, new_right.this)
    if (tl.kind == TEXT) == (tr.kind == TEXT):
        if tl.kind == TEXT and (isinstance(new_left, _Dynamic) or isinstance(new_right, _Dynamic)):
            return _dynamic_vs_text(op, new_left, new_right)
        if new_left is left and new_right is right:
            return None
        return op(this=new_left, expression=new_right)
    if isinstance(new_left, _Dynamic) or isinstance(new_right, _Dynamic):
        return _dynamic(op, new_left, new_right, filters)
    if tl.kind == TEXT:
        op, new_left, new_right = _MIRROR.get(op, op), new_right, new_left
    return _constant(op, new_left, new_right)


class _Dynamic(exp.Paren):
    """A text operand that SQLite reads as a number only when it looks like one."""


def _to_numeric(node: exp.Expr, t: SqliteType) -> tuple[exp.Expr, SqliteType]:
    if t.kind != TEXT:
        return node, t
    if isinstance(node, exp.Literal):
        number = numeric_affinity(node)
        return (node, t) if number is None else (number, Typer(None)(number))
    return _Dynamic(this=node), t


def _to_text(node: exp.Expr, t: SqliteType) -> tuple[exp.Expr, SqliteType]:
    if t.kind == TEXT or t.kind == BOOLEAN:
        return node, t
    return as_text(node, t), SqliteType(TEXT)


def _dynamic(op: type, left: exp.Expr, right: exp.Expr, filters: bool = False) -> exp.Expr:
    """Compare as numbers when the text operand looks like one, else by storage class.

    An equality that only filters (a join's ON, say) is written as one, of the text's
    number (NULL where it looks like none) and the number: the same rows pass, since by
    storage class a text never equals a number, and PostgreSQL can hash-join on it, where
    the CASE around it left a nested loop testing every pair of rows (the yardstick's
    ``Match.league_id``, loaded as text, joined to ``League.id``: 8.8 s a run)."""
    text_on_left = isinstance(left, _Dynamic)
    text = (left if text_on_left else right).this
    number = right if text_on_left else left
    as_double = double(text)
    hashable = op is exp.EQ and filters
    if hashable:  # the text's number, NULL where it looks like none
        as_double = template(f"CASE WHEN _t ~ '{WHOLE_NUMBER}' THEN _d END", _t=text,
                             _d=as_double)
    numeric = op(this=as_double, expression=number) if text_on_left else op(
        this=number, expression=as_double)
    if hashable:
        return numeric
    fallback_op = _MIRROR.get(op, op) if text_on_left else op
    fallback = _constant(fallback_op, number, text)
    return template(f"CASE WHEN _t ~ '{WHOLE_NUMBER}' THEN _n ELSE _f END",
                    _t=text, _n=numeric, _f=fallback)


def _both_dynamic(op: type, left: exp.Expr, right: exp.Expr) -> exp.Expr:
    """Two operands each a number where it looks like one: numbers compare as numbers,
    texts as texts, a number and a text by storage class."""
    numbers = op(this=double(left), expression=double(right))
    return template(f"CASE WHEN _l ~ '{WHOLE_NUMBER}' AND _r ~ '{WHOLE_NUMBER}' THEN _n "
                    f"WHEN _l ~ '{WHOLE_NUMBER}' THEN _a WHEN _r ~ '{WHOLE_NUMBER}' THEN _b "
                    "ELSE _t END",
                    _l=left, _r=right, _n=numbers, _a=_constant(op, left, right),
                    _b=_constant(_MIRROR.get(op, op), right, left),
                    _t=op(this=left.copy(), expression=right.copy()))


def _dynamic_vs_text(op: type, left: exp.Expr, right: exp.Expr) -> exp.Expr:
    """A value stored as a number where it looks like one, compared with text: by storage
    class when it is a number, as text otherwise."""
    text_on_left = isinstance(left, _Dynamic)
    value = (left if text_on_left else right).this
    other = right if text_on_left else left
    as_text = op(this=value, expression=other) if text_on_left else op(
        this=other, expression=value)
    fallback = _constant(op if text_on_left else _MIRROR.get(op, op), value, other)
    return template(f"CASE WHEN _t ~ '{WHOLE_NUMBER}' THEN _f ELSE _s END",
                    _t=value, _f=fallback, _s=as_text)


def _constant(op: type, number: exp.Expr, text: exp.Expr) -> exp.Expr:
    """``number op text`` for values of different storage classes."""
    result = _NUMBER_VS_TEXT[op]
    if op is exp.NullSafeEQ:
        return template("(_a IS NULL AND _b IS NULL)", _a=number, _b=text)
    if op is exp.NullSafeNEQ:
        return template("NOT (_a IS NULL AND _b IS NULL)", _a=number, _b=text)
    return template(f"CASE WHEN _a IS NULL OR _b IS NULL THEN NULL ELSE {result} END",
                    _a=number, _b=text)


def _in_list(node: exp.In, typer: Typer) -> None:
    """``x IN (a, b)``: each value takes the conversion ``x = value`` would apply."""
    values = node.expressions
    if not values:
        return
    left = node.this
    if any(stores_numbers(typer(v)) for v in [left, *values]):
        # Each value compares as ``left = value`` would: numbers by storage class, per row.
        tests = [_in_place(node, exp.EQ, v, typer) or exp.EQ(this=left.copy(), expression=v)
                 for v in values]
        node.replace(exp.Paren(this=exp.or_(*tests)))
        return
    kept = []
    changed = False
    for value in values:
        found = converted(left, value, typer)
        if found is None:
            kept.append(value)
            continue
        _, tl, new_value, tv = found
        if (tl.kind == TEXT) != (tv.kind == TEXT) and BOOLEAN not in (tl.kind, tv.kind):
            changed = True  # never equal: drop it
            continue
        changed = changed or new_value is not value
        kept.append(new_value.this if isinstance(new_value, _Dynamic) else new_value)
    if not changed:
        return
    if kept:
        node.set("expressions", kept)
    else:
        node.replace(template("CASE WHEN _x IS NULL THEN NULL ELSE FALSE END", _x=left))


def _between(node: exp.Between, typer: Typer, tree: exp.Expr) -> exp.Expr:
    low = _in_place(node, exp.GTE, node.args["low"], typer)
    high = _in_place(node, exp.LTE, node.args["high"], typer)
    if low is None and high is None:
        return tree
    low = low or exp.GTE(this=node.this.copy(), expression=node.args["low"])
    high = high or exp.LTE(this=node.this.copy(), expression=node.args["high"])
    return replace(node, exp.Paren(this=exp.And(this=low, expression=high)), tree)


def _in_place(node: exp.Between | exp.In, op: type, other: exp.Expr, typer: Typer
              ) -> exp.Expr | None:
    """``node.this op other`` rewritten, as a copy. Building it can move the operand under
    the new comparison, where its columns have no scope to be typed in, so the operand is
    put back for the node's next comparison (a BETWEEN's other bound, an IN's next value),
    which otherwise stayed untyped and unrewritten."""
    this = node.this
    new = compare(op, this, other, typer)
    new = None if new is None else new.copy()
    node.set("this", this)
    return new
