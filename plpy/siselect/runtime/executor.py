"""The one interface through which the core reaches PostgreSQL.

Two implementations exist: :mod:`siselect.runtime.plpython` (PL/Python, inside the server) and
:mod:`siselect.client.pgexec` (psycopg). The core never imports either driver.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from siselect.runtime.callpolicy import CallPolicy
from siselect.runtime.errors import NotASelect, QueryFailed
from siselect.runtime.pgcheck import Name, Statement, read_select
from siselect.runtime.shared_subqueries import evaluated_once

#: SQLSTATE classes of a statement refused for its form: syntax or access rule (42),
#: feature not supported (0A), an extension's own error (XX).
REFUSED_FORM = ("42", "0A", "XX")
#: Types a parameter may have, as PostgreSQL names them (see :class:`Param`).
PARAM_TYPES = ("tid[]", "bigint[]")
#: How a statement on a D' is planned (``run(..., small=True)``), set for that statement
#: alone. Each table of a D' holds a few of its rows, but the planner sees the whole table
#: filtered by row ids and a condition whose selectivity it guesses: judging one side of a
#: join to hold a row, it nests a loop whose inner side reads the whole table again for each
#: of the rows that side really holds (student_club x100: 4,124 budgets tied at the minimum
#: against 200,000 expenses scanned each time, 60 s for a statement a hash join runs in
#: 45 ms). Without nested loops where another join serves (where none does, as for
#: LATERAL, the planner still nests), and without JIT or parallel workers, whose start costs
#: more than such a statement, and which the cost penalty of a nested loop would call for.
SMALL_PLANS = (("enable_nestloop", "off"), ("jit", "off"),
               ("max_parallel_workers_per_gather", "0"))
SMALL_PLANS_SQL = "SELECT " + ", ".join(
    f"pg_catalog.set_config('{name}', '{value}', true)" for name, value in SMALL_PLANS)


@dataclass(frozen=True)
class Param:
    """A value bound to a parameter of a statement: siselect's own row ids, as the text of
    an array literal of one of :data:`PARAM_TYPES`."""

    type: str
    text: str

    def __post_init__(self) -> None:
        assert self.type in PARAM_TYPES, self.type


@dataclass
class Rows:
    """A query result: column names and canonical row tuples (see :mod:`.values`)."""

    columns: list[str]
    rows: list[tuple] = field(default_factory=list)
    truncated: bool = False


class Executor(Protocol):
    """Runs SQL read-only with the caller's privileges.

    ``run`` raises :class:`siselect.runtime.errors.QueryFailed` (with PostgreSQL's SQLSTATE) when
    the statement fails; it fetches at most ``max_rows`` rows and marks the result
    ``truncated`` when more existed. ``allow`` names calls siselect itself added to the
    text; ``inner`` are query texts the statement carries as values and runs (the ProvSQL
    backend's helper executes them), checked like the statement itself.
    ``run_internal`` runs siselect's own catalog queries, with values bound as parameters,
    on the search path ``pg_catalog, pg_temp``; ``schemas`` are the caller's schemas.
    ``params``: values bound to ``$1``, ``$2``, ... of ``sql`` (siselect's own row ids), so
    that texts that differ only in them are one statement. ``small``: the statement reads a
    D' (:data:`SMALL_PLANS`).
    """

    @property
    def schemas(self) -> list[str]: ...

    def run(
        self,
        sql: str,
        max_rows: int | None = None,
        *,
        allow: frozenset[Name] = frozenset(),
        inner: Sequence[str] = (),
        params: Sequence[Param] = (),
        small: bool = False,
    ) -> Rows: ...

    def run_internal(self, sql: str, params: Sequence[object] = ()) -> list[tuple]: ...


class CheckedExecutor:
    """What both executors share: nothing reaches PostgreSQL unless PostgreSQL's own parser
    reads it as one SELECT whose calls the catalog allows (see :mod:`siselect.runtime.pgcheck`),
    and a scalar subquery it repeats is evaluated once (:mod:`.shared_subqueries`)."""

    schemas: list[str]
    _reach: list[str]
    _policy: CallPolicy | None = None

    def run(
        self,
        sql: str,
        max_rows: int | None = None,
        *,
        allow: frozenset[Name] = frozenset(),
        inner: Sequence[str] = (),
        params: Sequence[Param] = (),
        small: bool = False,
    ) -> Rows:
        if self._policy is None:
            self._policy = CallPolicy(self.run_internal, self._reach)
        for text in inner:
            inner_statement = read_select(text)
            _bound_as_read(inner_statement, ())
            self._policy.check(inner_statement, allow)
        once = evaluated_once(sql)
        if once is not sql:
            try:
                return self._checked_fetch(once, max_rows, allow, params, small)
            except QueryFailed as exc:
                # A form PostgreSQL or an extension's planner hook (ProvSQL's) refuses in
                # the rewritten text is asked of the text as written; an error of the data
                # (division by zero, a time limit, a subquery of two rows) is the same
                # error there, and is not run twice.
                if exc.sqlstate[:2] not in REFUSED_FORM:
                    raise
        return self._checked_fetch(sql, max_rows, allow, params, small)

    def _checked_fetch(self, sql: str, max_rows: int | None, allow: frozenset[Name],
                       params: Sequence[Param], small: bool) -> Rows:
        assert self._policy is not None
        statement = read_select(sql)
        _bound_as_read(statement, params)
        self._policy.check(statement, allow)
        return self._fetch(sql, max_rows, statement.shape, tuple(params), small)

    def run_internal(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        raise NotImplementedError

    def _fetch(self, sql: str, max_rows: int | None, shape: str = "",
               params: tuple[Param, ...] = (), small: bool = False) -> Rows:
        """Rows of ``sql`` (``params`` bound to its ``$1``, ``$2``, ...; planned for a D'
        when ``small``), which :meth:`run` read as one SELECT (tests call this directly to
        show what PostgreSQL refuses on its own). It runs inside :func:`wrap`, a text never
        read again: see that function."""
        raise NotImplementedError


def _bound_as_read(statement: Statement, params: Sequence[Param]) -> None:
    """Refuse a text whose parameters are not exactly the values given: a candidate's own
    text has none (siselect binds only the row ids it wrote as ``$1``, ``$2``, ...)."""
    if statement.params != len(params):
        raise NotASelect(
            "parameters ($1, ...) are not accepted: write the values into the query", "42601")


def wrap(sql: str, aliases: Sequence[str] = ()) -> str:
    """``sql`` as the subquery ``_q`` of ``SELECT * FROM``, its columns renamed ``aliases``.

    PostgreSQL reads this text as ``sql``'s statement inside that SELECT, or refuses it,
    whenever its parser read ``sql`` alone as one SELECT (:func:`read_select`), so the
    wrapped text needs no second reading (SECURITY.md, "one reading"): the lexer
    splits the wrapped text into the wrapper's tokens around ``sql``'s own, since ``sql``
    ends no token, comment or quote open (else it would not parse) and the line breaks end
    a trailing ``--`` comment; no token at either seam changes how its neighbour is read
    (the lookahead tokens NOT, NULLS, WITH, UIDENT/USCONST see ``)`` as before they saw the
    end); and PostgreSQL's grammar has no ambiguity, so the one reading of those tokens is
    the one with ``sql``'s statement as the subquery. A trailing ``;`` makes a syntax error.
    The wrapper adds no call, operator, cast or column reference for the call policy.
    ``aliases`` are siselect's own identifiers (``c0``, ``c1``, ...)."""
    assert all(a.isidentifier() and a.isascii() for a in aliases), aliases
    renamed = f"({', '.join(aliases)})" if aliases else ""
    # Line breaks keep a trailing "--" comment from hiding the closing parenthesis.
    return f"SELECT * FROM (\n{sql}\n) AS _q{renamed}"


@dataclass
class Trusting:
    """An executor that also allows what siselect itself added to every text it runs."""

    executor: Executor
    allow: frozenset[Name]
    inner: tuple[str, ...]

    @property
    def schemas(self) -> list[str]:
        return self.executor.schemas

    def run(
        self,
        sql: str,
        max_rows: int | None = None,
        *,
        allow: frozenset[Name] = frozenset(),
        inner: Sequence[str] = (),
        params: Sequence[Param] = (),
        small: bool = False,
    ) -> Rows:
        return self.executor.run(sql, max_rows, allow=self.allow | allow,
                                 inner=(*self.inner, *inner), params=params, small=small)

    def run_internal(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        return self.executor.run_internal(sql, params)


def quote_literal(text: str) -> str:
    """A standard-conforming SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def quote_ident(name: str) -> str:
    """A quoted SQL identifier, exact in case and spacing."""
    return '"' + name.replace('"', '""') + '"'
