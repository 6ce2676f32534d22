"""The one interface through which the core reaches PostgreSQL.

Two implementations exist: :mod:`siselect.server` (PL/Python, inside the server) and
:mod:`siselect.client.pgexec` (psycopg). The core never imports either driver.
"""

from dataclasses import dataclass, field
from typing import Protocol


@dataclass
class Rows:
    """A query result: column names and canonical row tuples (see :mod:`siselect.values`)."""

    columns: list[str]
    rows: list[tuple] = field(default_factory=list)
    truncated: bool = False


class Executor(Protocol):
    """Runs SQL read-only with the caller's privileges.

    ``run`` raises :class:`siselect.errors.QueryFailed` (with PostgreSQL's SQLSTATE) when
    the statement fails; it fetches at most ``max_rows`` rows and marks the result
    ``truncated`` when more existed.
    """

    def run(self, sql: str, max_rows: int | None = None) -> Rows: ...


def quote_literal(text: str) -> str:
    """A standard-conforming SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def quote_ident(name: str) -> str:
    """A quoted SQL identifier, exact in case and spacing."""
    return '"' + name.replace('"', '""') + '"'
