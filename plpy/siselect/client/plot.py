"""``siselect plot RESULTS...``: PNG figures from finished ``siselect bench`` runs.

- ``accuracy_by_k.png``: accuracy of each method per run without judge noise, one run
  per K (the run's ``--label``; numeric labels give a numeric axis);
- ``instance_rows.png``: how many rows the separating instances have, per run;
- ``accuracy_by_noise.png``: tournament accuracy against the judge noise P, for runs
  that share a label, with the consistency baseline and the upper bound for reference.

A figure the runs cannot support (say, noise curves from runs at a single P) is skipped
with a note rather than drawn empty.
"""

import argparse
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from .bench_output import read_results

METHOD_STYLE = {"tournament": "o-", "consistency": "s--", "naive": "^-", "pairwise": "v-",
                "upper_bound": "k:"}


@dataclass
class Run:
    label: str
    noise: float
    summary: dict[str, Any]
    records: list[dict[str, Any]]

    def instance_rows(self) -> list[int]:
        return [d["rows"] for r in self.records if r.get("status") == "ok"
                for d in r.get("duels", []) if d.get("separation") == "separated"]


def load_runs(paths: list[Path]) -> list[Run]:
    """Every run named (an --out directory or its summary.json)."""
    runs = []
    for path in paths:
        summary, records = read_results(path)
        folder = path.parent if path.is_file() else path
        label = str(summary.get("label") or folder.name)
        runs.append(Run(label, float(summary.get("judge_noise") or 0.0), summary, records))
    return runs


def _numeric(labels: list[str]) -> list[float] | None:
    try:
        return [float(x) for x in labels]
    except ValueError:
        return None


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    return plt


def _by_label(runs: list[Run]) -> dict[str, Run]:
    """The noise-free run of each label (the first one given, if several)."""
    chosen: dict[str, Run] = {}
    for run in runs:
        if run.noise == 0 and run.label not in chosen:
            chosen[run.label] = run
    return chosen


def _order(labels: list[str]) -> list[str]:
    numbers = _numeric(labels)
    return [lab for _, lab in sorted(zip(numbers, labels, strict=True))] if numbers else labels


def accuracy_by_k(runs: list[Run], target: Path, x_title: str) -> str | None:
    """Accuracy per method against the run labels; returns why not when it cannot draw."""
    chosen = _by_label(runs)
    if not chosen:
        return "accuracy per method: no run without judge noise"
    labels = _order(list(chosen))
    numbers = _numeric(labels)
    xs: list[Any] = numbers if numbers else list(range(len(labels)))
    methods = list(dict.fromkeys(m for lab in labels for m in chosen[lab].summary["accuracy"]))
    methods.sort(key=lambda m: m == "upper_bound")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for method in methods:
        ys = [chosen[lab].summary["accuracy"].get(method) for lab in labels]
        points = [(x, 100 * y) for x, y in zip(xs, ys, strict=True) if y is not None]
        if points:
            ax.plot(*zip(*points, strict=True), METHOD_STYLE.get(method, "x-"),
                    label=method.replace("_", " "))
    ax.set_xticks(xs, labels)
    ax.set_xlabel(x_title)
    ax.set_ylabel("execution accuracy (% of scored tasks)")
    ax.set_title("Selection accuracy per method")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(target, dpi=120)
    plt.close(fig)
    return None


def instance_histogram(runs: list[Run], target: Path) -> str | None:
    """Histogram of separating-instance sizes (rows), one outline per run."""
    chosen = _by_label(runs) or {r.label: r for r in runs}
    sizes = {lab: run.instance_rows() for lab, run in chosen.items()}
    sizes = {lab: s for lab, s in sizes.items() if s}
    if not sizes:
        return "instance sizes: no separated pair in the runs"
    top = max(max(s) for s in sizes.values())
    bins = [b - 0.5 for b in range(1, top + 2)]
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for lab in _order(list(sizes)):
        ax.hist(sizes[lab], bins=bins, histtype="step", linewidth=1.5,
                label=f"{lab} ({len(sizes[lab])} instances)")
    ax.set_xlabel("rows in the separating instance D'")
    ax.set_ylabel("pairs")
    ax.set_title("Separating instance sizes")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(target, dpi=120)
    plt.close(fig)
    return None


def accuracy_by_noise(runs: list[Run], target: Path) -> str | None:
    """Tournament accuracy against judge noise, one curve per label with two or more P."""
    groups: dict[str, dict[float, Run]] = defaultdict(dict)
    for run in runs:
        groups[run.label].setdefault(run.noise, run)
    curves = {lab: g for lab, g in groups.items() if len(g) >= 2}
    if not curves:
        return "accuracy against judge noise: needs runs of one label at two or more noise levels"
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for lab, by_noise in curves.items():
        ps = sorted(by_noise)
        ys = [100 * (by_noise[p].summary["accuracy"]["tournament"] or 0) for p in ps]
        line = ax.plot(ps, ys, "o-", label=f"tournament [{lab}]")[0]
        base = by_noise[ps[0]].summary["accuracy"]
        for method, style in (("consistency", "--"), ("upper_bound", ":")):
            if base.get(method) is not None:
                ax.axhline(100 * base[method], linestyle=style, color=line.get_color(),
                           alpha=0.6, label=f"{method.replace('_', ' ')} [{lab}]")
    ax.set_xlabel("judge noise P (probability of a wrong judge answer)")
    ax.set_ylabel("execution accuracy (% of scored tasks)")
    ax.set_title("Tournament accuracy as the judge gets worse")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(target, dpi=120)
    plt.close(fig)
    return None


def plot(paths: list[Path], out: Path, x_title: str = "K") -> tuple[list[Path], list[str]]:
    """Draw every figure the runs support into ``out``; returns files written and notes."""
    if not paths:
        raise InvalidInput("name at least one results directory")
    runs = load_runs(paths)
    out.mkdir(parents=True, exist_ok=True)
    written, notes = [], []
    figures = [("accuracy_by_k.png", lambda t: accuracy_by_k(runs, t, x_title)),
               ("instance_rows.png", lambda t: instance_histogram(runs, t)),
               ("accuracy_by_noise.png", lambda t: accuracy_by_noise(runs, t))]
    for name, draw in figures:
        note = draw(out / name)
        if note:
            notes.append(note)
        else:
            written.append(out / name)
    return written, notes


def add_parser(sub: Any) -> None:
    from .cli import path_arg

    p = sub.add_parser("plot", help="draw PNG figures from siselect bench results")
    p.add_argument("results", nargs="+", type=path_arg, metavar="RESULTS",
                   help="--out directories of finished bench runs (or their summary.json)")
    p.add_argument("--out", type=path_arg, default=Path("siselect-plots"), metavar="DIR",
                   help="where the PNG files go (default ./siselect-plots)")
    p.add_argument("--x-title", default="K",
                   help="axis title for the run labels in accuracy_by_k.png (default K)")


def plot_command(args: argparse.Namespace) -> int:
    """Handler of ``siselect plot``."""
    from .cli import info

    written, notes = plot(args.results, args.out, args.x_title)
    for note in notes:
        info(f"not drawn: {note}")
    for path in written:
        print(path)
    return 0 if written else 2
