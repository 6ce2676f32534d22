"""The benchmark's results as types: one line of results.jsonl and summary.json.

Part of the result contract of :mod:`siselect.runtime.results` (serialised there, by
:func:`~siselect.runtime.results.serialise`); client-only, as the benchmark is.
"""

from dataclasses import dataclass
from typing import Any, Literal

from siselect.runtime.results import (
    CompletionCounts,
    JudgeFailure,
    Maybe,
    TokenCounts,
    doc,
    version_field,
)

QuestionId = int | str


@dataclass(kw_only=True)
class ErrorRecord:
    """An error with its SQLSTATE."""

    message: str = doc("the error")
    sqlstate: str = doc("its SQLSTATE (XX000 when not siselect's own)")


@dataclass(kw_only=True)
class Coverage:
    """How far every candidate of a task got."""

    transpiled: bool = doc("every candidate transpiled to PostgreSQL")
    executed: bool = doc("every candidate ran on D")
    lineage: bool = doc("executed, and no duel's separation failed with an error")


@dataclass(kw_only=True)
class BenchDropped:
    """A candidate that took no part, and where it failed."""

    index: int = doc("input index of the candidate")
    stage: Literal["transpile", "execute"] = doc("where it failed")
    message: str = doc("the error")
    sqlstate: str = doc("its SQLSTATE")


@dataclass(kw_only=True)
class BenchDuel:
    """A tournament duel in brief."""

    a: int = doc("input index of A's representative")
    b: int = doc("input index of B's representative")
    separation: str | None = doc("the separation's status (see the duel's contract)")
    rows: int | None = doc("rows of the separating instance, if any")
    reference_rows: Maybe[int] = doc("of those, rows added because the others reference them "
                                     "through foreign keys (absent in records before 0.2.0)",
                                     absent=True)
    verdict: Literal["a", "b", "draw"] = doc("a, b or draw")
    attempt: Maybe[int] = doc("which instance of the pair (from 1; above 1: separated again "
                              "away from the rows used; absent in records before 0.2.0)",
                              absent=True)
    seconds: float | None = doc("seconds the duel's separation took")
    reason: Maybe[str | None] = doc("why not separated (only when not)", absent=True)
    degenerate: Maybe[bool] = doc("D' is degenerate, as the separation gave it", absent=True)
    meaning: Maybe[str] = doc("rank of D', as the separation gave it", absent=True)
    failed_on_instance: Maybe[list[str]] = doc("sides (a, b) whose query failed on D'",
                                               absent=True)
    tied: Maybe[list[int]] = doc("members whose answer on D' hung on ties there, so that it "
                                 "gave them no evidence", absent=True)
    lost_by_correct: Maybe[bool] = doc("the verdict went against a side whose answer on D is "
                                       "the gold's (then instance, answers and judge_rows "
                                       "are kept)", absent=True)
    instance: Maybe[dict[str, Any] | None] = doc("D', for a duel lost by a correct side",
                                                 absent=True)
    right_matched: Maybe[list[int]] = doc(
        "for a duel lost by a correct side: the candidates whose answer on D is the gold's "
        "that matched the judge on that D' (the loser answers there unlike them)",
        absent=True)
    answers: Maybe[dict[str, Any] | None] = doc("A's and B's answers on D', likewise",
                                                absent=True)
    judge_rows: Maybe[list[list[Any]] | None] = doc("the judge's answer on D', likewise",
                                                    absent=True)


@dataclass(kw_only=True)
class NoiseRun:
    """The tournament replayed on the same instances with a noisy judge."""

    model: str = doc("noise model: rival (a rival candidate's answer) or near-miss")
    noise: float = doc("probability that the judge's answer is replaced")
    seed: int = doc("noise seed (0..noise_seeds-1)")
    choice: int | None = doc("the candidate chosen (null: none)")
    hit: bool = doc("the choice returns the gold result")
    judged: int = doc("duels the judge answered")
    replaced: int = doc("judge answers the noise replaced")
    memo: int = doc("separations the memo held when the replay started")
    new_separations: int = doc("separations the replay computed itself (0: all reused)")
    queries: Maybe[int] = doc("queries it sent to the server (the others were answered from "
                              "the task's earlier replays)", absent=True)
    error: Maybe[str] = doc("why the replay failed", absent=True)


@dataclass(kw_only=True)
class BenchRecord:
    """One benchmark task: gold, candidates, each method's choice and whether it is right."""

    question_id: QuestionId = doc("the task's id in the tasks file")
    db_id: str = doc("its database")
    difficulty: str | None = doc("BIRD's difficulty label, if given")
    candidates: int = doc("number of candidates")
    status: Literal["ok", "gold_failed"] = doc("ok, or gold_failed (the task is not scored)")
    gold_error: Maybe[ErrorRecord] = doc("why the gold query failed", absent=True)
    gold_rows: Maybe[int] = doc("rows of the gold answer on D", absent=True)
    gold_nondeterministic: Maybe[str] = doc(
        "why the gold's answer on D is one of several (a tie at a LIMIT cut, ...): which "
        "candidates are correct on D is then the engine's pick", absent=True)
    groups: Maybe[list[int]] = doc("size of each answer group, in input order", absent=True)
    coverage: Maybe[Coverage] = doc("how far every candidate got", absent=True)
    dropped: Maybe[list[BenchDropped]] = doc("candidates that failed", absent=True)
    correct: Maybe[list[int]] = doc("candidates whose answer equals gold (BIRD's rule)",
                                    absent=True)
    upper_bound: Maybe[bool] = doc("some candidate is correct", absent=True)
    choices: Maybe[dict[str, int | None]] = doc("candidate each method chose (null: none)",
                                                absent=True)
    hits: Maybe[dict[str, bool]] = doc("whether each method's choice is correct", absent=True)
    decided_by: Maybe[str | None] = doc("what decided the tournament (null if it failed)",
                                        absent=True)
    tournament_error: Maybe[ErrorRecord | None] = doc("why the tournament failed, if it did",
                                                      absent=True)
    duels: Maybe[list[BenchDuel]] = doc("the tournament's duels in brief", absent=True)
    judge_calls: Maybe[int] = doc("LLM requests of the tournament's judge", absent=True)
    judge_completions: Maybe[CompletionCounts] = doc(
        "the LLM judge's completions, sent and cached", absent=True)
    judge_tokens: Maybe[TokenCounts] = doc("tokens of the LLM judge's completions sent",
                                           absent=True)
    judge_failure: Maybe[JudgeFailure] = doc("the LLM judge failed (its breaker opened)",
                                             absent=True)
    baseline_calls: Maybe[dict[str, int]] = doc("LLM requests by LLM baseline", absent=True)
    baseline_runs: Maybe[dict[str, dict[str, Any]]] = doc("each LLM baseline's runs",
                                                         absent=True)
    noise_runs: Maybe[list[NoiseRun]] = doc("replays with a noisy judge (--noise-seeds)",
                                            absent=True)
    timings: dict[str, float] = doc("seconds by step (gold, candidates, ...) and task")
    # Absent from lines written before 0.2.0, which a resumed run keeps as they are.
    schema_version: str = doc("version of this result contract (siselect's schema)",
                              absent=True)


@dataclass(kw_only=True)
class Spread:
    """Median, 95th percentile and maximum; null when there are no values."""

    median: float | None = doc("median")
    p95: float | None = doc("95th percentile, linearly interpolated")
    max: Maybe[float | None] = doc("maximum", absent=True)


@dataclass(kw_only=True)
class BenchSummary:
    """The figures of a benchmark run, computed from its records alone."""

    tasks: int = doc("tasks run")
    scored: int = doc("tasks whose gold ran (the accuracy's denominator)")
    gold_failed: list[QuestionId] = doc("tasks whose gold query failed")
    gold_nondeterministic: Maybe[list[QuestionId]] = doc(
        "scored tasks whose gold answer on D is one of several (see the record)", absent=True)
    tournament_errors: list[QuestionId] = doc("scored tasks whose tournament failed")
    label: str | None = doc("the run's label")
    judge: str | None = doc("the tournament's judge")
    judge_noise: float | None = doc("share of the judge's answers replaced by a wrong one")
    seed: int | None = doc("the run's seed")
    strategy: str | None = doc("separation strategy")
    backend: str | None = doc("witness backend asked for")
    with_references: bool | None = doc("instances include referenced rows")
    coverage: dict[str, int] = doc("scored tasks by how far every candidate got")
    pairs: int = doc("pairs of candidates that dueled, over all scored tasks (a pair separated "
                     "again, or replayed by the parts of a split group, counts once; its other "
                     "duels are in repeat_duels)")
    separated: int = doc("pairs for which some duel found a separating instance")
    separation_rate: float | None = doc("separated / pairs (metrics.separation_rate)")
    separation_status: dict[str, int] = doc("pairs by separation status (separated if any of "
                                            "its duels was)")
    repeat_duels: Maybe[int] = doc("the other duels of pairs already counted (separated again, "
                                   "or played by split parts)", absent=True)
    repeat_separated: Maybe[int] = doc("of those, duels for which an instance was found",
                                       absent=True)
    instance_rows: Spread = doc("rows of the separating instances")
    accuracy: dict[str, float | None] = doc("share of scored tasks each method got right")
    correct: dict[str, int] = doc("scored tasks each method got right")
    decided_by: dict[str, int] = doc("scored tasks by what decided the tournament")
    judge_calls: int = doc("LLM requests of the tournament's judge")
    # Absent from summaries written before issue 17.
    judge_completions: Maybe[CompletionCounts] = doc(
        "the LLM judge's completions, sent and cached (a cache answers repeated and resumed "
        "runs)", absent=True)
    judge_tokens: Maybe[TokenCounts] = doc("tokens of the LLM judge's completions sent",
                                           absent=True)
    judge_failed: Maybe[list[QuestionId]] = doc("tasks whose LLM judge failed (breaker "
                                                "opened)", absent=True)
    baseline_calls: dict[str, int] = doc("LLM requests by LLM baseline")
    # Absent from summaries written before issue 14's figures.
    degenerate_duels: Maybe[int] = doc("pairs whose counted D' is degenerate", absent=True)
    failed_on_instance_duels: Maybe[int] = doc("duels where a query failed on D'", absent=True)
    lost_by_correct: Maybe[list[dict[str, Any]]] = doc(
        "duels lost by a side whose answer on D is the gold's: question_id, a, b, rows, "
        "right_matched (another candidate right on D matched the judge on that D')",
        absent=True)
    judged_duels: Maybe[int] = doc("duels the judge answered", absent=True)
    tied_duels: Maybe[int] = doc("duels on whose D' a member's answer hung on ties (no "
                                 "evidence for it there)", absent=True)
    round_robin_pairs: Maybe[int] = doc("duels a plain round-robin over the groups plays",
                                        absent=True)
    noise_curves: Maybe[dict[str, Any]] = doc(
        "replays by noise model and level: accuracy (mean over seeds), ci95 (percentile "
        "bootstrap over tasks), by_seed, minus_consistency with its ci95, judged_per_task",
        absent=True)
    pair_seconds: Spread = doc("seconds per duel (median, p95)")
    task_seconds: Spread = doc("seconds per task (median, p95)")
    elapsed_seconds: float | None = doc("seconds the whole run took")
    schema_version: str = version_field()
