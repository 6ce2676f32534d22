"""SQLite (or PostgreSQL) query text to PostgreSQL query text, through sqlglot.

For SQLite, the parsed tree goes through the rewrites of :mod:`siselect.sqlite_rules`, in
the order of :data:`SQLITE_RULES`, so that PostgreSQL returns the result SQLite returns.
"""

from collections.abc import Callable

from sqlglot import exp

from .catalog import Catalog
from .errors import InvalidInput
from .sqlcheck import parse_select
from .sqlite_rules.resolve_identifiers import resolve_identifiers

DIALECTS = ("postgres", "sqlite")

Rule = Callable[[exp.Query, Catalog | None], exp.Query]

SQLITE_RULES: tuple[Rule, ...] = (
    resolve_identifiers,
)


def to_tree(sql: str, dialect: str = "postgres", catalog: Catalog | None = None) -> exp.Query:
    """Parse and validate ``sql``; for SQLite, rewrite it to mean the same on PostgreSQL."""
    if dialect not in DIALECTS:
        raise InvalidInput(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")
    tree = parse_select(sql, dialect)
    if dialect == "sqlite":
        for rule in SQLITE_RULES:
            tree = rule(tree, catalog)
    return tree


def to_postgres(sql: str, dialect: str = "postgres", catalog: Catalog | None = None) -> str:
    """The PostgreSQL text of ``sql``."""
    return to_tree(sql, dialect, catalog).sql(dialect="postgres")
