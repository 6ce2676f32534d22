"""Accept only a single read-only SELECT (or WITH ... SELECT, or a set operation).

The parser check gives early, clear errors; PostgreSQL's read-only transaction is the
enforcement (see the executors). Both must hold.
"""

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from .errors import NotASelect

MAX_SQL_CHARS = 200_000

# Nodes that write, lock or leave the SELECT world anywhere in the tree.
_FORBIDDEN = (
    exp.Insert,
    exp.Update,
    exp.Delete,
    exp.Merge,
    exp.Create,
    exp.Drop,
    exp.Alter,
    exp.Command,
    exp.Into,
    exp.Lock,
    exp.Copy,
    exp.TruncateTable,
    exp.Set,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
    exp.Use,
    exp.Pragma,
)


def parse_select(sql: str, dialect: str = "postgres") -> exp.Query:
    """Parse ``sql`` as exactly one query, or raise :class:`NotASelect` saying why."""
    if sql is None or not str(sql).strip():
        raise NotASelect("the query is empty", "42601")
    if len(sql) > MAX_SQL_CHARS:
        raise NotASelect(f"the query is longer than {MAX_SQL_CHARS} characters", "54000")
    if "\x00" in sql:
        raise NotASelect("the query contains a NUL character", "22021")
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except (ParseError, TokenError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else "syntax error"
        raise NotASelect(f"syntax error: {first}", "42601") from None
    except RecursionError:
        raise NotASelect("the query is nested too deeply", "54001") from None
    if len(statements) != 1:
        raise NotASelect(f"expected one statement, got {len(statements)}", "42601")
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        raise NotASelect(f"only SELECT queries are accepted, not {tree.key.upper()}", "25006")
    bad = next(tree.find_all(*_FORBIDDEN), None)
    if bad is not None:
        raise NotASelect(f"only read-only SELECT queries are accepted ({bad.key.upper()})", "25006")
    return tree
