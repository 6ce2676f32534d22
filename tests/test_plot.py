"""``siselect plot``: PNG figures from bench result directories that do not mislead.

The result directories here are written with the harness's own output and summary code
from per-task records made up for the purpose (the harness itself is tested in
test_bench.py); what is checked is what the figures hold, read back from matplotlib's
objects (the builders return the figure) and from the PNG files (size, dpi, the warning
kept as a text chunk).
"""

import json
from pathlib import Path

import pytest
from matplotlib.collections import LineCollection
from PIL import Image

from siselect.client.bench.output import OutDir
from siselect.client.bench.summary import summarise
from siselect.client.cli import main
from siselect.client.exit_codes import NO_RESULT
from siselect.client.plot import (
    DPI,
    accuracy_by_k,
    accuracy_by_noise,
    figure_warnings,
    instance_histogram,
    plot,
)
from siselect.client.plot_data import T95, accuracy_point, load_runs


def record(qid: int, hits: dict[str, bool], sizes: list[tuple[int, int | None]]) -> dict:
    """A scored task; ``sizes`` are its instances' (rows, foreign-key rows) (None: the
    record predates that count)."""
    duels = [{"a": 0, "b": i + 1, "separation": "separated", "rows": n, "verdict": "a",
              "seconds": 0.01, **({} if ref is None else {"reference_rows": ref})}
             for i, (n, ref) in enumerate(sizes)]
    return {"question_id": qid, "db_id": "db", "status": "ok", "hits": hits,
            "choices": {m: 0 for m in hits}, "upper_bound": True, "correct": [],
            "candidates": 2, "groups": [1, 1],
            "coverage": {"transpiled": True, "executed": True, "lineage": True},
            "duels": duels, "decided_by": "tournament", "judge_calls": 0,
            "baseline_calls": {}, "timings": {"task": 0.1}}


def write_run(folder: Path, label: str, noise: float, hits: list[tuple[bool, bool]],
              sizes: list[tuple[int, int | None]] = ((3, 1),), seed: int = 0,
              model: str | None = None, first_id: int = 0) -> Path:
    run = {"label": label, "judge": "reference", "judge_noise": noise, "seed": seed,
           "baselines": ["consistency"]}
    records = [record(first_id + i, {"tournament": t, "consistency": c},
                      list(sizes[i % len(sizes):][:2]) if sizes else [])
               for i, (t, c) in enumerate(hits)]
    out = OutDir(folder)
    out.start(run, resume=False, force=False)
    for r in records:
        out.append(r, f"# task {r['question_id']}\n")
    summary = summarise(records, run)
    if model is not None:
        summary["noise_model"] = model
    out.finish(records, summary)
    return folder


THREE = [(True, False), (True, True), (False, False)]


@pytest.fixture
def runs(tmp_path: Path) -> list[Path]:
    """K=2 and K=5 on the same three tasks; K=5 also at judge noise 0.1 and 0.2."""
    k2 = write_run(tmp_path / "k2", "2", 0.0, THREE, [(1, 0), (2, 1), (2, 2), (5, 3)])
    k5 = write_run(tmp_path / "k5", "5", 0.0, [(True, True), (False, True), (True, True)],
                   [(1, 0), (1, 1), (3, 2)])
    noisy = [write_run(tmp_path / f"k5-p{p}", "5", p, [(True, True), (p < 0.2, True),
                                                       (p < 0.1, True)]) for p in (0.1, 0.2)]
    return [k5, k2, *noisy]


def texts(fig, gid: str | None = None) -> list[str]:
    return [t.get_text() for t in fig.findobj(lambda o: hasattr(o, "get_text")
                                              and (gid is None or o.get_gid() == gid))
            if t.get_text()]


def curve(fig, label: str):
    found = [line for ax in fig.axes for line in ax.get_lines() if line.get_gid() == label]
    assert len(found) == 1, [line.get_gid() for ax in fig.axes for line in ax.get_lines()]
    return found[0]


def test_every_figure_is_a_png_readable_at_its_resolution(runs, tmp_path):
    done = plot(runs, tmp_path / "figures")
    assert [p.name for p in done.written] == ["accuracy_by_k.png", "instance_rows.png",
                                              "accuracy_by_noise.png"]
    for path in done.written:
        with Image.open(path) as image:
            assert image.info["dpi"] == pytest.approx((DPI, DPI), abs=0.1)
            assert image.size[0] == 8 * DPI  # 8 inches wide
            assert len(image.getcolors(1 << 16) or range(1 << 16)) > 20  # drawn, not blank
    drawn = accuracy_by_k(load_runs(runs))
    sizes = [t.get_fontsize() for t in drawn.fig.findobj(lambda o: hasattr(o, "get_fontsize"))
             if t.get_text()]
    assert sizes and min(sizes) >= 9


def test_each_point_says_its_n(runs, tmp_path):
    loaded = load_runs(runs)
    by_k = accuracy_by_k(loaded)
    assert texts(by_k.fig, "n") == ["n=3", "n=3"]  # one per K, above its points
    by_noise = accuracy_by_noise(loaded)
    assert texts(by_noise.fig, "n") == ["n=3"] * 3  # P = 0, 0.1, 0.2


def test_task_sets_that_differ_are_a_visible_warning_kept_in_the_png(runs, tmp_path):
    assert accuracy_by_k(load_runs(runs)).warnings == []  # same three tasks everywhere
    bigger = write_run(tmp_path / "k11", "11", 0.0, [*THREE, (True, True)])
    other = write_run(tmp_path / "k24", "24", 0.0, THREE, first_id=100)
    drawn = accuracy_by_k(load_runs([*runs, bigger, other]))
    assert len(drawn.warnings) == 1
    warning = drawn.warnings[0]
    assert "K=11: 4 tasks" in warning and "K=2: 3 tasks" in warning
    assert "7 tasks are not in every run" in warning  # no task is in all three
    shown = [t for t in drawn.fig.texts if t.get_gid() == "warning"]
    assert len(shown) == 1 and "Warning: the runs score different task sets" in \
        shown[0].get_text().replace("\n", " ")
    assert shown[0].get_color() == "#a00000"
    done = plot([*runs, bigger], tmp_path / "figures")
    found = figure_warnings(tmp_path / "figures" / "accuracy_by_k.png")
    assert len(found) == 1 and "K=11: 4 tasks" in found[0]
    assert done.warnings == [f"accuracy_by_k.png: {found[0]}", f"instance_rows.png: {found[0]}"]
    assert figure_warnings(tmp_path / "figures" / "accuracy_by_noise.png") == []


def test_fewer_than_three_noise_levels_are_points_without_a_line(runs, tmp_path):
    loaded = load_runs(runs)
    three = accuracy_by_noise(loaded)
    assert curve(three.fig, "tournament [K=5]").get_linestyle() == "-"
    assert list(curve(three.fig, "tournament [K=5]").get_xdata()) == [0.0, 0.1, 0.2]
    two = accuracy_by_noise(loaded[:3])  # P = 0 and 0.1 only
    line = curve(two.fig, "tournament [K=5] (points only: < 3 levels)")
    assert line.get_linestyle() == "None" and line.get_marker() == "o"
    assert two.notes == ["accuracy against judge noise: K=5 has 2 noise levels; points only "
                         "(a line needs 3)"]
    # Two K alone: points, not a line through two values.
    two_k = accuracy_by_k(loaded[:2])
    assert curve(two_k.fig, "tournament").get_linestyle() == "None"


def test_several_seeds_at_a_level_give_a_confidence_interval(runs, tmp_path):
    seed1 = write_run(tmp_path / "k5-p0.1-s1", "5", 0.1, [(False, True), (False, True),
                                                         (True, True)], seed=1)
    loaded = load_runs([*runs, seed1])
    point = accuracy_point([r for r in loaded if r.noise == 0.1], "tournament")
    assert point.mean == pytest.approx(50.0) and point.ns == [3, 3]
    # Two runs at 2/3 and 1/3: standard deviation 23.57 points, t(1) = 12.706.
    assert point.half_width == pytest.approx(T95[1] * (100 / 3) * 2 ** -0.5 / 2 ** 0.5,
                                             abs=1e-3)  # summaries keep 6 places
    assert point.n_text() == "n=3 \u00d72"
    drawn = accuracy_by_noise(loaded)
    bars = [c for c in drawn.fig.axes[0].collections if isinstance(c, LineCollection)]
    spans = sorted(tuple(seg[:, 1]) for c in bars for seg in c.get_segments())
    # The interval is wider than the axis here: shown from 0 to 100, where accuracy lies.
    assert point.half_width > 50 and (0.0, 100.0) in spans
    assert "n=3 \u00d72" in texts(drawn.fig, "n")


def test_one_curve_per_noise_model(runs, tmp_path):
    near = [write_run(tmp_path / f"near-{p}", "5", p, [(True, True), (False, True),
                                                       (False, True)], model="near-miss")
            for p in (0.1, 0.2)]
    drawn = accuracy_by_noise(load_runs([*runs, *near]))
    rival = curve(drawn.fig, "tournament [K=5, rival]")
    near_miss = curve(drawn.fig, "tournament [K=5, near-miss]")
    # The noise-free run starts both curves; summaries without a model are "rival".
    assert list(rival.get_xdata()) == list(near_miss.get_xdata()) == [0.0, 0.1, 0.2]
    assert list(near_miss.get_ydata()) == pytest.approx([200 / 3, 100 / 3, 100 / 3], abs=1e-3)


def test_curves_a_run_replayed_itself_come_from_its_summary(tmp_path):
    """``bench --judge-noise 0.1,0.2,0.3 --noise-seeds 2 --noise-model rival,near-miss``
    keeps its replays in the records; the summary's noise_curves are plotted, level 0 being
    the run's own noiseless tournament, with the summary's bootstrap interval."""
    folder = write_run(tmp_path / "replayed", "5", 0.0, THREE)
    records = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    for r in records:
        r["noise_runs"] = [{"model": m, "noise": p, "seed": seed, "judged": 1,
                            "hit": r["hits"]["tournament"] and (p < 0.3 or seed == 0)}
                           for m in ("rival", "near-miss") for p in (0.1, 0.2, 0.3)
                           for seed in (0, 1)]
    run = {"label": "5", "judge": "reference", "judge_noise": 0.0, "seed": 0,
           "baselines": ["consistency"]}
    OutDir(folder).finish(records, summarise(records, run))
    loaded = load_runs([folder])
    curves = loaded[0].summary["noise_curves"]
    assert set(curves) == {"rival", "near-miss"} and curves["rival"]["0.3"]["seeds"] == 2
    drawn = accuracy_by_noise(loaded)
    for model in ("rival", "near-miss"):
        line = curve(drawn.fig, f"tournament [K=5, {model}]")
        assert list(line.get_xdata()) == [0.0, 0.1, 0.2, 0.3] and line.get_linestyle() == "-"
        assert list(line.get_ydata()) == pytest.approx([200 / 3] * 3 + [100 / 3], abs=1e-3)
    assert texts(drawn.fig, "n").count("n=3 \u00d72") == 6  # three replayed levels a model
    low, high = (100 * x for x in curves["rival"]["0.3"]["ci95"])
    bars = [c for c in drawn.fig.axes[0].collections if isinstance(c, LineCollection)]
    spans = [tuple(seg[:, 1]) for c in bars for seg in c.get_segments()]
    assert (pytest.approx(low), pytest.approx(high)) in spans and low < high


def test_instance_sizes_count_foreign_key_rows_apart_side_by_side(runs, tmp_path):
    drawn = instance_histogram(load_runs(runs))
    assert drawn.warnings == []
    panels = [ax for ax in drawn.fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == [
        "K=2: 6 instances, 5 rows read\n+ 9 foreign-key rows",
        "K=5: 5 instances, 3 rows read\n+ 6 foreign-key rows"]
    k2 = panels[0]
    own = [b for b in k2.patches if b.get_gid() == "rows the queries read"]
    refs = [b for b in k2.patches if b.get_gid() == "rows added as foreign-key references"]
    # K=2's instances are (1,0) (2,1) (2,2) (2,1) (2,2) (5,3) in (rows, foreign-key rows).
    assert sum(b.get_height() for b in own) == sum(b.get_height() for b in refs) == 6
    assert {round(b.get_x() + b.get_width() / 2 + 0.2): b.get_height() for b in own} == \
        {1: 3, 0: 2, 2: 1}
    assert {round(b.get_x() + b.get_width() / 2 - 0.2): b.get_height() for b in refs} == \
        {0: 1, 1: 2, 2: 2, 3: 1}
    # Side by side: no two bars of a panel cover the same x.
    spans = sorted((b.get_x(), b.get_x() + b.get_width()) for b in k2.patches)
    assert all(end <= start + 1e-9 for (_, end), (start, _) in zip(spans, spans[1:], strict=False))


def test_sizes_of_records_without_the_count_are_flagged(tmp_path):
    old = write_run(tmp_path / "old", "2", 0.0, THREE, [(4, None)])
    drawn = instance_histogram(load_runs([old]))
    assert drawn.warnings == ["foreign-key rows are not recorded in K=2 (results written "
                              "before 0.2.0): those sizes include them"]
    assert {b.get_gid() for b in drawn.fig.axes[0].patches} == {
        "rows (foreign-key rows not recorded)"}


def test_plotting_into_a_runs_plots_folder_refreshes_its_index(runs, tmp_path):
    bigger = write_run(tmp_path / "k11", "11", 0.0, [*THREE, (True, True)])
    done = plot([runs[0], bigger], runs[0] / "plots")
    assert done.indexes == [runs[0] / "index.html"]
    page = (runs[0] / "index.html").read_text()
    for name in ("accuracy_by_k", "instance_rows"):
        assert f'href="plots/{name}.png"' in page
    assert page.count("the runs score different task sets") == 2
    assert not (bigger / "index.html").exists()


def test_the_command_prints_the_files_it_wrote(runs, tmp_path, capsys):
    assert main(["plot", *map(str, runs), "--out", str(tmp_path / "cli")]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [str(tmp_path / "cli" / n) for n in
                       ("accuracy_by_k.png", "instance_rows.png", "accuracy_by_noise.png")]


def test_figures_the_runs_cannot_support_are_skipped_with_a_note(runs, tmp_path, capsys):
    done = plot(runs[:1], tmp_path / "one")
    assert [p.name for p in done.written] == ["accuracy_by_k.png", "instance_rows.png"]
    assert done.skipped == ["accuracy against judge noise: needs runs of one label at two or "
                          "more noise levels"]
    assert not (tmp_path / "one" / "accuracy_by_noise.png").exists()
    nothing = write_run(tmp_path / "noisy-only", "5", 0.3, THREE, sizes=[])
    assert main(["plot", str(nothing), "--out", str(tmp_path / "none")]) == NO_RESULT
    assert "not drawn" in capsys.readouterr().err


def test_a_directory_without_results_is_a_clear_error(tmp_path, capsys):
    assert main(["plot", str(tmp_path), "--out", str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err
    assert "no summary.json" in err and "siselect bench" in err
