"""Values of mixed types in one column: SQLite allows them, PostgreSQL needs one type.

CASE/IIF branches, COALESCE/IFNULL arguments, NULLIF and the columns of UNION branches that
mix text and numbers become text (as SQLite prints the numbers), which keeps every value
and lets PostgreSQL type the result. SQLite's two-argument max()/min() is NULL when an
argument is NULL, where GREATEST/LEAST skip NULLs.
"""

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.sqltext.sqlite_rules.as_text import as_text
from siselect.sqltext.sqlite_rules.sqlite_type import TEXT, SqliteType, Typer
from siselect.sqltext.sqlite_rules.template import template
from siselect.sqltext.sqlite_rules.walk import replace, walk


def branch_types(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """Make branches of one value agree on text when SQLite mixes text and numbers."""
    typer = Typer(catalog)
    for node in walk(tree, exp.Case, exp.If, exp.Coalesce, exp.Nullif, exp.Greatest,
                     exp.Least, exp.SetOperation):
        if isinstance(node, exp.SetOperation):
            _union_columns(node, typer)
            continue
        slots = value_slots(node)
        kinds = [typer(v) for v in slots]
        if _mixed(kinds):
            for value, kind in zip(slots, kinds, strict=True):
                if kind.kind != TEXT:
                    value.replace(as_text(value.copy(), kind))
        if isinstance(node, (exp.Greatest, exp.Least)):
            tree = replace(node, _null_if_any_null(node), tree)
    return tree


BRANCHING = (exp.Case, exp.If, exp.Coalesce, exp.Nullif, exp.Greatest, exp.Least)


#: Values that are one of their argument's values: text when the argument is made text.
_PICKS_ARG = (exp.Min, exp.Max, exp.Paren)


def becomes_text(node: exp.Expr, typer: Typer) -> bool:
    """Whether ``node`` mixes text and number branches, so :func:`branch_types` will make
    it text (its value is text on some rows and a number on others in SQLite), or picks
    one value of such a node (``MAX(CASE WHEN ... THEN text_column ELSE 0 END)``)."""
    while isinstance(node, _PICKS_ARG) and isinstance(node.this, exp.Expr):
        node = node.this
    return isinstance(node, BRANCHING) and _mixed([typer(v) for v in value_slots(node)])


def value_slots(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.Case):
        values = [i.args.get("true") for i in node.args.get("ifs") or []]
        values.append(node.args.get("default"))
    elif isinstance(node, exp.If):
        values = [node.args.get("true"), node.args.get("false")]
    else:
        values = [node.this, *node.expressions] if not isinstance(node, exp.Nullif) else [
            node.this, node.expression]
    return [v for v in values if isinstance(v, exp.Expr)]


def _mixed(kinds: list[SqliteType]) -> bool:
    present = [k.kind for k in kinds if k.kind not in (None, "null")]
    return TEXT in present and any(k != TEXT for k in present)


def _null_if_any_null(node: exp.Expr) -> exp.Expr:
    args = [node.this, *node.expressions]
    if len(args) < 2 or node.meta.get("sqlite_nulls"):
        return node
    node.meta["sqlite_nulls"] = True
    test = " OR ".join(f"_a{i} IS NULL" for i in range(len(args)))
    parts = {f"_a{i}": a for i, a in enumerate(args)}
    return template(f"CASE WHEN {test} THEN NULL ELSE _g END", _g=node.copy(), **parts)


def _union_columns(node: exp.SetOperation, typer: Typer) -> None:
    branches = _branches(node)
    if any(not isinstance(b, exp.Select) or any(isinstance(p, exp.Star) for p in b.expressions)
           for b in branches):
        return
    width = min(len(b.expressions) for b in branches)
    for i in range(width):
        columns = [b.expressions[i] for b in branches]
        kinds = [typer(c.unalias()) for c in columns]
        if not _mixed(kinds):
            continue
        for column, kind in zip(columns, kinds, strict=True):
            if kind.kind != TEXT:
                value = column.unalias()
                value.replace(as_text(value.copy(), kind))


def _branches(node: exp.Expr) -> list[exp.Expr]:
    while isinstance(node, exp.Subquery):
        node = node.this
    if isinstance(node, exp.SetOperation):
        return _branches(node.left) + _branches(node.right)
    return [node]
