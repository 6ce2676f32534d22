"""SQLite (or PostgreSQL) query text to PostgreSQL query text, through sqlglot."""

from sqlglot import exp

from .catalog import Catalog
from .errors import InvalidInput
from .sqlcheck import parse_select

DIALECTS = ("postgres", "sqlite")


def to_tree(sql: str, dialect: str = "postgres", catalog: Catalog | None = None) -> exp.Query:
    """Parse and validate ``sql``; for SQLite, rewrite it to mean the same on PostgreSQL."""
    if dialect not in DIALECTS:
        raise InvalidInput(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")
    return parse_select(sql, dialect)


def to_postgres(sql: str, dialect: str = "postgres", catalog: Catalog | None = None) -> str:
    """The PostgreSQL text of ``sql``."""
    return to_tree(sql, dialect, catalog).sql(dialect="postgres")
