"""Queries whose result is not a function of the data alone.

A query that reads the clock or random() differs from run to run; one that cuts an
ordered result with LIMIT where rows tie on every sort key (or has no ORDER BY at all),
or that picks a bare column from a group where rows differ, depends on how the engine
breaks ties. SQLite and PostgreSQL legitimately break them differently, and two candidates
that differ only there are not separable. :func:`static_reason` reads the query;
:func:`check` asks the data, by running the query twice with opposite tie-breakers.
"""

from collections import Counter
from collections.abc import Callable

from sqlglot import exp

from .errors import QueryFailed
from .executor import Rows

Run = Callable[[exp.Query], Rows]

_CLOCK_NODES = (exp.CurrentTimestamp, exp.CurrentDate, exp.CurrentTime)
_CLOCK_FUNCTIONS = {"NOW", "CLOCK_TIMESTAMP", "STATEMENT_TIMESTAMP", "TRANSACTION_TIMESTAMP",
                    "TIMEOFDAY", "LOCALTIMESTAMP", "LOCALTIME"}
_RANDOM_FUNCTIONS = {"RANDOM", "RANDOMBLOB", "SETSEED", "GEN_RANDOM_UUID"}


def static_reason(tree: exp.Expr) -> str | None:
    """Why ``tree`` (SQLite or PostgreSQL) is nondeterministic by its text alone, or None."""
    for node in tree.walk():
        if isinstance(node, exp.Rand) or _function_name(node) in _RANDOM_FUNCTIONS:
            return "uses random()"
        if isinstance(node, _CLOCK_NODES) or _function_name(node) in _CLOCK_FUNCTIONS:
            return "reads the clock ('now', CURRENT_TIMESTAMP)"
        if _is_now_literal(node):
            return "reads the clock ('now')"
    for query in tree.find_all(exp.Select, exp.SetOperation):
        if _cuts(query) and query.args.get("order") is None and not _single_row(query):
            return "LIMIT without ORDER BY: which rows come back is up to the engine"
    return None


def check(run: Run, tree: exp.Query) -> str | None:
    """Why the result of ``tree`` (PostgreSQL) on the data ``run`` reads depends on ties.

    Runs the query with every ORDER BY ... LIMIT (and every bare-column pick of the
    SQLite rewrite) broken once in ascending and once in descending order of the output;
    different results mean the engine's choice among tied rows shows. None otherwise.
    """
    checks = [
        (_tie_break_cuts, "rows tie on the ORDER BY keys at the LIMIT cut"),
        (_tie_break_picks, "a bare column takes its value from one of several rows of a group"),
    ]
    for variant, reason in checks:
        low, high = variant(tree, False), variant(tree, True)
        if low is None or high is None:
            continue
        try:
            if not same_multiset(run(low), run(high)):
                return reason
        except QueryFailed:
            continue  # an output PostgreSQL cannot sort by: no verdict from this probe
    return None


def same_multiset(a: Rows, b: Rows) -> bool:
    """Whether two results hold the same rows the same number of times."""
    return Counter(map(_hashable, a.rows)) == Counter(map(_hashable, b.rows))


def _hashable(row: tuple) -> tuple:
    return tuple(tuple(v) if isinstance(v, list) else v for v in row)


def _function_name(node: exp.Expr) -> str:
    if isinstance(node, exp.Anonymous):
        return node.name.upper()
    return ""


def _is_now_literal(node: exp.Expr) -> bool:
    return (isinstance(node, exp.Literal) and node.is_string
            and node.this.strip().lower() == "now" and isinstance(node.parent, exp.Func))


def _cuts(query: exp.Expr) -> bool:
    return query.args.get("limit") is not None or query.args.get("offset") is not None


def _single_row(query: exp.Expr) -> bool:
    """An aggregate without GROUP BY returns exactly one row: a LIMIT cannot cut it."""
    if not isinstance(query, exp.Select) or query.args.get("group") is not None:
        return False
    return any(agg.find_ancestor(exp.Select) is query and agg.find_ancestor(exp.Window) is None
               for p in query.expressions for agg in p.find_all(exp.AggFunc))


def _width(query: exp.Expr) -> int | None:
    """The number of output columns, or None when a star hides it."""
    while isinstance(query, exp.SetOperation):
        query = query.left
    if not isinstance(query, exp.Select) or any(p.is_star for p in query.expressions):
        return None
    return len(query.expressions)


def _tie_break_cuts(tree: exp.Query, descending: bool) -> exp.Query | None:
    """A copy whose every LIMIT/OFFSET sorts ties by all output columns, or None if none cut."""
    copy = tree.copy()
    found = False
    for query in list(copy.find_all(exp.Select, exp.SetOperation)):
        if not _cuts(query) or _single_row(query):
            continue
        width = _width(query)
        if width is None:
            continue
        order = query.args.get("order") or exp.Order(expressions=[])
        keys = [exp.Ordered(this=exp.Literal.number(i + 1), desc=descending)
                for i in range(width)]
        query.set("order", exp.Order(expressions=[*order.expressions, *keys]))
        found = True
    return copy if found else None


def _tie_break_picks(tree: exp.Query, descending: bool) -> exp.Query | None:
    """A copy whose every ``(ARRAY_AGG(v ...))[1]`` pick breaks ties by ``v``, or None."""
    copy = tree.copy()
    found = False
    for agg in list(copy.find_all(exp.ArrayAgg)):
        bracket = agg.parent.parent if isinstance(agg.parent, exp.Paren) else agg.parent
        if not isinstance(bracket, exp.Bracket):
            continue
        inner = agg.this
        value = inner.this if isinstance(inner, exp.Order) else inner
        keys = list(inner.expressions) if isinstance(inner, exp.Order) else []
        keys.append(exp.Ordered(this=value.copy(), desc=descending))
        agg.set("this", exp.Order(this=value.copy(), expressions=keys))
        found = True
    return copy if found else None
