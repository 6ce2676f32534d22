"""Two queries evaluated side by side on D and on sub-instances D' of D.

Verification is the only judge of separation: a row set separates when both queries,
run by PostgreSQL on exactly those rows, give different answers (see :func:`same_result`).
Results are cached per row set.

A query may fail on D' where it ran on D (a division by a count that is now 0, a scalar
subquery that now returns two rows). Such an error depends on the rows, so it is the
query's answer on D' (:class:`Failed`), not a failure of the call: the search skips those
instances, and uses one only when nothing else separates (see docs/instances.md).
"""

import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from sqlglot import exp

from siselect.instances.batch import run_together
from siselect.instances.shadow import Bound, RowsByTable, restricted_sql
from siselect.instances.ties import (
    inner_cut,
    rows_before,
    tie_explained,
    tie_sensitive,
    uncut,
    with_ties,
)
from siselect.instances.witness_cache import WitnessCache
from siselect.runtime import privileges, rowids
from siselect.runtime.answers import (
    SEEN_BY_JUDGE,
    as_seen_by_judge,
    has_null_row,
    normal_answer,
    same_answer,
    same_normalised,
)
from siselect.runtime.bounded import keep
from siselect.runtime.catalog import Catalog
from siselect.runtime.errors import AnswerTooLarge, QueryFailed
from siselect.runtime.executor import Executor, Rows
from siselect.sqltext import nondeterminism

T = TypeVar("T")
MAX_ANSWER_ROWS = 100_000
#: Batches of row sets that may fail in one pair (:meth:`Pair.prefetch`) before it stops
#: batching: a query that fails on many sets would fail batch after batch.
BATCHES_FAILED_MOST = 2
#: SQLSTATE classes of errors caused by the rows a query reads: 21 cardinality violation
#: (a scalar subquery with two rows), 22 data exception (division by zero, a bad cast).
#: Others (time limits, privileges, an answer too large) still end the call or the pair.
DATA_ERROR_CLASSES = ("21", "22")
#: The column under which a failed answer shows its error (no query's own column is named so).
ERROR_COLUMN = "siselect: error"


#: An answer normalised, and whether it holds a row of NULLs (:func:`.answers.normal_answer`).
Normal = tuple[frozenset, bool]


def same_result(a_rows: Sequence[Sequence[Any]], b_rows: Sequence[Sequence[Any]],
                normal: tuple[Normal, Normal] | None = None) -> bool:
    """Whether two answers are the same, as a separation reads them: the same set of rows
    (:func:`siselect.runtime.answers.same_answer`: tolerance, column order and duplicates
    ignored), and a row of NULLs in both or in neither. ``same_answer`` drops all-NULL rows,
    but BIRD's rule (sets of row tuples) and exact grouping do not: one all-NULL row
    (``SUM`` over nothing) and no row at all are two answers, and two groups whose duel
    must be separated, not drawn as the same answer. ``normal``: both answers already
    normalised (:data:`Normal`)."""
    if normal is not None:
        return same_normalised(normal[0][0], normal[1][0]) and normal[0][1] == normal[1][1]
    return same_answer(a_rows, b_rows) and has_null_row(a_rows) == has_null_row(b_rows)


def judged_alike(a: Normal, b: Normal) -> bool:
    """Whether two normalised answers that differ (:func:`same_result`) differ only where
    no judge's comparison looks: numeric text against the number it spells ('214226.23',
    the ``MAX`` of a text column, against 214226.23, a ``SUM`` of it). Every judge's
    answer that matches one matches the other, so a D' on which they differ so decides
    nothing."""
    (rows_a, nulled_a), (rows_b, nulled_b) = as_seen_by_judge(a[0]), as_seen_by_judge(b[0])
    return same_normalised(rows_a, rows_b, SEEN_BY_JUDGE) \
        and (a[1] or nulled_a) == (b[1] or nulled_b)


NORMAL_KEPT = 64  # answers on D's a pair keeps normalised (see Pair.normal)

#: An answer with more rows (or bytes) than siselect compares (program_limit_exceeded).
TOO_LARGE = AnswerTooLarge.sqlstate


def _pick_probes(tree: exp.Query) -> nondeterminism.Probes | None:
    """``tree``'s probes when it picks a bare column's value (else None: nothing to run)."""
    return nondeterminism.probes(tree) if nondeterminism.has_picks(tree) else None


def run_capped(executor: Executor, tree: exp.Query, max_rows: int = MAX_ANSWER_ROWS,
               text: Bound | None = None) -> Rows:
    """``tree`` run: on D, or on a D' as ``text`` (:func:`.shadow.restricted_sql`), a
    statement planned for a few rows a table (``small``)."""
    rows = (executor.run(tree.sql(dialect="postgres"), max_rows=max_rows) if text is None
            else executor.run(text.sql, max_rows=max_rows, params=text.params, small=True))
    if rows.truncated:
        raise QueryFailed(
            f"the answer has more than {max_rows} rows, the most siselect compares", TOO_LARGE
        )
    return rows


def _within_size(compute: Callable[[], T]) -> T | None:
    """``compute()``, or None when an answer has more rows (or bytes) than siselect
    compares."""
    try:
        return compute()
    except QueryFailed as exc:
        if exc.sqlstate != TOO_LARGE:
            raise
        return None


def _given(rows: Rows) -> Rows:
    return rows


class BudgetExceeded(QueryFailed):
    """The call's total time budget ran out between two queries."""


@dataclass
class Failed(Rows):
    """A query's answer on D' when it failed there with an error caused by the rows.

    It reads as one row holding the error under :data:`ERROR_COLUMN`, so that whoever
    compares answers without knowing of failures still sees a different answer, one that
    no answer of a query equals.
    """

    sqlstate: str = ""
    message: str = ""

    def error(self) -> dict[str, str]:
        return {"message": self.message, "sqlstate": self.sqlstate}


def failure(exc: QueryFailed) -> Failed:
    return Failed(columns=[ERROR_COLUMN], rows=[(f"ERROR {exc.sqlstate}: {exc.message}",)],
                  sqlstate=exc.sqlstate, message=exc.message)


def is_data_error(exc: QueryFailed) -> bool:
    return not isinstance(exc, BudgetExceeded) and exc.sqlstate[:2] in DATA_ERROR_CLASSES


def failed_relation(relation: dict[str, Any]) -> bool:
    """Whether an answer as JSON (``{"columns", "rows"}``) is a :class:`Failed` one."""
    return relation.get("columns") == [ERROR_COLUMN]


@dataclass
class Timer:
    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def add(self, phase: str, started: float) -> None:
        self.seconds[phase] += time.perf_counter() - started


def group_rows(rows: Iterable[int], catalog: Catalog) -> dict[str, list[int]]:
    """Encoded row ids -> ``{relation name: [row id, ...]}`` (see :mod:`.shadow`)."""
    grouped: dict[str, list[int]] = defaultdict(list)
    names: dict[int, str] = {}  # a catalog look-up per table, not per row
    for rowid in sorted(set(rows)):
        number = rowids.table_number(rowid)
        if number not in names:
            names[number] = catalog.by_number(number).name
        grouped[names[number]].append(rowid)
    return dict(grouped)


@dataclass
class OnRows:
    """A tournament's answers on D's by the statement that computed them, shared by its duels.

    A pair separated again (away from an earlier instance, per unit of a group split on a
    D') or in the other order tests the same row sets first, as the search is seeded: the
    same text on the same D in one read-only call gives the same answer. Bounded by the
    rows held: emptied when they pass :data:`HELD`."""

    answers: dict[Bound, Rows] = field(default_factory=dict)
    held: int = 0

    HELD = 200_000

    def get(self, text: Bound, compute: Callable[[], Rows]) -> Rows:
        found = self.answers.get(text)
        if found is None:
            found = compute()
            if self.held + len(found.rows) > self.HELD:
                self.answers.clear()
                self.held = 0
            self.answers[text] = found
            self.held += len(found.rows) + 1
        return found


@dataclass
class Pair:
    executor: Executor
    catalog: Catalog
    trees: tuple[exp.Query, exp.Query]
    timer: Timer = field(default_factory=Timer)
    tests: int = 0
    failed_tests: int = 0  # row sets tested on which a query failed
    deadline: float | None = None  # time.monotonic() value after which work stops
    # A tournament's: each candidate's witnesses and facts, computed once for all its duels.
    witnesses: WitnessCache | None = None
    on_rows: OnRows | None = None  # a tournament's answers on D's, shared by its duels
    # The other members of the two queries' groups (equal answers on D): what D keeps
    # through their joins, D' keeps too (separate._kept_joins).
    related: tuple[exp.Query, ...] = ()
    progress: Callable[[int], None] | None = None  # told the row sets tested, after each
    _cache: dict[frozenset[int], tuple[Rows, Rows]] = field(default_factory=dict)
    # by id of one of trees and the rows kept with their ties (None: the query's own)
    _tied: dict[tuple[int, int | None], exp.Query] = field(default_factory=dict)
    # The probes of the inner-tie check, by id of one of trees (nondeterminism.probes).
    _inner: dict[int, nondeterminism.Probes] = field(default_factory=dict)
    # The probes of the picks check, by id of one of trees (None: it picks nothing).
    _picks: dict[int, nondeterminism.Probes | None] = field(default_factory=dict)
    _grouped: tuple[frozenset[int], RowsByTable] | None = None
    _normal: dict[int, tuple[Rows, Normal]] = field(default_factory=dict)  # see normal
    # Answers fetched ahead by prefetch, by text: each is taken once, by the run it stands for.
    _ahead: dict[Bound, Rows] = field(default_factory=dict)
    _batches_failed: int = 0
    _learned: dict[str, set] = field(default_factory=dict)  # see learned, outside a tournament

    def __post_init__(self) -> None:
        # Before any restrict(): it must not name columns the caller may not read.
        privileges.denied(self.executor, self.catalog)

    def run_strict(self, tree: exp.Query, max_rows: int = MAX_ANSWER_ROWS,
                   text: Bound | None = None) -> Rows:
        """Run ``tree`` (or ``text``, what it became: errors are explained by ``tree``); an
        answer cut at ``max_rows`` cannot be compared, so it is an error."""
        self.check_budget()
        try:
            return run_capped(self.executor, tree, max_rows, text)
        except QueryFailed as exc:
            raise privileges.explain(exc, tree, self.catalog) from None

    def run(self, tree: exp.Query, max_rows: int = MAX_ANSWER_ROWS,
            text: Bound | None = None) -> Rows:
        """:meth:`run_strict`, but an error caused by the rows read is the answer
        (:class:`Failed`): what a query, or a reference judge's query, gives on D'."""
        try:
            return self.run_strict(tree, max_rows, text)
        except QueryFailed as exc:
            if is_data_error(exc):
                return failure(exc)
            raise

    def run_on(self, tree: exp.Query, grouped: RowsByTable) -> Rows:
        """``tree`` on the rows ``grouped`` (see :meth:`run`)."""
        text = restricted_sql(tree, self.catalog, grouped)
        ahead = self._ahead.pop(text, None)
        compute = partial(self.run, tree, text=text) if ahead is None else partial(_given, ahead)
        if self.on_rows is None:
            return compute()
        return self.on_rows.get(text, compute)

    def prefetch(self, row_sets: Iterable[Iterable[int]]) -> None:
        """Both queries' answers on each of ``row_sets`` not tested yet, fetched together:
        one statement per query for all the sets (:mod:`.batch`) instead of one per query
        and set, and likewise the ``WITH TIES`` answers a differing pair needs. The tests
        (:meth:`answers_on`, :meth:`separation`) then run as before and take these answers
        where they would have run their statements: the same sets are tested, in the same
        order, with the same answers. A batch that fails (a query failing on one of its
        sets) leaves each set to its own statements; after two, the pair stops batching."""
        if self._batches_failed >= BATCHES_FAILED_MOST:
            return
        keys = list(dict.fromkeys(frozenset(rows) for rows in row_sets))
        sets = [group_rows(key, self.catalog) for key in keys if key not in self._cache]
        if len(sets) < 2:
            return
        started = time.perf_counter()
        self._ahead.clear()  # what the last batch's tests did not reach, they never will
        answers: list[list[Rows] | None] = []
        for tree in self.trees:
            answers.append(self._fetch_ahead(tree, sets))
            if answers[-1] is None:
                break
        tied = [t for t in self.trees if tie_sensitive(t)]
        if tied and len(answers) == 2 and all(a is not None for a in answers):
            differing = [g for g, a1, a2 in zip(sets, *answers, strict=True)  # type: ignore[misc]
                         if self.differ(a1, a2)]
            for tree in tied:
                self._fetch_ahead(self.with_ties(tree), differing)
        self.timer.add("verification", started)

    def _fetch_ahead(self, tree: exp.Query, sets: Sequence[RowsByTable]) -> list[Rows] | None:
        """``tree``'s answers on ``sets`` (:meth:`prefetch`), kept by text; None when the
        batch failed."""
        texts = [restricted_sql(tree, self.catalog, g) for g in sets]
        known = dict(self._ahead)
        if self.on_rows is not None:
            known.update((t, self.on_rows.answers[t]) for t in texts
                         if t in self.on_rows.answers)
        todo = list(dict.fromkeys(t for t in texts if t not in known))
        if len(todo) >= 2:
            self.check_budget()
            got = run_together(self.executor, todo, MAX_ANSWER_ROWS)
            if got is None:
                self._batches_failed += 1
                return None
            self._ahead.update(zip(todo, got, strict=True))
            known.update(zip(todo, got, strict=True))
        elif todo:
            return None
        return [known[t] for t in texts]

    def remember(self, kind: str, tree: exp.Query, compute: Callable[[], T]) -> T:
        """``compute()``, a fact of the query ``tree`` alone: once per tournament."""
        if self.witnesses is None:
            return compute()
        return self.witnesses.remember(kind, tree, compute)

    def learned(self, kind: str) -> set:
        """What this pair's searches learned of ``kind``, kept for the tournament (for
        this pair object alone outside one)."""
        if self.witnesses is None:
            return self._learned.setdefault(kind, set())
        return self.witnesses.learned(kind, self.trees)

    def check_budget(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise BudgetExceeded("the time budget of this call is spent", "57014")

    def answers_on(self, rows: Iterable[int]) -> tuple[Rows, Rows]:
        """Both queries' answers on D' = ``rows`` (encoded row ids); either may be
        :class:`Failed`."""
        key = frozenset(rows)
        if key not in self._cache:
            started = time.perf_counter()
            grouped = self.grouped(key)
            self._cache[key] = (self.run_on(self.trees[0], grouped),
                                self.run_on(self.trees[1], grouped))
            self.tests += 1
            if any(isinstance(a, Failed) for a in self._cache[key]):
                self.failed_tests += 1
            self.timer.add("verification", started)
            if self.progress is not None:
                self.progress(self.tests)
        return self._cache[key]

    def grouped(self, key: frozenset[int]) -> RowsByTable:
        """``group_rows(key)``, once for the row set being tested (its answers and its tie
        checks both need it; a thousand rows take a third of a millisecond)."""
        if self._grouped is None or self._grouped[0] is not key:
            self._grouped = (key, group_rows(key, self.catalog))
        return self._grouped[1]

    def normal(self, answer: Rows) -> Normal:
        """``answer`` normalised (:func:`.answers.normal_answer`), once per answer: a row set
        tested compares its two answers, then ranks their meaning, each reading them so
        (three passes over every row of each before)."""
        found = self._normal.get(id(answer))
        if found is None or found[0] is not answer:
            found = keep(self._normal, id(answer), (answer, normal_answer(answer.rows)),
                         NORMAL_KEPT)
        return found[1]

    def differ(self, a1: Rows, a2: Rows) -> bool:
        """Whether two answers of the pair on one D' differ (:func:`same_result`) where a
        judge sees it (:func:`judged_alike`)."""
        normal = (self.normal(a1), self.normal(a2))
        return not same_result(a1.rows, a2.rows, normal) and not judged_alike(*normal)

    def separation(self, rows: Iterable[int]) -> tuple[Rows, Rows] | None:
        """Both answers on ``rows`` when they tell the queries apart, else None.

        Answers tell them apart when they differ, and not only by how ties at a LIMIT were
        broken; an error tells its query apart from one that runs (both failing does not).
        A set on which an answer, or an answer with ties kept, has more rows than siselect
        compares (a LIMIT without ORDER BY over a cross join of many rows) separates
        nothing: no tie can be ruled out there, and a smaller set can tell.
        """
        key = frozenset(rows)
        answers = _within_size(lambda: self.answers_on(key))
        if answers is None:
            return None
        a1, a2 = answers
        failed = [isinstance(a, Failed) for a in (a1, a2)]
        if any(failed):
            return (a1, a2) if not all(failed) else None
        if not self.differ(a1, a2):
            return None
        grouped = self.grouped(key)
        if any(tie_sensitive(t) for t in self.trees):
            relaxed = _within_size(lambda: tuple(self.run_on(self.with_ties(t), grouped)
                                                 for t in self.trees))
            if relaxed is None:
                return None
            r1, r2 = relaxed
            # No tie explains an error.
            if not isinstance(r1, Failed) and not isinstance(r2, Failed) \
                    and tie_explained(a1, a2, r1, r2,
                                      *(partial(self._before_tie, t, grouped, len(a.rows), r)
                                        for t, a, r in zip(self.trees, answers, relaxed,
                                                           strict=True))):
                return None
        if any(self._inner_ties(t, grouped) for t in self.trees):
            return None
        if self.picks_explain(a1, a2, grouped):
            return None
        return a1, a2

    def with_ties(self, tree: exp.Query, count: int | None = None) -> exp.Query:
        """``with_ties(tree, count)`` for one of the pair's trees, made once per pair: one
        tree, whose text on D' is written once per shape
        (:func:`~siselect.instances.shadow.restricted_sql`)."""
        key = (id(tree), count)
        if key not in self._tied:
            self._tied[key] = with_ties(tree, count)
        return self._tied[key]

    def _before_tie(self, tree: exp.Query, grouped: RowsByTable, kept: int, relaxed: Rows
                    ) -> Rows | None:
        """The rows ``tree`` keeps on D' ahead of the tie at its cut (:func:`.ties.rows_before`);
        None when a form with fewer rows fails there."""
        def at(count: int) -> Rows | None:
            got = self.run_on(self.with_ties(tree, count), grouped)
            return None if isinstance(got, Failed) else got

        return rows_before(at, kept, relaxed)

    def _inner_ties(self, tree: exp.Query, grouped: RowsByTable) -> bool:
        """Whether ``tree``'s answer on D' hangs on ties at a cut below its top level (two
        events of one attendance each, the top one taken in a derived table): such an
        answer tells nothing, as the judge may break the tie either way."""
        if not self.remember("inner cut", tree, partial(inner_cut, tree)):
            return False
        if id(tree) not in self._inner:
            # Without its top-level cut (with_ties reads that one): check sees the inner ones.
            # Made once, so that each probe is one object whose text on D' restricted_sql
            # writes once per shape (financial 95 spent a third of its tournament writing a
            # new copy per row set; student_club x100 1365 a fifth copying the query).
            self._inner[id(tree)] = self.remember(
                "inner tie probes", tree, lambda: nondeterminism.probes(uncut(tree)))
        made = self._inner[id(tree)]
        return nondeterminism.probe(self._variants_on(made, grouped), made) is not None

    def picks_explain(self, a1: Rows, a2: Rows, grouped: RowsByTable | None = None) -> bool:
        """Whether answers that differ, on D' = ``grouped`` (on D without), differ only by
        the rows bare columns take their values from: both answers hang on their picks
        there, and an answer of one with its picks (and ties) broken another way equals one
        of the other's. A judge can only guess which row either took (the same
        COUNT-ranked group, its language taken from another row). Where one answer is
        determined (a card's earliest ruling date, against any one of its dates), an
        instance on which the other's pick differs from it asks the judge what the
        question means, and still separates."""
        if len(a1.rows) != len(a2.rows):  # a pick changes values, not how many rows
            return False
        possible = []
        for tree, answer in zip(self.trees, (a1, a2), strict=True):
            found = self.possible_answers(tree, answer, grouped)
            if not any(self.differ(answer, other) for other in found[1:]):
                return False
            possible.append(found)
        return any(not self.differ(x, y) for x in possible[0] for y in possible[1])

    def possible_answers(self, tree: exp.Query, answer: Rows,
                         grouped: RowsByTable | None = None) -> list[Rows]:
        """``answer``, ``tree``'s on D' = ``grouped`` (on D without), and, where ``tree``
        picks a bare column's value, its answers with picks and ties broken each way
        :func:`~siselect.sqltext.nondeterminism.check` tries."""
        if id(tree) not in self._picks:  # asked of every row set tested, also outside a
            # tournament (where remember keeps nothing): the tree is walked once
            self._picks[id(tree)] = self.remember("pick probes", tree,
                                                  partial(_pick_probes, tree))
        made = self._picks[id(tree)]
        if made is None:
            return [answer]
        if grouped is None:  # D: once per query in a tournament
            return self.remember("possible answers on D", tree, partial(
                nondeterminism.possible_answers, self.run_strict, made, answer))
        return nondeterminism.possible_answers(self._variants_on(made, grouped), made, answer)

    def _variants_on(self, made: nondeterminism.Probes, grouped: RowsByTable
                     ) -> Callable[[exp.Query], Rows]:
        """What runs each probe of ``made`` on D' = ``grouped``: their answers fetched first
        in one statement (:mod:`.batch`; a search checks hundreds of sets, four to six
        probes each), a probe run alone where that statement failed or left it out."""
        texts = {id(v): restricted_sql(v, self.catalog, grouped)
                 for v in (*(v for _, v in made.variants), *(made.concat or ()))}
        todo = list(dict.fromkeys(texts.values()))
        got = None
        if len(todo) >= 2:
            self.check_budget()
            got = run_together(self.executor, todo, MAX_ANSWER_ROWS)
        ahead = {} if got is None else dict(zip(todo, got, strict=True))

        def run(variant: exp.Query) -> Rows:
            text = texts.get(id(variant))
            if text is None:
                text = restricted_sql(variant, self.catalog, grouped)
            found = ahead.get(text)
            return found if found is not None else self.run_strict(variant, text=text)
        return run

    def separates(self, rows: Iterable[int]) -> bool:
        """Both queries run on ``rows`` without error and their answers differ there."""
        found = self.separation(rows)
        return found is not None and not any(isinstance(a, Failed) for a in found)
