"""Issue 7's load figures: many sessions running tournaments on one database at once
must give the same results as one session at a time. Prints the throughput (serial and
concurrent) and the peak memory of a backend.

    python bench/load.py [--sessions 16] [--k 5] [--tasks 31] [--rounds 1] [--dsn DSN]

Every session runs every task (each starting at a different one, so that different
tournaments overlap). Memory is read from /proc/<pid>/status of the sessions' backends,
so it needs the server on this machine and the right to read its processes (root or the
server's OS user): VmHWM is the peak resident size (it counts the shared buffers a
backend touched), RssAnon sampled every 50 ms approximates the peak private memory.
"""

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

TOURNAMENT = (
    "SELECT siselect.tournament(%s, %s, evidence => %s, judge => %s, reference => %s, "
    "dialect => %s, search_path => %s)"
)
VOLATILE_KEYS = frozenset({"timings", "seconds", "attempts"})


@dataclass
class Job:
    """One call: a name (to compare runs), SQL and its parameters."""

    name: str
    sql: str
    params: tuple


@dataclass
class Session:
    pid: int
    results: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass
class LoadRun:
    sessions: list[Session]
    seconds: float  # wall time of the concurrent part
    peak_hwm_kb: int | None = None  # max VmHWM over the backends
    peak_anon_kb: int | None = None  # max sampled RssAnon over the backends

    @property
    def calls(self) -> int:
        return sum(len(s.results) + len(s.errors) for s in self.sessions)


def without_timings(value: Any) -> Any:
    """A result without its timings, for comparing runs."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def tournament_jobs(tasks: list[dict], schema: str, judge: str = "reference") -> list[Job]:
    """One tournament per BIRD task (SQLite candidates; the gold query as reference)."""
    return [
        Job(f"task {t['question_id']}", TOURNAMENT,
            (t["candidates"], t["question"], t.get("evidence"), judge,
             t["SQL"] if judge == "reference" else None, "sqlite", schema))
        for t in tasks
    ]


def backend_memory(pid: int) -> dict[str, int] | None:
    """VmHWM, VmRSS and RssAnon (kB) of a local process, or None when unreadable."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    figures = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmHWM", "VmRSS", "RssAnon"):
            figures[key] = int(rest.split()[0])
    return figures


def _run_jobs(conn: psycopg.Connection, jobs: list[Job], session: Session) -> None:
    started = time.perf_counter()
    for job in jobs:
        try:
            row = conn.execute(job.sql, job.params).fetchone()
            session.results[job.name] = row[0] if row else None
        except psycopg.Error as exc:
            session.errors[job.name] = f"{exc.sqlstate}: {exc.diag.message_primary}"
    session.seconds = time.perf_counter() - started


def run_serial(dsn: str, jobs: list[Job]) -> Session:
    """Every job once, one after the other, on one connection."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        session = Session(conn.info.backend_pid)
        _run_jobs(conn, jobs, session)
    return session


class _MemoryWatch:
    """Samples the memory of some backends until stopped."""

    def __init__(self, pids: list[int], interval: float = 0.05):
        self.pids, self.interval = pids, interval
        self.peak_anon: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _sample(self) -> list[dict[str, int]]:
        return [m for m in (backend_memory(p) for p in self.pids) if m]

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            for m in self._sample():
                self.peak_anon = max(self.peak_anon or 0, m.get("RssAnon", 0))

    def __enter__(self) -> "_MemoryWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def peak_hwm(self) -> int | None:
        figures = [m["VmHWM"] for m in self._sample() if "VmHWM" in m]
        return max(figures) if figures else None


def rotated(jobs: list[Job], start: int, rounds: int = 1) -> list[Job]:
    """``jobs`` ``rounds`` times, beginning at ``start`` (so sessions overlap differently)."""
    start %= max(len(jobs), 1)
    return (jobs[start:] + jobs[:start]) * rounds


def run_parallel(dsn: str, jobs: list[Job], sessions: int = 16, rounds: int = 1,
                 share: Callable[[int], list[Job]] | None = None) -> LoadRun:
    """``sessions`` connections at once, each running ``share(i)`` (default: every job,
    rotated by i); their backends stay up until their peak memory is read."""
    share = share or (lambda i: rotated(jobs, i, rounds))
    conns = [psycopg.connect(dsn, autocommit=True) for _ in range(sessions)]
    try:
        states = [Session(c.info.backend_pid) for c in conns]
        go = threading.Barrier(sessions + 1)

        def work(i: int) -> None:
            go.wait()
            _run_jobs(conns[i], share(i), states[i])

        threads = [threading.Thread(target=work, args=(i,), daemon=True)
                   for i in range(sessions)]
        for t in threads:
            t.start()
        with _MemoryWatch([s.pid for s in states]) as watch:
            go.wait()
            started = time.perf_counter()
            for t in threads:
                t.join()
            elapsed = time.perf_counter() - started
        return LoadRun(states, elapsed, watch.peak_hwm(), watch.peak_anon)
    finally:
        for c in conns:
            c.close()


def mismatches(serial: Session, run: LoadRun) -> list[str]:
    """Where a concurrent session's result or error differs from the serial one."""
    found = []
    for i, session in enumerate(run.sessions):
        for name, result in session.results.items():
            if name not in serial.results:
                found.append(f"session {i}, {name}: succeeded, serially it failed")
            elif without_timings(result) != without_timings(serial.results[name]):
                found.append(f"session {i}, {name}: a different result")
        for name, error in session.errors.items():
            if serial.errors.get(name) != error:
                found.append(f"session {i}, {name}: {error}")
    return found


def _mb(kb: int | None) -> str:
    return "n/a (server processes not readable here)" if kb is None else f"{kb / 1024:.0f} MB"


def main() -> None:
    sys.path.insert(0, os.path.dirname(__file__))
    from common import parser, superhero_executor, superhero_tasks

    p = parser(__doc__)
    p.add_argument("--sessions", type=int, default=16)
    p.add_argument("--k", type=int, default=5, help="candidates per task (rollouts)")
    p.add_argument("--tasks", type=int, default=31, help="how many superhero tasks")
    p.add_argument("--rounds", type=int, default=1, help="times each session runs the tasks")
    p.add_argument("--judge", choices=["reference", "none"], default="reference")
    args = p.parse_args()
    conn, _ = superhero_executor(args)  # loads superhero when needed
    dsn = conn.info.dsn
    conn.close()
    jobs = tournament_jobs(superhero_tasks(args.k)[: args.tasks], "superhero", args.judge)
    serial = run_serial(dsn, jobs)
    run = run_parallel(dsn, jobs, args.sessions, args.rounds)
    bad = mismatches(serial, run)
    duels = sum(len(r.get("duels", [])) for r in serial.results.values())
    print(f"superhero, K={args.k}, {len(jobs)} tournaments ({duels} duels), judge {args.judge}")
    print(f"  serial: {len(jobs) / serial.seconds:.2f} tournaments/s "
          f"({serial.seconds:.1f} s; {len(serial.errors)} failed)")
    for name, error in list(serial.errors.items())[:3]:
        print(f"    {name} failed: {error}")
    print(f"  {args.sessions} sessions at once: {run.calls / run.seconds:.2f} tournaments/s "
          f"({run.calls} in {run.seconds:.1f} s)")
    print(f"  peak memory of a backend: {_mb(run.peak_hwm_kb)} resident (VmHWM), "
          f"{_mb(run.peak_anon_kb)} private (RssAnon)")
    print(f"  results equal to the serial run: {'yes' if not bad else 'NO'}")
    for line in bad[:20]:
        print(f"    {line}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
