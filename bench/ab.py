"""Two versions of siselect's package on the same scale tasks (issue 18), for a change too
small to show in one run of scale.py: on this shared machine a run's wall time moves by a
third from one run to the next, and processor time moves with it. So each version runs in
its own warm backend, the versions alternate task by task (their order swapped every
round), and each task counts its fastest of ``--repeat`` runs; printed: both sums, their
ratio, the tasks, and every task whose winner differs between the versions.

    python bench/ab.py HEAD~1 HEAD [--scale 100] [--repeat 5] [--tasks 20]

A version is a git revision of this repository (its ``plpy`` exported to a folder the server
can read) or a folder holding a ``siselect`` package (a work tree's ``plpy``). The superhero
copy of scale.py at ``--scale`` is built first if missing. Needs a superuser DSN, as
``scale.py --server-python`` does: the server runs those folders' code.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("SISELECT_HOME", "/var/tmp/siselect-scale")
sys.path.insert(0, os.path.dirname(__file__))

import psycopg  # noqa: E402

from common import parser  # noqa: E402
from scale import call_tournament, superhero_scale, use_package, warm_up  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def package_folder(version: str, exported: list[Path]) -> Path:
    """The folder holding ``version``'s ``siselect`` package, readable by the server; a
    folder this exports is added to ``exported`` (removed at the end)."""
    given = Path(version)
    if (given / "siselect").is_dir():
        return given
    folder = Path(tempfile.mkdtemp(prefix="siselect-ab-", dir="/tmp"))
    exported.append(folder)
    folder.chmod(0o755)  # the server's user reads it (it cannot read under /root)
    archive = subprocess.run(["git", "archive", version, "plpy"], cwd=ROOT, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder / "plpy"


def main() -> None:
    p = parser(__doc__)
    p.add_argument("versions", nargs=2, help="two git revisions or package folders")
    p.add_argument("--scale", type=int, default=100)
    p.add_argument("--repeat", type=int, default=5, help="runs of each task and version")
    p.add_argument("--tasks", type=int, default=20)
    args = p.parse_args()
    dsn, schema, tasks = superhero_scale(args, args.scale, args.tasks)
    exported: list[Path] = []
    try:
        compare(args, dsn, schema, tasks, [package_folder(v, exported) for v in args.versions])
    finally:
        for folder in exported:
            shutil.rmtree(folder, ignore_errors=True)


def compare(args, dsn: str, schema: str, tasks: list[dict], folders: list[Path]) -> None:
    """Run and print the comparison (see the module)."""
    conns = []
    for folder in folders:
        conn = psycopg.connect(dsn, autocommit=True)
        use_package(conn, folder)
        warm_up(conn)
        conns.append(conn)
    fastest: list[dict[int, float]] = [{}, {}]
    winners: list[dict[int, int | str | None]] = [{}, {}]
    for round_ in range(args.repeat):
        for task in tasks:
            order = (0, 1) if round_ % 2 == 0 else (1, 0)
            for v in order:
                q = task["question_id"]
                started = time.perf_counter()
                try:
                    result = call_tournament(conns[v], task, schema)
                except psycopg.Error as exc:  # told, and left out of both sums below
                    winners[v][q] = f"error {exc.sqlstate}"
                    continue
                seconds = time.perf_counter() - started
                fastest[v][q] = min(fastest[v].get(q, seconds), seconds)
                winners[v].setdefault(q, (result.get("winner") or {}).get("index"))
        print(f"round {round_ + 1} of {args.repeat} done", file=sys.stderr, flush=True)
    for conn in conns:
        conn.close()
    failed = {q for w in winners for q, got in w.items() if isinstance(got, str)}
    tasks = [t for t in tasks if t["question_id"] not in failed]
    for q in sorted(failed):
        print(f"  task {q} left out: " + ", ".join(
            f"{v} {w.get(q)}" for v, w in zip(args.versions, winners, strict=True)))
    sums = [sum(f[t["question_id"]] for t in tasks) for f in fastest]
    print(f"superhero x{args.scale}, {len(tasks)} tasks compared, fastest of {args.repeat} "
          "runs each")
    for version, total in zip(args.versions, sums, strict=True):
        print(f"  {version}: {total:.3f} s")
    print(f"  second / first: {sums[1] / sums[0]:.3f}")
    print("  per task (first / second): " + " ".join(
        f"{t['question_id']}:{fastest[0][t['question_id']]:.2f}/"
        f"{fastest[1][t['question_id']]:.2f}" for t in tasks))
    differ = [t["question_id"] for t in tasks
              if winners[0][t["question_id"]] != winners[1][t["question_id"]]]
    print(f"  winners differ: {differ or 'none'}")


if __name__ == "__main__":
    main()
