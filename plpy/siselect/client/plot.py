"""``siselect plot RESULTS...``: PNG figures from finished ``siselect bench`` runs.

- ``accuracy_by_k.png``: accuracy of each method per run without judge noise, one run
  per K (the run's ``--label``; numeric labels give a numeric axis);
- ``instance_rows.png``: how many rows the separating instances have, per run;
- ``accuracy_by_noise.png``: tournament accuracy against the judge noise P, for runs
  that share a label, with the consistency baseline and the upper bound for reference.

Runs with the same label and noise (say, several seeds) are averaged; bars show their
range.

A figure the runs cannot support (say, noise curves from runs at a single P) is skipped
with a note rather than drawn empty.
"""

import argparse
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from siselect.client.bench.output import read_results
from siselect.runtime.errors import InvalidInput

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


def _save(plt: Any, fig: Any, ax: Any, title: str, target: Path) -> None:
    """Title, grid and legend as every figure has them, then the PNG."""
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(target, dpi=120)
    plt.close(fig)


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    return plt


def _by_label(runs: list[Run]) -> dict[str, list[Run]]:
    """The noise-free runs of each label, in the order given."""
    chosen: dict[str, list[Run]] = defaultdict(list)
    for run in runs:
        if run.noise == 0:
            chosen[run.label].append(run)
    return dict(chosen)


def accuracy_range(runs: list[Run], method: str) -> tuple[float, float, float] | None:
    """Mean, lowest and highest accuracy (in %) of ``method`` over ``runs``."""
    values = [100 * r.summary["accuracy"][method] for r in runs
              if r.summary["accuracy"].get(method) is not None]
    if not values:
        return None
    return sum(values) / len(values), min(values), max(values)


def _line(ax: Any, xs: list[Any], points: list[tuple[float, float, float] | None], style: str,
          **kwargs: Any) -> Any:
    """A line through the means, with bars for the range where there are several runs."""
    kept = [(x, p) for x, p in zip(xs, points, strict=True) if p is not None]
    if not kept:
        return None
    x, means = [k[0] for k in kept], [k[1][0] for k in kept]
    low = [m - k[1][1] for m, k in zip(means, kept, strict=True)]
    high = [k[1][2] - m for m, k in zip(means, kept, strict=True)]
    if any(low) or any(high):
        return ax.errorbar(x, means, yerr=[low, high], fmt=style, capsize=3, **kwargs)[0]
    return ax.plot(x, means, style, **kwargs)[0]


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
    methods = list(dict.fromkeys(m for lab in labels for r in chosen[lab]
                                 for m in r.summary["accuracy"]))
    methods.sort(key=lambda m: m == "upper_bound")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for method in methods:
        _line(ax, xs, [accuracy_range(chosen[lab], method) for lab in labels],
              METHOD_STYLE.get(method, "x-"), label=method.replace("_", " "))
    ax.set_xticks(xs, labels)
    ax.set_xlabel(x_title)
    ax.set_ylabel("execution accuracy (% of scored tasks)")
    _save(plt, fig, ax, "Selection accuracy per method", target)
    return None


def _named(labels: list[str], x_title: str) -> dict[str, str]:
    """Legend names: "K=24" for numeric labels, the label itself otherwise."""
    numeric = _numeric(labels) is not None
    return {lab: f"{x_title}={lab}" if numeric else lab for lab in labels}


def instance_histogram(runs: list[Run], target: Path, x_title: str = "K") -> str | None:
    """Histogram of separating-instance sizes (rows), one outline per run."""
    chosen = _by_label(runs) or {r.label: [r] for r in runs}
    sizes = {lab: group[0].instance_rows() for lab, group in chosen.items()}
    sizes = {lab: s for lab, s in sizes.items() if s}
    if not sizes:
        return "instance sizes: no separated pair in the runs"
    top = max(max(s) for s in sizes.values())
    bins = [b - 0.5 for b in range(1, top + 2)]
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    names = _named(list(sizes), x_title)
    for lab in _order(list(sizes)):
        ax.hist(sizes[lab], bins=bins, histtype="step", linewidth=1.5,
                label=f"{names[lab]} ({len(sizes[lab])} instances)")
    ax.set_xlabel("rows in the separating instance D'")
    ax.set_ylabel("pairs")
    _save(plt, fig, ax, "Separating instance sizes", target)
    return None


def accuracy_by_noise(runs: list[Run], target: Path, x_title: str = "K") -> str | None:
    """Tournament accuracy against judge noise, one curve per label with two or more P."""
    groups: dict[str, dict[float, list[Run]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        groups[run.label][run.noise].append(run)
    curves = {lab: g for lab, g in groups.items() if len(g) >= 2}
    if not curves:
        return "accuracy against judge noise: needs runs of one label at two or more noise levels"
    names = _named(list(curves), x_title)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for lab, by_noise in curves.items():
        ps = sorted(by_noise)
        seeds = max(len(by_noise[p]) for p in ps)
        line = _line(ax, ps, [accuracy_range(by_noise[p], "tournament") for p in ps], "o-",
                     label=f"tournament [{names[lab]}]" + (f", {seeds} runs a point"
                                                           if seeds > 1 else ""))
        everything = [r for p in ps for r in by_noise[p]]
        for method, style in (("consistency", "--"), ("upper_bound", ":")):
            level = accuracy_range(everything, method)
            if level is not None:
                ax.axhline(level[0], linestyle=style, color=line.get_color(), alpha=0.6,
                           label=f"{method.replace('_', ' ')} [{names[lab]}]")
    ax.set_xlabel("judge noise P (probability of a wrong judge answer)")
    ax.set_ylabel("execution accuracy (% of scored tasks)")
    _save(plt, fig, ax, "Tournament accuracy as the judge gets worse", target)
    return None


def plot(paths: list[Path], out: Path, x_title: str = "K") -> tuple[list[Path], list[str]]:
    """Draw every figure the runs support into ``out``; returns files written and notes."""
    if not paths:
        raise InvalidInput("name at least one results directory")
    runs = load_runs(paths)
    out.mkdir(parents=True, exist_ok=True)
    written, notes = [], []
    figures = [("accuracy_by_k.png", lambda t: accuracy_by_k(runs, t, x_title)),
               ("instance_rows.png", lambda t: instance_histogram(runs, t, x_title)),
               ("accuracy_by_noise.png", lambda t: accuracy_by_noise(runs, t, x_title))]
    for name, draw in figures:
        note = draw(out / name)
        if note:
            notes.append(note)
        else:
            written.append(out / name)
    return written, notes


def add_parser(sub: Any) -> None:
    from siselect.client.options import path_arg

    p = sub.add_parser("plot", help="draw PNG figures from siselect bench results")
    p.add_argument("results", nargs="+", type=path_arg, metavar="RESULTS",
                   help="--out directories of finished bench runs (or their summary.json)")
    p.add_argument("--out", type=path_arg, default=Path("siselect-plots"), metavar="DIR",
                   help="where the PNG files go (default ./siselect-plots)")
    p.add_argument("--x-title", default="K",
                   help="what the run labels are, for axes and legends (default K)")


def plot_command(args: argparse.Namespace) -> int:
    """Handler of ``siselect plot``."""
    from siselect.client.options import info

    written, notes = plot(args.results, args.out, args.x_title)
    for note in notes:
        info(f"not drawn: {note}")
    for path in written:
        print(path)
    return 0 if written else 2
