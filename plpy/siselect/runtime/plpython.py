"""The executor over PL/Python's ``plpy`` (passed in by the SQL functions, never imported:
outside the server no such module exists)."""

import re
from collections.abc import Callable, Sequence
from typing import Any

from siselect.runtime import answer_size
from siselect.runtime.bounded import keep
from siselect.runtime.errors import QueryFailed
from siselect.runtime.executor import (
    SMALL_PLANS_SQL,
    CheckedExecutor,
    Param,
    Rows,
    quote_ident,
    wrap,
)
from siselect.runtime.values import canonical_rows


class _Stale(Exception):
    """Rows with more columns than the names kept for their query's shape."""


#: Column names kept per shape of query (pgcheck.Statement.shape): a tournament runs each
#: query on thousands of row sets, texts that differ in the row ids only, whose columns a
#: zero-row probe (a plan of its own) found again each time.
_SHAPES_KEPT = 256
#: Plans kept: siselect's own queries, and texts with parameters (row ids bound, not
#: written), one per shape of restriction run on many row sets; a plan holds server memory
#: while it is kept.
_PLANS_KEPT = 256
_TOO_MANY_ALIASES = "42P10"  # "table _q has 2 columns available but 3 columns specified"


class _Discard(Exception):
    """Leaves a subtransaction by rolling it back, carrying the rows already fetched."""

    def __init__(self, result: Any):
        super().__init__()
        self.result = result


# pg_temp last: a temporary table must not stand in for the caller's table of that name.
_SET_PATH = "SELECT pg_catalog.set_config('search_path', $1 || ', pg_temp', true)"
_SET_PATH_SMALL = _SET_PATH + "," + SMALL_PLANS_SQL.removeprefix("SELECT")
_SCHEMAS = (
    "SELECT pg_catalog.current_schemas(false) AS visible,"
    " pg_catalog.current_schemas(true) AS reach,"
    " pg_catalog.current_setting('transaction_read_only') AS read_only,"
    f" pg_catalog.current_setting('{answer_size.SETTING}', true) AS max_bytes"
)
_PG_TYPES = {bool: "boolean", int: "bigint", float: "double precision", str: "text"}


def _pg_type(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "text[]"
    return _PG_TYPES.get(type(value), "text")


class PlpyExecutor(CheckedExecutor):
    """Runs queries through SPI, read-only.

    The functions of the extension that reach this executor carry
    ``SET transaction_read_only = on``: PostgreSQL undoes it when they return, and each
    SPI subtransaction inherits it (a ``SET LOCAL`` from inside PL/Python would be undone
    by the end of the SPI call's own subtransaction). Candidate-derived text runs through
    a cursor, which PostgreSQL opens for one statement only; the caller's search_path is
    bound as a parameter, never spliced in front of the text. Rows come back as dicts,
    which would merge duplicate column names, so each query is wrapped with positional
    aliases after a zero-row probe of its columns.
    """

    def __init__(self, plpy: Any, search_path: str | None = None):
        self.plpy = plpy
        self.search_path = search_path
        self._plans: dict[tuple[str, tuple[str, ...]], Any] = {}
        self._columns: dict[str, list[str]] = {}
        first = self._in_subtransaction(lambda: self._execute(_SCHEMAS)[0])
        self._read_only = first["read_only"] == "on"
        self.max_bytes = answer_size.session_limit(first["max_bytes"])
        self.schemas, self._reach = list(first["visible"]), list(first["reach"])

    def _plan(self, sql: str, types: tuple[str, ...] = ()) -> Any:
        """The plan of ``sql`` with parameters of ``types``, prepared once while kept:
        parsing, analysing and planning a restricted query cost several times running it
        on a D' of a few rows."""
        key = (sql, types)
        plan = self._plans.get(key)
        if plan is None:
            plan = keep(self._plans, key, self.plpy.prepare(sql, list(types)), _PLANS_KEPT)
        return plan

    def _execute(self, sql: str, params: Sequence[Any] = (), limit: int = 0) -> Any:
        plan = self._plan(sql, tuple(_pg_type(p) for p in params))
        return self.plpy.execute(plan, list(params), limit)

    def _in_subtransaction(self, work: Callable[[], Any], small: bool = False) -> Any:
        """``work()`` on the caller's search_path (planned for a D' when ``small``), in a
        subtransaction that is rolled back even when it succeeds: whatever the query changed
        in the session goes with it, and so do those settings."""
        try:
            with self.plpy.subtransaction():
                # One statement for both settings: a D' is tested thousands of times.
                if self.search_path is not None:
                    self._execute(_SET_PATH_SMALL if small else _SET_PATH, [self.search_path])
                elif small:
                    self._execute(SMALL_PLANS_SQL)
                raise _Discard(work())
        except _Discard as done:
            return done.result
        except self.plpy.SPIError as exc:
            raise _query_failed(self.plpy, exc) from None

    def run_internal(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        try:
            result = self._execute(sql, params)
        except self.plpy.SPIError as exc:
            raise _query_failed(self.plpy, exc) from None
        names = result.colnames()
        # Rows come back as dicts: a repeated column name would lose a column silently.
        assert len(set(names)) == len(names), f"internal query repeats a column name: {names}"
        return [tuple(row[n] for n in names) for row in result]

    def _fetch(self, sql: str, max_rows: int | None, shape: str = "",
               params: tuple[Param, ...] = (), small: bool = False) -> Rows:
        if not self._read_only:
            # The SQL function that called us must carry SET transaction_read_only = on.
            raise QueryFailed("siselect runs queries only in a read-only transaction", "25006")
        columns = self._columns.get(shape) if shape else None
        if columns is not None:
            try:
                return self._fetch_as(sql, columns, max_rows, params, small)
            except _Stale:
                # More columns than kept (a concurrent ALTER TABLE under SELECT *): probe.
                del self._columns[shape]
            except QueryFailed as exc:
                if exc.sqlstate != _TOO_MANY_ALIASES:  # fewer columns than kept: probe
                    raise
                del self._columns[shape]
        columns = self._in_subtransaction(lambda: self._probe(sql, params))
        if shape:
            keep(self._columns, shape, columns, _SHAPES_KEPT)
        return self._fetch_as(sql, columns, max_rows, params, small)

    def _probe(self, sql: str, params: tuple[Param, ...] = ()) -> list[str]:
        """The names of ``sql``'s columns, from a plan that runs no row."""
        plan = self.plpy.prepare(f"{wrap(sql)} LIMIT 0", [p.type for p in params])
        values = _values(params)
        # A cursor opens on a plan of one statement only: PostgreSQL itself proves the plan
        # holds nothing else before it runs (plpy.execute would run every one).
        self.plpy.cursor(plan, values).close()
        return list(self.plpy.execute(plan, values).colnames())

    def _fetch_as(self, sql: str, columns: list[str], max_rows: int | None,
                  params: tuple[Param, ...] = (), small: bool = False) -> Rows:
        """Rows of ``sql`` under positional aliases: rows come back as dicts, which would
        merge two columns of one name."""
        aliases = [f"c{i}" for i in range(len(columns))]
        wrapped = wrap(sql, aliases)

        def fetch() -> tuple[list[tuple], bool]:
            # Through a cursor, whether planned here or before: one statement only.
            cursor = (self.plpy.cursor(self._plan(wrapped, tuple(p.type for p in params)),
                                       _values(params))
                      if params else self.plpy.cursor(wrapped))

            def batch(size: int) -> list[tuple]:
                got = cursor.fetch(size)
                if len(got) and len(got[0]) != len(aliases):  # rows of one result: one form
                    raise _Stale()
                return [tuple(row[a] for a in aliases) for row in got]

            found = answer_size.fetch_capped(batch, max_rows, self.max_bytes)
            cursor.close()
            return found

        data, truncated = self._in_subtransaction(fetch, small)
        return Rows(columns, canonical_rows(data), truncated)


_TID = re.compile(r"\(\d+,\d+\)")


def _values(params: tuple[Param, ...]) -> list[list[Any]]:
    """``params`` as PL/Python binds an array: a list of its elements (a string would be
    taken for the sequence of its characters)."""
    return [_TID.findall(p.text) if p.type == "tid[]"
            else [int(v) for v in p.text.strip("{}").split(",") if v] for p in params]


def _query_failed(plpy: Any, exc: Any) -> QueryFailed:
    sqlstate = getattr(exc, "sqlstate", None) or "XX000"
    if sqlstate in ("57014", "57P01", "57P02", "57P03", "53200"):
        # Cancel, statement_timeout (set by the caller for the whole call), shutdown,
        # out of memory: end the call, never carry on.
        raise exc
    message = str(exc.args[0] if exc.args else exc).splitlines()[0]
    return QueryFailed(message, sqlstate, getattr(exc, "detail", None))


__all__ = ["PlpyExecutor", "quote_ident"]
