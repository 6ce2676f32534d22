"""The tie-inclusive form of a query: what it may return whichever way ties break."""

from collections.abc import Callable, Sequence
from typing import Any

from sqlglot import exp

from siselect.runtime.answers import contained_in, has_null_row
from siselect.runtime.executor import Rows
from siselect.sqltext.nondeterminism import peer_windows


def with_ties(tree: exp.Query, count: int | None = None) -> exp.Query:
    """``ORDER BY ... LIMIT k`` becomes ``FETCH FIRST k ROWS WITH TIES`` (top level only),
    or ``count`` rows with their ties instead of k.

    A top-level LIMIT without ORDER BY is dropped: any k rows of the answer may come back.
    """
    tree = tree.copy()
    limit = tree.args.get("limit")
    if not isinstance(limit, exp.Limit) or not isinstance(tree, exp.Select):
        return tree
    if not tree.args.get("order"):
        tree.set("limit", None)
        return tree
    tree.set(
        "limit",
        exp.Fetch(
            direction="FIRST",
            count=limit.expression.copy() if count is None else exp.Literal.number(count),
            limit_options=exp.LimitOptions(rows=True, with_ties=True),
        ),
    )
    return tree


def uncut(tree: exp.Query) -> exp.Query:
    """A copy of ``tree`` without its top-level LIMIT and OFFSET."""
    tree = tree.copy()
    tree.set("limit", None)
    tree.set("offset", None)
    return tree


def tie_sensitive(tree: exp.Query) -> bool:
    """Whether the top level cuts its answer with LIMIT (ties or order may decide rows)."""
    return isinstance(tree, exp.Select) and isinstance(tree.args.get("limit"), exp.Limit)


def inner_cut(tree: exp.Query) -> bool:
    """Whether a query below the top level cuts its ordered rows (``ORDER BY ... LIMIT`` in
    a derived table, a CTE, a subquery), or a window numbers rows in an order that ties
    leave open (``ROW_NUMBER() ... <= 5``, at any level): which rows make that cut on a D'
    can hang on ties that :func:`with_ties` does not reach."""
    return any(q is not tree and q.args.get("limit") is not None and q.args.get("order")
               for q in tree.find_all(exp.Select)) or bool(peer_windows(tree))


#: The rows a query keeps before the tie at its cut, asked only when needed; None: unknown.
Before = Callable[[], Rows | None]


def tie_explained(a1: Rows, a2: Rows, relaxed1: Rows, relaxed2: Rows,
                  before1: Before = lambda: None, before2: Before = lambda: None) -> bool:
    """Some way of breaking ties makes one query return the other's answer.

    Ties change which rows make the cut, not how many: answers of different sizes are a
    real disagreement (an empty answer is contained in everything). Only a query that has a
    tie at its cut (its ``WITH TIES`` answer is longer than its answer) may break it
    otherwise: an untied one returns its one answer, whose rows being among the other's
    says nothing (the first three elements, ``br br cl``, against the first three distinct
    ones, ``br cl dq``, differ as sets on every order). ``before1``/``before2``: the rows
    that query keeps whichever way the tie breaks (:func:`could_return`).
    """
    if len(a1.rows) != len(a2.rows):
        return False
    return (_tied(a1, relaxed1) and _within(a2.rows, relaxed1.rows)
            and could_return(a2.rows, len(a1.rows), relaxed1, before1())) \
        or (_tied(a2, relaxed2) and _within(a1.rows, relaxed2.rows)
            and could_return(a1.rows, len(a2.rows), relaxed2, before2()))


def could_return(answer: Sequence[Sequence[Any]], kept: int, relaxed: Rows,
                 before: Rows | None) -> bool:
    """Whether a query that keeps ``kept`` rows, ``before`` of them ahead of the tie at its
    cut and the rest among the tied rows of ``relaxed`` (its ``WITH TIES`` answer), may
    return an answer equal to ``answer`` as answers are compared (sets of rows). Unknown
    ``before``: True. The first three rows of ``paul paul | ronald richard`` (the tie after
    the bar) are ``paul paul`` and one of the two, never ``paul ronald richard``, which the
    weaker rule (every row among the other's ``WITH TIES`` rows) took for a tie."""
    if before is None:
        return True
    rows = list(relaxed.rows)  # the tied rows: relaxed less those ahead of the tie
    for ahead in before.rows:
        if ahead in rows:
            rows.remove(ahead)
    room = kept - len(before.rows)
    if not contained_in(before.rows, answer):
        return False
    picked: list[Sequence[Any]] = []
    for wanted in answer:
        if contained_in([wanted], before.rows) or contained_in([wanted], picked):
            continue
        match = next((t for t in rows if contained_in([t], [wanted])), None)
        if match is None:
            return False
        rows.remove(match)
        picked.append(match)
    fillers = sum(1 for t in rows if contained_in([t], answer))
    return len(picked) <= room and len(picked) + fillers >= room


def _tied(answer: Rows, relaxed: Rows) -> bool:
    """Whether a row ties with the last one kept: the ``WITH TIES`` form has more rows."""
    return len(relaxed.rows) > len(answer.rows)


def _within(rows: Sequence[Sequence[Any]], relaxed: Sequence[Sequence[Any]]) -> bool:
    """Every row of ``rows`` is one of ``relaxed``, a row of NULLs included (a NULL top row
    is not explained by a tie that lets a named one through)."""
    return contained_in(rows, relaxed) and (not has_null_row(rows) or has_null_row(relaxed))


def rows_before(with_ties_at: Callable[[int], Rows | None], kept: int, relaxed: Rows
                ) -> Rows | None:
    """The rows a query whose cut keeps ``kept`` rows (``relaxed``: with their ties) keeps
    ahead of the tie at the cut, from its answers with ties at fewer rows
    (``with_ties_at(m)``, None where that fails): those at the largest m whose ties do not
    reach the cut. A binary search: about log2(kept) statements, none for a cut of one
    row."""
    low, high, found = 0, kept, Rows(relaxed.columns, [])
    while high - low > 1:
        middle = (low + high) // 2
        got = with_ties_at(middle)
        if got is None:
            return None
        if len(got.rows) < len(relaxed.rows):
            low, found = middle, got
        else:
            high = middle
    return found
