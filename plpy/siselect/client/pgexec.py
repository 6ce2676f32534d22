"""Executor over a psycopg 3 connection: each query in its own read-only transaction."""

import psycopg

from ..errors import QueryFailed
from ..executor import Rows, quote_ident
from ..values import canonical_rows


def connect(dsn: str, schema: str | None = None, statement_timeout_ms: int | None = None):
    """Open a connection whose search_path is the loaded database's schema."""
    conn = psycopg.connect(dsn, autocommit=True)
    if schema:
        conn.execute(f"SET search_path TO {quote_ident(schema)}, public")
    if statement_timeout_ms:
        conn.execute(f"SET statement_timeout = {int(statement_timeout_ms)}")
    return conn


class PsycopgExecutor:
    """Runs each statement alone in a READ ONLY transaction, so PostgreSQL refuses any write."""

    def __init__(self, conn: psycopg.Connection):
        self.conn = conn

    def run(self, sql: str, max_rows: int | None = None) -> Rows:
        try:
            # Rolled back, never committed: a read-only transaction still lets a query
            # change session settings and a few catalogs; the rollback undoes that.
            with self.conn.transaction(force_rollback=True), self.conn.cursor() as cur:
                cur.execute("SET TRANSACTION READ ONLY")
                # PostgreSQL's grammar then accepts only a query here (a subquery cannot
                # be PREPARE, LOCK or a data-modifying WITH), and the extended protocol
                # of pipeline mode only one statement ("SELECT 1; DELETE ..." is refused).
                with self.conn.pipeline():
                    cur.execute(f"SELECT * FROM (\n{sql}\n) AS _q")
                columns = [d.name for d in cur.description or []]
                if max_rows is None:
                    data = cur.fetchall() if cur.description else []
                    return Rows(columns, canonical_rows(data))
                data = cur.fetchmany(max_rows + 1)
                return Rows(columns, canonical_rows(data[:max_rows]), len(data) > max_rows)
        except psycopg.Error as exc:
            diag = exc.diag
            message = diag.message_primary or str(exc).splitlines()[0]
            raise QueryFailed(message, exc.sqlstate or "XX000", diag.message_detail) from None
