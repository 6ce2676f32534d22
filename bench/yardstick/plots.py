"""The yardstick's figures as PNG files.

Per database (each database's bench run a label): ``siselect plot``'s own figures, drawn
by its helpers (accuracy per method, separating-instance sizes). Added here, since the
bench's plots draw one noise level per run: the noise curves replayed within one run,
``noise_curves.png``, tournament accuracy against the judge noise for each noise model
with its 95% bootstrap interval, consistency (the line to beat) and the upper bound.
"""

from pathlib import Path
from typing import Any


def noise_curves(row: dict[str, Any], target: Path) -> str | None:
    """Draw ``row``'s noise curves (a summary row: a database or overall); returns why
    not when it has none."""
    curves = row.get("noise_curves") or {}
    if not curves:
        return "noise curves: the run replayed no noise"
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.0, 5.0))
    for model, levels in curves.items():
        # Each curve starts at P=0 with the noiseless tournament (the same instances).
        cells = [{"accuracy": row["tournament"], "ci95": [row["tournament"]] * 2},
                 *levels.values()] if "0" not in levels else list(levels.values())
        ps = ([0.0] if "0" not in levels else []) + [float(p) for p in levels]
        means = [100 * c["accuracy"] for c in cells]
        low = [m - 100 * c["ci95"][0] for m, c in zip(means, cells, strict=True)]
        high = [100 * c["ci95"][1] - m for m, c in zip(means, cells, strict=True)]
        seeds = max(c["seeds"] for c in levels.values())
        ax.errorbar(ps, means, yerr=[low, high], fmt="o-", capsize=3,
                    label=f"tournament, {model} noise ({seeds} seeds, 95% bootstrap)")
    for key, style, name in (("consistency", "--", "consistency (line to beat)"),
                             ("upper_bound", ":", "upper bound")):
        if row.get(key) is not None:
            ax.axhline(100 * row[key], linestyle=style, color="grey", label=name)
    ax.set_xlabel("judge noise P (probability of a wrong judge answer)")
    ax.set_ylabel(f"execution accuracy (% of {row['scored']} tasks)")
    ax.set_title("Tournament accuracy as the judge gets worse (replayed on the same D')")
    ax.grid(alpha=0.3)
    ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(target, dpi=150)
    plt.close(fig)
    return None


def draw(summary: dict[str, Any], runs: list[Path], out: Path) -> list[str]:
    """Every figure into ``out``; returns lines for the console."""
    out.mkdir(parents=True, exist_ok=True)
    lines = []
    note = noise_curves(summary["overall"], out / "noise_curves.png")
    lines.append(f"plot: {out / 'noise_curves.png'}" if note is None else f"not drawn: {note}")
    done = [r for r in runs if (r / "summary.json").is_file()]
    if done:
        from siselect.client.plot import plot

        plotted = plot(done, out / "per_database", x_title="database")
        lines += [f"plot: {p}" for p in plotted.written]
        lines += [f"not drawn: {s}" for s in plotted.skipped]
    return lines
