"""The figures of a benchmark run, computed from its per-task records alone.

The summary depends only on the records (sorted by question id), so it is the same for
any number of workers and after an interrupted run is resumed. Fields that measure time
(:data:`TIMING_FIELDS`) differ from run to run; everything else is reproducible with the
same inputs, options and seed.
"""

from collections import Counter
from typing import Any

from siselect.client.bench import metrics
from siselect.client.bench.inputs import sort_key
from siselect.client.bench.metrics import spread
from siselect.client.bench.record import BenchSummary
from siselect.runtime.results import serialise

#: Summary fields that are measured times (vary between runs of the same inputs).
TIMING_FIELDS = ("pair_seconds", "task_seconds", "elapsed_seconds")
STAGES = ("transpiled", "executed", "lineage")


def _rounded(value: float | None, places: int = 6) -> float | None:
    return None if value is None else round(value, places)


def _accuracy(scored: list[dict[str, Any]], methods: list[str]) -> tuple[dict, dict]:
    hits = {m: [bool(r["hits"].get(m)) for r in scored] for m in methods}
    hits["upper_bound"] = [bool(r["upper_bound"]) for r in scored]
    return ({m: metrics.accuracy(h, 6) for m, h in hits.items()},
            {m: sum(h) for m, h in hits.items()})


def _methods(records: list[dict[str, Any]], baselines: list[str]) -> list[str]:
    return ["tournament", *[b for b in baselines
                            if any(b in r.get("choices", {}) for r in records)]]


def summarise(records: list[dict[str, Any]], run: dict[str, Any],
              elapsed: float | None = None) -> dict[str, Any]:
    """The summary of a run: ``records`` from results.jsonl, ``run`` its settings."""
    records = sorted(records, key=lambda r: sort_key(r["question_id"]))
    scored = [r for r in records if r["status"] == "ok"]
    every_duel = [d for r in scored for d in r["duels"]]
    duels = [d for _, d in metrics.per_pair(scored)]
    separated = [d for d in duels if d["separation"] == "separated"]
    kept = {id(d) for d in duels}
    repeats = [d for d in every_duel if id(d) not in kept]
    methods = _methods(scored, run.get("baselines", []))
    accuracy, correct = _accuracy(scored, methods)
    task_times = [r["timings"]["task"] for r in records if "task" in r.get("timings", {})]
    summary: dict[str, Any] = {
        "tasks": len(records), "scored": len(scored),
        "gold_failed": [r["question_id"] for r in records if r["status"] == "gold_failed"],
        "gold_nondeterministic": [r["question_id"] for r in scored
                                  if r.get("gold_nondeterministic")],
        "tournament_errors": [r["question_id"] for r in scored if r.get("tournament_error")],
        **{k: run.get(k) for k in ("label", "judge", "judge_noise", "seed", "strategy",
                                    "backend", "with_references")},
        "coverage": {s: sum(bool(r["coverage"][s]) for r in scored) for s in STAGES},
        "pairs": len(duels), "separated": len(separated),
        "separation_rate": metrics.separation_rate([d["separation"] for d in duels], 6),
        "separation_status": dict(sorted(Counter(str(d["separation"]) for d in duels).items())),
        "repeat_duels": len(repeats),
        "repeat_separated": sum(d["separation"] == "separated" for d in repeats),
        "instance_rows": spread([d["rows"] for d in separated]),
        "accuracy": accuracy, "correct": correct,
        "decided_by": dict(sorted(Counter(str(r["decided_by"]) for r in scored).items())),
        "judge_calls": sum(r.get("judge_calls", 0) for r in scored),
        "judge_completions": _totals(scored, "judge_completions", ("sent", "cached")),
        "judge_tokens": _totals(scored, "judge_tokens", ("prompt", "completion")),
        "judge_failed": [r["question_id"] for r in scored if r.get("judge_failure")],
        "baseline_calls": _call_totals(scored),
        **duel_figures(scored),
        "pair_seconds": {k: _rounded(v) for k, v in spread(
            [d["seconds"] for d in every_duel if d.get("seconds") is not None],
            ("median", "p95")).items()},
        "task_seconds": {k: _rounded(v) for k, v in spread(task_times, ("median", "p95")).items()},
        "elapsed_seconds": _rounded(elapsed, 3),
    }
    return serialise(BenchSummary, summary)


def duel_figures(scored: list[dict[str, Any]]) -> dict[str, Any]:
    """Degenerate and failed instances, duels lost by a correct side, judged duels against
    a plain round-robin, and the noise curves (when the run replayed noise)."""
    duels = [(r, d) for r in scored for d in r["duels"]]
    firsts = metrics.per_pair(scored)
    figures: dict[str, Any] = {
        "degenerate_duels": sum(bool(d.get("degenerate")) for _, d in firsts),
        "failed_on_instance_duels": sum(bool(d.get("failed_on_instance")) for _, d in firsts),
        "lost_by_correct": [{"question_id": r["question_id"], "a": d["a"], "b": d["b"],
                             "rows": d.get("rows"),
                             "right_matched": bool(d.get("right_matched"))}
                            for r, d in duels if metrics.duel_lost_by_correct(d, r["correct"])],
        "judged_duels": sum(d["separation"] == "separated" for _, d in duels),
        "tied_duels": sum(bool(d.get("tied")) for _, d in duels),
        "round_robin_pairs": sum(metrics.round_robin_pairs(len(r["groups"])) for r in scored)}
    curves = metrics.noise_curves(scored)
    if curves:
        figures["noise_curves"] = curves
    return figures


def _totals(records: list[dict[str, Any]], name: str, keys: tuple[str, ...]) -> dict[str, int]:
    return {k: sum(r.get(name, {}).get(k, 0) for r in records) for k in keys}


def _call_totals(scored: list[dict[str, Any]]) -> dict[str, int]:
    totals: Counter[str] = Counter()
    for r in scored:
        totals.update(r.get("baseline_calls", {}))
    return dict(sorted(totals.items()))


def comparable(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary without its timing fields: equal for equal inputs, options and seed."""
    return {k: v for k, v in summary.items() if k not in TIMING_FIELDS}


def _percent(fraction: float | None) -> str:
    return "-" if fraction is None else f"{fraction:6.1%}"


def _number(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.3g}{unit}"


def summary_table(summary: dict[str, Any]) -> str:
    """The summary as aligned text lines for the terminal."""
    n = summary["scored"]
    label = f" [{summary['label']}]" if summary.get("label") else ""
    noise = f", noise {summary['judge_noise']:g}" if summary.get("judge_noise") else ""
    lines = [f"{summary['tasks']} tasks{label}, judge {summary['judge']}{noise}, "
             f"seed {summary['seed']}: {n} scored"]
    if summary["gold_failed"]:
        lines.append(f"  gold query failed (not scored): {summary['gold_failed']}")
    if summary.get("gold_nondeterministic"):
        lines.append(f"  gold's answer on D is one of several (ties): "
                     f"{summary['gold_nondeterministic']}")
    if summary["tournament_errors"]:
        lines.append(f"  tournament failed: {summary['tournament_errors']}")
    cov = summary["coverage"]
    said = {"transpiled": "transpiled", "executed": "ran", "lineage": "had its lineage"}
    lines.append("  tasks in which every candidate " +
                 ", ".join(f"{said[s]} {cov[s]}/{n}" for s in STAGES))
    rows, sec = summary["instance_rows"], summary["pair_seconds"]
    lines.append(f"  pairs {summary['pairs']}, separated {summary['separated']} "
                 f"({_percent(summary['separation_rate']).strip()}); "
                 f"instance rows median {_number(rows['median'])}, p95 {_number(rows['p95'])}, "
                 f"max {_number(rows['max'])}; seconds per pair median "
                 f"{_number(sec['median'], ' s')}, p95 {_number(sec['p95'], ' s')}")
    lines.append("  method          accuracy  correct")
    for method, fraction in summary["accuracy"].items():
        lines.append(f"  {method:14s}  {_percent(fraction)}  {summary['correct'][method]:4d}/{n}")
    calls = ", ".join(f"{m} {c}" for m, c in summary["baseline_calls"].items())
    lines.append(f"  judge calls {summary['judge_calls']}" + (f"; baseline calls {calls}"
                                                              if calls else ""))
    sent, tokens = summary.get("judge_completions"), summary.get("judge_tokens")
    if sent and tokens and (sent["sent"] or sent["cached"]):
        lines.append(f"  judge completions sent {sent['sent']}, from the cache "
                     f"{sent['cached']}; tokens in {tokens['prompt']}, out "
                     f"{tokens['completion']}")
    if summary.get("judged_duels") is not None:
        lines.append(f"  duels judged {summary['judged_duels']} (round-robin: "
                     f"{summary['round_robin_pairs']}); degenerate D' "
                     f"{summary['degenerate_duels']}, a query failed on D' "
                     f"{summary['failed_on_instance_duels']}, a member tied on D' "
                     f"{summary.get('tied_duels', 0)}; lost by a correct candidate "
                     f"{_lost_by_correct(summary['lost_by_correct'])}")
    lines += noise_lines(summary.get("noise_curves") or {})
    if summary.get("judge_failed"):
        lines.append(f"  the LLM judge failed (breaker opened): {summary['judge_failed']}")
    return "\n".join(lines)


def noise_lines(curves: dict[str, Any]) -> list[str]:
    """The noise curves: accuracy (95% bootstrap interval) and the difference from
    consistency, per model and level."""
    lines = []
    for model, levels in curves.items():
        for level, c in levels.items():
            low, high = c["ci95"] or (None, None)
            dlow, dhigh = c["minus_consistency_ci95"] or (None, None)
            lines.append(f"  noise {level} ({model}, {c['seeds']} seeds): tournament "
                         f"{_percent(c['accuracy']).strip()} [{_percent(low).strip()}, "
                         f"{_percent(high).strip()}], minus consistency "
                         f"{c['minus_consistency']:+.1%} [{dlow:+.1%}, {dhigh:+.1%}]")
    return lines


def _lost_by_correct(lost: list[dict[str, Any]]) -> str:
    """How many duels a correct side lost, and in how many of them another candidate right
    on D answered as the judge on that D' (the loser is right on D only by coincidence)."""
    mates = sum(bool(d.get("right_matched")) for d in lost)
    return f"{len(lost)}" + (f" ({mates} where another candidate right on D matched the "
                             "judge there)" if mates else "")
