"""The tie-inclusive form of a query: what it may return whichever way ties break."""

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from siselect.runtime.answers import contained_in, has_null_row
from siselect.runtime.executor import Rows
from siselect.sqltext.nondeterminism import peer_windows


def with_ties(tree: exp.Query) -> exp.Query:
    """``ORDER BY ... LIMIT k`` becomes ``FETCH FIRST k ROWS WITH TIES`` (top level only).

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
            count=limit.expression.copy(),
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


def tie_explained(a1: Rows, a2: Rows, relaxed1: Rows, relaxed2: Rows) -> bool:
    """Some way of breaking ties makes one query return the other's answer.

    Ties change which rows make the cut, not how many: answers of different sizes are a
    real disagreement (an empty answer is contained in everything). Only a query that has a
    tie at its cut (its ``WITH TIES`` answer is longer than its answer) may break it
    otherwise: an untied one returns its one answer, whose rows being among the other's
    says nothing (the first three elements, ``br br cl``, against the first three distinct
    ones, ``br cl dq``, differ as sets on every order).
    """
    if len(a1.rows) != len(a2.rows):
        return False
    return (_tied(a1, relaxed1) and _within(a2.rows, relaxed1.rows)) \
        or (_tied(a2, relaxed2) and _within(a1.rows, relaxed2.rows))


def _tied(answer: Rows, relaxed: Rows) -> bool:
    """Whether a row ties with the last one kept: the ``WITH TIES`` form has more rows."""
    return len(relaxed.rows) > len(answer.rows)


def _within(rows: Sequence[Sequence[Any]], relaxed: Sequence[Sequence[Any]]) -> bool:
    """Every row of ``rows`` is one of ``relaxed``, a row of NULLs included (a NULL top row
    is not explained by a tie that lets a named one through)."""
    return contained_in(rows, relaxed) and (not has_null_row(rows) or has_null_row(relaxed))
