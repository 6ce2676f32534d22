"""Text functions read numbers as text in SQLite (length(123) is 3); PostgreSQL refuses."""

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.sqltext.sqlite_rules.as_text import as_text
from siselect.sqltext.sqlite_rules.sqlite_type import Typer
from siselect.sqltext.sqlite_rules.walk import walk

# Function -> the argument names that SQLite reads as text.
_TEXT_ARGS: dict[type, tuple[str, ...]] = {
    exp.Like: ("this", "expression"), exp.ILike: ("this", "expression"),
    exp.Glob: ("this", "expression"), exp.DPipe: ("this", "expression"),
    exp.Substring: ("this",), exp.Length: ("this",), exp.Upper: ("this",),
    exp.Lower: ("this",), exp.Trim: ("this", "expression"),
    exp.Replace: ("this", "expression", "replacement"), exp.StrPosition: ("this", "substr"),
    exp.GroupConcat: ("this", "separator"), exp.Left: ("this",), exp.Right: ("this",),
    exp.Initcap: ("this",),
}


def text_operands(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """Numbers given to text functions, LIKE, GLOB and || become text as SQLite prints them."""
    typer = Typer(catalog)
    for node in walk(tree, *_TEXT_ARGS):
        for name in _TEXT_ARGS[type(node)]:
            arg = node.args.get(name)
            if isinstance(node, exp.GroupConcat) and isinstance(arg, exp.Distinct):
                for i, inner in enumerate(arg.expressions):
                    arg.expressions[i] = as_text(inner, typer(inner))
                    arg.expressions[i].parent = arg
                continue
            if isinstance(node, exp.GroupConcat) and isinstance(arg, exp.Order):
                arg = arg.this
                if arg is not None:
                    arg.replace(as_text(arg.copy(), typer(arg)))
                continue
            if isinstance(arg, exp.Expr) and not isinstance(arg, exp.Query):
                new = as_text(arg, typer(arg))
                if new is not arg:
                    node.set(name, new)
    return tree
