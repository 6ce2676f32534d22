"""Members whose answer on a D' is one of several: it hangs on ties, and says nothing.

The search keeps no D' on which a tie explains the difference between a duel's two
representatives (:meth:`~siselect.instances.pair.Pair.separation`), but an answer can still
be one of several there: a representative's ``LIMIT 1`` without ``ORDER BY`` that keeps
either of two rows while the other query returns both; and any other member run on D' (its
group's, or every unit's when verdicts weigh on all) was not checked at all: a CTE that
keeps the two most common first names, ``ORDER BY count DESC LIMIT 2``, on a D' where five
names occur once each, keeps any two of them, and the judge may have kept two others. Such
an answer neither matches the judge's nor misses it: scoring it either way is evidence the
instance does not hold (yardstick, the paper's K=5 candidates, california_schools 84: the
one candidate right on D lost twice so, on instances of other pairs; generated sets,
financial 163: a wrong candidate won on matches that its tie-break and the gold's happened
to share). The tournament gives such a member no evidence from that D' (``_score_members``).
"""

from collections.abc import Callable
from functools import partial
from typing import Protocol, TypeVar

from sqlglot import exp

from siselect.instances.pair import Failed
from siselect.instances.ties import with_ties
from siselect.runtime.errors import QueryFailed
from siselect.runtime.executor import Rows
from siselect.sqltext import nondeterminism

T = TypeVar("T")


class Remember(Protocol):
    """``WitnessCache.remember``: ``compute()`` for ``tree``, once per tournament."""

    def __call__(self, kind: str, tree: exp.Query, compute: Callable[[], T]) -> T: ...


def tied_members(answers: dict[int, Rows], tree_of: Callable[[int], exp.Query],
                 run: Callable[[exp.Query], Rows], remember: Remember) -> set[int]:
    """The members of ``answers`` (index -> answer on D') whose answer on the D' that
    ``run`` reads hangs on ties there (:func:`tie_reason`). ``remember(kind, tree,
    compute)`` keeps a query's probes for the tournament."""
    return {index for index, answer in answers.items()
            if tie_reason(tree_of(index), answer, run, remember) is not None}


def tie_reason(tree: exp.Query, answer: Rows, run: Callable[[exp.Query], Rows],
               remember: Remember) -> str | None:
    """Why ``answer``, ``tree``'s on the D' that ``run`` reads, is one of several there
    (:func:`~siselect.sqltext.nondeterminism.data_reason`; a text that reads the clock or
    random() counts as it is), or None; None too for a failure, and when the probes run
    out of time (the answer counts as it is)."""
    if isinstance(answer, Failed):
        return None
    made = remember("tie probes", tree, partial(nondeterminism.probes, tree))
    if not (made.variants or made.concat):  # nothing to break a tie in
        return None

    def strict(variant: exp.Query) -> Rows:
        got = run(variant)
        if isinstance(got, Failed):  # the probes read a failure as no verdict
            raise QueryFailed(got.message, got.sqlstate)
        return got

    relaxed = remember("with ties form", tree, partial(with_ties, tree))
    try:
        return nondeterminism.data_reason(strict, tree, answer, partial(strict, relaxed), made)
    except QueryFailed:
        return None
