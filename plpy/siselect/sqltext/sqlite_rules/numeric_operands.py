"""Arithmetic and numeric functions read text as a number in SQLite ('12abc' + 1 is 13)."""

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.sqltext.sqlite_rules.as_number import as_number
from siselect.sqltext.sqlite_rules.branch_types import becomes_text
from siselect.sqltext.sqlite_rules.sqlite_type import TEXT, Typer
from siselect.sqltext.sqlite_rules.walk import walk

_NUMERIC_ARGS: dict[type, tuple[str, ...]] = {
    exp.Add: ("this", "expression"), exp.Sub: ("this", "expression"),
    exp.Mul: ("this", "expression"), exp.Div: ("this", "expression"),
    exp.Mod: ("this", "expression"), exp.Neg: ("this",), exp.Sum: ("this",),
    exp.Avg: ("this",), exp.Abs: ("this",), exp.Round: ("this",), exp.Sqrt: ("this",),
    exp.Pow: ("this", "expression"), exp.Ceil: ("this",), exp.Floor: ("this",),
    exp.Sign: ("this",), exp.Ln: ("this",), exp.Exp: ("this",), exp.Log: ("this", "expression"),
}


def numeric_operands(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """Text operands of arithmetic and of SUM, AVG, ABS, ROUND... become SQLite's number."""
    typer = Typer(catalog)
    for node in walk(tree, *_NUMERIC_ARGS, exp.Anonymous):
        if isinstance(node, exp.Anonymous):
            if node.name.upper() == "TOTAL" and node.expressions:
                arg = node.expressions[0]
                if typer(arg).kind == TEXT:
                    arg.replace(as_number(arg.copy()))
            continue
        for name in _NUMERIC_ARGS[type(node)]:
            arg = node.args.get(name)
            if isinstance(node, (exp.Sum, exp.Avg)) and isinstance(arg, exp.Distinct):
                continue  # DISTINCT on the text itself: SQLite dedups before converting
            # A CASE of text and numbers is made text later (branch_types): SQLite reads
            # each of its values as a number here, so it is converted like text.
            if isinstance(arg, exp.Expr) and (typer(arg).kind == TEXT or becomes_text(arg, typer)):
                node.set(name, as_number(arg))
    return tree
