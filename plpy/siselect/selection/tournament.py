"""The round-robin tournament (paper section II): groups, duels, scores, a winner.

run every candidate on D -> group by normalised answer -> one representative a group
-> separate every pair -> judge the answer on D' -> comparator -> win 1, draw 0.5.
Ties on score fall back on the consistency score (group size), then on input order.
"""

import itertools
import time
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from siselect.instances.pair import Pair, group_rows, run_capped
from siselect.instances.separate import Options, answer_json, separate_pair
from siselect.instances.shadow import restrict
from siselect.instances.shrink import smaller_instances
from siselect.runtime import privileges
from siselect.runtime.answers import JUDGE_TOLERANCE, Tolerance, answer_key, matches_judge
from siselect.runtime.catalog import Catalog, load_catalog
from siselect.runtime.errors import Cancelled, InvalidInput, QueryFailed, SiselectError
from siselect.runtime.executor import Executor, Rows
from siselect.runtime.results import Duel, TournamentResult, serialise
from siselect.selection.judge_pool import UNAVAILABLE
from siselect.selection.judges import Judge, JudgeAnswer, JudgeContext
from siselect.selection.memo import MemoKey, Separated, memo_key
from siselect.selection.server_slots import AdvisorySlots
from siselect.sqltext.transpile import to_tree

MAX_CANDIDATES = 64


@dataclass
class Entry:
    """One input candidate and what became of it on D."""

    index: int
    sql: str
    tree: exp.Query | None = None
    answer: Rows | None = None
    error: dict[str, str] | None = None


@dataclass
class Group:
    members: list[int]
    representative: int
    answer: Rows
    score: float = 0.0


@dataclass
class Tournament:
    executor: Executor
    catalog: Catalog
    judge: Judge
    options: Options
    question: str
    evidence: str | None = None
    reference: exp.Query | None = None
    duels: list[dict[str, Any]] = field(default_factory=list)
    judge_calls: int = 0
    answers: list[JudgeAnswer] = field(default_factory=list)
    separations: MutableMapping[MemoKey, Separated] | None = None


def prepare(
    executor: Executor, catalog: Catalog, candidates: list[str], dialect: str
) -> list[Entry]:
    """Parse and run each candidate on D; a failing one drops out with its reason."""
    entries = []
    for index, sql in enumerate(candidates):
        entry = Entry(index, sql)
        try:
            entry.tree = to_tree(sql, dialect, catalog)
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


def group(entries: list[Entry]) -> list[Group]:
    """Candidates with the same normalised answer on D form one group (input order kept)."""
    groups: dict[Any, Group] = {}
    for e in entries:
        if e.answer is None:
            continue
        key = answer_key(e.answer.rows)
        if key in groups:
            groups[key].members.append(e.index)
        else:
            groups[key] = Group([e.index], e.index, e.answer)
    return list(groups.values())


def verdict(judge_rows: list[list[Any]] | None, a: Rows, b: Rows,
            tolerance: Tolerance = JUDGE_TOLERANCE) -> tuple[str, str]:
    """The comparator: the side whose answer on D' matches the judge's wins."""
    if judge_rows is None:
        return "draw", "the judge gave no answer"
    ok_a = matches_judge(a.rows, judge_rows, tolerance)
    ok_b = matches_judge(b.rows, judge_rows, tolerance)
    if ok_a and not ok_b:
        return "a", "only A's answer on D' matches the judge's"
    if ok_b and not ok_a:
        return "b", "only B's answer on D' matches the judge's"
    if ok_a and ok_b:
        return "draw", "both answers match the judge's"
    return "draw", "neither answer matches the judge's"


@dataclass
class Pending:
    """A duel separated on the database and waiting for the judge (or already decided)."""

    ga: Group
    gb: Group
    record: dict[str, Any]
    sep: dict[str, Any]
    context: JudgeContext | None = None  # None: no judge needed, the record is final
    on_d: tuple[Rows, Rows] | None = None
    run_on_instance: Any = None


def separate_duel(t: Tournament, ga: Group, gb: Group, entries: list[Entry]) -> Pending:
    """Separate two representatives: the database work of a duel, before any judge call
    (none when ``t.separations`` already holds it)."""
    a, b = entries[ga.representative], entries[gb.representative]
    assert a.tree is not None and b.tree is not None and a.answer and b.answer
    pair = Pair(t.executor, t.catalog, (a.tree, b.tree))
    key = memo_key(a.tree.sql("postgres"), b.tree.sql("postgres"), (), t.options)
    kept = t.separations.get(key) if t.separations is not None else None
    if kept is None:
        kept = _separated(t, pair, a, b)
        if t.separations is not None:
            t.separations[key] = kept
    record: dict[str, Any] = {"a": a.index, "b": b.index, **kept.status}
    if kept.on_d is None:
        return Pending(ga, gb, record, kept.sep)
    grouped = group_rows(kept.sep["row_ids"], t.catalog)

    def run_on_instance(tree: exp.Query) -> Rows:
        try:
            return pair.run(restrict(tree, t.catalog, grouped))
        except QueryFailed as exc:  # name the unreadable columns of the query as written
            raise privileges.explain(exc, tree, t.catalog) from None

    context = JudgeContext(t.question, t.evidence, kept.sep["instance"], t.catalog,
                           run_on_instance, lambda: smaller_instances(pair, kept.sep["row_ids"]))
    return Pending(ga, gb, record, kept.sep, context, kept.on_d, run_on_instance)


def _separated(t: Tournament, pair: Pair, a: Entry, b: Entry) -> Separated:
    """The separation of one pair of representatives, as the memo keeps it."""
    assert a.answer is not None and b.answer is not None
    record: dict[str, Any] = {}
    try:
        sep = separate_pair(pair, a.answer, b.answer, t.options)
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


def judge_all(judge: Judge, contexts: list[JudgeContext]) -> list[JudgeAnswer]:
    """The judge's answers for many duels: at once where the judge can (the LLM's requests
    go out concurrently), else one after another."""
    many = getattr(judge, "answer_all", None)
    return many(contexts) if many is not None else [judge.answer(c) for c in contexts]


def judged(t: Tournament, p: Pending, answer: JudgeAnswer) -> dict[str, Any]:
    """A separated duel's verdict from the judge's answer; scored."""
    assert p.on_d is not None
    record, sep = p.record, p.sep
    t.judge_calls += answer.calls
    record["instance"] = sep["instance"]
    record["rows"] = sep["rows"]
    if "minimal_rows" in sep and sep["minimal_rows"] != sep["rows"]:
        record["minimal_rows"] = sep["minimal_rows"]
    if sep.get("references_left_out"):
        record["references_left_out"] = sep["references_left_out"]
    record["judge"] = {
        "name": t.judge.name,
        "rows": answer.rows,
        "votes": answer.votes,
        "error": answer.error,
    }
    if answer.tokens is not None:
        record["judge"]["tokens"] = answer.tokens
    on_shown, run_on_shown = p.on_d, p.run_on_instance
    if answer.shown is not None:  # the prompt showed a smaller view of D' (max_prompt_tokens)
        on_shown, run_on_shown = answer.shown.answers, answer.shown.run
        record["judge"].update(instance_shown=answer.shown.instance,
                               left_out=answer.shown.left_out)
    record["answers"] = {"a": answer_json(on_shown[0]), "b": answer_json(on_shown[1])}
    tolerance = getattr(t.judge, "tolerance", JUDGE_TOLERANCE)
    side, why = verdict(answer.rows, on_shown[0], on_shown[1], tolerance)
    if answer.unavailable is not None:
        why = UNAVAILABLE
    elif answer.error and answer.rows is None:
        why = f"the judge failed: {answer.error}"
    record.update(verdict=side, reason=why)
    if t.reference is not None and t.judge.name != "reference":
        ref = run_on_shown(t.reference)
        record["reference_answer"] = answer_json(ref)
        if answer.rows is not None and not matches_judge(ref.rows, answer.rows):
            record["evidence_against_reference"] = True
    return _score(p.ga, p.gb, record, sep)


def play(t: Tournament, pairs: list[tuple[Group, Group]], entries: list[Entry]) -> None:
    """Separate every pair (database work, in order), judge every instance (concurrently
    where the judge can), then score in the pairs' order."""
    pending = [separate_duel(t, ga, gb, entries) for ga, gb in pairs]
    _server_limit(t)
    asked = [p for p in pending if p.context is not None]
    answers = judge_all(t.judge, [p.context for p in asked if p.context is not None])
    by_pair = {id(p): a for p, a in zip(asked, answers, strict=True)}
    for p in pending:
        if p.context is None:
            t.duels.append(_score(p.ga, p.gb, p.record, p.sep))
            continue
        answer = by_pair[id(p)]
        t.answers.append(answer)
        t.duels.append(judged(t, p, answer))


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


def _score(ga: Group, gb: Group, record: dict[str, Any], sep: dict[str, Any]) -> dict[str, Any]:
    points = {"a": (1.0, 0.0), "b": (0.0, 1.0), "draw": (0.5, 0.5)}[record["verdict"]]
    ga.score += points[0]
    gb.score += points[1]
    record["timings"] = sep.get("timings", {})
    record["tries"] = sep.get("tries", 0)
    return serialise(Duel, record)


def winner(groups: list[Group]) -> tuple[Group, str]:
    """Highest score; ties go to the larger group (consistency), then the earlier input."""
    best = max(groups, key=lambda g: (g.score, len(g.members), -g.representative))
    tied = [g for g in groups if g.score == best.score]
    if len(tied) == 1:
        return best, "tournament"
    sizes = [len(g.members) for g in tied]
    return best, "consistency" if sizes.count(max(sizes)) == 1 else "input order"


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
) -> dict[str, Any]:
    """The whole selection for one question; a JSON-ready dict.

    ``separations``: a :class:`~siselect.selection.memo.SeparationMemo` (or any dict) that
    keeps every duel's separation and answers on D'. Pass the same one to a second call
    for the same candidates with another judge (a noise curve): it replays only the judge
    and does no database separation work again for the duels the first call played.
    """
    if not isinstance(candidates, list) or not candidates:
        raise InvalidInput("candidates must be a non-empty array of SQL texts")
    if len(candidates) > MAX_CANDIDATES:
        raise InvalidInput(
            f"at most {MAX_CANDIDATES} candidates are accepted, got {len(candidates)}", "54000"
        )
    if not question or not str(question).strip():
        raise InvalidInput("the question must not be empty")
    started = time.perf_counter()
    catalog = catalog or load_catalog(executor)
    ref_tree = to_tree(reference, options.dialect, catalog) if reference else None
    t = Tournament(executor, catalog, judge, options, question, evidence, ref_tree,
                   separations=separations)
    entries = prepare(
        executor, catalog, [c if isinstance(c, str) else "" for c in candidates], options.dialect
    )
    t_exec = time.perf_counter() - started
    groups = group(entries)
    result: dict[str, Any] = {
        "question": question,
        "judge": judge.name,
        "seed": options.seed,
        "candidates": len(candidates),
        "dropped": [{"index": e.index, **e.error} for e in entries if e.error],
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
    play(t, list(itertools.combinations(groups, 2)), entries)
    best, how = winner(groups)
    if len(groups) == 1:
        how = "single group"
    elif all(d["verdict"] == "draw" for d in t.duels):
        how = "consistency (every duel was a draw)" if how == "consistency" else how
    result.update(
        winner={"index": best.representative, "sql": entries[best.representative].sql},
        decided_by=how,
        groups=[
            {
                "members": g.members,
                "representative": g.representative,
                "size": len(g.members),
                "score": g.score,
                "rows_on_d": len(g.answer.rows),
            }
            for g in groups
        ],
        scores={str(g.representative): g.score for g in groups},
        duels=t.duels,
        judge_calls=t.judge_calls,
    )
    result.update(judge_figures(t.answers))
    return _timed(result, started, t_exec)


def _timed(result: dict[str, Any], started: float, execution: float) -> dict[str, Any]:
    result["timings"] = {
        "execution": round(execution, 6),
        "total": round(time.perf_counter() - started, 6),
    }
    return serialise(TournamentResult, result)
