"""Noise curves in ``siselect bench``: the near-miss model, bootstrap intervals, and replays
that reuse the noiseless run's separations (issues 14 and 15)."""

import json
import random
from pathlib import Path

import pytest

from conftest import SHARED, bird_layout, schema_valid
from siselect.client.bench.metrics import bootstrap_interval, duel_lost_by_correct, noise_curves
from siselect.client.cli import main
from siselect.selection.near_miss import KINDS, near_miss

TASK_IDS = [735, 744, 766, 793, 810]  # K=2 superhero tasks that run in well under a second
CANDIDATES_K2 = SHARED / "siselection" / "candidates" / "2" / "stage1.json"


def _differing_cells(a: list[list], b: list[list]) -> list[tuple[object, object]]:
    return [(x, y) for ra, rb in zip(a, b, strict=True) for x, y in zip(ra, rb, strict=True)
            if x != y]


@pytest.mark.parametrize("truth", [[[7]], [[2.5, "x"]], [["a", 1], ["b", 2], ["c", 3]],
                                   [["only text"]], []])
def test_near_miss_is_one_small_change_of_the_right_answer(truth):
    kinds = set()
    for seed in range(40):
        kind, rows = near_miss(truth, random.Random(seed))
        kinds.add(kind)
        assert rows != truth
        if kind == "off_by_one":
            [(old, new)] = _differing_cells(truth, rows)
            assert abs(new - old) == 1
        elif kind == "value_nulled":
            [(old, new)] = _differing_cells(truth, rows)
            assert old is not None and new is None
        elif kind == "row_dropped":
            assert len(rows) == len(truth) - 1 and all(r in truth for r in rows)
        else:
            assert kind == "invented" and truth == [] and rows == [[None]]
    # Each kind the answer allows is drawn at some seed.
    allowed = {"off_by_one"} if any(isinstance(v, int | float) for r in truth for v in r) \
        else set()
    allowed |= {"value_nulled"} if truth else {"invented"}
    allowed |= {"row_dropped"} if len(truth) > 1 else set()
    assert kinds == allowed and kinds - {"invented"} <= set(KINDS)


def test_bootstrap_interval_brackets_the_mean_and_repeats():
    assert bootstrap_interval([]) is None
    assert bootstrap_interval([1.0] * 20) == [1.0, 1.0]
    values = [1.0] * 30 + [0.0] * 20
    low, high = bootstrap_interval(values)
    assert low < 0.6 < high and low > 0.4 and high < 0.8
    assert bootstrap_interval(values) == [low, high]
    narrow = bootstrap_interval(values * 16)
    assert narrow[0] > low and narrow[1] < high  # more tasks, a narrower interval


def test_noise_curves_pair_each_task_with_consistency():
    def record(consistent: bool, hits: list[bool]) -> dict:
        return {"hits": {"consistency": consistent},
                "noise_runs": [{"model": "rival", "noise": 0.2, "seed": s, "hit": h,
                                "judged": 2} for s, h in enumerate(hits)]}

    curves = noise_curves([record(True, [True, False]), record(False, [True, True])])
    cell = curves["rival"]["0.2"]
    assert cell["tasks"] == 2 and cell["seeds"] == 2 and cell["accuracy"] == 0.75
    assert cell["by_seed"] == [1.0, 0.5] and cell["judged_per_task"] == 2
    assert cell["minus_consistency"] == 0.25  # (0.5 - 1 + 1 - 0) / 2
    assert cell["ci95"][0] <= 0.75 <= cell["ci95"][1]


def test_a_duel_lost_by_a_correct_side():
    assert duel_lost_by_correct({"a": 0, "b": 1, "verdict": "b"}, [0])
    assert not duel_lost_by_correct({"a": 0, "b": 1, "verdict": "a"}, [0])
    assert not duel_lost_by_correct({"a": 0, "b": 1, "verdict": "draw"}, [0])
    assert not duel_lost_by_correct({"a": 0, "b": 1, "verdict": "b"}, [0, 1])


def test_a_lost_duel_says_which_right_candidates_matched_the_judge():
    # Candidate 0 is right on D by coincidence: on D' its group-mate 2 (right on D too)
    # answers as the judge and 0 does not.
    from siselect.client.bench.task import _duels

    played = {"a": 0, "b": 1, "verdict": "b", "separation": "separated", "rows": 2,
              "matched": [1, 2], "members": {"a": [0, 2], "b": [1]}}
    (brief,) = _duels({"duels": [played]}, [0, 2])
    assert brief["lost_by_correct"] and brief["right_matched"] == [2]
    (alone,) = _duels({"duels": [{**played, "matched": [1]}]}, [0, 2])
    assert alone["right_matched"] == []


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, Path]:
    return bird_layout(tmp_path_factory.mktemp("bird"), TASK_IDS, CANDIDATES_K2)


def bench(data: dict[str, Path], dsn: str, out: str, *extra: str) -> tuple[dict, list[dict]]:
    root = data["root"]
    assert main(["bench", "--tasks", str(root / "tasks.json"), "--candidates",
                 str(root / "candidates.json"), "--databases", str(root / "dbs"), "--dsn", dsn,
                 "--out", str(root / out), *extra]) == 0
    summary = schema_valid("bench_summary", json.loads((root / out / "summary.json").read_text()))
    records = [schema_valid("bench_record", json.loads(line))
               for line in (root / out / "results.jsonl").read_text().splitlines()]
    return summary, records


@pytest.fixture(scope="module")
def curves(data, dsn, superhero) -> tuple[dict, list[dict]]:
    return bench(data, dsn, "curves", "--judge-noise", "0,0.5,1", "--noise-seeds", "2",
                 "--noise-model", "rival,near-miss")


def test_replays_reuse_every_separation(curves):
    summary, records = curves
    replayed = 0
    for r in records:
        runs = r["noise_runs"]
        assert sorted((x["model"], x["noise"], x["seed"]) for x in runs) == sorted(
            (m, p, s) for m in ("rival", "near-miss") for p in (0, 0.5, 1.0) for s in (0, 1))
        assert runs[0]["memo"] == len(r["duels"])  # the noiseless run's separations
        # The first replay runs the candidates on D once more; later ones reuse that.
        assert runs[0]["queries"] >= r["candidates"] - len(r["dropped"])
        for i, x in enumerate(runs):
            assert x["memo"] >= len(r["duels"])
            if x["noise"] == 0:
                # The same verdicts: the same duels, every separation from the memo, and
                # after the first replay not one query sent to the server.
                assert x["new_separations"] == 0 and (i == 0 or x["queries"] == 0)
                assert x["choice"] == r["choices"]["tournament"]
                assert x["judged"] == sum(d["separation"] == "separated" for d in r["duels"])
                replayed += x["judged"]
        assert "noise_replays" in r["timings"]
    assert replayed > 0


def test_the_tournament_itself_stays_noiseless(curves, data, dsn):
    summary, records = curves
    plain, plain_records = bench(data, dsn, "plain")
    assert summary["judge_noise"] == 0 and summary["correct"] == plain["correct"]
    assert [r["choices"] for r in records] == [r["choices"] for r in plain_records]
    assert "noise_curves" not in plain and all("noise_runs" not in r for r in plain_records)


def test_summary_reports_curves_with_intervals_and_duel_figures(curves):
    summary, records = curves
    scored = [r for r in records if r["status"] == "ok"]
    for model in ("rival", "near-miss"):
        for level in ("0", "0.5", "1"):
            cell = summary["noise_curves"][model][level]
            assert cell["tasks"] == len(scored) and cell["seeds"] == 2
            low, high = cell["ci95"]
            assert low <= cell["accuracy"] <= high
            assert cell["minus_consistency_ci95"][0] <= cell["minus_consistency"]
    # At noise 1 every judged answer is replaced. With two groups, the rival's answer is the
    # wrong side's: a task the duel decided is lost; a near miss matches neither side or
    # the wrong one, so the right side never wins a duel.
    for r in scored:
        for x in r["noise_runs"]:
            assert x["replaced"] == (x["judged"] if x["noise"] == 1.0 else x["replaced"])
    decided = [r for r in scored if r["decided_by"] == "tournament" and r["hits"]["tournament"]]
    assert decided
    for r in decided:
        assert not any(x["hit"] for x in r["noise_runs"] if x["noise"] == 1.0 and
                       x["model"] == "rival")
    assert summary["noise_curves"]["near-miss"]["1"]["accuracy"] <= \
        summary["accuracy"]["tournament"]
    assert summary["judged_duels"] == sum(d["separation"] == "separated"
                                          for r in scored for d in r["duels"])
    assert summary["round_robin_pairs"] == sum(len(r["groups"]) * (len(r["groups"]) - 1) // 2
                                               for r in scored)
    assert summary["lost_by_correct"] == [] and summary["degenerate_duels"] >= 0


@pytest.mark.parametrize("extra, message", [
    (["--judge-noise", "0.2,x"], "not a comma-separated list of numbers"),
    (["--judge-noise", "1.5"], "must be between 0 and 1"),
    (["--judge-noise", "0.2", "--noise-model", "gaussian"], "--noise-model: use rival or "
     "near-miss"),
    (["--judge-noise", "0.2", "--noise-seeds", "0"], "--noise-seeds must be at least 1"),
    (["--judge-noise", "0.2", "--noise-seeds", "2", "--judge", "none"], "needs a judge that "
     "answers"),
    (["--judge-noise", "0.2", "--noise-model", "rival,near-miss"], "need --noise-seeds"),
])
def test_bad_noise_options_are_refused(data, capsys, extra, message):
    root = data["root"]
    # No server is named: the options are refused before one would be needed.
    assert main(["bench", "--tasks", str(root / "tasks.json"), "--candidates",
                 str(root / "candidates.json"), "--databases", str(root / "dbs"),
                 "--dsn", "postgresql://nobody@127.0.0.1:1/none", "--out",
                 str(root / "refused"), *extra]) == 1
    assert message in capsys.readouterr().err
