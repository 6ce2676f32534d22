"""Queries whose result is not a function of the data alone.

A query that reads the clock, random() or a TABLESAMPLE differs from run to run; one that
cuts an ordered result with LIMIT where rows tie on every sort key (or has no ORDER BY at
all), that numbers rows with ROW_NUMBER() (or takes a neighbour's value: LAG, FIRST_VALUE,
...) where rows tie on the window's ORDER BY, or that picks a bare column from a group
where rows differ, depends on how the engine breaks ties; one that concatenates a group's
values with GROUP_CONCAT (no ORDER BY of its own) depends on the order the engine feeds
them in. SQLite and PostgreSQL legitimately break them differently, and two candidates
that differ only there are not separable. :func:`static_reason` reads the query;
:func:`check` asks the data, by running the query twice with opposite tie-breakers.
"""

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from siselect.runtime.errors import Cancelled, QueryFailed
from siselect.runtime.executor import Rows
from siselect.sqltext.sqlite_rules.template import GENERATED

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
        if isinstance(node, exp.TableSample):
            # Even REPEATABLE picks pages or rows by where they lie on disk, and a D' of a
            # few rows cannot be sampled as D was.
            return "samples a table (TABLESAMPLE): which rows it reads is up to the engine"
    for query in tree.find_all(exp.Select, exp.SetOperation):
        if _cuts(query) and query.args.get("order") is None and not _single_row(query) \
                and not _generated_cut(query):
            return "LIMIT without ORDER BY: which rows come back is up to the engine"
    return None


# Tie-breaking orders of the probes: ascending, descending, and two scrambled orders
# (salted hashes of the output) that catch windows in the middle of a tie group, where
# ascending and descending can select the same multiset by symmetry.
ASC, DESC = "asc", "desc"
SCRAMBLED = ("scrambled-1", "scrambled-2")
_CUT_PICK_COMBINATIONS = [(ASC, ASC), (DESC, DESC), *((s, s) for s in SCRAMBLED),
                          (ASC, DESC), (DESC, ASC)]


@dataclass(frozen=True)
class Probes:
    """The variants of a query that :func:`check` runs: made once per query, whatever the
    data (a search checks thousands of row sets: copying and walking the query for each
    cost more than running them, student_club x100 task 1365)."""

    concat: tuple[exp.Query, exp.Query] | None  # a GROUP_CONCAT's two orders
    variants: tuple[tuple[tuple[str | None, str | None], exp.Query], ...]  # (cut, pick)
    has_cuts: bool
    has_windows: bool
    top_cuts: bool  # a LIMIT or OFFSET at any level (else only windows tie)


def probes(tree: exp.Query) -> Probes:
    """The probes of ``tree`` (see :func:`check`)."""
    has_windows = _tie_break_windows(tree, ASC) is not None
    has_cuts = _tie_break_cuts(tree, ASC) is not None or has_windows
    has_picks = _tie_break_picks(tree, ASC) is not None
    concat = None
    if _concat_keys(tree):
        base = _tie_break_picks(_tie_break_cuts(tree, ASC) or tree, ASC) or tree
        concat = (base, _concat_order(base, DESC) or base)
    variants = []
    if has_cuts or has_picks:
        combinations = [(c if has_cuts else None, p if has_picks else None)
                        for c, p in _CUT_PICK_COMBINATIONS]
        for cut, pick in dict.fromkeys(combinations):
            variant = tree
            if cut is not None:
                variant = _tie_break_cuts(variant, cut) or variant
                variant = _tie_break_windows(variant, cut) or variant
            if pick is not None:
                variant = _tie_break_picks(variant, pick) or variant
            variants.append(((cut, pick), variant))
    return Probes(concat, tuple(variants), has_cuts, has_windows,
                  any(_cuts(q) for q in tree.find_all(exp.Select, exp.SetOperation)))


def check(run: Run, tree: exp.Query) -> str | None:
    """Why the result of ``tree`` (PostgreSQL) on the data ``run`` reads depends on ties.

    Runs the query with every ORDER BY ... LIMIT (and every bare-column pick of the
    SQLite rewrite) broken in ascending, descending and scrambled order of the output;
    different results mean the engine's choice among tied rows shows. GROUP_CONCATs are
    run in ascending and descending order of their values: different results mean the
    concatenation order shows. None otherwise.
    """
    return probe(run, probes(tree))


def reason_on(run_text: Callable[[str], Rows], tree: exp.Query, whole: bool = True
              ) -> str | None:
    """Why ``tree``'s answer on the data ``run_text`` (PostgreSQL text in, rows out) reads
    is one of several: :func:`static_reason`, else :func:`check`'s, asked only of an
    answer read ``whole`` (probes of a capped answer compare capped rows)."""
    reason = static_reason(tree)
    if reason is None and whole:
        reason = check(lambda variant: run_text(variant.sql(dialect="postgres")), tree)
    return reason


def probe(run: Run, made: Probes) -> str | None:
    """:func:`check` with the query's probes made before (:func:`probes`)."""
    if made.concat is not None:
        base, reversed_ = made.concat
        try:
            if Counter(map(_hashable, run(base).rows)) != Counter(
                    map(_hashable, run(reversed_).rows)):
                return CONCAT_ORDER
        except QueryFailed as exc:
            no_verdict(exc)
            return None
    if not made.variants:
        return None
    results: dict[tuple[str | None, str | None], Counter] = {}
    for (cut, pick), variant in made.variants:
        try:
            found = results[(cut, pick)] = Counter(map(_hashable, run(variant).rows))
        except QueryFailed as exc:
            no_verdict(exc)
            return None  # an output PostgreSQL cannot sort by: no verdict
        # Two cuts of one pick that differ decide the reason, whatever the probes left
        # would show: they are not run (each is a run of the query on D).
        if made.has_cuts and any(p == pick and c != cut and other != found
                                 for (c, p), other in results.items()):
            return WINDOW_TIES if made.has_windows and not made.top_cuts else \
                "rows tie on the ORDER BY keys at the LIMIT cut"
    if len({frozenset(c.items()) for c in results.values()}) == 1:
        return None
    return PICKS


#: Why an answer hangs on the row a bare column's value is taken from.
PICKS = "a bare column takes its value from one of several rows of a group"


def has_picks(tree: exp.Query) -> bool:
    """Whether ``tree`` takes a bare column's value from one row of its group (the SQLite
    rewrite's ``(ARRAY_AGG(v))[1]``): which row, where the group's values differ, is the
    engine's choice."""
    return _tie_break_picks(tree, ASC) is not None


def possible_answers(run: Run, made: Probes, answer: Rows) -> list[Rows]:
    """``answer`` and the answers of ``made``'s variants that ran: the answers the query
    may give on the data ``run`` reads, its ties and picks broken each way :func:`check`
    tries."""
    found = [answer]
    for _, variant in made.variants:
        try:
            found.append(run(variant))
        except QueryFailed as exc:
            no_verdict(exc)
    return found


def probed(tree: exp.Query) -> bool:
    """Whether :func:`check` runs anything for ``tree`` (a cut, a pick or a GROUP_CONCAT to
    probe): without, its verdict is None and costs no query."""
    return bool(_concat_keys(tree)) or _tie_break_cuts(tree, ASC) is not None \
        or _tie_break_picks(tree, ASC) is not None or _tie_break_windows(tree, ASC) is not None


#: Aggregates whose value does not depend on the order their rows come in.
_ORDER_FREE_AGGREGATES = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max, exp.Stddev,
                          exp.StddevPop, exp.StddevSamp, exp.Variance, exp.VariancePop,
                          exp.LogicalAnd, exp.LogicalOr)


def only_top_cut(tree: exp.Query) -> bool:
    """Whether all :func:`check` would probe in ``tree`` is its top-level ``ORDER BY ...
    LIMIT`` (no OFFSET, no other cut, no pick, no GROUP_CONCAT) and each output row is a
    function of the rows that make the cut (no window, no order-sensitive aggregate).

    Then every tie-breaking order of :func:`check` selects the same rows, hence the same
    answer, unless rows tie with the last one kept: exactly when the query's
    ``FETCH FIRST ... WITH TIES`` form returns more rows than the query
    (:func:`untied_at_cut`). The window's only edge is its end, as there is no OFFSET.
    """
    if not isinstance(tree, exp.Select) or not isinstance(tree.args.get("limit"), exp.Limit) \
            or tree.args.get("order") is None or tree.args.get("offset") is not None:
        return False
    distinct = tree.args.get("distinct")
    if distinct is not None and distinct.args.get("on") is not None:
        return False
    if any(q is not tree and _cuts(q) for q in tree.find_all(exp.Select, exp.SetOperation)):
        return False
    for node in tree.walk():
        if isinstance(node, exp.Window | exp.ArrayAgg | exp.GroupConcat):
            return False
        if isinstance(node, exp.AggFunc) and not isinstance(node, _ORDER_FREE_AGGREGATES):
            return False
        if _function_name(node).endswith("AGG"):
            return False
    return True


def untied_at_cut(answer: Rows, relaxed: Rows) -> bool:
    """For a query of :func:`only_top_cut`, whose answer on some data is ``answer`` and
    whose ``WITH TIES`` form's is ``relaxed``: no row ties with the last one kept, so
    :func:`check` on that data would find nothing (without running its probes)."""
    return len(relaxed.rows) == len(answer.rows)


def data_reason(run: Run, tree: exp.Query, answer: Rows, relaxed: Callable[[], Rows],
                made: Probes | None = None) -> str | None:
    """Why ``answer``, ``tree``'s answer on the data ``run`` reads, hangs on ties there, or
    None (:func:`check`; :func:`static_reason` is the text's, not the data's). A query whose
    only tie-sensitive part is its top-level cut is decided by its ``WITH TIES`` answer
    there (``relaxed()``): no tie at the cut, no reason, without the probes. ``made``:
    ``tree``'s :func:`probes`, when the caller keeps them."""
    if only_top_cut(tree):
        try:
            if untied_at_cut(answer, relaxed()):
                return None
        except QueryFailed as exc:
            # Out of time, it is raised as the probes would; else the probes decide.
            no_verdict(exc)
    return probe(run, made if made is not None else probes(tree))


#: Why an answer hangs on GROUP_CONCAT's order (sqlite_rules/group_concat_order.py).
CONCAT_ORDER = ("GROUP_CONCAT without ORDER BY: the order of the concatenated values is up "
                "to the engine")


def _concat_keys(tree: exp.Query) -> list[exp.Ordered]:
    """The sort keys the transpiler generated for ``tree``'s GROUP_CONCATs."""
    return [o for o in tree.find_all(exp.Ordered)
            if o.meta.get(GENERATED) and isinstance(o.parent, exp.Order)
            and isinstance(o.parent.parent, exp.GroupConcat)]


def _concat_order(tree: exp.Query, order: str) -> exp.Query | None:
    """A copy whose every GROUP_CONCAT ordered by the transpiler's generated key sorts in
    ``order`` (ASC or DESC), or None when there is none."""
    copy = tree.copy()
    keys = _concat_keys(copy)
    for key in keys:
        key.set("desc", order == DESC)
        key.set("nulls_first", False)
    return copy if keys else None


def no_verdict(exc: QueryFailed) -> None:
    """A probe that failed gives no verdict, unless it ran out of time (statement timeout
    or cancel, 57014): that is the caller's to know (a differential cannot tell in time, a
    separation's budget is spent), never a sign that the answer does not hang on ties."""
    if exc.sqlstate == Cancelled.sqlstate:
        raise exc


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


def _generated_cut(query: exp.Expr) -> bool:
    """A LIMIT the SQLite rewrite added (a scalar subquery's first row): whether rows tie
    there is a question for the data (:func:`check`), not for the text."""
    limit = query.args.get("limit")
    return limit is not None and bool(limit.meta.get(GENERATED)) and \
        query.args.get("offset") is None


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


def _reversible(key: exp.Expr, descending: bool) -> exp.Ordered:
    """A sort key whose two directions are exact reverses, NULLs included."""
    return exp.Ordered(this=key, desc=descending, nulls_first=not descending)


def _tie_break_cuts(tree: exp.Query, order: str) -> exp.Query | None:
    """A copy whose every LIMIT/OFFSET sorts ties by all output columns, or None if none cut."""
    copy = tree.copy()
    found = False
    for query in list(copy.find_all(exp.Select, exp.SetOperation)):
        if not _cuts(query) or _single_row(query):
            continue
        width = _width(query)
        if width is None:
            continue
        keys = [_reversible(exp.Literal.number(i + 1), order == DESC) for i in range(width)]
        if order in SCRAMBLED:
            keys = _scrambled(query, order) or keys
        current = query.args.get("order") or exp.Order(expressions=[])
        query.set("order", exp.Order(expressions=[*current.expressions, *keys]))
        found = True
    return copy if found else None


#: Window functions whose value for a row depends on the order of the rows that tie with it
#: on the window's ORDER BY (its peers); RANK and the default-frame aggregates do not.
_PEER_ORDER = (exp.RowNumber, exp.FirstValue, exp.LastValue, exp.NthValue, exp.Lag,
               exp.Lead, exp.Ntile)
WINDOW_TIES = ("rows tie on a window's ORDER BY: which of them ROW_NUMBER() (LAG, "
               "FIRST_VALUE, ...) puts first is up to the engine")


def peer_windows(tree: exp.Expr) -> list[exp.Window]:
    """The windows of ``tree`` whose function sees the order among peers."""
    return [w for w in tree.find_all(exp.Window) if isinstance(w.this, _PEER_ORDER)]


def _tie_break_windows(tree: exp.Query, order: str) -> exp.Query | None:
    """A copy whose every window of :func:`peer_windows` sorts peers by the other output
    columns of its SELECT (or a hash of them), or None if none can: rows equal on all of
    them give the same output whichever comes first."""
    copy = tree.copy()
    found = False
    for window in peer_windows(copy):
        query = window.find_ancestor(exp.Select)
        if query is None or any(p.is_star for p in query.expressions):
            continue
        values = [p.unalias().copy() for p in query.expressions if not p.find(exp.Window)]
        if not values:
            continue
        keys = [_reversible(_hash(values, order), False)] if order in SCRAMBLED else \
            [_reversible(v, order == DESC) for v in values]
        current = window.args.get("order") or exp.Order(expressions=[])
        window.set("order", exp.Order(expressions=[*current.expressions, *keys]))
        found = True
    return copy if found else None


def _scrambled(query: exp.Expr, salt: str) -> list[exp.Ordered] | None:
    """A sort key that orders rows by a hash of their output (None where SQL forbids it)."""
    if not isinstance(query, exp.Select) or query.args.get("distinct") is not None:
        return None
    values = [p.unalias().copy() for p in query.expressions]
    return [_reversible(_hash(values, salt), False)]


def _hash(values: list[exp.Expr], salt: str) -> exp.Expr:
    """MD5 of the text of ROW(values) and a salt: a repeatable pseudo-random order."""
    row = exp.cast(exp.Anonymous(this="ROW", expressions=values), "text")
    return exp.func("MD5", exp.DPipe(this=row, expression=exp.Literal.string(salt)))


def _tie_break_picks(tree: exp.Query, order: str) -> exp.Query | None:
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
        key = _hash([value.copy()], order) if order in SCRAMBLED else value.copy()
        keys.append(_reversible(key, order == DESC))
        agg.set("this", exp.Order(this=value.copy(), expressions=keys))
        found = True
    return copy if found else None
