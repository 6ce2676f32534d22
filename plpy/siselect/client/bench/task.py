"""One benchmark task: the gold answer, the candidates, the tournament and the baselines.

A task is correct for a method when the candidate it chose returns the gold query's
result by BIRD's execution-accuracy rule: the two results are equal as *sets of row
tuples* (column order counts, duplicates and row order do not; numbers compare as the
tournament's exact grouping rounds them, :func:`bird_equal`). Both run on PostgreSQL,
the gold transpiled from SQLite like the candidates; a task whose gold fails is
reported as such and left out of the accuracy figures.
"""

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from siselect.client.bench.baselines import (
    LLM_METHODS,
    Complete,
    Contender,
    consistency,
    naive_selection,
    pairwise_selection,
)
from siselect.client.bench.inputs import Task
from siselect.client.bench.metrics import duel_lost_by_correct
from siselect.client.bench.noise import NoisePlan, replay
from siselect.client.bench.record import BenchRecord
from siselect.instances.pair import run_capped
from siselect.instances.separate import Options
from siselect.runtime.answers import exact_key
from siselect.runtime.catalog import Catalog
from siselect.runtime.errors import SiselectError
from siselect.runtime.executor import Executor
from siselect.runtime.redact import redact_url
from siselect.runtime.results import serialise
from siselect.selection.judges import Judge, NoisyJudge, make_judge
from siselect.selection.report import markdown_report
from siselect.selection.report_view import Inputs
from siselect.selection.rules import Rules
from siselect.selection.tournament import Entry, group, prepare, run_tournament
from siselect.sqltext.nondeterminism import reason_on
from siselect.sqltext.transpile import to_read_tree

DIALECT = "sqlite"  # BIRD's candidates and gold queries (``--dialect postgres``: mini-dev's)
_DIALECT_NAMES = {"sqlite": "SQLite", "postgres": "PostgreSQL"}


@dataclass
class Settings:
    """What a run does to every task; ``fingerprint`` is what --resume must find unchanged."""

    options: Options = field(default_factory=lambda: Options(dialect=DIALECT))
    judge: str = "reference"
    noise: float = 0.0
    baselines: tuple[str, ...] = ("consistency",)
    llm_config: Any = None
    pairwise_share: float | None = None  # the pairwise baseline's confidence shortcut
    result_rows: int = 20  # rows of each result the pairwise baseline is shown
    runs: int = 3  # LLM calls per naive selection and per pairwise duel
    noise_model: str = "rival"  # how ``noise`` makes the judge's answer wrong
    replays: NoisePlan = field(default_factory=NoisePlan)  # noise curves (bench/noise.py)

    def fingerprint(self) -> dict[str, Any]:
        llm = self.llm_config
        return {"judge": self.judge, "judge_noise": self.noise, "seed": self.options.seed,
                "strategy": self.options.strategy, "backend": self.options.backend,
                "max_rows": self.options.max_rows,
                "with_references": self.options.with_references,
                "pair_budget": self.options.budget_seconds, "baselines": list(self.baselines),
                "pairwise_share": self.pairwise_share, "result_rows": self.result_rows,
                "runs": self.runs,
                "llm_model": getattr(llm, "model", None) if llm else None,
                # Redacted: summary.json is shared; the same URL redacts the same way.
                "llm_url": redact_url(llm.base_url) if llm else None,
                # Only when not the default, so that older runs resume unchanged.
                **({"noise_model": self.noise_model} if self.noise_model != "rival" else {}),
                **self.replays.fingerprint()}


@dataclass
class Outcome:
    record: dict[str, Any]  # one line of results.jsonl
    report: str  # Markdown


def bird_equal(rows: Sequence[Sequence[Any]], gold: Sequence[Sequence[Any]]) -> bool:
    """BIRD's execution-accuracy rule: equal as sets of row tuples, with numbers as the
    tournament groups them (:func:`~siselect.runtime.answers.exact_key`: one kind, rounded
    to 9 significant digits). Exact equality would tell apart what SQLite, BIRD's engine,
    computes alike: transpiled, ``x * 1.0 / n`` divides in numeric where ``CAST(x AS
    REAL) / n`` divides in double precision (yardstick codebase_community 629 on generated
    candidates: 1.5277777777777778 against 1.5277777777777777, one group, one of them
    "wrong")."""
    return exact_key(rows) == exact_key(gold)


def _error(exc: BaseException) -> dict[str, str]:
    if isinstance(exc, SiselectError):
        return {"message": exc.message, "sqlstate": exc.sqlstate}
    return {"message": f"{type(exc).__name__}: {exc}", "sqlstate": "XX000"}


class _Clock:
    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.seconds: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = round(now - self.last, 6)
        self.last = now

    def done(self) -> dict[str, float]:
        self.seconds["task"] = round(time.perf_counter() - self.start, 6)
        return self.seconds


def _contenders(entries: list[Entry], strategy: str) -> list[Contender]:
    """Groups as the tournament forms them (its strategy's grouping), so that consistency and
    the LLM baselines see the same groups."""
    grouping = Rules().resolved(strategy).grouping or "exact"
    return [Contender(g.representative, entries[g.representative].sql, g.answer, len(g.members))
            for g in group(entries, grouping)]


def _judge(task: Task, settings: Settings, gold: exp.Query, rivals: list[exp.Query]) -> Judge:
    judge = make_judge(settings.judge, gold, settings.llm_config)
    if settings.noise > 0:
        rng = random.Random(f"{settings.options.seed}:{task.key}")  # same draws on any worker
        judge = NoisyJudge(judge, settings.noise, rng, rivals, settings.noise_model)
    return judge


def _tournament(executor: Executor, catalog: Catalog, task: Task, settings: Settings,
                gold: exp.Query, entries: list[Entry], correct: list[int]
                ) -> tuple[dict[str, Any] | None, dict[str, str] | None,
                           Callable[[], list[dict[str, Any]]]]:
    """The tournament, and how to replay it with a noisy judge on the same instances."""
    rivals = [t for t in (entries[c.index].tree
                          for c in _contenders(entries, settings.options.strategy))
              if t is not None]
    memo: dict[Any, Any] | None = {} if settings.replays.levels else None

    def play(judge: Judge, on: Executor = executor) -> dict[str, Any]:
        return run_tournament(on, task.candidates, task.question, task.evidence, judge,
                              settings.options, task.sql, catalog, separations=memo)

    judge: Any = None
    try:
        judge = _judge(task, settings, gold, rivals)
        result = play(judge)
    except Exception as exc:  # noqa: BLE001 - one task's failure must not end the run
        return None, _error(exc), list
    finally:
        close = getattr(getattr(judge, "inner", judge), "close", None)
        if close is not None:
            close()  # the LLM judge's HTTP connections
    if memo is None:
        return result, None, list
    return result, None, lambda: replay(
        play, lambda: make_judge(settings.judge, gold), executor, settings.replays, task.key,
        settings.options.seed, rivals, correct, lambda: len(memo or {}))


def _duels(result: dict[str, Any] | None, correct: list[int]) -> list[dict[str, Any]]:
    """Each duel in brief; the reason is kept when no instance was found, and a duel lost by
    a candidate whose answer on D is the gold's keeps its instance and answers."""
    return [{"a": d["a"], "b": d["b"], "separation": d.get("separation"), "rows": d.get("rows"),
             "verdict": d["verdict"], "seconds": d.get("timings", {}).get("total"),
             **({"attempt": d["attempt"]} if d.get("attempt") else {}),
             **({"reason": d.get("reason")} if d.get("separation") != "separated" else
                {"reference_rows": d["rows"] - d.get("minimal_rows", d["rows"])}),
             **{k: d[k] for k in ("degenerate", "meaning") if k in d},
             **({"failed_on_instance": sorted(d["errors"])} if d.get("errors") else {}),
             **({"tied": d["tied"]} if d.get("tied") else {}),
             **({"lost_by_correct": True, "instance": d.get("instance"),
                 "answers": d.get("answers"), "judge_rows": (d.get("judge") or {}).get("rows"),
                 "right_matched": sorted(set(d.get("matched") or ()) & set(correct))}
                if duel_lost_by_correct(d, correct) else {})}
            for d in (result or {}).get("duels", [])]


def _coverage(entries: list[Entry], result: dict[str, Any] | None,
              error: dict[str, str] | None) -> dict[str, bool]:
    transpiled = all(e.tree is not None for e in entries)
    executed = transpiled and all(e.answer is not None for e in entries)
    lineage = executed and error is None and result is not None and all(
        d.get("separation") != "error" for d in result.get("duels", []))
    return {"transpiled": transpiled, "executed": executed, "lineage": lineage}


def _dropped(entries: list[Entry]) -> list[dict[str, Any]]:
    return [{"index": e.index, "stage": "transpile" if e.tree is None else "execute", **e.error}
            for e in entries if e.error]


def _llm_baselines(complete: Complete, catalog: Catalog,
                   task: Task, settings: Settings, entries: list[Entry],
                   contenders: list[Contender]) -> dict[str, dict[str, Any]]:
    from siselect.client.bench.baseline_prompts import schema_ddl

    schema, runs = schema_ddl(catalog), {}
    if "naive" in settings.baselines:
        seen, listed = set(), []
        for e in entries:
            text = " ".join(e.sql.split())
            if e.answer is not None and text not in seen:
                seen.add(text)
                listed.append((e.index, e.sql))
        runs["naive"] = naive_selection(complete, schema, task.question, task.evidence, listed,
                                        settings.runs)
    if "pairwise" in settings.baselines:
        runs["pairwise"] = pairwise_selection(complete, schema, task.question, task.evidence,
                                              contenders, settings.runs,
                                              settings.pairwise_share, settings.result_rows)
    return runs


def _choices(complete: Complete | None, catalog: Catalog, task: Task, settings: Settings,
             entries: list[Entry], result: dict[str, Any] | None
             ) -> tuple[dict[str, int | None], dict[str, dict[str, Any]]]:
    """The candidate each method chose (None: no choice), and the LLM baselines' runs."""
    contenders = _contenders(entries, settings.options.strategy)
    winner = (result or {}).get("winner") or {}
    choices: dict[str, int | None] = {"tournament": winner.get("index")}
    if "consistency" in settings.baselines:
        choices["consistency"] = consistency(contenders) if contenders else None
    llm_runs = {}
    if complete is not None and contenders:
        llm_runs = _llm_baselines(complete, catalog, task, settings, entries, contenders)
    for name in settings.baselines:
        if name in LLM_METHODS:
            choices[name] = llm_runs[name]["choice"] if name in llm_runs else None
    return choices, llm_runs


def run_task(executor: Executor, catalog: Catalog, task: Task, settings: Settings,
             complete: Complete | None = None) -> Outcome:
    """Everything the benchmark measures on one task; ``complete`` reaches the LLM."""
    clock = _Clock()
    record: dict[str, Any] = {"question_id": task.question_id, "db_id": task.db_id,
                              "difficulty": task.difficulty, "candidates": len(task.candidates)}
    try:
        gold = to_read_tree(task.sql, settings.options.dialect, catalog, executor)
        gold_answer = run_capped(executor, gold)
        gold_rows = gold_answer.rows
        # Then which candidates are "correct on D" is the engine's pick among tied rows.
        gold_ties = reason_on(executor.run, gold, whole=not gold_answer.truncated)
    except SiselectError as exc:
        record.update(status="gold_failed", gold_error=_error(exc), timings=clock.done())
        return Outcome(serialise(BenchRecord, record),
                       task_report(task, record, None, settings.options.dialect))
    clock.lap("gold")
    entries = prepare(executor, catalog, task.candidates, settings.options.dialect)
    contenders = _contenders(entries, settings.options.strategy)
    correct = [e.index for e in entries if e.answer is not None
               and bird_equal(e.answer.rows, gold_rows)]
    clock.lap("candidates")
    result, error, replays = _tournament(executor, catalog, task, settings, gold, entries,
                                         correct)
    clock.lap("tournament")
    noise_runs = replays()
    if noise_runs:
        clock.lap("noise_replays")  # the yardstick leaves it out of the seconds per task
    choices, llm_runs = _choices(complete, catalog, task, settings, entries, result)
    clock.lap("baselines")
    record.update(
        status="ok", gold_rows=len(gold_rows), groups=[c.size for c in contenders],
        **({"gold_nondeterministic": gold_ties} if gold_ties else {}),
        coverage=_coverage(entries, result, error), dropped=_dropped(entries), correct=correct,
        upper_bound=bool(correct), choices=choices,
        hits={m: c is not None and c in correct for m, c in choices.items()},
        decided_by=(result or {}).get("decided_by"), tournament_error=error,
        duels=_duels(result, correct), judge_calls=(result or {}).get("judge_calls", 0),
        **{k: result[k] for k in ("judge_completions", "judge_tokens", "judge_failure")
           if result and k in result},
        baseline_calls={m: r["calls"] for m, r in llm_runs.items()},
        baseline_runs=llm_runs, **({"noise_runs": noise_runs} if noise_runs else {}))
    record["timings"] = clock.done()
    return Outcome(serialise(BenchRecord, record),
                   task_report(task, record, result, settings.options.dialect))


def _candidates_text(task: Task, record: dict[str, Any]) -> list[str]:
    dropped = {d["index"]: d for d in record["dropped"]}
    lines = []
    for index, sql in enumerate(task.candidates):
        if index in dropped:
            note = f"failed to {dropped[index]['stage']}: {dropped[index]['message']}"
        else:
            note = "returns the gold result" if index in record["correct"] else "differs from gold"
        lines.append(f"**Candidate {index}** ({note}):\n\n```sql\n{sql}\n```\n")
    return lines


def task_report(task: Task, record: dict[str, Any], result: dict[str, Any] | None,
                dialect: str = DIALECT) -> str:
    """A benchmark header (gold, what each method chose) above the tournament report."""
    lines = [f"# Task {task.question_id} ({task.db_id})\n", f"**Question**: {task.question}\n",
             f"**Evidence**: {task.evidence or '(none)'}\n",
             f"**Gold ({_DIALECT_NAMES.get(dialect, dialect)})**:\n\n"
             f"```sql\n{task.sql}\n```\n"]
    if record["status"] == "gold_failed":
        err = record["gold_error"]
        lines.append(f"The gold query failed on PostgreSQL: {err['message']} "
                     f"(SQLSTATE {err['sqlstate']}); the task is not scored.\n")
        return "\n".join(lines)
    right = record["correct"]
    correct = (f"candidate{'s' if len(right) > 1 else ''} {', '.join(map(str, right))}"
               if right else "none")
    lines.append(f"Returning the gold result (BIRD's rule): {correct}\n")
    lines += _candidates_text(task, record)
    lines.append("| method | chose | correct |\n| --- | --- | --- |")
    for method, choice in record["choices"].items():
        shown = "none" if choice is None else f"candidate {choice}"
        lines.append(f"| {method} | {shown} | {'yes' if record['hits'][method] else 'no'} |")
    if record["tournament_error"]:
        err = record["tournament_error"]
        lines.append(f"\nThe tournament failed: {err['message']} (SQLSTATE {err['sqlstate']})\n")
    lines.append("")
    if result is not None:
        shown = markdown_report(result, Inputs(task.candidates, task.evidence, None, dialect))
        lines.append(shown.replace("# Tournament:", "## Tournament:", 1))
    return "\n".join(lines)
