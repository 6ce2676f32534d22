"""Accept only a single read-only SELECT (or WITH ... SELECT, or a set operation).

The parser check gives early, clear errors; PostgreSQL's read-only transaction is the
enforcement (see the executors). Both must hold.
"""

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError

from siselect.runtime import pgcheck
from siselect.runtime.blocklist import forbidden_function
from siselect.runtime.errors import NotASelect
from siselect.sqltext.syntax import describe

MAX_SQL_CHARS = 50_000  # 20 times the longest of 5,000 BIRD candidates
# Parts (syntax tree nodes) of one query. BIRD's largest query has about 500; some steps
# (lineage, rewriting) cost more than linear time in this, and pure Python work inside the
# server is not interrupted by statement_timeout or a cancel: the cap bounds that work.
MAX_QUERY_NODES = 3_000

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

# Values the text leaves to be bound later. sqlglot prints some of them in spellings that
# PostgreSQL reads otherwise (``@A$`` becomes ``$A$``, a dollar quote), and a candidate
# has nothing to bind them to.
_PLACEHOLDERS = (exp.Placeholder, exp.Parameter, exp.SessionParameter)

# The tokenizer and parser run in pure Python, which a cancel cannot interrupt: bound
# their work before it starts (a few tokens make one tree node, MAX_QUERY_NODES caps
# those). BIRD's longest candidate has about 300 tokens.
MAX_QUERY_TOKENS = 6_000


def _forbidden_call(tree: exp.Expr) -> str | None:
    for call in tree.find_all(exp.Func):
        name = (call.name if isinstance(call, exp.Anonymous) else call.sql_name()).lower()
        if forbidden_function(name):
            return name
    return None


def _statements(sql: str, dialect: str) -> list[exp.Expr]:
    reader = Dialect.get_or_raise(dialect)
    try:
        tokens = reader.tokenize(sql)
    except TokenError as exc:
        raise NotASelect(describe(exc, sql), "42601") from None
    if len(tokens) > MAX_QUERY_TOKENS:
        raise NotASelect(
            f"the query has more than {MAX_QUERY_TOKENS} tokens, more than siselect handles",
            "54001",
        )
    return [s for s in reader.parser().parse(tokens, sql) if s is not None]


def _unreadable(why: str, sql: str, dialect: str) -> NotASelect:
    """A syntax error (42601); for PostgreSQL SQL, what PostgreSQL's own parser says of it
    (a statement other than SELECT: 25006), and for one SELECT it reads (``ORDER BY x
    USING >``, say) a feature siselect lacks (0A000): the query itself is fine."""
    if dialect != "postgres":
        return NotASelect(why, "42601")
    try:
        pgcheck.read_select(str(sql))  # pglast takes str itself, not a subclass
    except NotASelect as exc:
        return exc if exc.sqlstate != "42601" else NotASelect(why, "42601")
    return NotASelect(f"PostgreSQL reads this query but siselect's SQL reader (sqlglot) does "
                      f"not: {why}", "0A000")


def parse_select(sql: str, dialect: str = "postgres") -> exp.Query:
    """Parse ``sql`` as exactly one query, or raise :class:`NotASelect` saying why."""
    if sql is None or not str(sql).strip():
        raise NotASelect("the query is empty", "42601")
    if len(sql) > MAX_SQL_CHARS:
        raise NotASelect(f"the query is longer than {MAX_SQL_CHARS} characters", "54000")
    if "\x00" in sql:
        raise NotASelect("the query contains a NUL character", "22021")
    try:
        statements = _statements(sql, dialect)
    except (ParseError, TokenError) as exc:
        raise _unreadable(describe(exc, sql), sql, dialect) from None
    except RecursionError:
        raise NotASelect("the query is nested too deeply", "54001") from None
    if len(statements) != 1:
        raise NotASelect(f"expected one statement, got {len(statements)}", "42601")
    tree = statements[0]
    if any(i >= MAX_QUERY_NODES for i, _ in enumerate(tree.walk())):
        raise NotASelect(
            f"the query has more than {MAX_QUERY_NODES} parts, more than siselect handles",
            "54001",
        )
    if not isinstance(tree, exp.Query):
        raise NotASelect(f"only SELECT queries are accepted, not {tree.key.upper()}", "25006")
    placeholder = next(tree.find_all(*_PLACEHOLDERS), None)
    if placeholder is not None:
        raise NotASelect(
            f"placeholders and parameters ({placeholder.sql(dialect=dialect)}) are not "
            "accepted: write the values into the query",
            "42601",
        )
    bad = next(tree.find_all(*_FORBIDDEN), None)
    if bad is not None:
        raise NotASelect(f"only read-only SELECT queries are accepted ({bad.key.upper()})", "25006")
    called = _forbidden_call(tree)
    if called is not None:
        raise NotASelect(
            f"the function {called}() has effects a read-only query must not have", "25006"
        )
    return tree
