"""A generated corpus of hostile candidate queries (issue 12, section 1).

Every case crosses three things:

- a placeholder token: each spelling sqlglot reads as a placeholder or parameter in an
  input dialect siselect accepts (``sqlite``, ``postgres``), found from the dialect's own
  tokenizer (the characters that introduce them, see :func:`token_spellings`) and kept
  only when sqlglot's parser really gives it a placeholder role (:func:`sqlglot_role`);
- a quoting trick: a way to make sqlglot see a string literal, a comment or an identifier
  where PostgreSQL, reading what sqlglot prints, may see code (dollar quotes, comments,
  escape strings, backslashes, unicode escapes, doubled quotes, quoted identifiers);
- a payload: something a read-only transaction does not stop on its own (session locks,
  settings, server files, other sessions, prepared statements, DO blocks, siselect's own
  functions, user functions with effects), as an expression and as a statement.

The texts depend on the run (the victim session's pid, the lock key, the file names), so
the corpus is built from a :class:`Context`. Nothing here talks to a database.
"""

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

DIALECTS = ("sqlite", "postgres")

# The token types sqlglot's parsers turn into exp.Placeholder, exp.Parameter or
# exp.SessionParameter (PLACEHOLDER_PARSERS and PRIMARY_PARSERS), and the heredoc
# introducer that, in PostgreSQL's dialect, doubles as a parameter (``$1``).
_INTRODUCER_TYPES = {
    TokenType.PLACEHOLDER, TokenType.PARAMETER, TokenType.SESSION_PARAMETER,
    TokenType.COLON, TokenType.MOD, TokenType.HEREDOC_STRING,
}
# What may follow an introducer: nothing, a name, a number, a name ending in the dollar
# that makes sqlglot's ``$name$`` a PostgreSQL dollar quote, a quoted name (each quote
# style the dialects know), a qualified name, and the Python DB-API shapes.
# A bare introducer comes last: sqlglot lets it take the next word ("AS") as its name.
_SHAPES = ("x", "1", "A$", "$", "'x'", '"x"', "`x`", "[x]", "x.y", "s", "(x)s", "{x}", "")
_PLACEHOLDER_NODES = (exp.Placeholder, exp.Parameter, exp.SessionParameter)
CONTROL = "no placeholder (control)"


# SQLite's own parameter forms are ?NNN, :AAA, @AAA and $AAA: sqlglot's sqlite tokenizer
# reads "$" as part of a name, which it prints unchanged (a PostgreSQL parameter or dollar
# quote), so "$" is tried in every dialect.
_ALWAYS = ("$",)


def introducers(dialect: str) -> list[str]:
    """The characters that start a placeholder or parameter in ``dialect``'s tokenizer,
    plus their doubled form (``@@x`` is a session variable in several dialects)."""
    tokenizer = Dialect.get_or_raise(dialect).tokenizer_class
    table = {**tokenizer.SINGLE_TOKENS, **tokenizer.KEYWORDS}
    found = sorted({k for k, v in table.items() if v in _INTRODUCER_TYPES} | set(_ALWAYS))
    return found + [c + c for c in found if len(c) == 1]


def token_spellings(dialect: str) -> list[str]:
    return [intro + shape for intro in introducers(dialect) for shape in _SHAPES]


def sqlglot_role(spelling: str, dialect: str) -> tuple[str, str] | None:
    """How sqlglot reads ``spelling`` in a select list: (the placeholder node kinds it
    builds, or "dollar name" for a name that PostgreSQL would read as ``$...``; what it
    prints for PostgreSQL). None when the spelling is no placeholder for sqlglot (an
    error, an operator, a plain value)."""
    try:
        tree = sqlglot.parse_one(f"SELECT {spelling} AS a FROM t", read=dialect)
        printed = tree.sql(dialect="postgres")
    except (ParseError, TokenError, ValueError):
        return None
    kinds = sorted({type(n).__name__ for n in tree.find_all(*_PLACEHOLDER_NODES)})
    shown = printed.removeprefix("SELECT ").removesuffix(" AS a FROM t")
    if kinds:
        return "+".join(kinds), shown
    if "$" in spelling and not isinstance(tree.selects[0].unalias(), exp.Literal):
        return "dollar name", shown
    return None


@dataclass(frozen=True)
class Token:
    dialect: str
    spelling: str
    role: str  # sqlglot's node kinds for it
    printed: str  # what sqlglot writes for PostgreSQL

    @property
    def label(self) -> str:
        return f"{self.dialect}:{self.spelling}"

    @property
    def dollar(self) -> str:
        """The PostgreSQL dollar quote the printed form opens, or a fixed one: tricks that
        close a quote the token opened need its exact spelling."""
        printed = self.printed.strip()
        if printed.startswith("$"):
            end = printed.find("$", 1)
            if end > 0:
                return printed[: end + 1]
        return "$A$"


def _shape(printed: str) -> str:
    """The printed form's first word with names and numbers generalised: ``$x`` and ``$s``
    are one case, and so are ``%`` and ``%%x`` (a placeholder, then a modulo)."""
    first = printed.strip().split(" ")[0]
    return re.sub(r"[0-9]+", "9", re.sub(r"[A-Za-z_][A-Za-z_0-9]*", "n", first))


def tokens() -> list[Token]:
    """Every placeholder spelling sqlglot knows in each accepted input dialect, deduplicated
    by what sqlglot makes of it (same role, same printed shape)."""
    found: list[Token] = []
    seen: set[tuple[str, str, str]] = set()
    for dialect in DIALECTS:
        for spelling in token_spellings(dialect):
            role = sqlglot_role(spelling, dialect)
            if role is None or (dialect, role[0], _shape(role[1])) in seen:
                continue
            seen.add((dialect, role[0], _shape(role[1])))
            found.append(Token(dialect, spelling, *role))
    # Controls: the same tricks and payloads without a placeholder, which sqlglot's
    # placeholder refusal does not stop, so they reach PostgreSQL's parser and the catalog.
    found += [Token(dialect, "1", CONTROL, "1") for dialect in DIALECTS]
    return found


@dataclass(frozen=True)
class Context:
    """What the payloads aim at, known only once the test's cluster runs."""

    victim_pid: int  # a session of the attacking role that must survive
    lock_key: int  # an advisory lock key that must never be held
    touched: str  # a file name that COPY ... TO PROGRAM would create in the data directory
    secret: str  # a file (relative to the data directory) whose content must never leak
    sink: str = "evil.sink"


@dataclass(frozen=True)
class Payload:
    name: str
    expr: str  # usable in a select list
    stmt: str  # a statement of its own


def payloads(ctx: Context) -> list[Payload]:
    key, pid = ctx.lock_key, ctx.victim_pid
    copy = f"COPY (SELECT 1) TO PROGRAM 'touch {ctx.touched}'"
    do = f"DO 'BEGIN PERFORM pg_catalog.pg_advisory_lock({key}); END'"

    def via_xml(sql: str) -> str:  # query_to_xml runs a text it is given
        return "query_to_xml('" + sql.replace("'", "''") + "', true, false, '')"

    return [
        Payload("advisory_lock", f"pg_advisory_lock({key})", f"SELECT pg_advisory_lock({key})"),
        Payload("lock_qualified", f"pg_catalog.pg_advisory_lock({key})",
                f"SELECT pg_catalog.pg_advisory_lock({key})"),
        Payload("lock_quoted", f'"pg_catalog"."pg_advisory_lock"({key})',
                f'SELECT "pg_catalog"."pg_advisory_lock"({key})'),
        Payload("lock_nested",
                f"coalesce(NULL, abs((SELECT pg_catalog.pg_try_advisory_lock({key}))::int))",
                f"SELECT 1 FROM (SELECT pg_try_advisory_lock({key})) AS s"),
        Payload("set_config", "set_config('application_name', 'pwned', false)",
                "SET application_name = 'pwned'"),
        Payload("read_file", f"pg_read_file('{ctx.secret}')",
                f"SELECT pg_read_file('{ctx.secret}')"),
        Payload("terminate", f"pg_terminate_backend({pid})",
                f"SELECT pg_terminate_backend({pid})"),
        Payload("copy_program", via_xml(copy), copy),
        Payload("prepare", via_xml("PREPARE pwned_plan AS SELECT 1"),
                "PREPARE pwned_plan AS SELECT 1"),
        Payload("do_block", via_xml(do), do),
        Payload("nested_siselect", "siselect.separate('SELECT 1', 'SELECT 2')",
                "SELECT siselect.separate('SELECT 1', 'SELECT 2')"),
        Payload("sleep_subquery", "(SELECT pg_catalog.pg_sleep(0))",
                "SELECT pg_catalog.pg_sleep(0)"),
        Payload("sink_writer", "evil.write_sink()", f"INSERT INTO {ctx.sink} VALUES ('stmt')"),
        Payload("user_tripwire", "evil.tripwire('qualified')",
                "SELECT evil.tripwire('statement')"),
        Payload("lying_volatility", "evil.lying_lock()", "SELECT evil.lying_lock()"),
        Payload("unqualified_user", "hostile_tripwire('unqualified')",
                "SELECT hostile_tripwire('unqualified')"),
    ]


# Each trick: a template over the token as written ({tok}), the dollar quote sqlglot's
# print of it opens ({dq}), and the payload ({expr}, {stmt}). Line breaks matter where a
# "--" comment must end.
TRICKS: dict[str, str] = {
    # the payload in plain sight next to the token
    "open": "SELECT {tok} AS a, {expr} AS b FROM superhero",
    # the issue's form: sqlglot sees a string literal between two tokens, PostgreSQL a
    # dollar-quoted string, then the payload as a column
    "dollar_expr": "SELECT {tok} || 'x{dq} AS a, {expr} AS b, {dq}' || {tok} AS c FROM superhero",
    # the issue's multi-statement form: the literal hides "; <statement>;"
    "dollar_stmt": "SELECT {tok} AS a, ' {dq}) AS z; {stmt}; SELECT * FROM (SELECT 1 AS a, "
                   "2 AS b --' AS b FROM superhero",
    # dollar quotes with tags around the payload (a string for both readers, unless a
    # token's print closes one early)
    "dollar_tag": "SELECT $t$ {dq} $t$ AS a, {tok} AS b, $q$ $t$, {expr} $q$ AS c FROM superhero",
    # nested block comments: PostgreSQL nests them, SQLite (and sqlglot's sqlite) does not
    "nested_comment": "SELECT {tok} AS a /* /* */ , {expr} AS b /* */ */ FROM superhero",
    # a line comment that holds a block comment's end (sqlglot reprints it as /* */)
    "line_comment": "SELECT {tok} AS a -- */ , {expr} AS b /*\nFROM superhero",
    # E'' escape strings: \' stays inside the literal only for readers that know E''
    "escape_string": "SELECT E'\\' , {expr} AS b, ' AS a, {tok} AS c FROM superhero",
    # backslashes: under standard_conforming_strings = off '\'' would not end the literal
    # (the test also runs this trick with that setting off in the caller's session)
    "backslash": "SELECT 'x\\' AS a, {tok} AS b, {expr} AS c, '\\' AS d FROM superhero",
    # unicode escapes: U&'\0027' is a quote character inside the literal
    "unicode_escape": "SELECT U&'\\0027 {dq}' AS a, {tok} AS b, U&'!0027, {expr} --' "
                      "UESCAPE '!' AS c FROM superhero",
    # doubled quotes inside a literal
    "doubled_quote": "SELECT 'it''s {dq}' AS a, {tok} AS b, '{dq}'' , {expr} AS c --' "
                     "FROM superhero",
    # a quoted identifier holding the payload and a doubled double quote
    "quoted_identifier": 'SELECT 1 AS "{dq}"" , {expr} AS x --", {tok} AS b FROM superhero',
    # the payload nested in a scalar subquery and a function's arguments
    "nested_call": "SELECT {tok} AS a, length(coalesce((SELECT {expr})::text, 'x')) AS b "
                   "FROM superhero",
}
# The two forms that breached before the fix: crossed with every payload for the token of
# the issue's reproducer, on top of the round-robin assignment of payloads.
FULL_CROSS_TRICKS = ("dollar_expr", "dollar_stmt")
FULL_CROSS_TOKEN = ("sqlite", "@A$")


@dataclass(frozen=True)
class Case:
    token: Token
    trick: str
    payload: str
    sql: str

    @property
    def dialect(self) -> str:
        return self.token.dialect

    @property
    def ident(self) -> str:
        return f"{self.token.label}|{self.trick}|{self.payload}"


def _case(token: Token, trick: str, payload: Payload) -> Case:
    sql = TRICKS[trick].format(tok=token.spelling, dq=token.dollar, expr=payload.expr,
                               stmt=payload.stmt)
    return Case(token, trick, payload.name, sql)


def cases(ctx: Context) -> list[Case]:
    """token x trick, each with one payload (rotating so that every payload meets many
    tokens and tricks), plus the full cross of payloads for the issue's own form."""
    found: list[Case] = []
    loads = payloads(ctx)
    all_tokens = tokens()
    for (i, token), (j, trick) in itertools.product(enumerate(all_tokens),
                                                    enumerate(TRICKS)):
        found.append(_case(token, trick, loads[(i * len(TRICKS) + j) % len(loads)]))
    issue_token = next(t for t in all_tokens if (t.dialect, t.spelling) == FULL_CROSS_TOKEN)
    seen = {c.ident for c in found}
    for trick, payload in itertools.product(FULL_CROSS_TRICKS, loads):
        extra = _case(issue_token, trick, payload)
        if extra.ident not in seen:
            found.append(extra)
    return found


def chunks(items: list[Case], size: int) -> Iterator[list[Case]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]
