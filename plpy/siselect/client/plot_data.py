"""What the figures of ``siselect plot`` show, as numbers: runs, the points of a curve
with their n and confidence interval, and the warnings a figure must carry.

Kept apart from drawing (:mod:`siselect.client.plot`) so that every figure's content can
be checked without reading pixels.
"""

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from siselect.client.bench.output import read_results

#: Two-sided 95% quantiles of Student's t by degrees of freedom; between two listed
#: degrees the smaller one's (wider) value is used, past the last the normal's.
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
       9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042}
#: The noise model of summaries written before models had names (the only one there was).
DEFAULT_NOISE_MODEL = "rival"


@dataclass
class Run:
    label: str
    noise: float
    summary: dict[str, Any]
    records: list[dict[str, Any]]
    folder: Path | None = None

    @property
    def noise_model(self) -> str | None:
        """The judge's noise model; None without noise, where every model is the same."""
        if not self.noise:
            return None
        return str(self.summary.get("noise_model") or DEFAULT_NOISE_MODEL)

    @property
    def scored(self) -> int:
        return int(self.summary.get("scored") or 0)

    def task_ids(self) -> frozenset[str]:
        """The scored tasks (the accuracy's denominator), by question id."""
        return frozenset(str(r["question_id"]) for r in self.records if r.get("status") == "ok")

    def instances(self) -> list[tuple[int, int | None]]:
        """Each separating instance's rows and, of those, the rows added as foreign-key
        references (None where the record predates that count)."""
        return [(d["rows"], d.get("reference_rows")) for r in self.records
                if r.get("status") == "ok" for d in r.get("duels") or []
                if d.get("separation") == "separated" and d.get("rows") is not None]


def load_runs(paths: list[Path]) -> list[Run]:
    """Every run named (an --out directory or its summary.json)."""
    runs = []
    for path in paths:
        summary, records = read_results(path)
        folder = path.parent if path.is_file() else path
        label = str(summary.get("label") or folder.name)
        runs.append(Run(label, float(summary.get("judge_noise") or 0.0), summary, records,
                        folder))
    return runs


@dataclass
class Point:
    """One plotted value (in %): the mean over ``runs`` runs (or seeds), its 95% interval
    (None for a single run), and the tasks scored (each run's)."""

    mean: float
    ns: list[int]
    low: float | None = None
    high: float | None = None
    runs: int = 1

    @property
    def half_width(self) -> float:
        return 0.0 if self.low is None or self.high is None else (self.high - self.low) / 2

    def n_text(self) -> str:
        """``n=15``, ``n=12-15`` when the runs scored different numbers, ``x3`` for runs."""
        low, high = min(self.ns), max(self.ns)
        text = f"n={low}" if low == high else f"n={low}\u2013{high}"
        return text + (f" \u00d7{self.runs}" if self.runs > 1 else "")


def confidence_half_width(values: list[float]) -> float:
    """Half the width of the 95% confidence interval of the mean (Student's t)."""
    if len(values) < 2:
        return 0.0
    df = len(values) - 1
    t = T95[max(d for d in T95 if d <= df)] if df <= max(T95) else 1.96
    return t * statistics.stdev(values) / len(values) ** 0.5


def accuracy_point(runs: list[Run], method: str) -> Point | None:
    """``method``'s accuracy over ``runs`` (in %), or None where no run measured it."""
    kept = [r for r in runs if r.summary.get("accuracy", {}).get(method) is not None]
    if not kept:
        return None
    values = [100 * r.summary["accuracy"][method] for r in kept]
    mean, half = statistics.fmean(values), confidence_half_width(values)
    return Point(mean, [r.scored for r in kept], mean - half if half else None,
                 mean + half if half else None, len(kept))


def replayed_curves(run: Run) -> dict[str, dict[float, Point]]:
    """The noise curves a run replayed itself (``noise_curves`` in its summary, from
    ``bench --judge-noise P,P --noise-seeds N``): by model and level, the mean over seeds
    with the summary's 95% interval (bootstrap over tasks); the run's own noiseless
    tournament is level 0 where the replays do not include it."""
    curves: dict[str, dict[float, Point]] = {}
    for model, levels in (run.summary.get("noise_curves") or {}).items():
        points: dict[float, Point] = {}
        for level, cell in levels.items():
            low, high = cell.get("ci95") or (None, None)
            points[float(level)] = Point(
                100 * cell["accuracy"], [int(cell["tasks"])],
                None if low is None else 100 * low, None if high is None else 100 * high,
                int(cell.get("seeds") or 1))
        own = accuracy_point([run], "tournament")
        if run.noise == 0 and 0.0 not in points and own is not None:
            points[0.0] = own
        curves[str(model)] = dict(sorted(points.items()))
    return curves


def task_set_warning(groups: dict[str, list[Run]]) -> str | None:
    """Say so when the runs compared score different tasks (other ids or other counts):
    their accuracies then have different denominators and are not comparable as such."""
    runs = [r for group in groups.values() for r in group]
    sets = {r.task_ids() for r in runs}
    if len(sets) <= 1:
        return None
    everywhere = frozenset.intersection(*sets)
    counts = ", ".join(f"{name}: {_counts(group)}" for name, group in groups.items())
    apart = len(frozenset.union(*sets) - everywhere)
    return (f"the runs score different task sets ({counts}); "
            f"{apart} task{' is' if apart == 1 else 's are'} not in every run")


def _counts(runs: Iterable[Run]) -> str:
    found = sorted({r.scored for r in runs})
    return f"{found[0]} tasks" if len(found) == 1 else f"{found[0]}-{found[-1]} tasks"
