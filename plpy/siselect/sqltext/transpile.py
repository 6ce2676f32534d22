"""SQLite (or PostgreSQL) query text to PostgreSQL query text, through sqlglot.

For SQLite, the parsed tree goes through the rewrites of :mod:`siselect.sqltext.sqlite_rules`, in
the order of :data:`SQLITE_RULES`, so that PostgreSQL returns the result SQLite returns.
"""

from collections.abc import Callable

from sqlglot import exp

from siselect.runtime import named_schemas
from siselect.runtime.catalog import Catalog
from siselect.runtime.errors import InvalidInput
from siselect.runtime.executor import Executor
from siselect.sqltext.check import parse_select
from siselect.sqltext.sqlite_rules.bare_columns import bare_columns
from siselect.sqltext.sqlite_rules.boolean_context import boolean_context
from siselect.sqltext.sqlite_rules.branch_types import branch_types
from siselect.sqltext.sqlite_rules.compare_affinity import compare_affinity
from siselect.sqltext.sqlite_rules.date_functions import date_functions
from siselect.sqltext.sqlite_rules.distinct_order_by import distinct_order_by
from siselect.sqltext.sqlite_rules.group_concat_order import group_concat_order
from siselect.sqltext.sqlite_rules.integer_arithmetic import integer_arithmetic
from siselect.sqltext.sqlite_rules.like_glob import like_glob
from siselect.sqltext.sqlite_rules.negative_substr import negative_substr
from siselect.sqltext.sqlite_rules.numeric_operands import numeric_operands
from siselect.sqltext.sqlite_rules.resolve_identifiers import resolve_identifiers
from siselect.sqltext.sqlite_rules.scalar_subquery import scalar_subquery
from siselect.sqltext.sqlite_rules.sqlite_casts import sqlite_casts
from siselect.sqltext.sqlite_rules.stored_numbers_order import stored_numbers_order
from siselect.sqltext.sqlite_rules.text_operands import text_operands

DIALECTS = ("postgres", "sqlite")

Rule = Callable[[exp.Expr, Catalog | None], exp.Expr]

# Order matters: names first (the others look columns up), then rules that introduce
# aggregates, then conversions of values, and booleans (every rule before may create
# predicates or values where the other kind is expected); GROUP_CONCAT's order after all,
# as its sort key is a copy of the final argument (DISTINCT needs them equal).
SQLITE_RULES: tuple[Rule, ...] = (
    resolve_identifiers,
    sqlite_casts,  # before any rule adds CASTs of its own
    date_functions,
    bare_columns,
    distinct_order_by,
    scalar_subquery,
    like_glob,
    text_operands,
    numeric_operands,
    compare_affinity,
    stored_numbers_order,
    branch_types,
    negative_substr,
    integer_arithmetic,
    boolean_context,
    group_concat_order,
)


def to_tree(sql: str, dialect: str = "postgres", catalog: Catalog | None = None) -> exp.Query:
    """Parse and validate ``sql``; for SQLite, rewrite it to mean the same on PostgreSQL."""
    if dialect not in DIALECTS:
        raise InvalidInput(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")
    tree: exp.Expr = parse_select(sql, dialect)
    if dialect == "sqlite":
        for rule in SQLITE_RULES:
            tree = rule(tree, catalog)
    assert isinstance(tree, exp.Query), "a rewrite must keep the query a query"
    return tree


def to_read_tree(sql: str, dialect: str, catalog: Catalog, executor: Executor) -> exp.Query:
    """:func:`to_tree` of a query siselect is to run and read the rows of: the catalog then
    also holds the schemas it names, or it is refused where one of their relations is
    hidden (:func:`siselect.runtime.named_schemas.cover`, in place)."""
    tree = to_tree(sql, dialect, catalog)
    named_schemas.cover(executor, catalog, tree)
    return tree


def to_postgres(sql: str, dialect: str = "postgres", catalog: Catalog | None = None) -> str:
    """The PostgreSQL text of ``sql``."""
    return to_tree(sql, dialect, catalog).sql(dialect="postgres")
