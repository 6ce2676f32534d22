"""Issue 7, point 5: 16 sessions running tournaments on one database at once give the
results one session gives alone, fail no differently, and leave nothing behind. The
harness is bench/load.py (which prints the figures over all superhero tasks); this test
runs a short share of it and reports throughput and peak backend memory."""

import pytest

# The shared fixtures (admin, chat, hostile, probe, ...) load as a plugin, once;
# their module must be marked for assertion rewriting before it is imported.
pytest.register_assert_rewrite("safety_fixtures")
pytest_plugins = ["safety_fixtures"]

from safety_fixtures import assert_clean, bench_module, db_state, owners_sql  # noqa: E402

SESSIONS = 16


def test_sixteen_sessions_give_the_serial_results(dsn, admin, superhero, hostile):
    load = bench_module("load")
    # The first two superhero tasks with 5 candidates each, and one on hostile data.
    tasks = bench_module("common").superhero_tasks(5)[:2]
    jobs = load.tournament_jobs(tasks, superhero)
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
