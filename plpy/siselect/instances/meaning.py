"""Whether a separating instance D' keeps the question's meaning (docs/instances.md).

The smallest separating instance is often a meaningless one: on an empty D' a COUNT gives
0 and a SUM gives NULL, a GROUP BY gives nothing, and a judge that answers the question
there rejects a query that is right on D. So separating instances are ranked, and the
search keeps the best rank it finds, minimising within that rank:

0. *meaningful*: both queries run, neither answer is degenerate, and the disagreement on
   D' is a piece of the disagreement on D;
1. *non-degenerate*: both run, neither answer degenerate, but D' shows a disagreement D
   does not have (a row D' makes up, a group whose difference exists only on D');
2. *degenerate*: both run, but D' is empty or an answer on it is (or is all NULL; unless
   that answer on D is so too and D' holds a witness of it, or it is empty on D too), or
   an aggregating query's D' holds none of its witnesses (its aggregates ran over nothing);
3. *failed*: one query fails on D' (its answer is the error; both failing separates
   nothing).

"A piece of the disagreement on D" is checked on the answers' *keys*: a row-valued answer's
rows, an aggregate's grouping columns (its output columns that are no aggregate). A key
that only one query's answer on D' has must be one that only that query's answer on D has;
a key both have, with different rows, must have different rows on D too (or be one side's
only). An aggregate's values change with D' by nature, so for them the rows of D' must in
addition hold a whole witness of the difference (a witness of one query's answer that is
none of the other's, W1-W2 or W2-W1), when the witness sets differ at all.
"""

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from sqlglot import exp

from siselect.instances.pair import Failed, Normal
from siselect.runtime.answers import normal_answer, normal_row
from siselect.runtime.executor import Rows
from siselect.witnesses.lineage.analysis import (
    is_aggregate_call,
    is_aggregated,
    own_aggregates,
    own_nodes,
)

MEANINGFUL, NON_DEGENERATE, DEGENERATE, FAILED = 0, 1, 2, 3
RANK_NAMES = {MEANINGFUL: "meaningful", NON_DEGENERATE: "non-degenerate",
              DEGENERATE: "degenerate", FAILED: "failed"}
_NULL_KEY = "NULL"  # the key of rows whose key columns are all NULL (normal_row gives None)
_NULL_ROW = "NULL row"  # the key of a row whose every column is NULL


@dataclass(frozen=True)
class Shape:
    """Which output columns of a query are keys and which are aggregate values."""

    keys: tuple[int, ...]
    values: tuple[int, ...]


def shape(tree: exp.Query, width: int) -> Shape:
    """Keys and values of ``tree``'s answer of ``width`` columns: when the top SELECT
    aggregates, its aggregate columns are values and the others keys; when only something
    below it aggregates (a CTE, a derived table, a scalar subquery), which columns hang on
    the aggregate is not followed, so the whole answer is one group of values; otherwise
    every column is a key, but for the top SELECT's window function columns, values like
    aggregates (they hang on the rows of their partition)."""
    if not isinstance(tree, exp.Select) or not is_aggregated(tree):
        if any(is_aggregate_call(n) for n in tree.walk()):
            return Shape((), tuple(range(width)))
        windowed = _window_columns(tree, width)
        return Shape(tuple(i for i in range(width) if i not in windowed), windowed)
    selects = tree.selects
    if len(selects) != width:  # a star we cannot line up: rows as a whole
        return Shape(tuple(range(width)), ())
    aggregates = {id(n) for n in own_aggregates(tree)}
    values = tuple(i for i, e in enumerate(selects)
                   if any(id(n) in aggregates for n in e.walk()))
    return Shape(tuple(i for i in range(width) if i not in values), values)


def _window_columns(tree: exp.Query, width: int) -> tuple[int, ...]:
    """The output columns of ``tree``'s own window functions (none when a star hides
    which they are)."""
    if not isinstance(tree, exp.Select) or len(tree.selects) != width:
        return ()
    return tuple(i for i, e in enumerate(tree.selects)
                 if any(isinstance(n, exp.Window) for n in own_nodes(e)))


Keyed = Mapping[Any, frozenset]


class RowsAsKeys(Mapping):
    """The keyed form of an answer whose every column is a key: each normalised row is its
    own group (and a row of NULLs one more), read from the normalised answer itself rather
    than built as a dict of one-row sets (an answer of tens of thousands of names)."""

    def __init__(self, normal: Normal):
        self.rows, self.null_row = normal

    def __contains__(self, key: object) -> bool:
        return (self.null_row and key == _NULL_ROW) or key in self.rows

    def __getitem__(self, key: Any) -> frozenset:
        if key not in self:
            raise KeyError(key)
        return frozenset((None,)) if key == _NULL_ROW else frozenset((key,))

    def __iter__(self) -> Iterator[Any]:
        yield from self.rows
        if self.null_row:
            yield _NULL_ROW

    def __len__(self) -> int:
        return len(self.rows) + self.null_row


def keyed(rows: Sequence[Sequence[Any]], s: Shape, normal: Normal | None = None) -> Keyed:
    """An answer as {key: the set of its normalised rows with that key}; ``normal``: the
    answer normalised already (:func:`.answers.normal_answer`), if known."""
    if rows and s.keys == tuple(range(len(rows[0]))):  # every column a key, in order
        return RowsAsKeys(normal_answer(rows) if normal is None else normal)
    groups: dict[Any, set] = {}
    for row in rows:
        full = normal_row(row)
        if full is None:  # an all-NULL row is a row of its own (BIRD's rule, same_result)
            groups.setdefault(_NULL_ROW, set()).add(None)
            continue
        key = normal_row([row[i] for i in s.keys]) if s.keys else ()
        groups.setdefault(_NULL_KEY if key is None else key, set()).add(full)
    return {k: frozenset(v) for k, v in groups.items()}


def degenerate_reason(label: str, answer: Rows, s: Shape) -> str | None:
    """Why ``answer`` carries no meaning: empty, all NULL, or its aggregates all NULL."""
    if not answer.rows:
        return f"{label}'s answer on D' is empty"
    if all(normal_row(r) is None for r in answer.rows):
        return f"{label}'s answer on D' is all NULL"
    if s.values and all(r[i] is None for r in answer.rows for i in s.values):
        return f"{label}'s aggregates on D' are all NULL"
    return None


@dataclass
class Assessment:
    """The rank of one separating instance, and why it is not better."""

    rank: int
    why: list[str] = field(default_factory=list)
    errors: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass
class Meaning:
    """Ranks the separating instances of one pair of queries (see the module's doc)."""

    shapes: tuple[Shape, Shape]
    on_d: tuple[Keyed, Keyed]
    aggregated: bool
    differing: list[frozenset[int]]  # witnesses of W1-W2 and W2-W1 (a sample)
    # Every witness of each query (W1, W2), when the pool holds them all; None when it
    # holds a sample only (then whether D' holds one is not known).
    witnesses: tuple[list[frozenset[int]] | None, list[frozenset[int]] | None] = (None, None)
    # How each answer on D is itself degenerate (all NULL, say), or None: an answer on D'
    # degenerate in the same way has kept its meaning.
    as_on_d: tuple[str | None, str | None] = (None, None)
    # Witnesses of each query the pool holds, whole or a sample: one of them in D' is
    # enough to know that D' holds a witness, though not that it holds none.
    held: tuple[Sequence[frozenset[int]], Sequence[frozenset[int]]] = ((), ())

    @classmethod
    def of(cls, trees: Sequence[exp.Query], on_d: Sequence[Rows],
           differing: Collection[Sequence[int]],
           witnesses: Sequence[Collection[Sequence[int]] | None] = (None, None),
           keyed_on_d: Callable[[int, Callable[[], Keyed]], Keyed] | None = None,
           normal_on_d: Callable[[int], Normal] | None = None,
           held: Sequence[Collection[Sequence[int]]] | None = None,
           ) -> "Meaning":
        """``witnesses``: each query's every witness, None where not known whole;
        ``held``: each query's witnesses known, whole or a sample (default: ``witnesses``);
        ``keyed_on_d(i, compute)``: query ``i``'s answer on D keyed, given how to
        compute it (a tournament keeps it per candidate, for all its duels);
        ``normal_on_d(i)``: that answer normalised."""
        s1, s2 = (shape(t, len(a.columns)) for t, a in zip(trees, on_d, strict=True))
        aggregated = bool(s1.values or s2.values) or any(
            is_aggregate_call(n) for t in trees for n in t.walk())
        known = tuple(None if ws is None else [frozenset(w) for w in ws] for ws in witnesses)
        sampled = tuple([frozenset(w) for w in ws] for ws in held) if held is not None \
            else tuple(ws or [] for ws in known)
        as_on_d = (degenerate_reason("q1", on_d[0], s1), degenerate_reason("q2", on_d[1], s2))
        ask = keyed_on_d or (lambda i, compute: compute())
        keyed_d = tuple(ask(i, partial(keyed, a.rows, s,
                                       None if normal_on_d is None else normal_on_d(i)))
                        for i, (a, s) in enumerate(zip(on_d, (s1, s2), strict=True)))
        return cls((s1, s2), (keyed_d[0], keyed_d[1]), aggregated,
                   [frozenset(w) for w in differing], (known[0], known[1]), as_on_d,
                   (sampled[0], sampled[1]))

    def assess(self, rows: Collection[int], answers: tuple[Rows, Rows],
               normal: Callable[[Rows], Normal] | None = None) -> Assessment:
        """The rank of the instance ``rows`` on which the queries answer ``answers``;
        ``normal``: an answer normalised, if kept (:meth:`.pair.Pair.normal`)."""
        errors = {label: a.error() for label, a in zip(("q1", "q2"), answers, strict=True)
                  if isinstance(a, Failed)}
        if errors:
            return Assessment(FAILED, [f"{k} fails on D': {v['message']} (SQLSTATE "
                                       f"{v['sqlstate']})" for k, v in errors.items()], errors)
        reasons = [] if rows else ["the instance is empty"]
        have = set(rows)
        reasons += [r for i, (label, a, s) in enumerate(zip(("q1", "q2"), answers, self.shapes,
                                                             strict=True))
                    if (r := degenerate_reason(label, a, s))
                    # Empty as on D, or NULL from no row as on D: no row of D gives it,
                    # so there is no witness to hold.
                    and not (r == self.as_on_d[i] and (not a.rows or self.reads_own(i, have)
                                                       or self.reads_nothing(i)))]
        if rows and not reasons:
            reasons += [f"{label}'s aggregates on D' read none of its rows"
                        for i, (label, s) in enumerate(zip(("q1", "q2"), self.shapes,
                                                           strict=True))
                        if s.values and any(self.witnesses[i] or ())
                        and not self.reads_own(i, have)]
        if reasons:
            return Assessment(DEGENERATE, reasons)
        why = self.unfaithful(rows, answers, normal)
        return Assessment(NON_DEGENERATE, [why]) if why else Assessment(MEANINGFUL)

    def reads_own(self, side: int, have: set[int]) -> bool:
        """Whether D' (the rows ``have``) holds a whole non-empty witness of the query
        ``side`` (0: q1, 1: q2) among those the pool holds (False when it holds none of
        them: a witness the sample missed is not seen).

        An aggregate over none of its witnesses ran over no row (a COUNT of nothing is 0
        where the question's SUM of nothing is NULL: the judge cannot tell which is meant),
        and an answer degenerate on D' as it is on D (a NULL top row) keeps its meaning only
        when it comes from rows that give it on D. The empty witness (a scalar aggregate
        answers on no rows too) reads nothing."""
        return any(w and w <= have for w in self.held[side])

    def reads_nothing(self, side: int) -> bool:
        """Whether the query ``side`` reads no row of D: its witnesses known whole, each
        empty (an aggregate whose filter matches nothing answers NULL from no row, on D
        as on every D')."""
        known = self.witnesses[side]
        return known is not None and not any(known)

    def unfaithful(self, rows: Collection[int], answers: tuple[Rows, Rows],
                   normal: Callable[[Rows], Normal] | None = None) -> str | None:
        """Why the disagreement on D' is not a piece of the one on D, or None."""
        here = tuple(keyed(a.rows, s, None if normal is None else normal(a))
                     for a, s in zip(answers, self.shapes, strict=True))
        d = self.on_d
        for i, label in ((0, "q1"), (1, "q2")):
            j = 1 - i
            for key in here[i].keys() - here[j].keys():
                if key not in d[i] or key in d[j]:
                    return (f"{label}'s answer on D' has a {'group' if self.aggregated else 'row'}"
                            " the other's lacks, which is not so on D")
        for key in here[0].keys() & here[1].keys():
            if here[0][key] != here[1][key] and key in d[0] and key in d[1] \
                    and d[0][key] == d[1][key]:
                return "a group differs on D' that is the same on D"
        if self.aggregated and self.differing:
            have = set(rows)
            if not any(w <= have for w in self.differing):
                return ("D' holds no whole witness of the difference (a row of one query's "
                        "answer that is none of the other's)")
        return None
