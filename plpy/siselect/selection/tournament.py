"""The tournament (paper section II, with issue 15's rules): groups, duels, scores, a winner.

run every candidate on D -> group by answer (exact, or the paper's normalised key) ->
units (a group, split where its members answer differently on a D') -> rounds of duels:
separate two units' representatives -> run every member of both on D' -> the judge
answers on D' -> each member's answer compared with the judge's -> scores (points or
evidence) -> pairs that cannot change the winner are not played; a drawn duel, or one
whose verdict goes against a much larger group, is separated again away from the rows
already used -> the winner is a member, the best by its own record.

The rules are in :mod:`.rules` (``strategy paper`` gives the paper's tournament: its
grouping, representatives only, one instance a pair, round-robin points); the model and
the schedule in docs/selection.md.
"""

import math
import time
from collections import Counter
from collections.abc import Callable, Hashable, MutableMapping
from dataclasses import dataclass, field, replace
from typing import Any

from sqlglot import exp

from siselect.instances.pair import Failed, OnRows, Pair, failure, group_rows, run_capped
from siselect.instances.separate import Options, answer_json, separate_pair
from siselect.instances.shrink import smaller_instances
from siselect.instances.witness_cache import WitnessCache
from siselect.runtime import privileges
from siselect.runtime.answers import (
    JUDGE_TOLERANCE,
    Tolerance,
    exact_key,
    judge_matches,
    matches_judge,
    same_in_order,
)
from siselect.runtime.catalog import Catalog, load_catalog
from siselect.runtime.errors import Cancelled, InvalidInput, QueryFailed, SiselectError
from siselect.runtime.executor import Executor, Rows
from siselect.runtime.results import Duel, TournamentResult, serialise
from siselect.selection import scoring
from siselect.selection.grouping import Group, group
from siselect.selection.judge_pool import UNAVAILABLE, Idle
from siselect.selection.judges import Judge, JudgeAnswer, JudgeContext
from siselect.selection.member_ties import tied_members
from siselect.selection.memo import MemoKey, Separated, SeparationMemo, memo_key
from siselect.selection.rules import Rules
from siselect.selection.schedule import (
    Match,
    both_ways,
    next_round,
    open_pairs,
    skipped,
    widened,
)
from siselect.selection.scoring import Unit
from siselect.selection.server_slots import AdvisorySlots
from siselect.sqltext.transpile import to_read_tree

MAX_CANDIDATES = 64
# How often one candidate may have been produced: any real sampling count fits.
MAX_COUNT = 1_000_000
#: A verdict goes against the consistency prior when the losing group is at least this
#: many times as large as the winning one, and at least two candidates larger.
PRIOR_RATIO = 2
AGAINST_PRIOR = "the verdict goes against a much larger group"
DRAWN = "drawn"
AMBIGUOUS = "the judge's answer was one of several"
CLOSE = "the winner is not yet sure"
COLUMN_ORDER = "the answers on D differ only in column order"
#: Evidence scoring: the log-odds by which the winner must lead the best unit of another
#: group before the tournament ends (19 to 1); while it does not, the pair between the two
#: is separated again, up to ``widened(instances)`` instances (docs/selection.md, "More
#: than one instance": a judge right 80% of the time must agree with itself three times
#: net, where 9 to 1 took two; under a judge wrong 30% of the time the tournament drew
#: level with consistency where it had fallen below it).
CONFIDENT = math.log(19)
#: A pair separated again that no instance away from its earlier rows separates: how many
#: searches, each leaving out one of those rows, may look for an instance that overlaps.
OVERLAP_SEARCHES = 10
#: What a tournament tells a caller as it goes: one dict an event, ``stage`` "separating"
#: (before the ``done``-th of the round's ``of`` pairs is separated), "judging" (``of`` > 0
#: instances asked of the judge) or "played" (the round scored), with ``round`` and
#: ``duels`` (recorded so far).
Progress = Callable[[dict[str, Any]], None]

__all__ = ["Entry", "Group", "check_inputs", "group", "prepare", "run_tournament", "verdict",
           "judge_all"]


@dataclass
class Entry:
    """One input candidate and what became of it on D."""

    index: int
    sql: str
    tree: exp.Query | None = None
    answer: Rows | None = None
    error: dict[str, str] | None = None


@dataclass
class Tournament:
    executor: Executor
    catalog: Catalog
    judge: Judge
    options: Options
    question: str
    evidence: str | None = None
    reference: exp.Query | None = None
    rules: Rules = field(default_factory=lambda: Rules().resolved("minimal"))
    entries: list[Entry] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)
    matches: list[Match] = field(default_factory=list)
    duels: list[dict[str, Any]] = field(default_factory=list)
    judge_calls: int = 0
    answers: list[JudgeAnswer] = field(default_factory=list)
    separations: MutableMapping[MemoKey, Separated] | None = None
    witnesses: WitnessCache = field(default_factory=WitnessCache)  # each candidate's, once
    on_rows: OnRows = field(default_factory=OnRows)  # answers on D's, for all duels
    accuracy: float = scoring.DEFAULT_ACCURACY
    spread: tuple[float, ...] | None = None  # accuracies it may have, when only assumed
    again: Counter = field(default_factory=Counter)  # why pairs were separated again
    splits: int = 0  # units split by their members' answers on a D'
    next_uid: int = 0
    # Told where a long tournament is (a caller's progress line): see :data:`Progress`.
    progress: Progress | None = None

    def unit_of(self, index: int) -> Unit:
        return next(u for u in self.units if index in u.members)

    def new_uid(self) -> int:
        self.next_uid += 1
        return self.next_uid - 1


def prepare(
    executor: Executor, catalog: Catalog, candidates: list[str], dialect: str
) -> list[Entry]:
    """Parse and run each candidate on D; a failing one drops out with its reason. The
    catalog then also holds the schemas the candidates name (in place)."""
    entries = []
    for index, sql in enumerate(candidates):
        entry = Entry(index, sql)
        try:
            entry.tree = to_read_tree(sql, dialect, catalog, executor)
            entry.answer = run_capped(executor, entry.tree)
        except Cancelled:
            raise
        except QueryFailed as exc:
            if entry.tree is not None and exc.sqlstate == privileges.INSUFFICIENT_PRIVILEGE:
                privileges.denied(executor, catalog)
                exc = privileges.explain(exc, entry.tree, catalog)
            entry.error = {"message": exc.message, "sqlstate": exc.sqlstate}
        except SiselectError as exc:
            entry.error = {"message": exc.message, "sqlstate": exc.sqlstate}
        entries.append(entry)
    return entries


def _rows(answer: Rows) -> list[Any] | None:
    """An answer's rows for the comparator; None for an error on D'."""
    return None if isinstance(answer, Failed) else answer.rows


def verdict(judge_rows: list[list[Any]] | None, a: Rows, b: Rows,
            tolerance: Tolerance = JUDGE_TOLERANCE) -> tuple[str, str]:
    """The comparator: the side whose answer on D' matches the judge's wins."""
    if judge_rows is None:
        return "draw", "the judge gave no answer"
    rows = [_rows(a), _rows(b)]
    ok_a, ok_b = judge_matches(rows, judge_rows, tolerance)
    loose = all(r is not None and matches_judge(r, judge_rows, tolerance) for r in rows)
    order = " in the judge's column order" if loose else ""
    if ok_a and not ok_b:
        return "a", f"only A's answer on D' matches the judge's{order}"
    if ok_b and not ok_a:
        return "b", f"only B's answer on D' matches the judge's{order}"
    if ok_a and ok_b:
        return "draw", "both answers match the judge's"
    return "draw", "neither answer matches the judge's"


@dataclass
class Pending:
    """A duel separated on the database and waiting for the judge (or already decided)."""

    match: Match
    units: tuple[Unit, Unit]
    record: dict[str, Any]
    sep: dict[str, Any]
    context: JudgeContext | None = None  # None: no judge needed, the record is final
    on_d: tuple[Rows, Rows] | None = None
    run_on_instance: Any = None
    members: dict[int, Rows] = field(default_factory=dict)  # input index -> answer on D'
    tied: set[int] = field(default_factory=set)  # members whose answer there hangs on ties


def _runs(t: Tournament, unit: Unit) -> list[int]:
    """The members of ``unit`` run on a D': all, or the paper's representative only."""
    return list(unit.members) if t.rules.members == "all" else [unit.first]


def _wide(t: Tournament) -> bool:
    """Whether a verdict weighs for or against every unit, not only the duel's two: the
    judge names an answer, and any unit's answer on D' can be compared with it."""
    return t.rules.scope == "all" and t.rules.scoring == "evidence"


def _kept(t: Tournament, first: int, second: int, exclude: tuple[int, ...]
          ) -> tuple[Pair, Separated]:
    """The separation of two representatives away from ``exclude`` (sorted row ids), from
    ``t.separations`` or computed there."""
    a, b = t.entries[first], t.entries[second]
    assert a.tree is not None and b.tree is not None and a.answer and b.answer
    pair = Pair(t.executor, t.catalog, (a.tree, b.tree), witnesses=t.witnesses,
                on_rows=t.on_rows, related=_group_members(t, first, second))
    key = memo_key(t.witnesses.text(a.tree), t.witnesses.text(b.tree), exclude, t.options)
    kept = t.separations.get(key) if t.separations is not None else None
    if kept is None:
        kept = _separated(t, pair, a, b, exclude)
        # The budget bounds the search: the members and the judge still run on its D' (a
        # few rows, under the statement timeout) when the search used it up.
        pair.deadline = None
        if t.separations is not None:
            t.separations[key] = kept
    return pair, kept


def _group_members(t: Tournament, first: int, second: int) -> tuple[exp.Query, ...]:
    """The other members of the groups (on D) of two representatives, each text once."""
    groups = {t.unit_of(first).group, t.unit_of(second).group}
    trees = [t.entries[i].tree for u in t.units if u.group in groups for i in u.members]
    seen = {t.witnesses.text(tree) for i in (first, second)
            if (tree := t.entries[i].tree) is not None}
    members = []
    for tree in trees:
        if tree is not None and (text := t.witnesses.text(tree)) not in seen:
            seen.add(text)
            members.append(tree)
    return tuple(members)


def _on_instance(t: Tournament, pair: Pair, kept: Separated) -> Any:
    """A query's answer on the separation's D'."""
    grouped = group_rows(kept.sep["row_ids"], t.catalog)

    def run_on_instance(tree: exp.Query) -> Rows:
        # (the unreadable columns of an error are named in the query as written)
        return pair.run_on(tree, grouped)

    return run_on_instance


def _members_on(t: Tournament, match: Match, units: tuple[Unit, Unit], kept: Separated,
                run: Any) -> dict[int, Rows]:
    """Every member of both units run on D' (the representatives' answers are known); of
    every unit, when verdicts weigh on all (:func:`_wide`)."""
    assert kept.on_d is not None
    members = {match.a: kept.on_d[0], match.b: kept.on_d[1]}
    for index in [i for u in (t.units if _wide(t) else units) for i in _runs(t, u)]:
        if index not in members:
            members[index] = _member_answer(t, kept, index, run)
    return members


def separate_duel(t: Tournament, match: Match) -> Pending:
    """Separate a match's two representatives (away from its earlier instances' rows) and
    run every member of both units on D', with which of their answers hang on ties there
    (:mod:`.member_ties`): the database work of a duel, before any judge call; none when
    ``t.separations`` already holds it."""
    units = (t.unit_of(match.a), t.unit_of(match.b))
    pair, kept = _kept(t, match.a, match.b, tuple(sorted(match.exclude)))
    shared = 0
    if match.instances and kept.on_d is None and kept.status.get("separation") != "error":
        pair, kept, shared = _overlapping(t, match, pair, kept)
    record: dict[str, Any] = {"a": match.a, "b": match.b, **kept.status}
    if shared:
        record["shared_rows"] = shared
    if kept.on_d is None:
        return Pending(match, units, record, kept.sep)
    run_on_instance = _on_instance(t, pair, kept)
    context = JudgeContext(t.question, t.evidence, kept.sep["instance"], t.catalog,
                           run_on_instance, lambda: smaller_instances(pair, kept.sep["row_ids"]),
                           pair.run)
    members = _members_on(t, match, units, kept, run_on_instance)
    tied = tied_members(members, _tree_of(t), run_on_instance, t.witnesses.remember)
    return Pending(match, units, record, kept.sep, context, kept.on_d, run_on_instance, members,
                   tied)


def _overlapping(t: Tournament, match: Match, pair: Pair, kept: Separated
                 ) -> tuple[Pair, Separated, int]:
    """Another instance for a match none of whose separating instances avoids the rows of
    its earlier ones (one region of D separates the pair: a single hero, say): one that
    leaves out one of those rows, and so differs from each earlier instance, tried row by
    row up to :data:`OVERLAP_SEARCHES`; with the number of rows it shares with them. The
    judge sees the disagreement again among other rows, a verdict less independent than
    one on rows of its own, yet more than the one instance alone (docs/selection.md).
    ``(pair, kept, 0)`` as given when none is found."""
    # Rows of the tables the instances hold most of first: a row with siblings on D' (a
    # hero's third power, say) is likelier to have a stand-in than the one hero they hang on.
    # Only rows the searches chose: a partner or referenced row left out is added back to
    # the same chosen rows, and the search finds the same instance again.
    by_table = sorted(group_rows(match.chosen, t.catalog).values(), key=lambda r: -len(r))
    for row in [r for rows in by_table for r in sorted(rows)][:OVERLAP_SEARCHES]:
        other_pair, other = _kept(t, match.a, match.b, (row,))
        if other.status.get("separation") == "error":
            break  # out of time or lineage: the next row's search would be too
        rows = frozenset(other.sep.get("row_ids") or ())
        if other.on_d is not None and rows not in match.instances:
            return other_pair, other, len(rows & match.exclude)
    return pair, kept, 0


def _member_answer(t: Tournament, kept: Separated, index: int, run: Any) -> Rows:
    """A member's answer on D' (kept in the memo): an error there is its answer."""
    tree = t.entries[index].tree
    assert tree is not None
    sql = t.witnesses.text(tree)
    if sql not in kept.members:
        try:
            kept.members[sql] = run(tree)
        except Cancelled:
            raise
        except QueryFailed as exc:  # a time limit on D': an answer that matches no judge
            kept.members[sql] = failure(exc)
    return kept.members[sql]


def _separated(t: Tournament, pair: Pair, a: Entry, b: Entry, exclude: tuple[int, ...]
               ) -> Separated:
    """The separation of one pair of representatives, as the memo keeps it."""
    assert a.answer is not None and b.answer is not None
    record: dict[str, Any] = {}
    options = replace(t.options, exclude=exclude) if exclude else t.options
    try:
        sep = separate_pair(pair, a.answer, b.answer, options)
        if sep["status"] == "same_answer" and not same_in_order(a.answer.rows, b.answer.rows):
            sep = _column_order_instance(t, pair, a, options)
    except Cancelled:  # the whole call's time is up, not this pair's
        raise
    except SiselectError as exc:  # a query's time limit, lineage out of reach: this pair only
        record.update(
            separation="error",
            verdict="draw",
            reason=f"separation failed: {exc.message} (SQLSTATE {exc.sqlstate})",
        )
        return Separated(record, {})
    record["separation"] = sep["status"]
    if sep["status"] != "separated":
        record.update(verdict="draw", reason=f"no separating instance: {sep.get('reason')}")
        return Separated(record, sep)
    return Separated(record, sep, pair.answers_on(sep["row_ids"]))


def _column_order_instance(t: Tournament, pair: Pair, a: Entry, options: Options
                           ) -> dict[str, Any]:
    """A D' for two answers that differ only in column order: they do so on every D' where
    they are not empty, so A is separated from A made empty (``WHERE false`` around it),
    which yields an instance where A's answer is not empty, ranked by meaning like any
    other. Its answers are then both queries' own."""
    assert a.tree is not None and a.answer is not None
    empty = exp.select("*").from_(a.tree.copy().subquery("column_order")).where(exp.false())
    probe = Pair(t.executor, t.catalog, (a.tree, empty), witnesses=t.witnesses,
                on_rows=t.on_rows)
    sep = separate_pair(probe, a.answer, Rows(a.answer.columns, []), options)
    sep["sql"] = {"q1": pair.trees[0].sql("postgres"), "q2": pair.trees[1].sql("postgres")}
    if sep["status"] == "separated":
        d1, d2 = pair.answers_on(sep["row_ids"])
        sep["answers"] = {"q1": answer_json(d1), "q2": answer_json(d2)}
        sep["column_order"] = True
        sep["reason"] = COLUMN_ORDER
    return sep


def judge_all(judge: Judge, contexts: list[JudgeContext], idle: Idle | None = None
              ) -> list[JudgeAnswer]:
    """The judge's answers for many duels: at once where the judge can (the LLM's requests
    go out concurrently, and ``idle`` fills the wait), else one after another."""
    many = getattr(judge, "answer_all", None)
    return many(contexts, idle) if many is not None else [judge.answer(c) for c in contexts]


def lookahead(t: Tournament, pending: list[Pending]) -> Idle:
    """The database work the next rounds will likely ask for, done while the judge's
    replies are awaited (a slow endpoint leaves PostgreSQL idle): first each judged duel's
    next instance, away from its rows, should it be separated again; then the pairs not
    yet played. What it computes goes to ``t.separations`` under the key the later duel
    looks up, so results do not depend on whether (or how far) it got; what is never asked
    for is wasted work of idle time. At most one piece outlasts the last reply."""
    limit = t.rules.instances or 1
    playing = {(p.match.a, p.match.b) for p in pending}
    work: list[tuple[int, int, tuple[int, ...]]] = [
        (p.match.a, p.match.b, tuple(sorted(p.match.exclude | set(p.sep["row_ids"]))))
        for p in pending
        if p.context is not None and p.sep.get("row_ids") and not p.match.exhausted
        and p.match.has_room(limit, after=1)]
    work += [(u.first, v.first, ()) for u, v in open_pairs(t.units)
             if (u.first, v.first) not in playing]
    work.reverse()  # popped from the end: in order

    def step() -> bool:
        if work:
            first, second, exclude = work.pop()
            try:
                pair, kept = _kept(t, first, second, exclude)
                if kept.on_d is not None:
                    units = (t.unit_of(first), t.unit_of(second))
                    _members_on(t, Match(-1, first, second), units, kept,
                                _on_instance(t, pair, kept))
            except Cancelled:
                raise
            except SiselectError:
                pass  # the duel that needs it meets the same error and reports it
        return bool(work)

    return step


def _instance_fields(record: dict[str, Any], sep: dict[str, Any]) -> None:
    """What the separation says of D' (its rank, errors as A's and B's), on the duel."""
    record["instance"] = sep["instance"]
    record["rows"] = sep["rows"]
    if "minimal_rows" in sep and sep["minimal_rows"] != sep["rows"]:
        record["minimal_rows"] = sep["minimal_rows"]
    if sep.get("references_left_out"):
        record["references_left_out"] = sep["references_left_out"]
    for name in ("meaning", "degenerate", "meaning_reason"):
        if name in sep:
            record[name] = sep[name]
    if sep.get("errors"):
        record["errors"] = {side: sep["errors"][q] for side, q in (("a", "q1"), ("b", "q2"))
                            if q in sep["errors"]}


def judged(t: Tournament, p: Pending, answer: JudgeAnswer) -> None:
    """A separated duel's verdict from the judge's answer; every member scored."""
    assert p.on_d is not None
    record, sep = p.record, p.sep
    t.judge_calls += answer.calls
    _instance_fields(record, sep)
    record["judge"] = {
        "name": t.judge.name,
        "rows": answer.rows,
        "votes": answer.votes,
        "error": answer.error,
    }
    if answer.tokens is not None:
        record["judge"]["tokens"] = answer.tokens
    if answer.ambiguous is not None:
        record["judge"]["ambiguous"] = answer.ambiguous
    on_shown, run_on_shown, members, tied = p.on_d, p.run_on_instance, p.members, p.tied
    if answer.shown is not None:  # the prompt showed a smaller view of D' (max_prompt_tokens)
        on_shown, run_on_shown = answer.shown.answers, answer.shown.run
        record["judge"].update(instance_shown=answer.shown.instance,
                               left_out=answer.shown.left_out)
        members = {i: _shown_answer(t, i, answer.shown.run) for i in p.members}
        members.update({record["a"]: on_shown[0], record["b"]: on_shown[1]})
        tied = tied_members(members, _tree_of(t), run_on_shown, t.witnesses.remember)
    record["answers"] = {"a": answer_json(on_shown[0]), "b": answer_json(on_shown[1])}
    tolerance = getattr(t.judge, "tolerance", JUDGE_TOLERANCE)
    side, why = verdict(answer.rows, on_shown[0], on_shown[1], tolerance)
    if answer.unavailable is not None:
        why = UNAVAILABLE
    elif answer.ambiguous is not None:
        why = f"the judge's answer on D' is one of several ({answer.ambiguous}): no verdict"
    elif answer.error and answer.rows is None:
        why = f"the judge failed: {answer.error}"
    if sep.get("column_order"):
        why = f"{COLUMN_ORDER}; {why}"
    record.update(verdict=side, reason=why)
    if t.reference is not None and t.judge.name != "reference":
        ref = run_on_shown(t.reference)
        record["reference_answer"] = answer_json(ref)
        if answer.rows is not None and not matches_judge(ref.rows, answer.rows):
            record["evidence_against_reference"] = True
    meaning = sep.get("meaning")
    if meaning == "degenerate" and _as_on_d(t, record["a"], record["b"], p.on_d):
        # Both answer on D' as on D (a NULL aggregate against no row, on D as on an empty
        # D'): the judge sees D's own disagreement, which no instance shows less degenerate.
        record["as_on_d"] = True
        meaning = "meaningful"
    weight = scoring.verdict_weight(meaning, answer.votes)
    record["reliability"] = round(scoring.believed(t.accuracy, weight), 6)
    if answer.rows is None:
        tied = set()  # an abstaining judge gives no evidence to weigh
    if tied:
        record["tied"] = sorted(tied)
    _score_members(t, p, members, answer.rows, tolerance, weight, tied)


def _as_on_d(t: Tournament, a: int, b: int, on_instance: tuple[Rows, Rows]) -> bool:
    """Whether both representatives answer on D' exactly as on D (BIRD's rule)."""
    on_d = (t.entries[a].answer, t.entries[b].answer)
    return all(d is not None and _answer_key(d) == _answer_key(there)
               for d, there in zip(on_d, on_instance, strict=True))


def _shown_answer(t: Tournament, index: int, run: Any) -> Rows:
    tree = t.entries[index].tree
    assert tree is not None
    try:
        return run(tree)
    except Cancelled:
        raise
    except QueryFailed as exc:
        return failure(exc)


def _answer_key(rows: Rows) -> Hashable:
    if isinstance(rows, Failed):
        return ("error", rows.sqlstate, rows.message)
    return exact_key(rows.rows)


def _tree_of(t: Tournament) -> Callable[[int], exp.Query]:
    def tree(index: int) -> exp.Query:
        found = t.entries[index].tree
        assert found is not None
        return found
    return tree


def _score_members(t: Tournament, p: Pending, members: dict[int, Rows],
                   judge_rows: list[list[Any]] | None, tolerance: Tolerance,
                   weight: float, tied: set[int]) -> None:
    """Split each unit by its members' answers on D', then score every part by whether its
    answer matches the judge's (a verdict of ``weight``, :func:`scoring.verdict_weight`).
    A ``tied`` member's answer is one of several (:mod:`.member_ties`): it gets no evidence
    from this D', in a part of its own where its unit's other members have an answer."""
    # (unit, part of its members, the member whose answer speaks for the part, whether
    # that answer counts: a tied one does not)
    split: list[tuple[Unit, list[int], int, bool]] = []
    for unit in [u for u in t.units if any(i in members for i in u.members)]:
        run = [i for i in unit.members if i in members and i not in tied]
        by_answer: dict[Hashable, list[int]] = {}
        for i in run:
            by_answer.setdefault(_answer_key(members[i]), []).append(i)
        answers = [(g, True) for g in by_answer.values()]
        apart = [i for i in unit.members if i in tied]
        if apart and answers:  # not known to answer as the others: a part of their own
            answers.append((apart, False))
        if len(answers) > 1:
            t.splits += 1
            # Members not run (the paper's rule) follow the representative's part.
            rest = [i for i in unit.members if i not in members]
            split += [(unit, sorted(g + rest) if k == 0 else g, g[0], counts)
                      for k, (g, counts) in enumerate(answers)]
        else:
            speaker = (run or apart)[0]
            split.append((unit, list(unit.members), speaker, bool(run)))
    found: list[bool | None] = [None] * len(split)
    if judge_rows is not None:
        # Compared together, tied answers too: the judge's column order breaks ties, and
        # an answer that matches more closely leaves the others unmatched, as it would
        # have if it counted.
        found = list(judge_matches([_rows(members[i]) for _, _, i, _ in split], judge_rows,
                                   tolerance))
    parts = [(u, g, m if counts else None) for (u, g, _, counts), m in zip(split, found,
                                                                           strict=True)]
    # Points and the schedule's record of who met whom belong to the duel's own units; a
    # unit run on D' only for the evidence (_wide) gets the verdict's evidence alone.
    duel = {i for u in p.units for i in u.members}
    outcomes = [m for _, g, m in parts if m is not None and duel.intersection(g)]
    any_matched, all_matched = any(outcomes), bool(outcomes) and all(outcomes)
    new_units: dict[int, list[Unit]] = {}
    for unit, g, matched in parts:
        part = unit if g == unit.members else unit.part(t.new_uid(), g)
        new_units.setdefault(unit.uid, []).append(part)
        if duel.intersection(g):
            part.instance_points.setdefault(p.match.mid, []).append(
                scoring.instance_points(matched, any_matched, all_matched))
        if matched is None:
            part.abstained += 1
            continue
        scoring.add_verdict(part, matched, t.accuracy, weight, t.spread)
        if matched:
            part.matched += 1
        else:
            part.mismatched += 1
    p.record["members"] = {side: list(u.members) for side, u in zip("ab", p.units, strict=True)}
    p.record["matched"] = sorted(i for _, g, m in parts if m for i in g)
    _replace_units(t, new_units)


def _replace_units(t: Tournament, new_units: dict[int, list[Unit]]) -> None:
    units: list[Unit] = []
    for u in t.units:
        units.extend(new_units.get(u.uid, [u]))
    t.units = units


def _current(t: Tournament, p: Pending) -> list[Unit]:
    """The units the duel's members are in now: an earlier duel of the same round may have
    split a unit that was separated whole."""
    ran = {i for u in p.units for i in u.members}
    return [u for u in t.units if ran.intersection(u.members)]


def _unjudged(t: Tournament, p: Pending) -> None:
    """A duel without a separating instance: a draw for both units, no evidence."""
    for unit in _current(t, p):
        unit.instance_points.setdefault(p.match.mid, []).append(0.5)
    p.record["members"] = {side: list(u.members) for side, u in zip("ab", p.units, strict=True)}


def _again(t: Tournament, p: Pending) -> str | None:
    """Why the match should be separated on another instance, if it should."""
    record = p.record
    if p.match.exhausted:
        return None
    if (record.get("judge") or {}).get("ambiguous"):
        return AMBIGUOUS  # this D' left the judge a choice; another may not
    if (record.get("judge") or {}).get("rows") is None:
        return None  # the judge abstained or failed: another instance asks it again in vain
    if record["verdict"] == "draw":
        return DRAWN
    winner, loser = (p.units if record["verdict"] == "a" else p.units[::-1])
    if loser.size >= PRIOR_RATIO * winner.size and loser.size >= winner.size + 2:
        return AGAINST_PRIOR
    return None


def _tell(t: Tournament, stage: str, number: int, done: int, of: int) -> None:
    if t.progress is not None:
        t.progress({"stage": stage, "round": number, "done": done, "of": of,
                    "duels": len(t.duels)})


def play_round(t: Tournament, matches: list[Match], number: int) -> None:
    """Separate every match of the round (database work, in order), judge every instance
    (concurrently where the judge can), then score in the matches' order."""
    pending = []
    for done, m in enumerate(matches):
        _tell(t, "separating", number, done, len(matches))
        pending.append(separate_duel(t, m))
    _server_limit(t)
    asked = [p for p in pending if p.context is not None]
    if asked:
        _tell(t, "judging", number, 0, len(asked))
    answers = judge_all(t.judge, [p.context for p in asked if p.context is not None],
                        lookahead(t, pending))
    by_match = {id(p): a for p, a in zip(asked, answers, strict=True)}
    for p in pending:
        record = p.record
        record["round"] = number
        record["attempt"] = len(p.match.duels) + 1
        if p.match.exclude:
            record["excluded_rows"] = len(p.match.exclude)
        if p.context is None:
            _unjudged(t, p)
        else:
            t.answers.append(by_match[id(p)])
            judged(t, p, by_match[id(p)])
        record["timings"] = p.sep.get("timings", {})
        record["tries"] = p.sep.get("tries", 0)
        p.match.duels.append(record)
        p.match.exclude |= set(p.sep.get("row_ids") or [])
        p.match.chosen |= set(p.sep.get("chosen_row_ids") or p.sep.get("row_ids") or [])
        if p.sep.get("row_ids"):
            p.match.instances.append(frozenset(p.sep["row_ids"]))
        # Nothing new to exclude, or nothing separated: another search finds the same.
        p.match.exhausted = record.get("separation") != "separated" or not p.sep.get("row_ids")
        p.match.both_ways = both_ways(t.unit_of(p.match.a), t.unit_of(p.match.b))
        p.match.again = _again(t, p) if p.match.has_room(t.rules.instances or 1) else None
        if p.match.again is not None:
            record["again"] = p.match.again
            t.again[p.match.again] += 1
        t.duels.append(serialise(Duel, record))
    _tell(t, "played", number, len(matches), len(matches))


def _server_limit(t: Tournament) -> None:
    """Bind the LLM judge's pool to the server-wide limit its configuration names."""
    llm = getattr(t.judge, "inner", t.judge)
    limit = getattr(getattr(llm, "config", None), "server_max_requests", None)
    if limit and hasattr(llm, "pool"):
        llm.pool.slots = AdvisorySlots(t.executor.run_internal, limit)


def judge_figures(answers: list[JudgeAnswer]) -> dict[str, Any]:
    """What the judge cost and whether it failed: completions sent and cached, tokens,
    and ``judge_failure`` (stated once) when its circuit breaker opened."""
    figures: dict[str, Any] = {}
    spent = [a.tokens for a in answers if a.tokens is not None]
    if spent:
        figures["judge_completions"] = {"sent": sum(a.calls for a in answers),
                                        "cached": sum(a.cached for a in answers)}
        figures["judge_tokens"] = {k: sum(t.get(k, 0) for t in spent)
                                   for k in ("prompt", "completion")}
    lost = [a for a in answers if a.unavailable is not None]
    if lost:
        figures["judge_failure"] = {"cause": lost[0].unavailable, "duels": len(lost)}
    return figures


def play(t: Tournament) -> int:
    """Every round the schedule asks for; the number of rounds played."""
    rules = t.rules
    rounds = 0
    while True:
        waiting = [(m, t.unit_of(m.a), t.unit_of(m.b)) for m in t.matches
                   if m.pending(rules.instances or 1)]
        pairs, again = next_round(rules.schedule or "round-robin", rounds == 0, t.units,
                                  waiting, rules.scoring or "points", t.accuracy,
                                  rules.instances or 1, t.spread)
        if not pairs and not again:
            if not _confirm(t):
                return rounds
            continue
        matches = [m for m, _, _ in again]
        for u, v in pairs:
            match = Match(len(t.matches), u.first, v.first)
            t.matches.append(match)
            matches.append(match)
        rounds += 1
        play_round(t, matches, rounds)


def _confirm(t: Tournament) -> bool:
    """Evidence scoring: when the winner leads the best unit of another group by less than
    :data:`CONFIDENT`, the two duel again on a new instance, away from the rows of the
    instances they shared, while they shared fewer than ``widened(instances)`` once one
    of those gave a verdict (only ``instances`` while all were drawn: a draw tells
    nothing, and another seldom does); False when the winner is sure, or the pair can
    take no more."""
    limit = t.rules.instances or 1
    if t.rules.scoring != "evidence" or limit < 2:
        return False
    best = max(t.units, key=lambda u: scoring.ranking_key(u, "evidence"))
    rivals = [u for u in t.units if u.group != best.group]
    if not rivals:
        return False
    runner = max(rivals, key=lambda u: scoring.ranking_key(u, "evidence"))
    if best.score("evidence") - runner.score("evidence") >= CONFIDENT:
        return False
    shared = [m for m in t.matches
              if m.mid in best.instance_points.keys() & runner.instance_points.keys()]
    used = sum(len(m.duels) for m in shared)
    if any(d.get("verdict") in ("a", "b") for m in shared for d in m.duels):
        limit = widened(limit)
    if both_ways(best, runner):
        limit = widened(limit)
    if used >= limit or (shared and shared[-1].exhausted):
        return False
    last = shared[-1].duels[-1] if shared and shared[-1].duels else {}
    if (last.get("judge") or {}).get("rows") is None:
        return False  # the judge gave no answer there: it would not on another instance
    match = Match(len(t.matches), best.first, runner.first, again=CLOSE, room=limit - used,
                  exclude=set().union(*(m.exclude for m in shared)),
                  chosen=set().union(*(m.chosen for m in shared)),
                  instances=[rows for m in shared for rows in m.instances])
    t.matches.append(match)
    t.again[CLOSE] += 1
    return True


def _spread(accuracy: float, rules: Rules) -> tuple[float, ...] | None:
    """The accuracies the judge may have when its ``accuracy`` (:func:`_accuracy`) is only
    assumed (none is set by ``judge_accuracy`` or declared by the judge, and it is no
    reference query); None: known."""
    if not rules.uncertain_accuracy or rules.judge_accuracy is not None:
        return None
    return scoring.ACCURACY_SPREAD if accuracy == scoring.DEFAULT_ACCURACY else None


def _accuracy(judge: Judge, rules: Rules) -> float:
    """How often the judge names the right answer, as the evidence model assumes."""
    if rules.judge_accuracy is not None:
        return rules.judge_accuracy
    inner = getattr(judge, "inner", None)
    if inner is not None and getattr(judge, "noise", None) == 0:
        return _accuracy(inner, rules)  # a noise wrapper that adds none is its inner judge
    declared = getattr(judge, "accuracy", None)
    if isinstance(declared, float):
        return declared
    return scoring.REFERENCE_ACCURACY if judge.name == "reference" else scoring.DEFAULT_ACCURACY


def _decided_by(t: Tournament, best: Unit, how: str, votes: list[int]) -> str:
    """``votes``: each group's consistency prior (:func:`_votes`)."""
    if len(votes) == 1:
        return "single group"
    largest = max(votes)
    unique_largest = votes.count(largest) == 1
    if all(d["verdict"] == "draw" and not d.get("matched") for d in t.duels):
        return "consistency (every duel was a draw)" if unique_largest and \
            best.size == largest else "input order"
    if t.rules.scoring == "evidence" and best.size == largest and unique_largest:
        top = max(t.units, key=lambda u: (u.evidence, -u.first))
        if top.group != best.group and top.evidence > best.evidence + 1e-9:
            return "consistency"
    return how


def _group_records(t: Tournament, groups: list[Group], votes: list[int]
                   ) -> list[dict[str, Any]]:
    scoring_name = t.rules.scoring or "points"
    records = []
    for i, g in enumerate(groups):
        units = [u for u in t.units if u.group == i]
        best = max(units, key=lambda u: scoring.ranking_key(u, scoring_name))
        records.append({
            "members": g.members,
            "representative": g.representative,
            "size": votes[i],
            "score": round(best.score(scoring_name), 6),
            "rows_on_d": len(g.answer.rows),
            "best": best.first,
            "parts": len(units),
        })
    return records


def _member_records(t: Tournament) -> list[dict[str, Any]]:
    scoring_name = t.rules.scoring or "points"
    records = [{"index": i, "group": u.group, "score": round(u.score(scoring_name), 6),
                "points": u.points(), "evidence": round(u.evidence, 6), "matched": u.matched,
                "mismatched": u.mismatched, "abstained": u.abstained}
               for u in t.units for i in u.members]
    return sorted(records, key=lambda r: r["index"])


def check_inputs(candidates: Any, question: str | None, counts: Any = None) -> None:
    """Refuse candidates, a question and counts no tournament can take (22023, 54000):
    before a judge is made, so a wrong call is told what is wrong with it, not with the
    judge."""
    if not isinstance(candidates, list) or not candidates:
        raise InvalidInput("candidates must be a non-empty array of SQL texts")
    if len(candidates) > MAX_CANDIDATES:
        raise InvalidInput(
            f"at most {MAX_CANDIDATES} candidates are accepted, got {len(candidates)}", "54000"
        )
    if not question or not str(question).strip():
        raise InvalidInput("the question must not be empty")
    if counts is None:
        return
    if not isinstance(counts, list):
        raise InvalidInput("counts must be an array of whole numbers, one a candidate")
    if len(counts) != len(candidates):
        raise InvalidInput(f"counts must give one count a candidate: {len(candidates)} "
                           f"candidates, {len(counts)} counts")
    if not all(isinstance(c, int) and not isinstance(c, bool) and 1 <= c <= MAX_COUNT
               for c in counts):
        raise InvalidInput(f"each count must be a whole number from 1 to {MAX_COUNT} (how "
                           "often the candidate was produced), not NULL")


def _votes(groups: list[Group], counts: list[int] | None) -> list[int]:
    """Each group's consistency prior: its members, or, when the caller gave how often each
    candidate was produced (a deduplicated list), their counts summed."""
    return [sum(counts[i] for i in g.members) if counts else len(g.members) for g in groups]


def run_tournament(
    executor: Executor,
    candidates: list[str],
    question: str,
    evidence: str | None,
    judge: Judge,
    options: Options,
    reference: str | None = None,
    catalog: Catalog | None = None,
    separations: MutableMapping[MemoKey, Separated] | None = None,
    rules: Rules | None = None,
    counts: list[int] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The whole selection for one question; a JSON-ready dict.

    ``progress``: called as each round goes (:data:`Progress`), for a caller that shows
    where a long tournament is (an LLM judge's replies take seconds a round).

    ``counts``: how often the NL2SQL system produced each candidate, for a caller who
    deduplicated them; a group's consistency prior is then its members' counts summed.

    ``rules``: grouping, scoring, schedule, instances a pair, members run on D'
    (:class:`~siselect.selection.rules.Rules`); unset ones follow ``options.strategy``.

    ``separations``: a :class:`~siselect.selection.memo.SeparationMemo` (or any dict) that
    keeps every duel's separation and every member's answer on its D'. Pass the same one
    to a second call for the same candidates with another judge (a noise curve): that call
    replays only the judge and does no database separation work again for the duels the
    first call played (``len(separations)`` does not grow); a duel only the second plays
    (another schedule, a pair separated again) is separated then and kept.
    """
    check_inputs(candidates, question, counts)
    started = time.perf_counter()
    rules = (rules or Rules()).resolved(options.strategy)
    catalog = catalog or load_catalog(executor)
    ref_tree = to_read_tree(reference, options.dialect, catalog, executor) if reference \
        else None
    accuracy = _accuracy(judge, rules)
    t = Tournament(executor, catalog, judge, options, question, evidence, ref_tree, rules,
                   separations=separations if separations is not None else SeparationMemo(),
                   accuracy=accuracy, spread=_spread(accuracy, rules), progress=progress)
    t.entries = prepare(
        executor, catalog, [c if isinstance(c, str) else "" for c in candidates], options.dialect
    )
    t_exec = time.perf_counter() - started
    groups = group(t.entries, rules.grouping or "exact")
    votes = _votes(groups, counts)
    t.units = [Unit(t.new_uid(), list(g.members), i, votes[i]) for i, g in enumerate(groups)]
    result: dict[str, Any] = {
        "question": question,
        "judge": judge.name,
        "seed": options.seed,
        "candidates": len(candidates),
        **({"counts": list(counts)} if counts else {}),
        "rules": {"grouping": rules.grouping, "scoring": rules.scoring,
                  "schedule": rules.schedule, "instances": rules.instances,
                  "members": rules.members, "scope": rules.scope,
                  "judge_accuracy": t.accuracy, "uncertain_accuracy": rules.uncertain_accuracy,
                  "accuracy_spread": list(t.spread) if t.spread else None,
                  "prior_weight": scoring.PRIOR_WEIGHT if rules.scoring == "evidence" else None},
        "dropped": [{"index": e.index, **e.error} for e in t.entries if e.error],
    }
    if not groups:
        result.update(
            winner=None,
            reason="every candidate failed on the database",
            groups=[],
            duels=[],
            scores={},
            decided_by="none",
        )
        return _timed(result, started, t_exec)
    rounds = play(t)
    best, how = scoring.winner(t.units, rules.scoring or "points")
    group_records = _group_records(t, groups, votes)
    n = len(groups)
    result.update(
        winner={"index": best.first, "sql": t.entries[best.first].sql},
        decided_by=_decided_by(t, best, how, votes),
        groups=group_records,
        scores={str(g["representative"]): g["score"] for g in group_records},
        members=_member_records(t),
        duels=t.duels,
        judge_calls=t.judge_calls,
        schedule={"rounds": rounds, "pairs": n * (n - 1) // 2, "played": len(t.matches),
                  "skipped": skipped(t.units), "duels": len(t.duels),
                  "judged": len(t.answers)},
        separated_again={"drawn": t.again[DRAWN], "against_prior": t.again[AGAINST_PRIOR],
                         "close": t.again[CLOSE], "ambiguous": t.again[AMBIGUOUS],
                         "pairs": sum(1 for m in t.matches if len(m.duels) > 1),
                         "both_ways": sum(1 for m in t.matches if m.both_ways)},
        splits=t.splits,
    )
    result.update(judge_figures(t.answers))
    return _timed(result, started, t_exec)


def _timed(result: dict[str, Any], started: float, execution: float) -> dict[str, Any]:
    result["timings"] = {
        "execution": round(execution, 6),
        "total": round(time.perf_counter() - started, 6),
    }
    return serialise(TournamentResult, result)
