"""Executor over a psycopg 3 connection: each query in its own read-only transaction."""

import psycopg
from psycopg.types.string import TextLoader

from siselect.runtime import answer_size
from siselect.runtime.errors import InvalidInput, QueryFailed
from siselect.runtime.executor import (
    SMALL_PLANS_SQL,
    CheckedExecutor,
    Param,
    Rows,
    quote_ident,
    wrap,
)
from siselect.runtime.values import canonical_rows


def connect(dsn: str, schema: str | None = None, statement_timeout_ms: int | None = None):
    """Open a connection whose search_path is the loaded database's schema."""
    conn = psycopg.connect(dsn, autocommit=True)
    # Backslashes in literals must mean what the checked text says they mean.
    conn.execute("SET standard_conforming_strings = on")
    if schema:
        conn.execute(f"SET search_path TO {quote_ident(schema)}, public, pg_temp")
    if statement_timeout_ms:
        conn.execute(f"SET statement_timeout = {int(statement_timeout_ms)}")
    return conn


#: Types PL/Python hands over as PostgreSQL's own text, and psycopg as Python objects whose
#: text differs (a jsonb object as a dict printed with single quotes, an interval as a
#: timedelta, '+00:00' for '+00', .500000 for .5) or that it cannot hold at all (an
#: infinite or year-10000 timestamp raises): loaded as text, values are the same whichever
#: executor fetched them (siselect.runtime.values), and the judge reads PostgreSQL's spelling.
AS_TEXT = ("date", "time", "timetz", "timestamp", "timestamptz", "interval", "json", "jsonb",
           "uuid", "inet", "cidr", *(f"{kind}{form}" for kind in ("int4", "int8", "num", "date",
                                                                 "ts", "tstz")
                                      for form in ("range", "multirange")))


def _as_text(cursor) -> None:
    for name in AS_TEXT:
        cursor.adapters.register_loader(name, TextLoader)


_SCHEMAS = (
    "SELECT pg_catalog.current_schemas(false), pg_catalog.current_schemas(true),"
    f" pg_catalog.current_setting('{answer_size.SETTING}', true),"
    " pg_catalog.current_setting('standard_conforming_strings')"
)


class PsycopgExecutor(CheckedExecutor):
    """Runs each statement alone in a READ ONLY transaction, so PostgreSQL refuses any write.

    The extended query protocol (pipeline mode) takes exactly one statement: PostgreSQL
    refuses "SELECT 1; DELETE ..." whatever the check before it concluded. The session's
    schemas are read once, when the executor is made: change the search_path, make a new one.
    """

    def __init__(self, conn: psycopg.Connection):
        self.conn = conn
        # (run on the session's search_path: the caller's, that candidate queries see)
        ((visible, reach, max_bytes, conforming),) = self._in_transaction(
            lambda cur: self._all(cur, _SCHEMAS, ())
        )
        if conforming != "on":
            # PostgreSQL's parser check reads backslashes in literals as on says: with off,
            # the server would split a checked text into other tokens than were checked.
            raise InvalidInput("siselect needs standard_conforming_strings = on in the "
                               "session of the connection it is given (SET "
                               "standard_conforming_strings = on)")
        self.schemas, self._reach = list(visible), list(reach)
        self.max_bytes = answer_size.session_limit(max_bytes)

    def _in_transaction(self, work, internal: bool = False, raw: bool = False,
                        small: bool = False):
        try:
            # Rolled back, never committed: a read-only transaction still lets a query
            # change session settings and a few catalogs; the rollback undoes that.
            # Internal queries bind values as $1, $2 (as the server-side executor does).
            cursor = psycopg.RawCursor(self.conn) if internal or raw else self.conn.cursor()
            _as_text(cursor)
            with self.conn.transaction(force_rollback=True), cursor as cur:
                cur.execute("SET TRANSACTION READ ONLY")
                if internal:
                    cur.execute("SET LOCAL search_path TO pg_catalog, pg_temp")
                if small:
                    cur.execute(SMALL_PLANS_SQL)
                return work(cur)
        except psycopg.Error as exc:
            diag = exc.diag
            message = diag.message_primary or str(exc).splitlines()[0]
            raise QueryFailed(message, exc.sqlstate or "XX000", diag.message_detail) from None

    def _all(self, cur, sql: str, params) -> list[tuple]:
        with self.conn.pipeline():
            cur.execute(sql, params or None, prepare=False)
        return cur.fetchall() if cur.description else []

    def run_internal(self, sql: str, params=()) -> list[tuple]:
        return self._in_transaction(lambda cur: self._all(cur, sql, list(params)), internal=True)

    def _fetch(self, sql: str, max_rows: int | None, shape: str = "",
               params: tuple[Param, ...] = (), small: bool = False) -> Rows:
        wrapped = wrap(sql)

        def fetch(cur) -> Rows:
            # PostgreSQL's grammar accepts only a query in a subquery (not PREPARE, LOCK or
            # a data-modifying WITH); the extended protocol only one statement. Values are
            # bound to $1, $2, ... (a raw cursor: the text's own % signs stay as they are)
            # as text of no type, which takes the type the text casts it to; psycopg
            # prepares a text it has run a few times.
            with self.conn.pipeline():
                cur.execute(wrapped, [p.text for p in params] or None)
            columns = [d.name for d in cur.description or []]
            if not cur.description:
                return Rows(columns, [])
            data, truncated = answer_size.fetch_capped(cur.fetchmany, max_rows, self.max_bytes)
            return Rows(columns, canonical_rows(data), truncated)

        return self._in_transaction(fetch, raw=bool(params), small=small)
