"""SQLite has no booleans: a predicate is the integer 1 or 0, and any number is a condition.

A predicate used as a value (summed, selected, compared with a number, a CASE result)
becomes an integer; a number used as a condition (WHERE x, x AND y, CASE WHEN x) becomes
``x <> 0``, text ``x`` the number SQLite reads in it.
"""

from typing import TypeGuard

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.sqltext.sqlite_rules.as_number import as_number
from siselect.sqltext.sqlite_rules.sqlite_type import BOOLEAN, TEXT, Typer
from siselect.sqltext.sqlite_rules.template import GENERATED
from siselect.sqltext.sqlite_rules.walk import replace, walk


def is_condition_slot(node: exp.Expr) -> bool:
    """Whether ``node`` sits where PostgreSQL wants a boolean."""
    parent = node.parent
    if isinstance(parent, (exp.Where, exp.Having, exp.Qualify)):
        return True
    if isinstance(parent, (exp.And, exp.Or, exp.Not, exp.Xor)):
        return True
    if isinstance(parent, (exp.Paren, exp.Escape)):
        return is_condition_slot(parent) and parent.this is node
    if isinstance(parent, exp.If):
        # In a simple CASE (CASE x WHEN v ...) the WHEN holds a value, not a condition.
        simple_case = isinstance(parent.parent, exp.Case) and parent.parent.this is not None
        return parent.this is node and not simple_case
    if isinstance(parent, exp.Join):
        return parent.args.get("on") is node
    if _is_truth_test(parent):
        return parent.this is node  # x IS TRUE: x as SQLite reads it as a condition
    return isinstance(parent, exp.Filter)


def _is_truth_test(node: exp.Expr | None) -> TypeGuard[exp.Is]:
    """``x IS TRUE`` or ``x IS FALSE`` (also under NOT): PostgreSQL takes a boolean ``x``
    and the keyword, where SQLite compares ``x`` as a condition with 1 or 0."""
    return isinstance(node, exp.Is) and isinstance(node.expression, exp.Boolean)


def boolean_context(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """Cast predicates used as values to integers; compare numbers used as conditions to 0."""
    typer = Typer(catalog)
    for node in walk(tree):
        if isinstance(node, (exp.Paren, exp.Alias)) or node.parent is None:
            continue
        if _is_clause_part(node) or node.parent.meta.get(GENERATED):
            continue  # a generated template already puts each operand in the right type
        condition = is_condition_slot(node)
        kind = typer(node).kind
        if kind == BOOLEAN and not condition and _is_value_slot(node):
            tree = replace(node, exp.cast(node.copy(), "integer"), tree)
        elif condition and kind is not None and kind != BOOLEAN:
            number = as_number(node.copy()) if kind == TEXT else node.copy()
            tree = replace(node, exp.NEQ(this=number, expression=exp.Literal.number(0)), tree)
    return tree


def _is_clause_part(node: exp.Expr) -> bool:
    """Pieces that are not values: identifiers, table references, clause wrappers."""
    return isinstance(node, (exp.Identifier, exp.Table, exp.TableAlias, exp.Where,
                             exp.Having, exp.From, exp.Join, exp.Group, exp.Order,
                             exp.Limit, exp.Offset, exp.DataType, exp.Query, exp.Subquery,
                             exp.Star, exp.Ordered, exp.With, exp.CTE, exp.Var))


def _is_value_slot(node: exp.Expr) -> bool:
    """Predicates stay predicates under logic and inside other predicates' own operands."""
    parent = node.parent
    if isinstance(parent, (exp.Paren, exp.Alias)):
        return _is_value_slot(parent) if parent.parent is not None else True
    if isinstance(parent, exp.Escape):
        return False
    if isinstance(parent, exp.If):
        return parent.this is not node
    return not _is_truth_test(parent)
