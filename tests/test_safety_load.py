"""Issue 7, point 5: 16 sessions running tournaments on one database at once give the
results one session gives alone, fail no differently, and leave nothing behind. The
harness is bench/load.py (which prints the figures over all superhero tasks); this test
runs a short share of it and reports throughput and peak backend memory."""

import importlib.util
import json
from pathlib import Path

import pytest

# The shared fixtures (admin, chat, hostile, probe, ...) load as a plugin, once;
# their module must be marked for assertion rewriting before it is imported.
pytest.register_assert_rewrite("safety_fixtures")
pytest_plugins = ["safety_fixtures"]

from safety_fixtures import assert_clean, db_state, owners_sql  # noqa: E402

BENCH = Path(__file__).resolve().parent.parent / "bench"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SESSIONS = 16


def bench_module(name: str):
    """A script of bench/ as a module: the load harness is shared with the benchmark."""
    spec = importlib.util.spec_from_file_location(f"siselect_bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def superhero_tasks(count: int) -> list[dict]:
    """The first ``count`` superhero tasks that have candidates (5 rollouts)."""
    tasks = {t["question_id"]: t for t in
             json.loads((SHARED / "bird" / "dev_superhero.json").read_text())}
    candidates = json.loads(
        (SHARED / "siselection" / "candidates" / "5" / "stage1.json").read_text())
    return [dict(tasks[int(q)], candidates=c) for q, c in candidates.items()
            if int(q) in tasks][:count]


def test_sixteen_sessions_give_the_serial_results(dsn, admin, superhero, hostile):
    load = bench_module("load")
    jobs = load.tournament_jobs(superhero_tasks(2), superhero)
    jobs.append(load.Job(
        "hostile", load.TOURNAMENT,
        ([owners_sql(w) for w in ("score > 0", "score > 1", "score = 0")], "Which owners?",
         None, "none", None, "postgres", hostile),
    ))
    before = db_state(admin)
    serial = load.run_serial(dsn, jobs)
    assert serial.errors == {}
    assert all(r["winner"] is not None for r in serial.results.values())
    # Each session runs one tournament, all sixteen at once, five or six per task.
    run = load.run_parallel(dsn, jobs, SESSIONS, share=lambda i: [jobs[i % len(jobs)]])
    assert run.calls == SESSIONS
    assert load.mismatches(serial, run) == []
    if load.backend_memory(admin.info.backend_pid) is not None:
        assert run.peak_hwm_kb and run.peak_anon_kb
    print(f"\n{SESSIONS} sessions: {run.calls / run.seconds:.2f} tournaments/s concurrently, "
          f"{len(jobs) / serial.seconds:.2f} serially; peak backend memory "
          f"{(run.peak_hwm_kb or 0) / 1024:.0f} MB resident, "
          f"{(run.peak_anon_kb or 0) / 1024:.0f} MB private")
    assert_clean(admin, before)
