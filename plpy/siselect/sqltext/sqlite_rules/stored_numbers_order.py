"""Sorting a column declared numeric in SQLite but loaded as text (it holds some text).

SQLite stored each of its values that looks like a number as a number (docs: datatype3.html,
section 3), and sorts numbers by value before every text; PostgreSQL sorts the loaded text
character by character ('106' before '6'). ORDER BY keys and MIN/MAX of such a column, or
of a CASE mixing it with numbers, are rewritten to SQLite's order: storage class, then
number, then text. The values returned stay the loaded text.
"""

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.sqltext.sqlite_rules.as_number import WHOLE_NUMBER, double
from siselect.sqltext.sqlite_rules.branch_types import BRANCHING, becomes_text, value_slots
from siselect.sqltext.sqlite_rules.compare_affinity import stores_numbers
from siselect.sqltext.sqlite_rules.sqlite_type import NULL, Typer
from siselect.sqltext.sqlite_rules.template import template
from siselect.sqltext.sqlite_rules.walk import walk

_LOOKS = f"_x ~ '{WHOLE_NUMBER}'"
# _d is _x as a double (as_number.double: out of range is infinite, not an error)
_MIN = f"COALESCE((ARRAY_AGG(_x ORDER BY _d) FILTER (WHERE {_LOOKS}))[1], MIN(_x))"
_MAX = (f"COALESCE(MAX(_x) FILTER (WHERE NOT {_LOOKS}), (ARRAY_AGG(_x ORDER BY _d DESC) "
        f"FILTER (WHERE {_LOOKS}))[1])")


def stored_numbers_order(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """Sort keys and MIN/MAX of numbers-stored-as-text columns in SQLite's order."""
    typer = Typer(catalog)
    for node in walk(tree, exp.Ordered, exp.Min, exp.Max):
        if isinstance(node, exp.Ordered):
            _order_key(node, typer)
        elif not node.expressions and _picks_sortable(node.this, typer):
            node.replace(template(_MIN if isinstance(node, exp.Min) else _MAX, _x=node.this,
                                  _d=double(node.this)))
    return tree


def _sortable(key: exp.Expr | None, typer: Typer) -> bool:
    # An unqualified name is an output alias or position here (resolve_identifiers
    # qualifies every column): its type is not the column's to decide.
    return isinstance(key, exp.Column) and bool(key.table) and stores_numbers(typer(key))


def _picks_sortable(value: exp.Expr | None, typer: Typer) -> bool:
    """Whether sorting ``value`` (a key, MIN/MAX) follows SQLite's order here: such a
    column, or a CASE (COALESCE...) of such columns and numbers, which branch_types makes
    text as a whole (``MAX(CASE WHEN ... THEN Consumption ELSE 0 END)``): each of its values
    that looks like a number was one in SQLite. A text branch of another kind ('300' of a
    TEXT column), or one of unknown type, may have been text there, which its look does
    not tell: not covered."""
    if _sortable(value, typer):
        return True
    if not isinstance(value, BRANCHING) or not becomes_text(value, typer):
        return False
    return all(_sortable(v, typer) or typer(v).numeric or typer(v).kind == NULL
               for v in value_slots(value))


def _order_key(ordered: exp.Ordered, typer: Typer) -> None:
    key = ordered.this
    select = ordered.find_ancestor(exp.Select)
    if not _picks_sortable(key, typer) or (select is not None and select.args.get("distinct")):
        return  # DISTINCT: PostgreSQL sorts by selected expressions only
    holder = ordered.parent
    if holder is None or not isinstance(holder.args.get("expressions"), list):
        return
    keys = [template(f"CASE WHEN _x IS NULL THEN NULL WHEN {_LOOKS} THEN 0 ELSE 1 END", _x=key),
            template(f"CASE WHEN {_LOOKS} THEN _d END", _x=key, _d=double(key)),
            key.copy()]
    expanded = [ordered.copy() for _ in keys]
    for one, k in zip(expanded, keys, strict=True):
        one.set("this", k)
    at = holder.expressions.index(ordered)
    holder.set("expressions", holder.expressions[:at] + expanded + holder.expressions[at + 1:])
