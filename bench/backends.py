"""Issue 6's figures: the lineage and ProvSQL backends side by side, on the same pairs of
representatives of the superhero tasks, in one run: time per pair (median, p95, and the
per-pair ratio ProvSQL / lineage), the witness phase alone, instance sizes, separation
rate, and the pairs ProvSQL could not serve, with why.

    python bench/backends.py [--k 24] [--dsn DSN | --provsql-home DIR]

The server must preload ProvSQL (shared_preload_libraries = 'provsql'). Without --dsn, a
private cluster is started under --provsql-home (default /tmp/siselect-provsql-bench).
"""

import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, __import__("os").path.dirname(__file__))

import psycopg  # noqa: E402

from common import SUPERHERO, parser, summary, superhero_tasks  # noqa: E402
from separation import pairs_of  # noqa: E402
from siselect.client.bench.metrics import separation_rate  # noqa: E402
from siselect.client.embedded import Cluster  # noqa: E402
from siselect.client.loader import load  # noqa: E402
from siselect.client.pgexec import PsycopgExecutor, connect  # noqa: E402
from siselect.client.provsql_cmd import enable  # noqa: E402
from siselect.instances.pair import Pair  # noqa: E402
from siselect.instances.separate import Options, separate_pair  # noqa: E402
from siselect.runtime.catalog import load_catalog  # noqa: E402

BACKENDS = ("lineage", "provsql")


def provsql_server(args) -> tuple[str, Cluster | None]:
    """The DSN to use, and the private cluster this run started (to stop it at the end)."""
    if args.dsn:
        return args.dsn, None
    cluster = Cluster(Path(args.provsql_home), {"shared_preload_libraries": "provsql"})
    started = cluster.start()
    with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'bench'").fetchone():
            conn.execute("CREATE DATABASE bench")
    return cluster.dsn("bench"), cluster if started else None


def prepared(dsn: str) -> tuple[psycopg.Connection, PsycopgExecutor]:
    """Superhero loaded and enabled for ProvSQL (enable refreshes the token mapping)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        load(conn, SUPERHERO, "superhero")
    with connect(dsn, "superhero") as conn:
        enable(conn, "superhero")
    conn = connect(dsn, "superhero", statement_timeout_ms=120_000)
    return conn, PsycopgExecutor(conn)


def reason_kind(reason: str) -> str:
    """The reason without the query label, shortened, to count like with like."""
    for label in ("q1: ", "q2: "):
        reason = reason.replace(label, "")
    return reason if len(reason) <= 120 else reason[:117] + "..."


def run_pairs(executor, catalog, pairs, max_rows: int) -> dict[str, list[dict]]:
    """Both backends on each pair, one after the other, so both see the same cache."""
    results: dict[str, list[dict]] = {b: [] for b in BACKENDS}
    for a, b in pairs:
        for backend in BACKENDS:
            pair = Pair(executor, catalog, (a.tree, b.tree))
            started = time.perf_counter()
            result = separate_pair(
                pair, a.answer, b.answer, Options(backend=backend, max_rows=max_rows)
            )
            result["seconds"] = time.perf_counter() - started
            results[backend].append(result)
    return results


def report(results: dict[str, list[dict]], max_rows: int) -> None:
    searched = [i for i, r in enumerate(results["provsql"]) if "backend_reason" in r]
    served = [i for i in searched if results["provsql"][i]["backend"] == "provsql"]
    for backend in BACKENDS:
        rows = results[backend]
        statuses = Counter(r["status"] for r in rows)
        sizes = [r["rows"] for r in rows if r["status"] == "separated"]
        print(f"\nbackend {backend}: statuses {dict(statuses)}")
        rate = separation_rate(r["status"] for r in rows)
        rate = float("nan") if rate is None else rate
        print(f"  separation rate {rate:.1%} of {len(rows)} pairs "
              f"(at most {max_rows} rows)")
        s = summary(sizes)
        print(f"  instance rows: median {s['median']}, p95 {s['p95']}, max {s['max']}")
        for label, subset in (("all pairs searched", searched), ("pairs ProvSQL served", served)):
            t = summary([rows[i]["seconds"] for i in subset])
            w = summary([rows[i]["timings"].get("lineage", 0.0) for i in subset])
            print(f"  {label} ({len(subset)}): time per pair median {t['median'] * 1000:.1f} ms, "
                  f"p95 {t['p95'] * 1000:.1f} ms; witness phase median "
                  f"{w['median'] * 1000:.1f} ms, p95 {w['p95'] * 1000:.1f} ms")
    ratios = [results["provsql"][i]["seconds"] / results["lineage"][i]["seconds"] for i in served]
    wit = [results["provsql"][i]["timings"]["lineage"] / results["lineage"][i]["timings"]["lineage"]
           for i in served if results["lineage"][i]["timings"].get("lineage")]
    r, q = summary(ratios), summary(wit)
    print(f"\nProvSQL / lineage on the {len(served)} pairs ProvSQL served: time per pair "
          f"median {r['median']:.1f}x (p95 {r['p95']:.1f}x); witness phase median "
          f"{q['median']:.1f}x (p95 {q['p95']:.1f}x)")
    same = sum(results["provsql"][i]["status"] == results["lineage"][i]["status"] for i in served)
    print(f"same status with both backends: {same} of {len(served)} served pairs")
    declined = Counter(reason_kind(results["provsql"][i]["backend_reason"])
                       for i in searched if i not in served)
    print(f"ProvSQL could not serve {len(searched) - len(served)} of {len(searched)} pairs "
          "searched (lineage served them):")
    for why, count in declined.most_common():
        print(f"  {count:4d}  {why}")


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--k", type=int, default=24)
    p.add_argument("--max-rows", type=int, default=30)
    p.add_argument("--provsql-home", default="/tmp/siselect-provsql-bench")
    args = p.parse_args()
    dsn, started = provsql_server(args)
    try:
        conn, executor = prepared(dsn)
        catalog = load_catalog(executor)
        tasks = superhero_tasks(args.k)
        pairs = [pair for task in tasks for pair in pairs_of(executor, catalog, task)]
        print(f"superhero, K={args.k}: {len(tasks)} tasks, {len(pairs)} pairs of representatives")
        report(run_pairs(executor, catalog, pairs, args.max_rows), args.max_rows)
        conn.close()
    finally:
        if started:
            started.stop()


if __name__ == "__main__":
    main()
