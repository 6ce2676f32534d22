"""Separating instances (paper section II): a few real rows on which Q1 and Q2 disagree.

The pipeline, like the paper's Figure 1 left half:
parse -> run both on D -> witnesses (lineage) -> propose row sets -> verify -> minimise.
"""

import random
import time
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from itertools import chain
from typing import Any

from sqlglot import exp

from siselect.instances import integrity
from siselect.instances.backends import Served, serve
from siselect.instances.blocks import block_columns, witness_blocks
from siselect.instances.inclusions import Closure, new_facts
from siselect.instances.meaning import (
    DEGENERATE,
    FAILED,
    MEANINGFUL,
    NON_DEGENERATE,
    RANK_NAMES,
    Assessment,
    Meaning,
)
from siselect.instances.minimise import ddmin, ddmin_blocks, shown_ahead
from siselect.instances.neighbours import links, neighbours
from siselect.instances.pair import (
    BudgetExceeded,
    Normal,
    Pair,
    Timer,
    judged_alike,
    same_result,
)
from siselect.instances.references import (
    declared_keys,
    fetch_instance,
    referenced_rows,
    rows_of_tables,
    tables_read,
)
from siselect.instances.search import (
    Pool,
    growing_proposals,
    one_sided_proposals,
    paper_proposals,
    paper_sizes,
)
from siselect.instances.shadow import require_row_ids
from siselect.instances.targeted import counted_variants, value_proposals
from siselect.instances.ties import (
    inner_cut,
    rows_before,
    tie_explained,
    tie_sensitive,
    uncut,
)
from siselect.instances.unknowns import null_rows, tested_columns, unknown_rows
from siselect.instances.witness_cache import witness_rows
from siselect.runtime import deadline
from siselect.runtime.answers import normal_answer
from siselect.runtime.catalog import Catalog, load_catalog
from siselect.runtime.errors import InvalidInput, QueryFailed, SiselectError
from siselect.runtime.executor import Executor, Rows
from siselect.runtime.results import SeparationResult, serialise
from siselect.sqltext import nondeterminism
from siselect.sqltext.transpile import to_read_tree, to_tree
from siselect.witnesses import BACKENDS, Lineage, executor_for

STRATEGIES = ("minimal", "paper")
UNION_LIMIT = 20_000  # rows: beyond this the whole-lineage fallback is not tried
#: Distinct row sets tested minimising an instance of a better rank, while the smallest
#: found is still above max_rows, before settling for a worse one (the worst rank found has
#: a limit of its own, ``SETTLING_TRIES``); it also stops once half the pair's budget is
#: spent (``_time_left``), as the search for better instances does: sets of thousands of
#: rows that halving does not shrink (the whole lineage, the only set of its rank) can cost
#: seconds each. Once a set fits max_rows its minimisation runs to the end:
#: an instance returned is always 1-minimal.
IMPROVING_TRIES = 300
#: The same limit for the worst level's minimisation, which settles for what it finds: past
#: it, the smallest set found so far is the answer (still above max_rows, so the search
#: fails and says how large it is). A set that halving no longer shrinks sheds rows one at a
#: time, a test each at least, or is 1-minimal already and each of its rows is tested
#: (yardstick european_football_2 1032: 8,794 sets, 88 s, to a 1-minimal 1,408 rows where a
#: 2-row instance exists that no proposal holds; california_schools 57, an OFFSET 332: ten
#: pairs each testing 1,400 sets of 666 rows). In the whole K=5, K=24 and generated
#: yardsticks, none of the worst levels' minimisations that began above max_rows ended
#: within it (16 of 16).
SETTLING_TRIES = IMPROVING_TRIES
#: Rows from which a minimisation removes whole blocks first (:func:`.minimise.ddmin_blocks`;
#: groups, values of a column ordered under a cut: :mod:`.blocks`): from the whole lineage of a
#: ``GROUP BY ... HAVING COUNT(*) >= 5`` against a ``DISTINCT``, every half ddmin tries
#: thins some group below the threshold and changes what the instance means (superhero task
#: 751: 300 sets of 4,973 rows tested, 8 s, and still 4,041 rows).
BLOCKED_FROM = 120


@dataclass
class Options:
    dialect: str = "postgres"
    strategy: str = "minimal"
    max_rows: int = 30
    seed: int = 0
    backend: str = "auto"
    with_references: bool = False
    budget_seconds: float = 300.0  # per pair; the caller's statement_timeout bounds each query
    # Row ids no proposal may contain (a tournament separating a pair again, away from the
    # rows of its earlier instances).
    exclude: tuple[int, ...] = ()

    def check(self) -> "Options":
        if self.strategy not in STRATEGIES:
            raise InvalidInput(f"unknown strategy {self.strategy!r}; use {', '.join(STRATEGIES)}")
        if self.backend not in BACKENDS:
            raise InvalidInput(f"unknown backend {self.backend!r}; use {', '.join(BACKENDS)}")
        if self.max_rows is None or self.max_rows < 1:
            raise InvalidInput("max_rows must be at least 1")
        if self.seed is None:
            raise InvalidInput("seed must not be NULL")
        if not self.budget_seconds or self.budget_seconds <= 0:
            raise InvalidInput("budget_seconds must be positive")
        return self


def answer_json(rows: Rows) -> dict[str, Any]:
    return {"columns": rows.columns, "rows": [list(r) for r in rows.rows]}


def parse_pair(q1: str, q2: str, dialect: str, catalog: Catalog,
               executor: Executor | None = None) -> tuple[exp.Query, exp.Query]:
    """Both trees, or an error that names the query at fault. With ``executor``, the
    catalog also holds the schemas they name (:mod:`siselect.runtime.named_schemas`)."""
    trees = []
    for label, sql in (("q1", q1), ("q2", q2)):
        try:
            trees.append(to_tree(sql, dialect, catalog) if executor is None
                         else to_read_tree(sql, dialect, catalog, executor))
        except SiselectError as exc:
            raise type(exc)(f"{label}: {exc.message}", exc.sqlstate, exc.detail) from None
    return trees[0], trees[1]


def run_on_d(pair: Pair) -> tuple[Rows, Rows]:
    answers = []
    for label, tree in zip(("q1", "q2"), pair.trees, strict=True):
        try:
            answers.append(pair.run_strict(tree))
        except SiselectError as exc:  # refused by the call policy, or failed on D
            raise type(exc)(f"{label}: {exc.message}", exc.sqlstate, exc.detail) from None
    return answers[0], answers[1]


def separate(
    executor: Executor,
    q1: str,
    q2: str,
    options: Options | None = None,
    catalog: Catalog | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Separate ``q1`` and ``q2`` on the database behind ``executor``; a JSON-ready dict.

    Invalid queries and queries that fail on D raise :class:`SiselectError` (with the
    SQLSTATE); everything else is a ``status`` in the result. ``progress``: called with the
    number of row sets tested so far, after each (for a caller's progress line).
    """
    options = (options or Options()).check()
    started = time.perf_counter()
    catalog = catalog or load_catalog(executor)
    pair = Pair(executor, catalog, parse_pair(q1, q2, options.dialect, catalog, executor),
                progress=progress)
    a1, a2 = run_on_d(pair)
    pair.timer.add("execution", started)
    return separate_pair(pair, a1, a2, options, started)


def separate_pair(
    pair: Pair, a1: Rows, a2: Rows, options: Options, started: float | None = None
) -> dict[str, Any]:
    """Separate two parsed queries whose answers on D are ``a1`` and ``a2``."""
    started = time.perf_counter() if started is None else started
    if pair.deadline is None:
        pair.deadline = time.monotonic() + options.budget_seconds
    # The budget also bounds the Python work between queries (comparing, minimising).
    with deadline.scope(pair.deadline - time.monotonic(), exceeded=_budget_spent):
        result = _separate(pair, a1, a2, options, started)
        if options.strategy == "paper":
            return result
        return _away_from_unknowns(pair, a1, a2, options, started, result)


#: Separations again, at most, away from rows whose tested values are NULL.
UNKNOWN_TRIES = 2
_RANK_OF = {name: rank for rank, name in RANK_NAMES.items()}


def _away_from_unknowns(pair: Pair, a1: Rows, a2: Rows, options: Options, started: float,
                        result: dict[str, Any]) -> dict[str, Any]:
    """``result``, or the pair separated again away from the rows of D that hold NULL in a
    column the queries compare (:mod:`.unknowns`), when that gives an instance of a rank as
    good without any (a table may hold more of them than are left out: then once more, away
    from those of the new instance too)."""
    if result["status"] != "separated":
        return result
    tested = tested_columns(pair.trees, pair.catalog)
    excluded = set(options.exclude)
    unknown = _unknown_in(result, tested, pair.catalog)
    for attempt in range(UNKNOWN_TRIES):
        if not unknown:
            break
        # Every such row of D at once (one instance after another would find the next
        # district of unknown name), then those a table of more than NULL_ROWS_MOST kept.
        excluded |= set(unknown) if attempt else {
            *unknown, *null_rows(pair.executor, pair.catalog, tested)}
        again = _separate(pair, a1, a2, replace(options, exclude=tuple(sorted(excluded))),
                          started)
        if again["status"] != "separated" \
                or _RANK_OF[again["meaning"]] > _RANK_OF[result["meaning"]]:
            break
        unknown = _unknown_in(again, tested, pair.catalog)
        if not unknown:
            again["notes"].append(
                f"{len(excluded) - len(options.exclude)} rows left out that hold NULL in a "
                "column the queries compare: on so few rows a NULL decides the answers")
            return again
    return result


def _unknown_in(result: dict[str, Any], tested: dict[str, set[str]], catalog: Catalog
                ) -> list[int]:
    if result["status"] != "separated":
        return []
    return unknown_rows(result["instance"], result["row_ids"], tested, catalog)


def _same_on_d(pair: Pair, a1: Rows, a2: Rows) -> bool:
    """Whether the answers on D are the same (:func:`.pair.same_result`): once per pair of
    queries in a tournament, whichever way round and however often the pair is separated
    again (comparing two answers of tens of thousands of rows costs as much as a search)."""
    if pair.witnesses is None:
        return same_result(a1.rows, a2.rows)
    texts = tuple(sorted(pair.witnesses.text(t) for t in pair.trees))
    normal = (_normal_on_d(pair, 0, a1), _normal_on_d(pair, 1, a2))
    return pair.witnesses.once("same on D", lambda _: same_result(a1.rows, a2.rows, normal))(
        texts)


def _normal_on_d(pair: Pair, i: int, answer: Rows) -> Normal:
    """Query ``i``'s answer on D normalised, once per candidate in a tournament."""
    return pair.remember("normal on D", pair.trees[i], partial(normal_answer, answer.rows))


def _budget_spent() -> BudgetExceeded:
    return BudgetExceeded("the time budget of this call is spent", "57014")


def _separate(pair: Pair, a1: Rows, a2: Rows, options: Options, started: float
              ) -> dict[str, Any]:
    result: dict[str, Any] = {
        "status": None,
        "strategy": options.strategy,
        "backend": options.backend,
        "seed": options.seed,
        "sql": {"q1": pair.trees[0].sql("postgres"), "q2": pair.trees[1].sql("postgres")},
        "rows_on_d": {"q1": len(a1.rows), "q2": len(a2.rows)},
    }
    try:
        if _same_on_d(pair, a1, a2):
            return _finish(
                result,
                pair,
                started,
                "same_answer",
                "Q1 and Q2 give the same answer on the whole database",
            )
        tie = _tie_only(pair, a1, a2)
        if tie and any(nondeterminism.static_reason(t) for t in _tie_free(pair)):
            # Chance that no instance rules out (random(), the clock, a cut without ORDER
            # BY below the top); a top-level one is gone from the WITH TIES form, and each
            # instance's tie check sees whether its rows leave that cut a choice.
            return _finish(result, pair, started, "nondeterministic", tie)
        require_row_ids(pair.trees, pair.catalog)
        references, inclusions = _kept_joins(pair) if options.with_references else ([], [])
        closure = Closure(pair.executor, pair.catalog, inclusions, None if pair.witnesses
                          is None else pair.witnesses.once("inclusion facts", new_facts)())
        # Answers that differ on D only as ties allow may still come from queries that
        # differ (the year of the longest lap against the year of the slowest fastest
        # lap, tied on D): an instance without those ties tells them apart, and each
        # instance's own tie check (Pair.separation) rejects one that does not.
        proposed = _tie_free(pair) if tie else pair.trees
        found, chosen, meaning, notes = _search(pair, options, result, (a1, a2), closure,
                                                proposed)
        if found is None and tie and any(tie_sensitive(t) for t in pair.trees):
            # The tie groups may hold nothing that parts the queries (every tied row a NULL
            # consumption): the rows past the cut, from each query without its LIMIT. Only
            # an instance that keeps the question's meaning: there a degenerate one shows a
            # difference the question does not ask about (a NULL speed one query filters),
            # where D showed none but the ties.
            whole = _cuts_as(pair, uncut)
            past = _search(pair, options, result, (a1, a2), closure, whole)
            if past[0] is not None and _rank(pair, past[2], past[0]) < DEGENERATE:
                found, chosen, meaning, notes = past
                proposed = whole
    except BudgetExceeded as exc:
        return _finish(result, pair, started, "nondeterministic" if tie else "timeout",
                       tie or exc.message)
    result["notes"] = notes
    if found is None and tie:
        return _finish(result, pair, started, "nondeterministic", tie)
    if tie:
        notes.append(f"on D the answers differ only as ties allow ({tie}); on this instance "
                     "neither answer hangs on a tie")
    if found is None:
        ties = _unseparated_ties(pair, a1, a2)
        if ties:
            return _finish(result, pair, started, "nondeterministic",
                           f"no separating instance was found, and an answer on D is one of "
                           f"several: {ties}")
        left_out = len(options.exclude)
        why = f" without the {left_out} row{'s' * (left_out != 1)} of the pair's earlier " \
            "instances" if left_out else ""
        if judged_alike(_normal_on_d(pair, 0, a1), _normal_on_d(pair, 1, a2)):
            why += (": on D the answers differ only as numeric text against the number it "
                    "spells, which no judge tells apart")
        return _finish(result, pair, started, "failed", "no separating instance was found" + why)
    if len(found) > options.max_rows:
        result["rows"] = len(found)
        return _finish(
            result,
            pair,
            started,
            "failed",
            f"the smallest separating instance found has {len(found)} rows, "
            f"more than max_rows = {options.max_rows}",
        )
    if options.with_references:
        noted = len(result["notes"])
        closed = _with_references(pair, meaning, found, result, references, closure,
                                  options.max_rows)
        lost = FAILED + 1 if closed is None else _rank(pair, meaning, closed)
        if lost > _rank(pair, meaning, found):
            # No closure of the instance found keeps its rank (the answers agree, a query
            # fails, it passes max_rows, or it loses the question's meaning): a search whose
            # every row set keeps the keys may find a larger instance that does better.
            again = _key_closed(pair, options, result, (a1, a2), references, closure,
                                proposed, lost)
            if again is not None:
                del result["notes"][noted:]  # what the closures of the first one did
                result.pop("references_left_out", None)
                result["notes"].append(KEY_CLOSED)
                closed, chosen, meaning = again
        found = found if closed is None else closed
    if set(chosen) != set(found):
        result["chosen_row_ids"] = chosen
    d1, d2 = pair.answers_on(found)
    assessment = meaning.assess(found, (d1, d2))
    result.update(
        instance=fetch_instance(pair.executor, pair.catalog, found),
        rows=len(found),
        row_ids=found,
        answers={"q1": answer_json(d1), "q2": answer_json(d2)},
        **_described(assessment),
    )
    return _finish(result, pair, started, "separated", None)


def _described(assessment: Assessment) -> dict[str, Any]:
    """The result's account of the instance's rank: what it lacks, and errors."""
    described: dict[str, Any] = {
        "meaning": RANK_NAMES[assessment.rank],
        "degenerate": assessment.rank == DEGENERATE,
        "faithful": assessment.rank == MEANINGFUL,
    }
    if assessment.why:
        described["meaning_reason"] = "; ".join(assessment.why)
    if assessment.errors:
        described["errors"] = assessment.errors
    return described


def _cuts_as(pair: Pair, change: Callable[[exp.Query], exp.Query]
             ) -> tuple[exp.Query, exp.Query]:
    """The pair's queries, each one that cuts its answer at the top changed by ``change``."""
    t1, t2 = (change(t) if tie_sensitive(t) else t for t in pair.trees)
    return t1, t2


def _tie_free(pair: Pair) -> tuple[exp.Query, exp.Query]:
    """The queries whose witnesses hold what a search for answers that differ on D only by
    ties needs: each cut kept with its ties (the rows of one query's tie group that the
    other does not return are where they differ once the ties are gone)."""
    return _cuts_as(pair, pair.with_ties)


def _tie_reason(pair: Pair, tree: exp.Query, answer: Rows,
                relaxed: Callable[[], Rows]) -> str | None:
    """Why ``tree``'s ``answer`` on D hangs on ties or chance, or None: its text's reason,
    else D's (:func:`~siselect.sqltext.nondeterminism.data_reason`; ``relaxed()``: its
    ``WITH TIES`` answer on D, which :func:`_tie_only` needs anyway when there is a
    reason)."""
    return nondeterminism.static_reason(tree) or nondeterminism.data_reason(
        pair.run_strict, tree, answer, relaxed)


def _tie_only(pair: Pair, a1: Rows, a2: Rows) -> str | None:
    """Say so when the queries differ on D only by how ties are broken (or by chance): a
    query has a reason (:func:`_tie_reasons`) and a tie explains the difference
    (:func:`tie_explained`). A reason's probes run its query several times on D, so the
    cheaper half goes first: no tie explains answers of different sizes, none needs asking
    when neither query has anything to probe, then the WITH TIES answers decide whether a
    tie would explain the difference, and only then are the reasons looked for."""
    if len(a1.rows) != len(a2.rows):
        return None
    if not any(nondeterminism.static_reason(t) or nondeterminism.probed(t) for t in pair.trees):
        return None
    relaxed = partial(_relaxed, pair, (a1, a2), {})
    try:
        if not tie_explained(a1, a2, relaxed(0), relaxed(1),
                             *(partial(_before_on_d, pair, i, len(a.rows), relaxed)
                               for i, a in enumerate((a1, a2)))):
            return _picks_only(pair, a1, a2)
    except QueryFailed as exc:
        nondeterminism.no_verdict(exc)  # out of time: raised
        # The answers with ties kept cannot be had on D (more rows than siselect compares:
        # a LIMIT without ORDER BY over a cross join; an error past the cut): whether a tie
        # explains the difference is not known there, so the search goes on, and each
        # instance's own tie check decides on D' (before, the duel ended in that error).
        return None
    reasons = _tie_reasons(pair, (a1, a2), relaxed)
    return "; ".join(f"{k}: {v}" for k, v in reasons.items()) or None


def _picks_only(pair: Pair, a1: Rows, a2: Rows) -> str | None:
    """Why the answers on D differ only by the rows their bare columns take values from
    (:meth:`.Pair.picks_explain`), or None."""
    if not pair.picks_explain(a1, a2):
        return None
    return f"q1: {nondeterminism.PICKS}; q2: {nondeterminism.PICKS}"


def _relaxed(pair: Pair, answers: tuple[Rows, Rows], known: dict[int, Rows], i: int) -> Rows:
    """Query ``i``'s ``WITH TIES`` answer on D, run at most once per ``known`` even outside
    a tournament (where remember keeps nothing); not at all without a top-level LIMIT,
    where the WITH TIES form is the query."""
    if i not in known:
        tree = pair.trees[i]
        if not tie_sensitive(tree):
            known[i] = answers[i]
        else:
            known[i] = pair.remember("with ties", tree,
                                     lambda: pair.run_strict(pair.with_ties(tree)))
    return known[i]


def _before_on_d(pair: Pair, i: int, kept: int, relaxed: Callable[[int], Rows]) -> Rows | None:
    """The rows query ``i`` keeps on D ahead of the tie at its cut (:func:`.ties.rows_before`)."""
    tree = pair.trees[i]
    return rows_before(lambda count: pair.remember(
        f"with ties at {count}", tree, lambda: pair.run_strict(pair.with_ties(tree, count))),
        kept, relaxed(i))


def _tie_reasons(pair: Pair, answers: tuple[Rows, Rows], relaxed: Callable[[int], Rows],
                 asked: Callable[[exp.Query], bool] = lambda tree: True) -> dict[str, str]:
    """Why each query's answer on D hangs on ties or chance (:func:`_tie_reason`), by
    label, for the ``asked`` queries that have a reason (``relaxed(i)``: query i's
    :func:`_relaxed` answer)."""
    reasons = {}
    for i, (label, tree) in enumerate(zip(("q1", "q2"), pair.trees, strict=True)):
        if not asked(tree):
            continue
        reason = pair.remember("tie reason", tree, partial(
            _tie_reason, pair, tree, answers[i], partial(relaxed, i)))
        if reason:
            reasons[label] = reason
    return reasons


def _unseparated_ties(pair: Pair, a1: Rows, a2: Rows) -> str | None:
    """After a search that found nothing: why a query's answer on D is one of several in a
    way that can change its size (chance, or a tie at a cut below the top level, which
    :func:`_tie_only` does not look at: a top-level cut keeps its size), or None, also
    when the check runs out of time."""
    def resizable(tree: exp.Query) -> bool:
        return bool(nondeterminism.static_reason(tree)) or inner_cut(tree)

    try:
        reasons = _tie_reasons(pair, (a1, a2), partial(_relaxed, pair, (a1, a2), {}),
                               resizable)
    except QueryFailed:
        return None
    return "; ".join(f"{k}: {v}" for k, v in reasons.items()) or None


class _Best:
    """The smallest separating row set tested so far of each rank (ranks: :mod:`.meaning`).

    With a ``closure`` (:class:`.inclusions.Closure`), each row set is tested as it closes:
    the sets kept and minimised are the rows the search chose, the instance is their
    closure."""

    def __init__(self, pair: Pair, meaning: Meaning, closure: Callable[[list[int]], list[int]]
                 = list, witnesses: Callable[[], Sequence[Sequence[int]]] = list):
        self.pair, self.meaning, self.closure = pair, meaning, closure
        self.witnesses = witnesses  # see _held_witnesses
        self.by_rank: dict[int, list[int]] = {}
        # A start set's blocks, read once: the levels of one minimisation, and the search
        # taken up again after the targeted proposals, start from the same sets.
        self._units: dict[tuple[int, ...], list[tuple[Sequence[int], frozenset]]] = {}

    @property
    def rank(self) -> int:
        """The best rank found, or ``FAILED + 1`` when nothing separates yet."""
        return min(self.by_rank, default=FAILED + 1)

    def rank_of(self, rows: list[int]) -> int:
        return _rank(self.pair, self.meaning, self.closure(rows))

    def consider(self, rows: list[int]) -> int:
        rank = self.rank_of(rows)
        if rank <= FAILED and (rank not in self.by_rank or len(rows) < len(self.by_rank[rank])):
            self.by_rank[rank] = list(rows)
        return rank

    def ahead(self, proposals: Iterable[list[int]]) -> Iterator[list[int]]:
        """``proposals`` as they come, their answers fetched ahead in batches that double
        (:func:`.minimise.shown_ahead`, as ddmin's): the same sets are tested in the same
        order, with fewer statements."""
        return shown_ahead(proposals, lambda batch: self.pair.prefetch(
            self.closure(rows) for rows in batch if rows))

    def minimised(self, max_rows: int, time_left: Callable[[], bool] = lambda: True,
                  settle: bool = True, by_rank: dict[int, list[int]] | None = None,
                  unfit: set[int] | None = None, skip: Container[int] = ()
                  ) -> list[int] | None:
        """The best rank's set made 1-minimal within its rank; a worse rank's when the
        better one stays above ``max_rows`` (a meaningful instance can need many rows: a
        HAVING COUNT(*) > 15), within ``IMPROVING_TRIES`` tests and while ``time_left()``.
        The last level accepts any instance on which both queries run (the worst rank
        found, if worse), minimised within ``SETTLING_TRIES`` tests while above max_rows;
        with ``settle`` false it is held to ``max_rows`` like the others, and
        None comes back when nothing fits. ``by_rank``: the sets to start from, if not
        the ones found so far. A level above the worst that does not fit is added to
        ``unfit``; the levels in ``skip`` are not minimised unless a set of theirs fits
        already."""
        by_rank = self.by_rank if by_rank is None else by_rank
        if not by_rank:
            return None
        levels = sorted(set(by_rank) | {max(DEGENERATE, max(by_rank))})
        for level in levels:
            worst = level == levels[-1]
            last = settle and worst
            start = min((r for rank, r in by_rank.items() if rank <= level), key=len)
            if level in skip and not worst and len(start) > max_rows:
                continue
            rows = self._ddmin(start, level, max_rows, time_left, settle=last)
            if rows is not None and (last or len(rows) <= max_rows):
                return rows
            if unfit is not None and not worst:
                unfit.add(level)
        return None

    def _ddmin(self, rows: list[int], rank: int, max_rows: int,
               time_left: Callable[[], bool] = lambda: True, settle: bool = False
               ) -> list[int] | None:
        """``rows`` made 1-minimal within ``rank`` (every row's removal ranks worse), or
        None when ``IMPROVING_TRIES`` distinct sets were tested or ``time_left()`` says no,
        and none as good fits ``max_rows`` yet. The limit never cuts a minimisation short
        once a set fits: the smallest set so far is not 1-minimal, and ddmin then has at
        most ``max_rows`` rows to go. With ``settle`` (the worst level), the limit is
        ``SETTLING_TRIES``, the time left is not asked (the pair's deadline still holds),
        and the smallest set found comes back instead of None."""
        verdicts: dict[frozenset[int], bool] = {}  # ddmin tests some sets twice
        smallest = list(rows)
        tries = SETTLING_TRIES if settle else IMPROVING_TRIES

        def as_good(subset: list[int]) -> bool:
            nonlocal smallest
            key = frozenset(subset)
            if key not in verdicts:
                if len(smallest) > max_rows and (
                        len(verdicts) >= tries or not (settle or time_left())):
                    raise _Enough
                verdicts[key] = self.rank_of(subset) <= rank
                if verdicts[key] and len(subset) < len(smallest):
                    smallest = list(subset)
            return verdicts[key]

        def ahead(subsets: list[list[int]]) -> None:
            self.pair.prefetch(self.closure(s) for s in subsets if frozenset(s) not in verdicts)

        try:
            if len(rows) > BLOCKED_FROM and block_columns(self.pair.trees):
                rows = ddmin_blocks(rows, self._blocks_of(rows), as_good, ahead)
            return ddmin(rows, as_good, ahead)
        except _Enough:
            return smallest if settle else None

    def _blocks_of(self, rows: list[int]) -> list[tuple[Sequence[int], frozenset]]:
        """:func:`.blocks.witness_blocks` of a start set, once per set (in its order)."""
        key = tuple(rows)
        if key not in self._units:
            self._units[key] = witness_blocks(self.pair.executor, self.pair.catalog,
                                              self.pair.trees, self.witnesses(), rows)
        return self._units[key]


#: What a pair's searches learn for its next instances (:meth:`.pair.Pair.learned`): the
#: ranks whose minimisation did not fit max_rows.
UNFIT_LEVELS = "levels above max_rows"


class _Enough(Exception):
    """Minimising a better-ranked instance took its share of tests without fitting."""


def _time_left(pair: Pair, options: Options) -> bool:
    """Whether looking for a better instance may go on: at most half the budget on it."""
    return pair.deadline is None or pair.deadline - time.monotonic() > options.budget_seconds / 2


def _search(
    pair: Pair, options: Options, result: dict[str, Any], on_d: tuple[Rows, Rows],
    closure: Closure | None = None, proposed: tuple[exp.Query, exp.Query] | None = None,
    closed_only: bool = False,
) -> tuple[list[int] | None, list[int], Meaning, list[str]]:
    """The instance, the rows of it the search chose (the others are partners the closure
    added), its meaning's judge, and notes. With inclusions to keep (``closure``),
    instances that keep them come first: only when none separates within ``max_rows`` is
    one that breaks them searched for (unless ``closed_only``). The proposals come from the
    witnesses of the ``proposed`` queries (default: the pair's own)."""
    t0 = time.perf_counter()
    served = serve(pair.executor, proposed or pair.trees, pair.catalog, options.backend,
                   options.seed, pair.witnesses, defer=True)
    result["backend"], result["backend_reason"] = served.backend, served.reason
    if options.exclude and served.pool.finish is not None:
        # A pair separated again away from its earlier instances (the tournament's
        # overlapping instances, most of which find nothing) searches the pool as its
        # first search left it: that search separated without the completion.
        served = replace(served, pool=replace(served.pool, finish=None))
    try:
        return _searched(pair, options, on_d, closure, served, t0, closed_only)
    except _Unfinished:
        # Nothing meaningful from the classes the samples hold: the ones they did not see
        # completed on the server, and the search again from the start, as if they had
        # been there from the first (an empty completion leaves the pool as it was).
        assert served.pool.finish is not None
        t0 = time.perf_counter()
        return _searched(pair, options, on_d, closure, replace(served, pool=served.pool.finish()),
                         t0, closed_only)


class _Unfinished(Exception):
    """A search on a pool whose completion was deferred found nothing meaningful."""


def _searched(pair: Pair, options: Options, on_d: tuple[Rows, Rows], closure: Closure | None,
              served: Served, t0: float, closed_only: bool = False
              ) -> tuple[list[int] | None, list[int], Meaning, list[str]]:
    """:func:`_search` on the pool ``served``."""
    lineages, pool = served.lineages, _without(served.pool, options.exclude)
    notes = [f"q{i + 1}: {n}" for i, lin in enumerate(lineages) for n in lin.notes]
    meaning = Meaning.of(pair.trees, on_d, pool.only1 + pool.only2, _whole_witnesses(pool),
                         lambda i, compute: pair.remember("keyed on D", pair.trees[i], compute),
                         lambda i: _normal_on_d(pair, i, on_d[i]),
                         (pool.only1 + pool.both, pool.only2 + pool.both))
    pair.timer.add("lineage", t0)
    held = partial(_held_witnesses, pair, lineages, pool, {})
    if not closure:
        found = _explore(pair, options, _Best(pair, meaning, witnesses=held), lineages, pool,
                         notes)
        return found, found or [], meaning, notes
    # The proposals draw on the pool: what its rows join on, read at once (each read scans
    # the partners' table where its column has no index), not at every row set tested.
    closure.prefetch(r for w in (*pool.only1, *pool.only2, *pool.both) for r in w)
    found = _explore(pair, options, _Best(pair, meaning, closure, held), lineages, pool, notes)
    closed = None if found is None else closure(found)
    if closed is not None and len(closed) <= options.max_rows:
        if len(closed) > len(found or ()):
            notes.append(f"{len(closed) - len(found or ())} rows added so that each row "
                         "keeps a partner it has on D (an inclusion D keeps through a join)")
        return closed, found or [], meaning, notes
    if closed_only:
        return None, [], meaning, notes
    plain = _explore(pair, options, _Best(pair, meaning, witnesses=held), lineages, pool, notes)
    if plain is None:
        return closed, found or [], meaning, notes
    notes.append("no instance that keeps the inclusions D keeps through the joins "
                 f"separates within max_rows = {options.max_rows}: this one breaks them")
    return plain, plain, meaning, notes


def _explore(pair: Pair, options: Options, best: _Best, lineages: list[Lineage], pool: Pool,
             notes: list[str]) -> list[int] | None:
    """The search proper: proposals, fallbacks, then the best rank's set minimised."""
    t1 = time.perf_counter()
    if options.strategy == "paper":
        # The paper's rule: its first proposal that separates (an error only if none runs).
        m, n = paper_sizes(*(t.sql("postgres") for t in pair.trees))
        for rows in paper_proposals(pool, m, n, options.seed):
            if rows and best.consider(rows) < FAILED:
                break
        if best.rank > MEANINGFUL and pool.finish is not None:
            raise _Unfinished()
        pair.timer.add("search", t1)
        return best.by_rank.get(best.rank)
    # The empty instance is degenerate: kept only when nothing better separates (a COUNT
    # against a SUM may disagree on no rows at all, and ddmin never tries it).
    best.consider([])
    for rows in best.ahead(growing_proposals(pool, options.seed)):
        if rows and best.consider(rows) == MEANINGFUL:
            break
        if best.by_rank and not _time_left(pair, options):
            break
    for rows in best.ahead(one_sided_proposals(pool, options.seed)):  # targeted: see there
        if best.rank == MEANINGFUL or (best.by_rank and not _time_left(pair, options)):
            break
        best.consider(rows)
    if best.rank > MEANINGFUL and pool.finish is not None:
        raise _Unfinished()  # before the fallbacks, which cost more than the completion
    if best.rank > MEANINGFUL and (not best.by_rank or _time_left(pair, options)):
        _fallback(pair, best, lineages, notes, frozenset(options.exclude), options.seed)
    # Only where nothing separates: a pair with a degenerate instance seldom found a better
    # one there, and paid for the links (the whole yardstick's tournament seconds 532 -> 597,
    # european_football_2 1127 91 -> 110 s, the same records but six).
    if not best.by_rank:
        _with_neighbours(pair, best, pool, options, notes)
    pair.timer.add("search", t1)
    t2 = time.perf_counter()
    # Every level held to max_rows first: the last one minimised to settle is the
    # instance only when the targeted proposals find none that fits, and minimising it
    # first cost more than they did (superhero x100 task 720: 401 sets for a 64-row
    # degenerate set that ends at 32 rows, then 21 rows from a targeted proposal).
    started_from = dict(best.by_rank)
    # A level this pair's earlier search could not bring under max_rows is not minimised
    # again on its next instances (away from the few rows of the earlier ones): what
    # makes it large is most often what the queries need (a HAVING COUNT(*) > 15 needs 16
    # rows of one group and their partners), and minimising thousands of rows to learn it
    # again cost most of a tournament (superhero task 720: 3 searches, each about 300
    # tests taking 3,679 rows to a 1-minimal 35).
    unfit = pair.learned(UNFIT_LEVELS)
    skip = frozenset(unfit) if options.exclude else frozenset()
    found = best.minimised(options.max_rows, lambda: _time_left(pair, options), settle=False,
                           unfit=unfit, skip=skip)
    if found is None and pool.finish is not None:
        raise _Unfinished()
    if found is None and _time_left(pair, options):
        found = _concentrated(pair, best, lineages, pool, options)
    elif found is not None and best.rank_of(found) >= DEGENERATE and _time_left(pair, options):
        # The pool's random witnesses may miss the few rows a rare condition counts, which
        # give an instance that keeps the meaning (shared values: only when nothing fits).
        found = _concentrated(pair, best, lineages, pool, options, NON_DEGENERATE,
                              shared_values=False) or found
    if found is None:  # the sets it tests again first run no query (Pair's results)
        found = best.minimised(options.max_rows, lambda: _time_left(pair, options),
                               by_rank=started_from, skip=skip)
    pair.timer.add("minimisation", t2)
    return found


_CLASSES = ("only1", "only2", "both")


def _without(pool: Pool, exclude: tuple[int, ...]) -> Pool:
    """``pool`` without the witnesses that hold an excluded row (the sizes of classes held
    whole shrink with them, so that they stay whole)."""
    if not exclude:
        return pool
    out = set(exclude)
    kept = {name: [w for w in getattr(pool, name) if out.isdisjoint(w)] for name in _CLASSES}
    sizes = {name: n - (len(getattr(pool, name)) - len(kept[name]))
             if name in kept and _whole(pool, name) else n for name, n in pool.sizes.items()}
    return replace(pool, sizes=sizes, only1=kept["only1"], only2=kept["only2"],
                   both=kept["both"])


#: Witnesses of a query read whole for a minimisation outside a tournament, at most.
HELD_MOST = 8192


def _held_witnesses(pair: Pair, lineages: list[Lineage], pool: Pool,
                    known: dict[str, list[tuple[int, ...]]]) -> list[tuple[int, ...]]:
    """The witnesses a minimisation removes group by group (:func:`.minimise.ddmin_blocks`):
    the pool's, and every witness of each query whose set is small (a tournament's whole
    samples; outside a tournament, a set of at most :data:`HELD_MOST`, read once)."""
    if "held" not in known:
        whole = pair.witnesses.whole_witnesses(lineages) if pair.witnesses else [
            w for lin in lineages for w in _small_set(pair, lin)]
        known["held"] = list(dict.fromkeys(
            [*whole, *map(tuple, pool.only1 + pool.only2 + pool.both)]))
    return known["held"]


def _small_set(pair: Pair, lineage: Lineage) -> list[tuple[int, ...]]:
    # Read as the witnesses come (a deduplicated set of millions is not read whole to learn
    # that it is large); a set whose repeats pass the limit counts as large.
    found = executor_for(pair.executor, [lineage]).run(
        f"SELECT w FROM ({lineage.raw_witnesses}) AS __l LIMIT {HELD_MOST + 1}").rows
    return [] if len(found) > HELD_MOST else list(
        dict.fromkeys(tuple(int(r) for r in w) for (w,) in found))


def _whole(pool: Pool, name: str) -> bool:
    """Whether the pool holds every witness of the class ``name`` (not a sample)."""
    return name not in pool.estimated and len(getattr(pool, name)) >= pool.sizes.get(name, 0)


def _whole_witnesses(pool: Pool) -> tuple[list[list[int]] | None, list[list[int]] | None]:
    """Every witness of each query (W1 = only1 + both, W2 = only2 + both), or None for a
    query the pool holds a sample of."""
    both = pool.both if _whole(pool, "both") else None
    w1, w2 = (None if both is None or not _whole(pool, side) else getattr(pool, side) + both
              for side in ("only1", "only2"))
    return w1, w2


def _fallback(pair: Pair, best: _Best, lineages: list[Lineage], notes: list[str],
              exclude: frozenset[int] = frozenset(), seed: int = 0) -> None:
    """All rows of all witnesses, then all rows of the tables read, when small enough."""
    union = _union(pair, lineages, seed)
    rows = [] if union is None else [r for r in union if r not in exclude]
    if len(rows) <= UNION_LIMIT and rows and best.consider(rows) <= FAILED \
            and best.by_rank[best.rank] == rows:
        notes.append(f"started from the whole lineage ({len(rows)} rows)")
    if best.rank == MEANINGFUL:
        return
    every = _referenced_rows(pair)
    if every is not None and exclude:
        every = [r for r in every if r not in exclude]
    if every is not None and best.consider(every) <= FAILED \
            and best.by_rank[best.rank] == every:
        notes.append(f"started from every row of the tables read ({len(every)} rows)")


#: Witnesses of each side given their neighbours, at most, and links followed.
NEIGHBOURED, LINKS_MOST = 16, 8


def _with_neighbours(pair: Pair, best: _Best, pool: Pool, options: Options,
                     notes: list[str]) -> None:
    """When nothing separates: each of the first witnesses of either side with its
    neighbours along one link (:mod:`.neighbours`), since what keeps a row out of an answer
    is no witness's; then each with the other side's first witness too (the cheapest
    expense's event and its budget's other expenses, against the event of the lowest
    total). Where that separates on an instance that lost the question's meaning (the query
    that rejects the row answers nothing), then that instance with a common witness and its
    neighbours, which both answers keep."""
    found = links(pair.trees, pair.catalog)[:LINKS_MOST]
    if not found:
        return
    only1, only2 = pool.only1[:NEIGHBOURED], pool.only2[:NEIGHBOURED]
    common = pool.both[:NEIGHBOURED]
    rows = sorted({r for w in (*only1, *only2, *common) for r in w})
    excluded = set(options.exclude)
    other = {1: list(only2[0]) if only2 else [], 2: list(only1[0]) if only1 else []}
    Start = list[tuple[Sequence[int], Sequence[int]]]  # (rows to start from, witness)
    stages: tuple[Callable[[], Start], ...] = (
        lambda: [([], w) for w in (*only1, *only2)],
        lambda: [(other[side], w) for side, ws in ((1, only1), (2, only2)) for w in ws
                 if other[side]],
        # (only once an instance was found, with the best one)
        lambda: [(best.by_rank[best.rank], w) for w in common] if best.by_rank else [])
    before = best.rank

    def enough() -> bool:  # while nothing separates, the pair's whole budget is there
        return best.rank == MEANINGFUL or (bool(best.by_rank) and not _time_left(pair, options))

    for link in found:
        pair.check_budget()
        near = neighbours(pair.executor, pair.catalog, link, rows, options.max_rows)
        for stage in stages:
            if enough():
                break
            # What the witnesses give without neighbours was proposed before.
            grown = ((set(base).union(w) - excluded,
                      sorted(set(base).union(w, *(near.get(r, ()) for r in w)) - excluded))
                     for base, w in stage())
            for proposal in best.ahead(p for plain, p in grown if len(p) > len(plain)):
                best.consider(proposal)
                if enough():
                    break
        if enough():
            break
    if best.rank < before:
        notes.append("started from a witness with the rows that share a key with its rows "
                     "(a window's partition, a join or a subquery's condition)")


def _referenced_rows(pair: Pair) -> list[int] | None:
    """Every row of the tables the pair reads (:func:`.references.referenced_rows`), once
    per tournament for each list of tables: a pair separated again asks again."""
    if pair.witnesses is None:
        return referenced_rows(pair.executor, pair.catalog, pair.trees, UNION_LIMIT)
    rows = pair.witnesses.once("rows of tables", partial(rows_of_tables, pair.executor,
                                                         pair.catalog))(
        tables_read(pair.trees, pair.catalog), UNION_LIMIT)
    return None if rows is None else list(rows)


def _concentrated(pair: Pair, best: _Best, lineages: list[Lineage], pool: Pool,
                  options: Options, worst: int = DEGENERATE, shared_values: bool = True
                  ) -> list[int] | None:
    """Targeted, when nothing fits max_rows, or only a degenerate instance: the rows a
    conditional aggregate counts, and the witnesses of the groups the pool's witnesses share
    a value of (:mod:`.targeted`; with ``shared_values``); each that separates with both
    queries running, of rank ``worst`` or better, is minimised within its rank, and the
    first that fits is kept."""
    counted = _counted_witnesses(pair, options)
    values = value_proposals(executor_for(pair.executor, lineages), pair.catalog, pair.trees,
                             lineages, pool, 4 * options.max_rows, frozenset(options.exclude),
                             pair.witnesses) if shared_values else iter(())
    drawn = [*pool.only1, *pool.only2, *pool.both]  # (the pool is without excluded rows)
    # The counted rows first, alone and with the pool's; then each value's witnesses, alone,
    # with the counted rows, and with both and the pool's.
    for rows in chain([[]] if counted else [], values):
        held = sorted(set(rows).union(*counted))
        for proposal in (rows, *_in_company(rows, counted, options),
                         *_in_company(held, drawn, options)):
            if not proposal:
                continue
            if not _time_left(pair, options):
                return None
            rank = best.consider(proposal)
            if rank <= worst:
                smaller = best._ddmin(proposal, rank, options.max_rows)
                if smaller is not None and len(smaller) <= options.max_rows:
                    return smaller
                break
    return None


#: Witnesses added to a value's witnesses, at most, by doubling.
COMPANY = 16


def _counted_witnesses(pair: Pair, options: Options) -> list[Sequence[int]]:
    """Witnesses of the rows a conditional aggregate counts (``COUNT(CASE WHEN b.name =
    'Teacher' THEN 1 END)``, ``SUM(IIF(...))``, ``FILTER (WHERE ...)``): on a large D the
    pool's random witnesses rarely hold one when the condition is rare, and without one
    both answers are 0. Each query with such a condition is read once more with the
    condition added to the WHERE of the aggregate's SELECT."""
    found: list[Sequence[int]] = []
    excluded = frozenset(options.exclude)
    for tree in pair.trees:
        for variant in counted_variants(tree):
            try:
                served = serve(pair.executor, (variant, variant), pair.catalog,
                               options.backend, options.seed, pair.witnesses)
            except SiselectError:
                continue  # a variant the backend cannot read: the search goes on without
            found.extend(w for w in served.pool.both[:COMPANY] if excluded.isdisjoint(w))
    return found


def _in_company(rows: list[int], witnesses: Sequence[Sequence[int]], options: Options
                ) -> Iterator[list[int]]:
    """``rows`` with 1, 2, 4, ... of ``witnesses`` drawn at random: a value's witnesses hold
    its repeated key (a user with two badges, where COUNT and COUNT DISTINCT part), other
    witnesses what the answers count (a badge named Teacher, which that user may not
    have). None of ``witnesses`` holds an excluded row."""
    rng = random.Random(options.seed)
    n = 1
    while n <= min(COMPANY, len(witnesses)):
        yield sorted(set(rows).union(*rng.sample(witnesses, n)))
        n *= 2


def _union(pair: Pair, lineages: list[Lineage], seed: int) -> list[int] | None:
    """Every row of both queries' witnesses, witness by witness, or None when more than
    ``UNION_LIMIT``."""
    executor = executor_for(pair.executor, lineages)
    if pair.witnesses is None:
        return witness_rows(executor, [lin.raw_witnesses for lin in lineages], UNION_LIMIT,
                            seed)
    each: dict[int, list[int]] = {}
    # One side too large decides: the other is not asked. A side known already (the pair
    # met the other way round, a candidate met in an earlier duel) is asked first.
    known = [pair.witnesses.rows_known(lin, UNION_LIMIT, seed) for lin in lineages]
    for i in sorted(range(len(lineages)), key=lambda i: not known[i]):
        found = pair.witnesses.witness_rows(executor, lineages[i], UNION_LIMIT, seed)
        if found is None:
            return None
        each[i] = found
    rows = list(dict.fromkeys(each[0] + each[1]))
    return rows if len(rows) <= UNION_LIMIT else None


def _kept_joins(pair: Pair) -> tuple[list[integrity.Reference], list[integrity.Reference]]:
    """The references and the inclusions D keeps through the joins of either query, or of
    another member of their groups (``pair.related``), that either query can see broken
    (:func:`.integrity.kept_joins`; D asked once per join in a tournament). Every member
    runs on D' and its answer there counts, and each reads the question its own way: a
    member that joins the card a foreign_data row belongs to finds none on a D' that holds
    the row alone, where D always has one (yardstick card_games 352 at scale 10, where the
    question's query read it so too). Only the two groups' members: every candidate's
    joins changed 46 tasks' instances of the yardstick and no outcome."""
    holds = None if pair.witnesses is None else pair.witnesses.once(
        "kept join", partial(integrity.join_holds, pair.executor, pair.catalog))
    kept = [integrity.kept_joins(pair.executor, pair.catalog, t, holds, pair.trees)
            for t in (*pair.trees, *pair.related)]
    return integrity.union([k[0] for k in kept]), integrity.union([k[1] for k in kept])


def _with_references(pair: Pair, meaning: Meaning, found: list[int], result: dict[str, Any],
                     kept: list[integrity.Reference], inclusions: Closure, max_rows: int
                     ) -> list[int] | None:
    """Add the rows that kept rows reference through foreign keys (and the partners that
    rows so added need to keep D's inclusions), or those of the declared keys alone: the
    first of the two closures that keeps the instance's rank, else the first on which the
    two answers still differ and run, within ``max_rows``; None when neither does.

    The references found in the queries' joins can be what brings the two answers together
    (a join on a numbering column that D happens to keep), while a declared key is what a
    judge follows into a table neither query reads (yardstick thrombosis_prediction 1304).
    And a D' that breaks a key is a database D never is: a judge's query that joins along
    the key drops the row there, so a rank lost to the referenced rows (answers no longer
    a piece of the disagreement on D, or one all NULL) costs less than the key: yardstick
    financial 156, where the judge's query joins the account a loan's owner holds."""
    from siselect.instances.references import referenced_closure

    rows, unreadable = referenced_closure(pair.executor, pair.catalog, found, kept)
    while len(more := inclusions(rows)) > len(rows):  # a partner references rows too
        rows, unreadable = referenced_closure(pair.executor, pair.catalog, more, kept)
    rank = _rank(pair, meaning, found)
    limit = REFERENCES_LIMIT * max_rows

    def keeps_rank(closure: tuple[str, list[int], list[str], int]) -> bool:
        return closure[3] <= rank and len(closure[1]) <= limit

    closures = [("all", rows, unreadable, _rank(pair, meaning, rows))]
    # Without a reference found in the joins, the declared keys are all the references.
    if not keeps_rank(closures[0]) and kept:
        rows, unreadable = referenced_closure(pair.executor, pair.catalog, found)
        if len(rows) > len(found):
            closures.append(("declared", rows, unreadable, _rank(pair, meaning, rows)))
    chosen = next((c for c in closures if keeps_rank(c)), None) or next(
        (c for c in closures if c[3] <= DEGENERATE and len(c[1]) <= max_rows), None)
    if chosen is None:
        first = closures[0]
        result.setdefault("notes", []).append(
            "rows referenced through foreign keys were not added: with them "
            + (f"the instance has {len(first[1])} rows" if len(first[1]) > limit
               else _closure_note(first[3]))
            + f", without them {RANK_NAMES[rank]}" * (first[3] <= FAILED))
        return None
    name, rows, unreadable, closed = chosen
    if name == "declared":
        result.setdefault("notes", []).append(
            "only rows referenced through declared foreign keys were added: with the "
            "references found in the queries' joins " + _closure_note(closures[0][3]))
    if closed > rank:
        result.setdefault("notes", []).append(
            f"rows referenced through foreign keys were added although the instance is "
            f"{RANK_NAMES[closed]} with them, {RANK_NAMES[rank]} without them: without them "
            "it breaks a reference D keeps")
    if unreadable:
        # Left out rather than failing: the caller may not read them, so neither may the
        # judge see them on the caller's behalf.
        result["references_left_out"] = unreadable
        result.setdefault("notes", []).append(
            "rows referenced through foreign keys in "
            f"{', '.join(unreadable)} were left out: you may not read them"
        )
    result["minimal_rows"] = len(found)
    return rows


#: The rows of a closure under the references that keeps the rank, at most, in max_rows: a
#: chain of references D happens to keep (an account_id equal to a card_id) can close a
#: few rows into thousands, which no judge reads.
REFERENCES_LIMIT = 10

KEY_CLOSED = ("the instance first found breaks a key, and none of its closures keeps its rank "
              "within the rows allowed: this one was found among row sets that keep every key")


def _key_closed(pair: Pair, options: Options, result: dict[str, Any], on_d: tuple[Rows, Rows],
                kept: list[integrity.Reference], inclusions: Closure,
                proposed: tuple[exp.Query, exp.Query], worse: int
                ) -> tuple[list[int], list[int], Meaning] | None:
    """An instance of which every row set tested keeps the declared foreign keys, the
    references D keeps through the joins and D's inclusions, for when the instance found
    breaks a key and its best closure ranks ``worse`` (``FAILED + 1``: none fits): one on
    which the answers differ and both queries run, within ``max_rows``, of a better rank;
    None if the search finds none (in its time).

    A judge's query follows a declared key (yardstick financial 95 at scale 10: the
    accounts of the youngest client, whose instance held the client's ``disp`` row without
    the account it references; with the account the two candidates agree, and the question's
    query, which joins the account, answered no row, as the wrong candidate did)."""
    declared = [k for k in declared_keys(pair.executor, pair.catalog)
                if len(k[1].columns) == 1]  # a closure joins on one column
    keys = integrity.union([inclusions.inclusions, kept, declared])
    closure = Closure(pair.executor, pair.catalog, keys, inclusions.facts)
    try:
        found, chosen, meaning, _ = _search(pair, options, result, on_d, closure, proposed,
                                            closed_only=True)
    except BudgetExceeded:
        return None
    if found is None or len(found) > options.max_rows:
        return None
    rank = _rank(pair, meaning, found)
    if rank > DEGENERATE or rank >= worse:
        return None
    result["minimal_rows"] = len(chosen)
    return found, chosen, meaning


def _closure_note(rank: int) -> str:
    return "the queries agree" if rank > FAILED else f"the instance is {RANK_NAMES[rank]}"


def _rank(pair: Pair, meaning: Meaning, rows: list[int]) -> int:
    """The rank of ``rows`` (:mod:`.meaning`), or ``FAILED + 1`` when they do not separate."""
    answers = pair.separation(rows)
    return FAILED + 1 if answers is None else meaning.assess(rows, answers, pair.normal).rank


def _finish(
    result: dict[str, Any], pair: Pair, started: float, status: str, reason: str | None
) -> dict[str, Any]:
    result["status"] = status
    if reason:
        result["reason"] = reason
    result["tries"] = pair.tests
    if pair.failed_tests:
        result["tries_failed"] = pair.failed_tests
    result["timings"] = {k: round(v, 6) for k, v in pair.timer.seconds.items()}
    result["timings"]["total"] = round(time.perf_counter() - started, 6)
    return serialise(SeparationResult, result)


def options_from(**kwargs: Any) -> Options:
    known = {k: v for k, v in kwargs.items() if k in asdict(Options()) and v is not None}
    return Options(**known).check()


__all__ = ["Options", "Timer", "separate", "options_from"]
