"""The result contract: the separation, the duel and the tournament as types.

Producers build a plain dict (JSON-ready, as PL/Python returns it) and hand it to
:func:`serialise`, the one place a result leaves siselect: it checks the field names
against the type here and stamps :data:`SCHEMA_VERSION`. :func:`from_dict` reads a result
back into the types (what :mod:`siselect.client.api` returns), :func:`as_dict` writes
them out again. A field whose default is :data:`ABSENT` may be missing from a result
(its absence means something, e.g. no ``instance`` unless separated); every other field
is always there, possibly null where its type says so. The JSON Schemas under
``docs/schema/`` are generated from these types (``python3 -m siselect.client.schemas``).
"""

import dataclasses
import functools
import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, Union

from siselect.runtime.errors import SiselectError

#: The version of the result contract; bumped whenever a field is added, removed or retyped.
SCHEMA_VERSION = "0.2.0"

T = TypeVar("T")


class _Absent:
    """The default of a field that a result may leave out (distinct from a null value)."""

    _instance: "_Absent | None" = None

    def __new__(cls) -> "_Absent":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


ABSENT: Any = _Absent()
#: ``Maybe[int]``: an int, or the key is left out of the result.
Maybe = Union[T, _Absent]  # noqa: UP007 - a generic alias needs Union


class ResultShapeError(SiselectError):
    """A producer built a result that breaks the contract: a bug in siselect (XX000)."""

    sqlstate = "XX000"


def doc(text: str, absent: bool = False) -> Any:
    """A field documented in one line; ``absent``: the key may be left out of the result."""
    if absent:
        return field(default=ABSENT, metadata={"doc": text})
    return field(metadata={"doc": text})


def version_field() -> Any:
    """The ``schema_version`` field, stamped by :func:`serialise`."""
    return field(default=SCHEMA_VERSION,
                 metadata={"doc": "version of this result contract (siselect's schema)"})


Status = Literal["separated", "same_answer", "nondeterministic", "failed", "timeout"]
DuelSeparation = Literal["separated", "same_answer", "nondeterministic", "failed", "timeout",
                         "error"]
Side = Literal["a", "b", "draw"]
DecidedBy = Literal["tournament", "consistency", "input order", "single group",
                    "consistency (every duel was a draw)", "none"]


@dataclass(kw_only=True)
class Relation:
    """A table or an answer: column names and rows (JSON values)."""

    columns: list[str] = doc("column names, in order")
    rows: list[list[Any]] = doc("rows, each a list of values in column order")


@dataclass(kw_only=True)
class QueryTexts:
    """The two queries as PostgreSQL runs them."""

    q1: str = doc("Q1 in PostgreSQL's dialect")
    q2: str = doc("Q2 in PostgreSQL's dialect")


@dataclass(kw_only=True)
class RowCounts:
    """A row count for each query."""

    q1: int = doc("rows of Q1's answer")
    q2: int = doc("rows of Q2's answer")


@dataclass(kw_only=True)
class AnswerPair:
    """Each query's answer on the separating instance D'."""

    q1: Relation = doc("Q1's answer on D'")
    q2: Relation = doc("Q2's answer on D'")


Meaning = Literal["meaningful", "non-degenerate", "degenerate", "failed"]


@dataclass(kw_only=True)
class QueryError:
    """A query's error on D': its answer there (see docs/instances.md)."""

    message: str = doc("the error")
    sqlstate: str = doc("its SQLSTATE (class 21 or 22: caused by the rows read)")


@dataclass(kw_only=True)
class SeparationResult:
    """What siselect.separate returns: a separating instance of Q1 and Q2, or why none."""

    status: Status = doc("separated, same_answer, nondeterministic, failed or timeout")
    strategy: Literal["minimal", "paper"] = doc("search strategy used")
    backend: str = doc("witness backend asked for (auto), then the one that served")
    seed: int = doc("seed of the randomised search")
    sql: QueryTexts = doc("both queries as PostgreSQL runs them")
    rows_on_d: RowCounts = doc("rows of each query's answer on the whole database D")
    backend_reason: Maybe[str | None] = doc("why that backend served (set once searched)",
                                            absent=True)
    notes: Maybe[list[str]] = doc("what the search noticed on the way", absent=True)
    reason: Maybe[str] = doc("why the status is not 'separated'", absent=True)
    rows: Maybe[int] = doc("rows of the instance found (also when too large)", absent=True)
    minimal_rows: Maybe[int] = doc("rows before referenced rows were added", absent=True)
    references_left_out: Maybe[list[str]] = doc("tables of referenced rows you may not read",
                                                absent=True)
    instance: Maybe[dict[str, Relation]] = doc("the instance D': its rows by table",
                                               absent=True)
    row_ids: Maybe[list[int]] = doc("the instance's rows as siselect row ids", absent=True)
    chosen_row_ids: Maybe[list[int]] = doc(
        "the rows of row_ids the search chose, when others were added to them (partners "
        "that keep an inclusion D keeps, rows referenced through foreign keys)", absent=True)
    answers: Maybe[AnswerPair] = doc("each query's answer on D' (a failed one: its error "
                                     "as one row under 'siselect: error')", absent=True)
    meaning: Maybe[Meaning] = doc(
        "rank of D': meaningful (non-degenerate, disagreeing as on D), non-degenerate, "
        "degenerate (empty, or an answer empty or all NULL), failed (a query fails on D')",
        absent=True)
    degenerate: Maybe[bool] = doc("D' is empty or an answer on it empty or all NULL: no "
                                  "instance without that separates", absent=True)
    faithful: Maybe[bool] = doc("the disagreement on D' is a piece of the one on D",
                                absent=True)
    meaning_reason: Maybe[str] = doc("why D' is not meaningful", absent=True)
    errors: Maybe[dict[str, QueryError]] = doc(
        "by query (q1, q2): its error on D', its answer there; no instance on which both "
        "run separates them", absent=True)
    tries: int = doc("candidate instances tested")
    tries_failed: Maybe[int] = doc("instances tested on which a query failed (skipped)",
                                   absent=True)
    timings: dict[str, float] = doc("seconds by phase, and total")
    schema_version: str = version_field()


@dataclass(kw_only=True)
class TokenCounts:
    """Tokens the endpoint reported (``usage``) for the completions it was sent."""

    prompt: int = doc("prompt tokens")
    completion: int = doc("completion tokens")


@dataclass(kw_only=True)
class CompletionCounts:
    """The judge's completions: sent to the endpoint, and answered from a cache."""

    sent: int = doc("completions requested from the endpoint")
    cached: int = doc("completions answered from a cache (identical prompts)")


@dataclass(kw_only=True)
class JudgeFailure:
    """The judge's circuit breaker opened: the endpoint failed too often in a row."""

    cause: str = doc("what failed (redacted)")
    duels: int = doc("duels drawn with the reason 'judge unavailable'")


@dataclass(kw_only=True)
class JudgeRecord:
    """What the judge said on one duel's instance."""

    name: str = doc("judge: reference, none, llm (or a noisy wrapper's name)")
    rows: list[list[Any]] | None = doc("the judge's answer rows; null when it abstained")
    votes: list[dict[str, Any]] = doc("individual votes (LLM samples, injected noise)")
    error: str | None = doc("why the judge failed, if it did")
    tokens: Maybe[TokenCounts] = doc("tokens of the completions sent for this duel (LLM)",
                                     absent=True)
    instance_shown: Maybe[dict[str, Relation]] = doc(
        "the smaller view of D' the judge was shown, when D' did not fit max_prompt_tokens "
        "(answers and verdict are on it)", absent=True)
    left_out: Maybe[str] = doc("what the prompt said was left out of D'", absent=True)
    ambiguous: Maybe[str] = doc(
        "why the judge's answer on D' is one of several (a reference query's answer that "
        "hangs on a tie there): it gave no verdict", absent=True)


@dataclass(kw_only=True)
class DuelAnswers:
    """Each representative's answer on the duel's instance."""

    a: Relation = doc("A's answer on D'")
    b: Relation = doc("B's answer on D'")


@dataclass(kw_only=True)
class Duel:
    """One duel of the tournament: two group representatives, their instance, the verdict."""

    a: int = doc("input index of A's representative")
    b: int = doc("input index of B's representative")
    separation: DuelSeparation = doc("the separation's status, or error")
    verdict: Side = doc("a, b or draw")
    reason: str = doc("why that verdict")
    instance: Maybe[dict[str, Relation]] = doc("the separating instance D'", absent=True)
    rows: Maybe[int] = doc("rows of D'", absent=True)
    minimal_rows: Maybe[int] = doc("rows of D' before the rows they reference through foreign "
                                   "keys were added (absent: none were added)", absent=True)
    references_left_out: Maybe[list[str]] = doc("tables of referenced rows you may not read",
                                                absent=True)
    judge: Maybe[JudgeRecord] = doc("what the judge answered on D'", absent=True)
    answers: Maybe[DuelAnswers] = doc("A's and B's answers on D'", absent=True)
    reference_answer: Maybe[Relation] = doc("the reference query's answer on D'",
                                            absent=True)
    evidence_against_reference: Maybe[bool] = doc("the judge disagrees with the reference",
                                                  absent=True)
    meaning: Maybe[Meaning] = doc("rank of D', as the separation gave it", absent=True)
    degenerate: Maybe[bool] = doc("D' is degenerate, as the separation gave it", absent=True)
    meaning_reason: Maybe[str] = doc("why D' is not meaningful", absent=True)
    errors: Maybe[dict[str, QueryError]] = doc("by side (a, b): its error on D'", absent=True)
    round: Maybe[int] = doc("the schedule's round it was played in (from 1)", absent=True)
    attempt: Maybe[int] = doc("which instance of this pair (from 1; above 1: separated again)",
                              absent=True)
    excluded_rows: Maybe[int] = doc("rows of the pair's earlier instances kept out of D'",
                                    absent=True)
    shared_rows: Maybe[int] = doc("rows D' shares with the pair's earlier instances, when "
                                  "none away from them separates", absent=True)
    members: Maybe[dict[str, list[int]]] = doc(
        "by side (a, b): the input indexes of the unit's members, each run on D'", absent=True)
    matched: Maybe[list[int]] = doc("members whose answer on D' matches the judge's",
                                    absent=True)
    tied: Maybe[list[int]] = doc("members whose answer on D' hangs on ties there (one of "
                                 "several): neither a match nor a miss", absent=True)
    as_on_d: Maybe[bool] = doc("both representatives answer on D' as on D: a degenerate D' "
                               "showing D's own disagreement, its verdict weighed as a "
                               "meaningful one's", absent=True)
    reliability: Maybe[float] = doc("how far the verdict is believed (evidence scoring, "
                                    "docs/selection.md)", absent=True)
    again: Maybe[str] = doc("why the pair is separated again on another instance",
                            absent=True)
    timings: dict[str, float] = doc("seconds by phase of the separation")
    tries: int = doc("candidate instances tested")


@dataclass(kw_only=True)
class Dropped:
    """A candidate that failed on D and so took no part."""

    index: int = doc("input index of the candidate")
    message: str = doc("the error")
    sqlstate: str = doc("its SQLSTATE")


@dataclass(kw_only=True)
class Winner:
    """The chosen candidate."""

    index: int = doc("input index of the winner")
    sql: str = doc("its text as given")


@dataclass(kw_only=True)
class GroupRecord:
    """Candidates with the same answer on D."""

    members: list[int] = doc("input indexes, in input order")
    representative: int = doc("the member that duels for the group")
    size: int = doc("number of members, or their counts summed when counts were given "
                    "(the consistency prior)")
    score: float = doc("its best member's score: tournament points (1 a win, 0.5 a draw) "
                       "or evidence (log-odds, docs/selection.md), as rules.scoring says")
    rows_on_d: int = doc("rows of the group's answer on D")
    best: Maybe[int] = doc("its member with the best record", absent=True)
    parts: Maybe[int] = doc("units it ended as, split by its members' answers on D'",
                            absent=True)


@dataclass(kw_only=True)
class RulesRecord:
    """How the tournament grouped, scored and scheduled (docs/selection.md)."""

    grouping: str = doc("exact (BIRD's sets of row tuples) or paper (normalised answers)")
    scoring: str = doc("evidence (consistency prior and weighted verdicts) or points")
    schedule: str = doc("adaptive (pairs that cannot change the winner skipped) or "
                        "round-robin")
    instances: int = doc("most instances a pair is judged on")
    members: str = doc("all (every member runs on D') or representative (the paper's)")
    scope: Maybe[str] = doc("all (a verdict is evidence for or against every unit, each run "
                            "on D') or pair (only the duel's two)", absent=True)
    judge_accuracy: float = doc("the judge's accuracy the evidence model assumes")
    uncertain_accuracy: Maybe[bool] = doc(
        "whether an assumed judge accuracy is held uncertain (docs/selection.md)", absent=True)
    accuracy_spread: Maybe[list[float] | None] = doc(
        "the accuracies the judge may have, equally likely, when its accuracy is assumed "
        "rather than known (null: known)", absent=True)
    prior_weight: Maybe[float | None] = doc(
        "w of the consistency prior: a unit starts at w log |group| (evidence scoring; "
        "null: points)", absent=True)


@dataclass(kw_only=True)
class MemberRecord:
    """One candidate's own record in the tournament."""

    index: int = doc("input index")
    group: int = doc("position of its group in groups")
    score: float = doc("its score (points or evidence, as rules.scoring says)")
    points: float = doc("round-robin points of its pairs (majority of each pair's instances)")
    evidence: float = doc("sum of its verdicts' log-ratios (without the prior)")
    matched: int = doc("instances on which its answer matched the judge's")
    mismatched: int = doc("instances on which it did not")
    abstained: int = doc("instances it ran on where the judge gave no answer, or where its "
                         "own answer hung on ties (one of several)")


@dataclass(kw_only=True)
class ScheduleRecord:
    """What the schedule played and spared."""

    rounds: int = doc("rounds of duels (each judged concurrently)")
    pairs: int = doc("pairs of groups (what round-robin plays)")
    played: int = doc("pairs played")
    skipped: int = doc("pairs of units never played: they could not change the winner")
    duels: int = doc("duels, separations again included")
    judged: int = doc("duels that reached the judge")


@dataclass(kw_only=True)
class AgainRecord:
    """Pairs separated again on another instance, away from the rows already used."""

    drawn: int = doc("times because the duel was drawn")
    against_prior: int = doc("times because the verdict went against a much larger group")
    close: int = doc("times because the winner did not lead by 9 to 1 yet (evidence scoring)")
    pairs: int = doc("pairs judged on more than one instance")
    both_ways: Maybe[int] = doc("pairs whose verdicts went both ways, each allowed up to "
                                "2 instances - 1 (absent in older results)", absent=True)
    ambiguous: Maybe[int] = doc("times because the reference's answer on D' hung on a tie "
                                "there (absent in older results)", absent=True)


@dataclass(kw_only=True)
class TournamentResult:
    """What siselect.tournament returns: groups, duels, scores and the winner."""

    question: str = doc("the natural-language question")
    judge: str = doc("the judge's name")
    seed: int = doc("seed of the separations")
    candidates: int = doc("number of candidates given")
    counts: Maybe[list[int]] = doc("how often each candidate was produced, as given",
                                   absent=True)
    rules: Maybe[RulesRecord] = doc("the grouping, scoring and schedule used", absent=True)
    dropped: list[Dropped] = doc("candidates that failed on D")
    winner: Winner | None = doc("the chosen candidate; null when every candidate failed")
    reason: Maybe[str] = doc("why there is no winner", absent=True)
    decided_by: DecidedBy = doc("what decided the winner")
    groups: list[GroupRecord] = doc("groups by answer on D, in input order")
    scores: dict[str, float] = doc("each group's score by its representative's input index")
    members: Maybe[list[MemberRecord]] = doc("every candidate that ran on D: its record",
                                             absent=True)
    duels: list[Duel] = doc("every duel played, in order")
    schedule: Maybe[ScheduleRecord] = doc("rounds, pairs played and skipped", absent=True)
    separated_again: Maybe[AgainRecord] = doc("how often pairs were separated again",
                                              absent=True)
    splits: Maybe[int] = doc("times a unit was split by its members' answers on D'",
                             absent=True)
    judge_calls: Maybe[int] = doc("LLM requests made (absent when no group ran)", absent=True)
    judge_completions: Maybe[CompletionCounts] = doc("LLM completions sent and cached",
                                                     absent=True)
    judge_tokens: Maybe[TokenCounts] = doc("tokens of the LLM completions sent", absent=True)
    judge_failure: Maybe[JudgeFailure] = doc(
        "present when the judge failed (its circuit breaker opened): the cause, once",
        absent=True)
    timings: dict[str, float] = doc("seconds: execution on D, and total")
    schema_version: str = version_field()


R = TypeVar("R")


def serialise(cls: type[R], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` checked against ``cls`` (names of fields, nested too) and stamped with
    :data:`SCHEMA_VERSION` when ``cls`` has that field; the dict is returned, updated."""
    problems = _problems(cls, data, cls.__name__)
    if problems:
        raise ResultShapeError("a result breaks its contract: " + "; ".join(problems[:5]))
    if "schema_version" in _fields(typing.cast(type, cls)):
        data["schema_version"] = SCHEMA_VERSION
    return data


def from_dict(cls: type[R], data: dict[str, Any]) -> R:
    """A result (a dict as serialised) as its type, nested types included."""
    return typing.cast(R, _build(cls, data))


def as_dict(result: Any) -> dict[str, Any]:
    """A typed result as the dict :func:`serialise` gives; absent fields left out."""
    return typing.cast(dict[str, Any], _plain(result))


def to_json(result: Any) -> str:
    return json.dumps(as_dict(result), ensure_ascii=False)


@functools.cache
def _fields(cls: type) -> dict[str, Any]:
    # Once per type: resolving a type's hints costs more than checking a duel's fields.
    hints = typing.get_type_hints(cls)
    return {f.name: (hints[f.name], f) for f in dataclasses.fields(cls)}


def may_be_absent(f: dataclasses.Field) -> bool:
    return f.default is ABSENT


def without_absent(tp: Any) -> Any:
    """``tp`` with :data:`ABSENT`'s type taken out of its union."""
    args = typing.get_args(tp)
    if _is_union(tp) and _Absent in args:
        rest = tuple(a for a in args if a is not _Absent)
        return rest[0] if len(rest) == 1 else Union[rest]  # noqa: UP007
    return tp


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (Union, types.UnionType)


def _problems(tp: Any, value: Any, path: str) -> list[str]:
    """Names missing or unknown anywhere in ``value`` as type ``tp`` describes it."""
    tp = without_absent(tp)
    if _is_union(tp):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None or len(options) != 1:
            return []
        tp = options[0]
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(value, dict):
            return [f"{path}: not an object"]
        fields = _fields(tp)
        problems = [f"{path}.{k}: unknown field" for k in value if k not in fields]
        for name, (hint, f) in fields.items():
            if name in value:
                problems += _problems(hint, value[name], f"{path}.{name}")
            elif not may_be_absent(f) and name != "schema_version":
                problems.append(f"{path}.{name}: missing")
        return problems
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if not _has_fields(tp):
        return []  # an answer's rows, a list of ids: nothing in them has a name to check
    if origin is list and isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _problems(args[0], v, f"{path}[{i}]")]
    if origin is dict and isinstance(value, dict):
        return [p for k, v in value.items() for p in _problems(args[1], v, f"{path}.{k}")]
    return []


@functools.cache
def _has_fields(tp: Any) -> bool:
    """Whether a value of type ``tp`` can hold a dataclass, whose names are checked."""
    tp = without_absent(tp)
    if dataclasses.is_dataclass(tp):
        return True
    return any(_has_fields(a) for a in typing.get_args(tp) if not isinstance(a, str | int))


def _build(tp: Any, value: Any) -> Any:
    tp = without_absent(tp)
    if _is_union(tp):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None or len(options) != 1:
            return value
        tp = options[0]
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        fields = _fields(tp)
        return tp(**{k: _build(fields[k][0], v) for k, v in value.items() if k in fields})
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is list and isinstance(value, list):
        return [_build(args[0], v) for v in value]
    if origin is dict and isinstance(value, dict):
        return {k: _build(args[1], v) for k, v in value.items()}
    return value


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if getattr(value, f.name) is not ABSENT}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
