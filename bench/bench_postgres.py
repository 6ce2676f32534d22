"""``siselect bench --dialect postgres`` on the superhero schema against the SQLite run of the
same tasks: the superhero tasks at K rollouts, gold and candidates transpiled with
siselect's transpiler into BIRD mini-dev's PostgreSQL task format, run on the loaded schema
(nothing loaded by the run), and the SQLite originals run as ``siselect bench`` does. Prints
both summaries' figures side by side and the tasks whose verdicts differ (goal: none).
Files go to bench/out/bench-postgres-k<K>/ (mini_dev_postgresql.json, candidates, both runs).

    python3 bench/bench_postgres.py [--k 5] [--workers 1] [--dsn DSN]
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


def postgres_files(dsn: str, k: int, out: Path) -> tuple[Path, Path, Path]:
    """The SQLite candidates file, and the tasks and candidates transpiled to PostgreSQL."""
    candidates_path = DATA / "siselection" / "candidates" / str(k) / "stage1.json"
    tasks = json.loads(TASKS.read_text())
    ids = {str(t["question_id"]) for t in tasks}
    candidates = {q: c for q, c in json.loads(candidates_path.read_text()).items() if q in ids}
    with connect(dsn, "superhero") as conn:
        catalog = load_catalog(PsycopgExecutor(conn))
    pg_tasks = [{**{key: t.get(key) for key in MINI_DEV_KEYS},
                 "SQL": to_postgres(t["SQL"], "sqlite", catalog)} for t in tasks]
    pg_candidates = {q: [to_postgres(s, "sqlite", catalog) for s in c]
                     for q, c in candidates.items()}
    out.mkdir(parents=True, exist_ok=True)
    files = (out / "candidates_sqlite.json", out / "mini_dev_postgresql.json",
             out / "candidates_postgresql.json")
    files[0].write_text(json.dumps(candidates))
    files[1].write_text(json.dumps(pg_tasks, indent=1))
    files[2].write_text(json.dumps(pg_candidates, indent=1))
    return files


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--workers", type=int, default=1)
    args = p.parse_args()
    dsn = resolve_dsn(args)
    with psycopg.connect(dsn, autocommit=True) as admin:
        load(admin, SUPERHERO, "superhero")
    out = Path(__file__).resolve().parent / "out" / f"bench-postgres-k{args.k}"
    sqlite_candidates, pg_tasks, pg_candidates = postgres_files(dsn, args.k, out)
    summaries = {}
    for dialect in ("sqlite", "postgres"):
        if dialect == "sqlite":
            settings = bench_settings(TASKS, sqlite_candidates, "--dialect", dialect)
            run = BenchRun(TASKS, sqlite_candidates, DATA / "bird" / "dev_databases",
                           out / dialect, dsn, settings, workers=args.workers, force=True)
        else:
            settings = bench_settings(pg_tasks, pg_candidates, "--dialect", dialect)
            run = BenchRun(pg_tasks, pg_candidates, None, out / dialect, dsn,  # type: ignore[arg-type]
                           settings, workers=args.workers, force=True, source=PostgresSource())
        summaries[dialect] = run_bench(run, info)
    print(f"superhero tasks at K={args.k}, reference judge, seed 0")
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
