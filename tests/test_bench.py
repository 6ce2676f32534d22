"""``siselect bench`` on a handful of BIRD superhero tasks: scoring by BIRD's rule, the
summary, output files, judge noise, workers, interrupting and resuming, the LLM
baselines through the harness, and clear errors on bad inputs."""

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chat_server import ChatServer
from conftest import SHARED, SUPERHERO, bird_layout, names_allowed, schema_valid
from siselect.client.bench.summary import comparable
from siselect.client.cli import main
from siselect.client.progress import Progress

TASK_IDS = [735, 744, 766, 793, 810]  # K=2 tasks that run in well under a second each
CANDIDATES_K2 = SHARED / "siselection" / "candidates" / "2" / "stage1.json"
# A task of our own whose gold query sleeps: it is still running when the test interrupts.
SLOW = {"question_id": 999_001, "db_id": "superhero", "difficulty": "simple",
        "question": "How many superheroes have an id below 10?", "evidence": "",
        "SQL": "SELECT COUNT(*) FROM superhero WHERE id < (SELECT 10 FROM "
               "(SELECT pg_sleep(1)) AS s)"}
SLOW_CANDIDATES = ["SELECT COUNT(*) FROM superhero WHERE id < 10",
                   "SELECT COUNT(*) FROM superhero WHERE id <= 10"]
# And one whose gold query fails on PostgreSQL: reported, not scored.
BROKEN = {"question_id": 999_002, "db_id": "superhero", "question": "Which hero is oldest?",
          "evidence": "", "SQL": "SELECT superhero_name FROM superhero ORDER BY age DESC"}


@pytest.fixture(scope="module", autouse=True)
def sleep_allowed(dsn):
    """SLOW's gold sleeps: pg_sleep is volatile, so an administrator must allow it."""
    with names_allowed(dsn, ("pg_catalog", "pg_sleep"), why="test_bench: SLOW's gold"):
        yield


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, Path]:
    """Tasks, candidates and a databases directory in BIRD's layout."""
    return bird_layout(tmp_path_factory.mktemp("bird"), TASK_IDS, CANDIDATES_K2, (SLOW, BROKEN),
                       {str(t["question_id"]): SLOW_CANDIDATES for t in (SLOW, BROKEN)})


def bench_args(data: dict[str, Path], dsn: str, out: Path, *extra: str) -> list[str]:
    return ["bench", "--tasks", str(data["tasks"]), "--candidates", str(data["candidates"]),
            "--databases", str(data["databases"]), "--dsn", dsn, "--out", str(out),
            "--statement-timeout", "20000", *extra]


def run_bench(capsys, *args: str) -> dict:
    """Run the command in-process; returns the JSON summary it printed last (checked
    against the published JSON Schema, as every record :func:`records` reads)."""
    assert main([*args, "--json"]) == 0, capsys.readouterr().err
    return schema_valid("bench_summary",
                        json.loads(capsys.readouterr().out.strip().splitlines()[-1]))


def records(out: Path) -> list[dict]:
    return [schema_valid("bench_record", json.loads(line))
            for line in (out / "results.jsonl").read_text().splitlines()]


def without_timings(rows: list[dict]) -> list[dict]:
    def strip(r: dict) -> dict:
        duels = [{k: v for k, v in d.items() if k != "seconds"} for d in r.get("duels", [])]
        return {**{k: v for k, v in r.items() if k != "timings"}, "duels": duels}
    return [strip(r) for r in rows]


@pytest.fixture(scope="module")
def first(data, dsn, superhero) -> tuple[dict, Path]:
    """One uninterrupted run on two workers, shared by several tests."""
    out = data["root"] / "first"
    assert main([*bench_args(data, dsn, out, "--workers", "2"), "--json"]) == 0
    return schema_valid("bench_summary", json.loads((out / "summary.json").read_text())), out


def sqlite_rows(sql: str) -> set:
    with sqlite3.connect(f"file:{SUPERHERO}?mode=ro", uri=True) as db:
        return set(db.execute(sql).fetchall())


def test_summary_has_the_figures_and_scores_by_birds_rule(first, data):
    summary, out = first
    assert summary["tasks"] == 7 and summary["scored"] == 6
    assert summary["gold_failed"] == [BROKEN["question_id"]]
    assert summary["coverage"]["transpiled"] >= summary["coverage"]["executed"] >= \
        summary["coverage"]["lineage"] >= 1
    assert summary["pairs"] >= 6 and 1 <= summary["separated"] <= summary["pairs"]
    assert summary["separation_rate"] == round(summary["separated"] / summary["pairs"], 6)
    assert 1 <= summary["instance_rows"]["median"] <= summary["instance_rows"]["max"]
    assert summary["pair_seconds"]["median"] > 0 and summary["judge_calls"] == 0
    assert set(summary["accuracy"]) == {"tournament", "consistency", "upper_bound"}
    rows = [r for r in records(out) if r["status"] == "ok"]
    for method in ("tournament", "consistency"):
        hits = sum(r["hits"][method] for r in rows)
        assert summary["correct"][method] == hits
        assert summary["accuracy"][method] == round(hits / 6, 6)
    # Each method's verdict agrees with the rule applied to SQLite's own results.
    tasks = {t["question_id"]: t for t in json.loads(data["tasks"].read_text())}
    candidates = json.loads(data["candidates"].read_text())
    for r in rows:
        gold = sqlite_rows(tasks[r["question_id"]]["SQL"].replace("pg_sleep(1)", "1"))
        for method, choice in r["choices"].items():
            chosen = sqlite_rows(candidates[str(r["question_id"])][choice])
            assert r["hits"][method] == (chosen == gold), (r["question_id"], method)
        assert r["upper_bound"] == any(sqlite_rows(c) == gold
                                       for c in candidates[str(r["question_id"])])


def test_output_files(first):
    summary, out = first
    ids = [r["question_id"] for r in records(out)]
    assert ids == sorted(ids) == sorted([*TASK_IDS, SLOW["question_id"], BROKEN["question_id"]])
    for qid in ids:
        assert (out / "reports" / f"{qid}.md").read_text().startswith(f"# Task {qid} ")
    assert "gold query failed on PostgreSQL" in (out / "reports" / "999002.md").read_text()
    slow = (out / "reports" / "999001.md").read_text()
    assert "Separating instance D'" in slow and "**Judge (reference)**" in slow
    run = json.loads((out / "run.json").read_text())
    assert run["judge"] == "reference" and len(run["tasks_sha256"]) == 64


def _sigint_as_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "kill"])
def test_interrupt_then_resume_gives_the_same_results(first, data, dsn, capsys, stop):
    summary, out_first = first
    out = data["root"] / f"interrupted-{stop.name}"
    command = [sys.executable, "-c", "import sys; from siselect.client.cli import main; "
               "sys.exit(main(sys.argv[1:]))", *bench_args(data, dsn, out, "--workers", "1")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    # SIGINT as a terminal gives it: a shell starts background jobs with it ignored, and a
    # run of the tests started as one passed that on (the bench went on to the end).
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                               preexec_fn=_sigint_as_default)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while not (results.exists() and results.read_text().count("\n") >= 1):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.02)
    process.send_signal(stop)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    kept = records(out)
    assert 1 <= len(kept) < 7  # the slow task was still running: it is not recorded
    assert b"--resume" in err
    again = run_bench(capsys, *bench_args(data, dsn, out, "--resume"))
    assert comparable(again) == comparable(summary)  # and one worker against two
    assert without_timings(records(out)) == without_timings(records(out_first))
    done = {r["question_id"] for r in kept}
    for qid in done:  # the finished ones were not run again
        assert next(r for r in records(out) if r["question_id"] == qid)["timings"] == \
            next(r for r in kept if r["question_id"] == qid)["timings"]


def test_judge_noise_is_seeded_and_flips_verdicts(first, data, dsn, capsys):
    _, out_first = first
    clean = {r["question_id"]: r for r in records(out_first)}
    fast = ("--limit", str(len(TASK_IDS)))  # the superhero tasks, not the slow one
    always = run_bench(capsys, *bench_args(data, dsn, data["root"] / "p1", "--judge-noise", "1",
                                           *fast))
    assert always["judge_noise"] == 1.0
    flipped = 0
    def first_duels(record):  # each pair's first instance (a pair may be separated again)
        firsts = {}
        for d in record.get("duels", []):
            firsts.setdefault((d["a"], d["b"]), d)
        return firsts

    for r in records(data["root"] / "p1"):
        noisy, plain = first_duels(r), first_duels(clean[r["question_id"]])
        for pair in noisy.keys() & plain.keys():
            duel, before = noisy[pair], plain[pair]
            if duel["separation"] == "separated" and before["verdict"] in ("a", "b"):
                assert duel["verdict"] != before["verdict"]
                flipped += 1
    assert flipped >= 2
    assert always["correct"]["tournament"] < first[0]["correct"]["tournament"]
    half = [run_bench(capsys, *bench_args(data, dsn, data["root"] / f"half{i}",
                                          "--judge-noise", "0.5", "--seed", "7", *fast))
            for i in (1, 2)]
    assert comparable(half[0]) == comparable(half[1])
    assert without_timings(records(data["root"] / "half1")) == \
        without_timings(records(data["root"] / "half2"))


def test_llm_baselines_run_through_the_harness(data, dsn, superhero, capsys):
    def reply(request) -> str:
        system = request.body["messages"][0]["content"]
        if '"choice"' in system:
            return '{"choice": 1}'
        return '{"better": "B"}' if '"better"' in system else '{"rows": [[0]]}'  # the judge

    cache = data["root"] / "llm-cache.sqlite"
    with ChatServer() as chat:
        chat.respond_with(reply)
        args = bench_args(
            data, dsn, data["root"] / "llm", "--limit", "3", "--judge", "llm", "--baselines",
            "consistency,naive,pairwise", "--llm-url", chat.base_url, "--llm-model", "m",
            "--llm-cache", str(cache))
        summary = run_bench(capsys, *args)
        calls = len(chat.chat_requests())
        again = run_bench(capsys, *args, "--force")
        calls_again = len(chat.chat_requests()) - calls
    assert summary["judge"] == "llm"
    assert set(summary["accuracy"]) == {"tournament", "consistency", "naive", "pairwise",
                                        "upper_bound"}
    assert summary["baseline_calls"]["naive"] == 3 * 2  # two agreeing votes settle a task
    assert summary["baseline_calls"]["pairwise"] == 3 * 2  # one pair a task, settled by two
    assert summary["judge_calls"] == 2 * summary["judged_duels"]  # two agreeing votes a duel
    assert calls == summary["judge_calls"] + sum(summary["baseline_calls"].values())
    assert summary["judge_completions"] == {"sent": summary["judge_calls"], "cached": 0}
    assert summary["judge_tokens"]["prompt"] == 10 * summary["judge_calls"]  # usage's figure
    # Repeated: the judge's completions come from the cache (the baselines ask again).
    assert again["judge_completions"] == {"sent": 0, "cached": summary["judge_calls"]}
    assert calls_again == sum(again["baseline_calls"].values())
    assert cache.stat().st_size > 0
    for r in records(data["root"] / "llm"):
        assert r["choices"]["naive"] == 0  # the first candidate listed
        groups = r["baseline_runs"]["pairwise"]["duels"]
        assert r["choices"]["pairwise"] == groups[-1]["b"]  # B always wins: the last one


@pytest.mark.parametrize("change, message", [
    (lambda d: d["tasks"].unlink(), "tasks file {tasks}: no such file"),
    (lambda d: d["candidates"].write_text('{"1": ["SELECT 1"],}'),
     "candidates file {candidates}: not valid JSON: Expecting property name enclosed in double "
     "quotes at line 1, column 20"),
    (lambda d: d["candidates"].write_text('["SELECT 1"]'), "expected an object"),
    (lambda d: d["tasks"].write_text('[{"question_id": 1, "db_id": "x"}]'),
     "tasks file {tasks}, item 0: missing question, SQL"),
    (lambda d: d["tasks"].write_text(json.dumps([{**SLOW, "db_id": "formula_1"}])),
     "databases not found under {databases} (expected {databases}/<db_id>/<db_id>.sqlite): "
     "formula_1 (1 tasks)"),
    (lambda d: d["tasks"].write_text(json.dumps([SLOW, SLOW])), "999001 appears twice"),
    (lambda d: d["tasks"].write_text(json.dumps([{**SLOW, "question_id": 5}])),
     "no task of {tasks} has candidates in {candidates}"),
])
def test_bad_inputs_are_clear_errors(tmp_path, capsys, change, message):
    data = {"tasks": tmp_path / "tasks.json", "candidates": tmp_path / "candidates.json",
            "databases": tmp_path / "dbs"}
    data["tasks"].write_text(json.dumps([SLOW]))
    data["candidates"].write_text(json.dumps({str(SLOW["question_id"]): SLOW_CANDIDATES}))
    data["databases"].mkdir()
    change(data)
    # No server is named: the inputs are refused before one would be needed.
    assert main(bench_args(data, "postgresql://nobody@127.0.0.1:1/none", tmp_path / "o")) == 1
    err = capsys.readouterr().err
    assert message.format(**data) in err


def test_results_are_never_overwritten_or_resumed_with_other_settings(first, data, dsn, capsys):
    _, out = first
    assert main(bench_args(data, dsn, out)) == 1
    assert "holds the results of an earlier run; pass --resume" in capsys.readouterr().err
    assert main(bench_args(data, dsn, out, "--resume", "--seed", "3")) == 1
    assert "cannot resume" in capsys.readouterr().err


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_redraws_on_a_terminal_and_prints_lines_elsewhere():
    log = io.StringIO()
    progress = Progress(4, done=1, stream=log)
    progress.count(scored=True, hit=True)  # a task finished before a resume
    progress.update(scored=True, hit=False)
    progress.update(scored=False, hit=False)  # its gold failed: not in the accuracy
    progress.update(scored=True, hit=True)
    lines = log.getvalue().splitlines()
    assert lines[0].startswith("[############------------] 2/4 tasks, tournament accuracy "
                               "50.0% (1/2), elapsed 0s, left ")
    assert lines[-1].startswith("[########################] 4/4 tasks, tournament accuracy "
                                "66.7% (2/3)") and lines[-1].endswith("left 0s")
    assert len(lines) == 2  # plain lines are spaced out in time; the last always comes
    screen = Terminal()
    progress = Progress(2, stream=screen)
    progress.update(scored=True, hit=True)
    progress.update(scored=True, hit=True)
    progress.close()
    assert screen.getvalue().count("\r") == 2 and screen.getvalue().endswith("left 0s\n")


def test_correct_on_d_is_birds_rule_with_numbers_as_the_tournament_groups_them():
    """A result counts as the gold's as a set of row tuples (column order counts,
    duplicates do not, a NULL row is a row), numbers of any kind equal to 9 significant
    digits: transpiled to PostgreSQL, ``x * 1.0 / n`` divides in numeric where the gold's
    ``CAST(x AS REAL) / n`` divides in double precision, one value in SQLite (yardstick
    codebase_community 629 and toxicology 201 on generated candidates: the tournament's
    pick, in the gold's group, was scored wrong)."""
    from decimal import Decimal

    from siselect.client.bench.task import bird_equal

    assert bird_equal([(Decimal("1.5277777777777778"),)], [(1.5277777777777777,)])
    assert bird_equal([(1,), (1,)], [(Decimal("1.0"),)])
    assert not bird_equal([(1.5277778,)], [(1.5277777777777777,)])  # a float4, 8 digits
    assert not bird_equal([(None,)], [])
    assert not bird_equal([(1, "a")], [("a", 1)])
