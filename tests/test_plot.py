"""``siselect plot``: PNG figures from bench result directories.

The result directories here are written with the harness's own output and summary code
from per-task records made up for the purpose (the harness itself is tested in
test_bench.py); what is checked is the figures drawn from them.
"""

import struct
from pathlib import Path

import pytest

from siselect.client.bench.output import OutDir
from siselect.client.bench.summary import summarise
from siselect.client.cli import main
from siselect.client.plot import accuracy_range, load_runs, plot

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def record(qid: int, hits: dict[str, bool], sizes: list[int]) -> dict:
    duels = [{"a": 0, "b": i + 1, "separation": "separated", "rows": n, "verdict": "a",
              "seconds": 0.01} for i, n in enumerate(sizes)]
    return {"question_id": qid, "db_id": "db", "status": "ok", "hits": hits,
            "choices": {m: 0 for m in hits}, "upper_bound": True,
            "coverage": {"transpiled": True, "executed": True, "lineage": True},
            "duels": duels, "decided_by": "tournament", "judge_calls": 0,
            "baseline_calls": {}, "timings": {"task": 0.1}}


def write_run(folder: Path, label: str, noise: float, hits: list[tuple[bool, bool]],
              sizes: list[int]) -> Path:
    run = {"label": label, "judge": "reference", "judge_noise": noise, "seed": 0,
           "baselines": ["consistency"]}
    records = [record(i, {"tournament": t, "consistency": c}, sizes[i % len(sizes):][:2])
               for i, (t, c) in enumerate(hits)]
    out = OutDir(folder)
    out.start(run, resume=False, force=False)
    for r in records:
        out.append(r, f"# task {r['question_id']}\n")
    out.finish(records, summarise(records, run))
    return folder


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
    return width, height


@pytest.fixture
def runs(tmp_path: Path) -> list[Path]:
    k2 = write_run(tmp_path / "k2", "2", 0.0, [(True, False), (True, True), (False, False)],
                   [1, 2, 2, 5])
    k5 = write_run(tmp_path / "k5", "5", 0.0, [(True, True), (False, True), (True, True)],
                   [1, 1, 3])
    noisy = [write_run(tmp_path / f"k5-p{p}", "5", p, [(True, True), (p < 0.2, True),
                                                       (p < 0.1, True)], [2])
             for p in (0.1, 0.2)]
    return [k5, k2, *noisy]


def test_every_figure_is_a_png_of_the_expected_size(runs, tmp_path):
    written, notes = plot(runs, tmp_path / "figures")
    assert notes == []
    assert [p.name for p in written] == ["accuracy_by_k.png", "instance_rows.png",
                                         "accuracy_by_noise.png"]
    for path in written:
        assert path.stat().st_size > 5000  # axes, lines and text, not a blank canvas
        assert png_size(path) == (768, 504)  # 6.4 x 4.2 inches at 120 dpi


def test_runs_are_read_with_their_labels_and_noise(runs):
    loaded = load_runs(runs)
    assert [(r.label, r.noise) for r in loaded] == [("5", 0.0), ("2", 0.0), ("5", 0.1),
                                                    ("5", 0.2)]
    assert loaded[0].summary["accuracy"]["tournament"] == pytest.approx(2 / 3)
    assert sorted(loaded[1].instance_rows()) == [1, 2, 2, 2, 2, 5]


def test_runs_of_the_same_label_and_noise_are_averaged(runs, tmp_path):
    seed1 = write_run(tmp_path / "k5-seed1", "5", 0.0, [(False, True), (False, True),
                                                       (True, True)], [4])
    loaded = load_runs([runs[0], seed1])
    mean, low, high = accuracy_range(loaded, "tournament")
    assert (low, high) == pytest.approx((100 / 3, 200 / 3), rel=1e-4)
    assert mean == pytest.approx(50, rel=1e-4)
    assert accuracy_range(loaded, "naive") is None
    written, _ = plot([*runs, seed1], tmp_path / "averaged")
    assert len(written) == 3


def test_figures_the_runs_cannot_support_are_skipped_with_a_note(runs, tmp_path):
    written, notes = plot(runs[:1], tmp_path / "one")
    assert [p.name for p in written] == ["accuracy_by_k.png", "instance_rows.png"]
    assert notes == ["accuracy against judge noise: needs runs of one label at two or more "
                     "noise levels"]
    assert not (tmp_path / "one" / "accuracy_by_noise.png").exists()


def test_the_command_prints_the_files_it_wrote(runs, tmp_path, capsys):
    assert main(["plot", *map(str, runs), "--out", str(tmp_path / "cli")]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [str(tmp_path / "cli" / n) for n in
                       ("accuracy_by_k.png", "instance_rows.png", "accuracy_by_noise.png")]


def test_a_directory_without_results_is_a_clear_error(tmp_path, capsys):
    assert main(["plot", str(tmp_path), "--out", str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err
    assert "no summary.json" in err and "siselect bench" in err
