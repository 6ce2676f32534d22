"""``siselect bench --dialect postgres`` against the SQLite run of the same tasks: gold and
candidates transpiled with siselect's transpiler into BIRD mini-dev's PostgreSQL task format,
run on the loaded schemas (nothing loaded by the run), and the SQLite originals run as
``siselect bench`` does. Prints both summaries' figures side by side and the tasks whose
verdicts differ (goal: none).

By default the superhero tasks at K rollouts (files in bench/out/bench-postgres-k<K>/); with
``--yardstick DIR``, every database of a finished yardstick run's folder (its
``inputs/synthetic/<db>/`` tasks and candidates, its ``data/``): schemas of mixed-case
names, as BIRD's own, where the transpiled text must quote what PostgreSQL would fold
(files in DIR/postgres/).

    python3 bench/bench_postgres.py [--k 5] [--yardstick DIR [--limit N]] [--workers 1]
                                    [--dsn DSN]
"""

import json
import sys
from pathlib import Path

import psycopg

from common import DATA, SUPERHERO, TASKS, bench_settings, parser
from siselect.client.bench.postgres_source import PostgresSource
from siselect.client.bench.run import BenchRun, run_bench
from siselect.client.loader import load
from siselect.client.options import info, resolve_dsn
from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.runtime.catalog import load_catalog
from siselect.sqltext.transpile import to_postgres

FIGURES = ("tasks", "scored", "gold_failed", "pairs", "separated", "separation_rate",
           "accuracy", "correct", "instance_rows", "separation_status")
MINI_DEV_KEYS = ("question_id", "db_id", "question", "evidence", "SQL", "difficulty")


def superhero_inputs(k: int) -> tuple[list[dict], dict[str, list[str]], dict[str, Path]]:
    """The superhero tasks with candidates at K rollouts, their candidates, its file."""
    path = DATA / "siselection" / "candidates" / str(k) / "stage1.json"
    tasks = json.loads(TASKS.read_text())
    ids = {str(t["question_id"]) for t in tasks}
    candidates = {q: c for q, c in json.loads(path.read_text()).items() if q in ids}
    return tasks, candidates, {"superhero": SUPERHERO}


def yardstick_inputs(root: Path, limit: int | None
                     ) -> tuple[list[dict], dict[str, list[str]], dict[str, Path]]:
    """Every database's tasks (its first ``limit`` by id) and candidates of a yardstick
    folder, and their SQLite files."""
    tasks: list[dict] = []
    candidates: dict[str, list[str]] = {}
    files = {}
    for folder in sorted((root / "inputs" / "synthetic").iterdir()):
        db = folder.name
        kept = sorted(json.loads((folder / "tasks.json").read_text()),
                      key=lambda t: t["question_id"])
        tasks += kept[:limit]
        candidates.update(json.loads((folder / "candidates.json").read_text()))
        files[db] = root / "data" / db / f"{db}.sqlite"
    return tasks, candidates, files


def postgres_files(dsn: str, tasks: list[dict], candidates: dict[str, list[str]], out: Path
                   ) -> tuple[Path, Path, Path, Path]:
    """The SQLite tasks and candidates files, and both transpiled to PostgreSQL on each
    task's loaded schema."""
    catalogs = {}
    for db in sorted({t["db_id"] for t in tasks}):
        with connect(dsn, db) as conn:
            catalogs[db] = load_catalog(PsycopgExecutor(conn))
    db_of = {str(t["question_id"]): t["db_id"] for t in tasks}
    pg_tasks = [{**{key: t.get(key) for key in MINI_DEV_KEYS},
                 "SQL": to_postgres(t["SQL"], "sqlite", catalogs[t["db_id"]])} for t in tasks]
    pg_candidates = {q: [to_postgres(s, "sqlite", catalogs[db_of[q]]) for s in c]
                     for q, c in candidates.items() if q in db_of}
    out.mkdir(parents=True, exist_ok=True)
    files = (out / "tasks_sqlite.json", out / "candidates_sqlite.json",
             out / "mini_dev_postgresql.json", out / "candidates_postgresql.json")
    files[0].write_text(json.dumps(tasks, indent=1))
    files[1].write_text(json.dumps(candidates))
    files[2].write_text(json.dumps(pg_tasks, indent=1))
    files[3].write_text(json.dumps(pg_candidates, indent=1))
    return files


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--yardstick", type=Path, metavar="DIR",
                   help="a yardstick run's folder (bench/yardstick/run.py --out DIR)")
    p.add_argument("--limit", type=int, help="--yardstick: the first N tasks of each database")
    p.add_argument("--workers", type=int, default=1)
    args = p.parse_args()
    dsn = resolve_dsn(args)
    if args.yardstick:
        tasks, candidates, sqlite_files = yardstick_inputs(args.yardstick, args.limit)
        out, databases, label = args.yardstick / "postgres", args.yardstick / "data", \
            f"yardstick {args.yardstick}"
    else:
        tasks, candidates, sqlite_files = superhero_inputs(args.k)
        out, databases, label = (Path(__file__).resolve().parent / "out" /
                                 f"bench-postgres-k{args.k}", DATA / "bird" / "dev_databases",
                                 f"superhero tasks at K={args.k}")
    with psycopg.connect(dsn, autocommit=True) as admin:
        for db, path in sqlite_files.items():
            load(admin, path, db)
    sqlite_tasks, sqlite_candidates, pg_tasks, pg_candidates = postgres_files(
        dsn, tasks, candidates, out)
    summaries = {}
    for dialect in ("sqlite", "postgres"):
        if dialect == "sqlite":
            settings = bench_settings(sqlite_tasks, sqlite_candidates, "--dialect", dialect)
            run = BenchRun(sqlite_tasks, sqlite_candidates, databases, out / dialect, dsn,
                           settings, workers=args.workers, force=True)
        else:
            settings = bench_settings(pg_tasks, pg_candidates, "--dialect", dialect)
            run = BenchRun(pg_tasks, pg_candidates, None, out / dialect, dsn,  # type: ignore[arg-type]
                           settings, workers=args.workers, force=True, source=PostgresSource())
        summaries[dialect] = run_bench(run, info)
    print(f"{label}, reference judge, seed 0")
    print(f"{'figure':20s} {'SQLite run':>32s} {'PostgreSQL run':>32s}")
    for figure in FIGURES:
        a, b = (json.dumps(summaries[d][figure], sort_keys=True) for d in ("sqlite", "postgres"))
        print(f"{figure:20s} {a:>32s} {b:>32s}{'' if a == b else '   DIFFERS'}")
    for figure in ("pair_seconds", "elapsed_seconds"):
        print(f"{figure:20s} {json.dumps(summaries['sqlite'][figure]):>32s} "
              f"{json.dumps(summaries['postgres'][figure]):>32s}")
    rows = {d: {r["question_id"]: r for r in map(json.loads, (out / d / "results.jsonl")
                                                  .read_text().splitlines())}
            for d in summaries}
    differ = [q for q, r in rows["sqlite"].items()
              if (r.get("correct"), r.get("choices"), r.get("hits")) !=
              (rows["postgres"][q].get("correct"), rows["postgres"][q].get("choices"),
               rows["postgres"][q].get("hits"))]
    print(f"tasks whose correct candidates, choices or hits differ: {len(differ)} {differ}")
    same = all(summaries["sqlite"][f] == summaries["postgres"][f] for f in FIGURES)
    return 0 if same and not differ else 1


if __name__ == "__main__":
    sys.exit(main())
