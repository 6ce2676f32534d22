"""``siselect plot RESULTS...``: PNG figures from finished ``siselect bench`` runs.

- ``accuracy_by_k.png``: accuracy of each method per run without judge noise, one run
  per K (the run's ``--label``; numeric labels give a numeric axis);
- ``instance_rows.png``: how many rows the separating instances have, one panel per run,
  the rows the queries read and the rows added as foreign-key references side by side;
- ``accuracy_by_noise.png``: tournament accuracy against the judge noise P, one curve per
  label and noise model, with the consistency baseline and the upper bound for reference.

So that no figure misleads: every point says its n (tasks scored; ``x3`` for three runs);
runs of the same label and noise (seeds) are averaged and show a 95% confidence interval
over those runs (the replays a run's summary holds, ``noise_curves``, bring their own
interval, a bootstrap over tasks); a line joins points only where there are at least
:data:`MIN_LINE_POINTS` of them on a numeric axis (else points alone); when the runs
compared score different task sets, the figure says so in red and its PNG keeps the
warning as a text chunk (:func:`figure_warnings`), which the bench's index.html shows.
A figure the runs cannot support is skipped with a note rather than drawn empty.
"""

import argparse
import math
import textwrap
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from siselect.client.bench.index import WARNING_KEY, figure_warnings
from siselect.client.plot_data import (
    Point,
    Run,
    accuracy_point,
    load_runs,
    replayed_curves,
    task_set_warning,
)
from siselect.runtime.errors import InvalidInput

__all__ = ["Run", "load_runs", "plot", "figure_warnings", "accuracy_by_k",
           "instance_histogram", "accuracy_by_noise"]

DPI = 150
FIGSIZE = (8.0, 5.0)
FONTS: dict[Any, Any] = {"font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11,
                         "figure.titlesize": 13, "legend.fontsize": 9.5, "xtick.labelsize": 10,
                         "ytick.labelsize": 10}
N_FONT = 9  # the n beside each point
WARNING_COLOUR = "#a00000"
MIN_LINE_POINTS = 3
METHOD_MARKER = {"tournament": "o", "consistency": "s", "naive": "^", "pairwise": "v",
                 "upper_bound": "D"}
METHOD_LINE = {"consistency": "--", "upper_bound": ":"}


@dataclass
class Drawn:
    """A figure built, with the warnings it carries and the notes for the console."""

    fig: Any
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    matplotlib.rcParams.update(FONTS)
    return plt


def _finish(fig: Any, title: str, warnings: list[str], top: float = 1.0) -> None:
    """The title, and the warnings in red along the bottom edge, space kept for them
    (and above ``top``, for a legend over the panels)."""
    fig.suptitle(title)
    bottom = 0.0
    if warnings:
        text = "\n".join(textwrap.fill(f"Warning: {w}", 100) for w in warnings)
        fig.text(0.01, 0.01, text, color=WARNING_COLOUR, fontsize=10, ha="left", va="bottom",
                 gid="warning")
        bottom = (text.count("\n") + 1) * 10 * 1.3 / (fig.get_figheight() * 72) + 0.02
    fig.tight_layout(rect=(0, bottom, 1, top))


def save(drawn: Drawn, target: Path) -> None:
    from siselect import __version__

    metadata = {"Software": f"siselect {__version__}"}
    if drawn.warnings:
        metadata[WARNING_KEY] = "\n".join(drawn.warnings)
    drawn.fig.savefig(target, dpi=DPI, metadata=metadata)
    _pyplot().close(drawn.fig)


def _numeric(labels: list[str]) -> list[float] | None:
    try:
        return [float(x) for x in labels]
    except ValueError:
        return None


def _order(labels: list[str]) -> list[str]:
    numbers = _numeric(labels)
    return [lab for _, lab in sorted(zip(numbers, labels, strict=True))] if numbers else labels


def _named(labels: list[str], x_title: str) -> dict[str, str]:
    """Legend names: "K=24" for numeric labels, the label itself otherwise."""
    numeric = _numeric(labels) is not None
    return {lab: f"{x_title}={lab}" if numeric else lab for lab in labels}


def _by_label(runs: list[Run]) -> dict[str, list[Run]]:
    """The noise-free runs of each label, in the order given."""
    chosen: dict[str, list[Run]] = defaultdict(list)
    for run in runs:
        if run.noise == 0:
            chosen[run.label].append(run)
    return dict(chosen)


def _points(ax: Any, xs: list[float], points: list[Point | None], join: bool, label: str,
            marker: str = "o", linestyle: str = "-", n_labels: bool = True,
            **kwargs: Any) -> Any:
    """The points (means, with 95% intervals where several runs make one), joined by a
    line only when ``join`` and there are enough of them; each labelled with its n."""
    kept = [(x, p) for x, p in zip(xs, points, strict=True) if p is not None]
    if not kept:
        return None
    x, y = [k[0] for k in kept], [k[1].mean for k in kept]
    style = linestyle if join and len(kept) >= MIN_LINE_POINTS else "none"
    if any(k[1].low is not None for k in kept):
        # An accuracy lies in [0, 100]: the interval is shown within it.
        low = [m - max(0.0, p.low if p.low is not None else m) for m, (_, p) in
               zip(y, kept, strict=True)]
        high = [min(100.0, p.high if p.high is not None else m) - m for m, (_, p) in
                zip(y, kept, strict=True)]
        line = ax.errorbar(x, y, yerr=[low, high], marker=marker, linestyle=style, capsize=3,
                           label=label, **kwargs)[0]
    else:
        line = ax.plot(x, y, marker=marker, linestyle=style, label=label, **kwargs)[0]
    line.set_gid(label)
    if n_labels:
        for xi, (_, p) in zip(x, kept, strict=True):
            ax.annotate(p.n_text(), (xi, p.mean), xytext=(5, 5), textcoords="offset points",
                        fontsize=N_FONT, color=line.get_color(), gid="n")
    return line


def _accuracy_axis(ax: Any) -> None:
    """0 to 100 always: a zoomed axis makes small differences look large."""
    ax.set_ylim(0, 108)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("execution accuracy (% of scored tasks)")
    ax.grid(alpha=0.3)


def accuracy_by_k(runs: list[Run], x_title: str = "K") -> Drawn | str:
    """Accuracy per method against the run labels; a string says why it cannot draw."""
    chosen = _by_label(runs)
    if not chosen:
        return "accuracy per method: no run without judge noise"
    labels = _order(list(chosen))
    numbers = _numeric(labels)
    xs: list[float] = numbers if numbers else list(range(len(labels)))
    methods = list(dict.fromkeys(m for lab in labels for r in chosen[lab]
                                 for m in r.summary["accuracy"]))
    methods.sort(key=lambda m: m == "upper_bound")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=FIGSIZE)
    names = _named(labels, x_title)
    step = min((b - a for a, b in zip(xs, xs[1:], strict=False)), default=1.0) or 1.0
    for number, method in enumerate(methods):
        # Methods side by side around each x, so that equal values do not hide each other.
        dodge = (number - (len(methods) - 1) / 2) * 0.06 * step
        points = [accuracy_point(chosen[lab], method) for lab in labels]
        _points(ax, [x + dodge for x in xs], points, numbers is not None,
                method.replace("_", " "), METHOD_MARKER.get(method, "x"),
                METHOD_LINE.get(method, "-"), n_labels=False)
    # Every method of a column was measured on the same runs: one n a column, above it.
    for x, lab in zip(xs, labels, strict=True):
        found = [p for m in methods if (p := accuracy_point(chosen[lab], m)) is not None]
        if found:
            ax.annotate(found[0].n_text(), (x, max(p.mean for p in found)), xytext=(0, 9),
                        textcoords="offset points", ha="center", fontsize=N_FONT, gid="n")
    ax.set_xticks(xs, labels)
    ax.set_xlabel(f"{x_title} (n: tasks scored; \u00d7k: mean of k runs, bars: 95% CI)")
    _accuracy_axis(ax)
    ax.legend(loc="lower right")
    warning = task_set_warning({names[lab]: chosen[lab] for lab in labels})
    drawn = Drawn(fig, [warning] if warning else [])
    _finish(fig, "Selection accuracy per method", drawn.warnings)
    return drawn


def _bins(top: int) -> int:
    """Bin width in rows: single rows up to 40, wider beyond so that bars stay visible."""
    return max(1, math.ceil(top / 40))


def instance_histogram(runs: list[Run], x_title: str = "K") -> Drawn | str:
    """Separating-instance sizes, one panel per run: for each instance the rows the
    queries read and the rows added because those reference them, side by side."""
    chosen = _by_label(runs) or {r.label: [r] for r in runs}
    sizes = {lab: [i for r in group for i in r.instances()] for lab, group in chosen.items()}
    sizes = {lab: s for lab, s in sizes.items() if s}
    if not sizes:
        return "instance sizes: no separated pair in the runs"
    labels = _order(list(sizes))
    names = _named(labels, x_title)
    width = _bins(max(rows for s in sizes.values() for rows, _ in s))
    columns = min(2, len(labels))
    rows_of_panels = math.ceil(len(labels) / columns)
    plt = _pyplot()
    fig, axes = plt.subplots(rows_of_panels, columns, sharex=True, sharey=True, squeeze=False,
                             figsize=(FIGSIZE[0], 1.2 + 2.8 * rows_of_panels))
    drawn = Drawn(fig)
    unknown = []
    for ax, lab in zip(axes.flat, labels, strict=False):
        found = sizes[lab]
        if any(ref is None for _, ref in found):
            unknown.append(names[lab])
            series = {"rows (foreign-key rows not recorded)": [rows for rows, _ in found]}
            title = f"{names[lab]}: {len(found)} instances"
        else:
            own = [rows - ref for rows, ref in found if ref is not None]
            refs = [ref for _, ref in found if ref is not None]
            series = {"rows the queries read": own, "rows added as foreign-key references": refs}
            title = (f"{names[lab]}: {len(found)} instances, {sum(own)} rows read\n"
                     f"+ {sum(refs)} foreign-key rows")
        _side_by_side(ax, series, width)
        ax.set_title(title, fontsize=10.5)
        ax.grid(alpha=0.3, axis="y")
    for ax in list(axes.flat)[len(labels):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("rows in D'")
    for ax in axes[:, 0]:
        ax.set_ylabel("instances")
    handles, names_shown = axes.flat[0].get_legend_handles_labels()
    legend_at = 1 - 0.55 / fig.get_figheight()
    fig.legend(handles, names_shown, loc="upper center", ncol=2, bbox_to_anchor=(0.5, legend_at))
    if unknown:
        drawn.warnings.append(f"foreign-key rows are not recorded in {', '.join(unknown)} "
                              "(results written before 0.2.0): those sizes include them")
    warning = task_set_warning({names[lab]: chosen[lab] for lab in labels})
    if warning:
        drawn.warnings.append(warning)
    _finish(fig, "Separating instance sizes", drawn.warnings, top=1 - 0.85 / fig.get_figheight())
    return drawn


def _side_by_side(ax: Any, series: dict[str, list[int]], width: int) -> None:
    """One bar per bin and series, next to each other (never drawn over one another)."""
    colours = ["#3b75af", "#ef8636"]
    share = 0.8 / len(series)
    for number, (name, values) in enumerate(series.items()):
        counts: dict[int, int] = defaultdict(int)
        for v in values:
            counts[v // width * width] += 1
        xs = sorted(counts)
        offset = (number - (len(series) - 1) / 2) * share * width
        ax.bar([x + offset for x in xs], [counts[x] for x in xs], width=share * width,
               color=colours[number % len(colours)], label=name, gid=name)


Curve = dict[float, tuple[Point, list[Run]]]


def _noise_curves(runs: list[Run]) -> dict[tuple[str, str | None], Curve]:
    """By label and noise model: each level's point and the runs behind it. Levels come
    from separate runs (one ``--judge-noise P`` each; the noise-free runs of a label start
    each of its models' curves) and from the replays a run's summary holds."""
    by_label: dict[str, list[Run]] = defaultdict(list)
    for run in runs:
        by_label[run.label].append(run)
    curves: dict[tuple[str, str | None], Curve] = {}
    for lab, group in by_label.items():
        replayed = {m: (c, r) for r in group for m, c in replayed_curves(r).items()}
        models: list[str | None] = [*sorted({m for r in group if (m := r.noise_model)}
                                            | set(replayed))]
        for model in models or [None]:
            levels: dict[float, list[Run]] = defaultdict(list)
            for r in group:
                if r.noise_model in (None, model):
                    levels[r.noise].append(r)
            curve: Curve = {p: (point, rs) for p, rs in levels.items()
                            if (point := accuracy_point(rs, "tournament")) is not None}
            if model in replayed:
                points, source = replayed[model]
                curve.update({p: (point, [source]) for p, point in points.items()})
            if len(curve) >= 2:
                curves[(lab, model)] = dict(sorted(curve.items()))
    return curves


def accuracy_by_noise(runs: list[Run], x_title: str = "K") -> Drawn | str:
    """Tournament accuracy against judge noise: a curve per label and noise model with
    two or more P (see :func:`_noise_curves`)."""
    curves = _noise_curves(runs)
    if not curves:
        return "accuracy against judge noise: needs runs of one label at two or more noise levels"
    names = _named(list(dict.fromkeys(lab for lab, _ in curves)), x_title)
    several_models = len({m for _, m in curves}) > 1
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=FIGSIZE)
    drawn = Drawn(fig)
    levels_seen: dict[str, list[Run]] = {}
    for (lab, drawn_model), levels in curves.items():
        name = names[lab] + (f", {drawn_model}" if several_models and drawn_model else "")
        ps = list(levels)
        few = len(ps) < MIN_LINE_POINTS
        if few:
            drawn.notes.append(f"accuracy against judge noise: {name} has {len(ps)} noise "
                               f"levels; points only (a line needs {MIN_LINE_POINTS})")
        line = _points(ax, ps, [levels[p][0] for p in ps], True,
                       f"tournament [{name}]" + (" (points only: < 3 levels)" if few else ""))
        levels_seen.update({f"{name}, P={p:g}": levels[p][1] for p in ps})
        everything = list({id(r): r for p in ps for r in levels[p][1]}.values())
        for method in ("consistency", "upper_bound"):
            level = accuracy_point(everything, method)
            if level is not None and line is not None:
                ax.axhline(level.mean, linestyle=METHOD_LINE[method], color=line.get_color(),
                           alpha=0.6, label=f"{method.replace('_', ' ')} [{name}]",
                           gid=f"{method} [{name}]")
    ax.set_xlabel("judge noise P (probability of a wrong judge answer); n: tasks scored")
    _accuracy_axis(ax)
    handles, texts = ax.get_legend_handles_labels()
    ordered = sorted(zip(handles, texts, strict=True), key=lambda h: not h[1].startswith("tour"))
    ax.legend([h for h, _ in ordered], [t for _, t in ordered], loc="best")
    warning = task_set_warning(levels_seen)
    if warning:
        drawn.warnings.append(warning)
    _finish(fig, "Tournament accuracy as the judge gets worse", drawn.warnings)
    return drawn


FIGURES = (("accuracy_by_k.png", accuracy_by_k), ("instance_rows.png", instance_histogram),
           ("accuracy_by_noise.png", accuracy_by_noise))


@dataclass
class Plotted:
    written: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # figures the runs cannot support
    notes: list[str] = field(default_factory=list)  # points not joined
    warnings: list[str] = field(default_factory=list)  # as "<file>: <warning>"
    indexes: list[Path] = field(default_factory=list)  # index.html files refreshed


def plot(paths: list[Path], out: Path, x_title: str = "K") -> Plotted:
    """Draw every figure the runs support into ``out``. When ``out`` is a run's own
    ``plots`` folder, that run's index.html is written again to show them."""
    if not paths:
        raise InvalidInput("name at least one results directory")
    runs = load_runs(paths)
    out.mkdir(parents=True, exist_ok=True)
    done = Plotted()
    for name, draw in FIGURES:
        drawn = draw(runs, x_title)
        if isinstance(drawn, str):
            done.skipped.append(drawn)
            continue
        save(drawn, out / name)
        done.written.append(out / name)
        done.notes += drawn.notes
        done.warnings += [f"{name}: {w}" for w in drawn.warnings]
    done.indexes = _refresh_indexes(runs, out)
    return done


def _refresh_indexes(runs: list[Run], out: Path) -> list[Path]:
    from siselect.client.bench.index import PLOTS, write_index

    return [write_index(r.folder, r.summary, r.records) for r in runs
            if r.folder is not None and (r.folder / PLOTS).resolve() == out.resolve()]


def add_parser(sub: Any) -> None:
    from siselect.client.exit_codes import NO_RESULT, epilog
    from siselect.client.options import path_arg

    p = sub.add_parser("plot", help="draw PNG figures from siselect bench results",
                       epilog=epilog([NO_RESULT]),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+", type=path_arg, metavar="RESULTS",
                   help="--out directories of finished bench runs (or their summary.json)")
    p.add_argument("--out", type=path_arg, default=Path("siselect-plots"), metavar="DIR",
                   help="where the PNG files go (default ./siselect-plots); RESULTS/plots "
                   "also refreshes that run's index.html")
    p.add_argument("--x-title", default="K",
                   help="what the run labels are, for axes and legends (default K)")


def plot_command(args: argparse.Namespace) -> int:
    """Handler of ``siselect plot``."""
    from siselect.client.exit_codes import NO_RESULT, OK
    from siselect.client.options import info

    done = plot(args.results, args.out, args.x_title)
    for why in done.skipped:
        info(f"not drawn: {why}")
    for note in done.notes:
        info(f"note: {note}")
    for warning in done.warnings:
        info(f"warning: {warning}")
    for index in done.indexes:
        info(f"{index} now shows the figures")
    for path in done.written:
        print(path)
    return OK if done.written else NO_RESULT
