"""Where a tournament's time goes inside the server (issue 18): scale.py's superhero tasks run
in one backend, the tournament's Python under cProfile and every statement it sends timed,
after a first pass that warms the backend's caches. Prints the seconds by kind of
statement (catalog and other internal queries, runs on D, witness sketches, other
statements reading witnesses on D, tests on a D'), the Python time besides, each task's
seconds, and the siselect functions with the most cumulative time; writes the profile
(``tournament.prof``, for ``python -m pstats``) and the statements (``statements.json``)
to ``--out``.

    python bench/server_profile.py [--scale 100] [--tasks 20] [--package plpy] [--top 30]

``--package``: a folder holding a ``siselect`` package that the backend runs instead of the
installed one (a work tree's ``plpy``). Needs a superuser DSN: the profiler is installed
into the backend by a PL/Python block.
"""

import json
import os
import pstats
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("SISELECT_HOME", "/var/tmp/siselect-scale")
sys.path.insert(0, os.path.dirname(__file__))

import psycopg  # noqa: E402

from common import parser  # noqa: E402
from scale import call_tournament, superhero_scale, use_package, warm_up  # noqa: E402

# Installed in the backend: the tournament's entry point profiled while GD['on'], and the
# executor's two doors to SPI timed (candidate-derived text, siselect's own queries).
PROFILER = """
DO $$
import cProfile, time
from siselect.entry_points import ENTRY_POINTS
from siselect.runtime.plpython import PlpyExecutor
GD['profile'] = profile = cProfile.Profile()
GD['statements'] = statements = []
entry = ENTRY_POINTS['tournament']
def profiled(*args, **kwargs):
    if GD.get('on'):
        profile.enable()
    try:
        return entry(*args, **kwargs)
    finally:
        profile.disable()
ENTRY_POINTS['tournament'] = profiled
for door in ('_fetch', 'run_internal'):
    def timed(self, sql, *args, _door=getattr(PlpyExecutor, door), _name=door, **kwargs):
        started = time.perf_counter()
        try:
            return _door(self, sql, *args, **kwargs)
        finally:
            if GD.get('on'):
                statements.append((time.perf_counter() - started, _name, sql))
    setattr(PlpyExecutor, door, timed)
$$ LANGUAGE plpython3u
"""
SAVE = """
DO $$
import json
GD['profile'].dump_stats(%(prof)s)
with open(%(statements)s, 'w') as out:
    json.dump(GD['statements'], out)
$$ LANGUAGE plpython3u
"""


def kind(door: str, sql: str) -> str:
    """What a statement is for, read off its text (the forms siselect writes)."""
    if door == "run_internal":
        return "catalog and internal"
    if sql.startswith("SELECT array_agg(k) AS k"):
        return "witness sketches"
    if "ctid = ANY" in sql:
        return "tests on a D'"
    if "tidsend" in sql or "hashtid" in sql:
        return "other witness reads on D"
    return "runs on D (and their checks)"


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--scale", type=int, default=100)
    p.add_argument("--tasks", type=int, default=20)
    p.add_argument("--package", type=Path, help="a folder holding the siselect package to run")
    p.add_argument("--top", type=int, default=30, help="functions listed")
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "out" / "profile")
    args = p.parse_args()
    dsn, schema, tasks = superhero_scale(args, args.scale, args.tasks)
    # The server writes the files as its own user: into a folder it may write, then moved.
    shared = Path(tempfile.mkdtemp(prefix="siselect-profile-", dir="/tmp"))
    shared.chmod(0o777)
    args.out.mkdir(parents=True, exist_ok=True)
    seconds: dict[int, float] = {}
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            if args.package is not None:
                use_package(conn, args.package)
            warm_up(conn)
            conn.execute(PROFILER)
            for profiled in (False, True):
                conn.execute(f"DO $$ GD['on'] = {profiled} $$ LANGUAGE plpython3u")
                for task in tasks:
                    started = time.perf_counter()
                    call_tournament(conn, task, schema)
                    if profiled:
                        seconds[task["question_id"]] = time.perf_counter() - started
            conn.execute(SAVE % {"prof": repr(str(shared / "tournament.prof")),
                                 "statements": repr(str(shared / "statements.json"))})
        for name in ("tournament.prof", "statements.json"):
            shutil.copy(shared / name, args.out / name)
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    report(args, seconds)


def report(args, seconds: dict[int, float]) -> None:
    statements = json.loads((args.out / "statements.json").read_text())
    spent, count = Counter(), Counter()
    for took, door, sql in statements:
        spent[kind(door, sql)] += took
        count[kind(door, sql)] += 1
    total = sum(seconds.values())
    print(f"superhero x{args.scale}, {len(seconds)} tasks, profiled pass {total:.2f} s "
          "(cProfile slows the Python part)")
    for name, took in spent.most_common():
        print(f"  {name:32} {took:7.2f} s in {count[name]:5} statements")
    print(f"  {'Python besides':32} {total - sum(spent.values()):7.2f} s")
    print("  per task: " + " ".join(f"{q}:{s:.2f}" for q, s in seconds.items()))
    stats = pstats.Stats(str(args.out / "tournament.prof"))
    stats.sort_stats("cumulative").print_stats("siselect/", args.top)
    print(f"profile: {args.out / 'tournament.prof'}; statements: {args.out / 'statements.json'}")


if __name__ == "__main__":
    main()
