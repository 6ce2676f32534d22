"""Every benchmark figure, defined once: ``siselect bench``'s summary and the scripts under
``bench/`` compute them here, so the same name never means two things."""

import math
import statistics
from collections.abc import Iterable
from typing import Any

SEPARATED = "separated"


def share(count: int, total: int, places: int | None = None) -> float | None:
    """``count / total``, rounded to ``places`` when given; None when ``total`` is 0."""
    if not total:
        return None
    return count / total if places is None else round(count / total, places)


def separation_rate(statuses: Iterable[str | None], places: int | None = None
                    ) -> float | None:
    """Separated pairs over all pairs of representatives (answers differing on D): a pair
    that timed out, failed, was nondeterministic or raised an error counts as not
    separated. None when there are no pairs."""
    statuses = list(statuses)
    return share(sum(s == SEPARATED for s in statuses), len(statuses), places)


def accuracy(hits: Iterable[bool], places: int | None = None) -> float | None:
    """Share of scored tasks a method got right (BIRD's execution accuracy)."""
    hits = list(hits)
    return share(sum(map(bool, hits)), len(hits), places)


def quantile(values: list[float], q: float) -> float | None:
    """The q-quantile by linear interpolation; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def spread(values: list[float], keys: Iterable[str] = ("median", "p95", "max")
           ) -> dict[str, Any]:
    """Median, 95th percentile and maximum (None each when there are no values)."""
    figures = {"median": statistics.median(values) if values else None,
               "p95": quantile(values, 0.95), "max": max(values) if values else None}
    return {k: figures[k] for k in keys}


# ---- duels, judge calls and noise curves (issues 14 and 15) -------------------------------

def per_pair(scored: Iterable[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """One (record, duel) a pair of candidates in a task: the first duel that found an
    instance, else the first. A pair separated again, or played again by the parts of a
    group split on D', is the same pair, so rates per pair count it once."""
    chosen: dict[tuple[Any, frozenset[int]], tuple[dict[str, Any], dict[str, Any]]] = {}
    for r in scored:
        for d in r["duels"]:
            key = (r["question_id"], frozenset((d["a"], d["b"])))
            kept = chosen.get(key)
            if kept is None or (kept[1]["separation"] != "separated"
                                and d["separation"] == "separated"):
                chosen[key] = (r, d)
    return list(chosen.values())


def duel_lost_by_correct(duel: dict[str, Any], correct: Iterable[int]) -> bool:
    """The verdict went against a side whose representative's answer on D is the gold's."""
    right = set(correct)
    side = duel.get("verdict")
    return (side == "b" and duel["a"] in right and duel["b"] not in right) or \
        (side == "a" and duel["b"] in right and duel["a"] not in right)


def round_robin_pairs(groups: int) -> int:
    """Duels a plain round-robin over ``groups`` answer groups plays: every pair once."""
    return groups * (groups - 1) // 2


def bootstrap_interval(values: list[float], seed: int = 0, resamples: int = 2000,
                       level: float = 0.95) -> list[float] | None:
    """Percentile bootstrap interval of the mean of ``values`` (one value per task, e.g. a
    task's hit rate over noise seeds: resampling tasks keeps a task's seeds together).
    Seeded, so a summary repeats itself. None for no values."""
    import random

    if not values:
        return None
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n
                   for _ in range(resamples))
    tail = (1 - level) / 2
    return [round(quantile(means, tail) or 0.0, 6), round(quantile(means, 1 - tail) or 0.0, 6)]


def noise_curves(scored: list[dict[str, Any]], line: str = "consistency") -> dict[str, Any]:
    """Tournament accuracy under judge noise from the records' ``noise_runs``, by noise
    model and level: the mean over seeds, a 95% percentile bootstrap interval over tasks,
    each seed's accuracy, and the paired difference from ``line`` (the method to beat)
    with its interval; judged duels per task. Empty when no record replayed noise."""
    cells: dict[tuple[str, float], dict[str, Any]] = {}
    for r in scored:
        by_cell: dict[tuple[str, float], list[dict[str, Any]]] = {}
        for run in r.get("noise_runs", []):
            by_cell.setdefault((run["model"], run["noise"]), []).append(run)
        base = float(bool(r.get("hits", {}).get(line)))
        for key, runs in by_cell.items():
            cell = cells.setdefault(key, {"task": [], "diff": [], "judged": [], "seeds": {}})
            rate = sum(bool(x["hit"]) for x in runs) / len(runs)
            cell["task"].append(rate)
            cell["diff"].append(rate - base)
            cell["judged"].append(sum(x["judged"] for x in runs) / len(runs))
            for x in runs:
                cell["seeds"].setdefault(x["seed"], []).append(bool(x["hit"]))
    out: dict[str, Any] = {}
    for (model, level), cell in sorted(cells.items()):
        n = len(cell["task"])
        out.setdefault(model, {})[f"{level:g}"] = {
            "tasks": n, "seeds": len(cell["seeds"]),
            "accuracy": round(sum(cell["task"]) / n, 6),
            "ci95": bootstrap_interval(cell["task"]),
            "by_seed": [round(sum(h) / len(h), 6) for _, h in sorted(cell["seeds"].items())],
            f"minus_{line}": round(sum(cell["diff"]) / n, 6),
            f"minus_{line}_ci95": bootstrap_interval(cell["diff"]),
            "judged_per_task": round(sum(cell["judged"]) / n, 6)}
    return out
