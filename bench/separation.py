"""Issue 3's figures: separation on every pair of representatives of the superhero tasks,
both strategies side by side, reproducibility, and a one-million-row join-and-aggregate pair.

    python bench/separation.py [--k 24] [--dsn DSN] [--big-rows 1000000]
"""

import itertools
import sys
import time
from collections import Counter

sys.path.insert(0, __import__("os").path.dirname(__file__))

from common import parser, summary, superhero_executor, superhero_tasks  # noqa: E402
from siselect.client.bench.metrics import separation_rate  # noqa: E402
from siselect.instances.pair import Pair  # noqa: E402
from siselect.instances.separate import Options, separate, separate_pair  # noqa: E402
from siselect.runtime.catalog import load_catalog  # noqa: E402
from siselect.selection.tournament import group, prepare  # noqa: E402


def pairs_of(executor, catalog, task):
    entries = prepare(executor, catalog, task["candidates"], "sqlite")
    groups = group(entries)
    for ga, gb in itertools.combinations(groups, 2):
        yield entries[ga.representative], entries[gb.representative]


def plain_seconds(executor, a, b) -> float:
    started = time.perf_counter()
    executor.run(a.tree.sql("postgres"), max_rows=100_000)
    executor.run(b.tree.sql("postgres"), max_rows=100_000)
    return time.perf_counter() - started


def run_strategy(executor, catalog, pairs, strategy: str, max_rows: int) -> dict:
    statuses: Counter = Counter()
    sizes, seconds, ratios, failures = [], [], [], []
    for a, b in pairs:
        plain = plain_seconds(executor, a, b)
        pair = Pair(executor, catalog, (a.tree, b.tree))
        started = time.perf_counter()
        result = separate_pair(
            pair, a.answer, b.answer, Options(strategy=strategy, max_rows=max_rows)
        )
        elapsed = time.perf_counter() - started
        statuses[result["status"]] += 1
        if result["status"] == "separated":
            sizes.append(result["rows"])
        elif result["status"] == "failed":
            failures.append((a.sql, b.sql, result.get("reason")))
        seconds.append(elapsed)
        ratios.append(elapsed / plain if plain > 0 else float("nan"))
    rate = separation_rate(statuses.elements())
    return {
        "statuses": dict(statuses),
        "pairs": len(pairs),
        "rate": float("nan") if rate is None else rate,
        "sizes": summary(sizes),
        "seconds": summary(seconds),
        "ratio": summary(ratios),
        "failures": failures,
    }


def big_database(conn, rows: int) -> None:
    """A generated schema ``bench_big``: customers and ``rows`` orders (created once)."""
    exists = conn.execute(
        "SELECT count(*) FROM pg_tables WHERE schemaname = 'bench_big' AND tablename = 'orders'"
    ).fetchone()[0]
    if exists and conn.execute("SELECT count(*) FROM bench_big.orders").fetchone()[0] == rows:
        return
    conn.execute("DROP SCHEMA IF EXISTS bench_big CASCADE")
    conn.execute("CREATE SCHEMA bench_big")
    conn.execute(
        "CREATE TABLE bench_big.customer (id bigint PRIMARY KEY, region text, segment text)"
    )
    conn.execute(
        "INSERT INTO bench_big.customer SELECT i, 'region ' || (i % 20), "
        "(ARRAY['retail','corporate','public'])[1 + i % 3] "
        "FROM generate_series(1, 100000) i"
    )
    conn.execute(
        "CREATE TABLE bench_big.orders (id bigint PRIMARY KEY, customer_id bigint "
        "REFERENCES bench_big.customer, amount double precision, status text)"
    )
    conn.execute(
        f"INSERT INTO bench_big.orders SELECT i, 1 + (i::bigint * 7919) % 100000, "
        f"(i::bigint * 104729) % 1000 / 10.0, (ARRAY['open','shipped','returned'])[1 + i % 3] "
        f"FROM generate_series(1, {rows}) i"
    )
    conn.execute("ANALYZE bench_big.customer, bench_big.orders")


def big_pair(args) -> None:
    import psycopg

    from siselect.client.options import resolve_dsn
    from siselect.client.pgexec import PsycopgExecutor, connect

    dsn = resolve_dsn(args)
    with psycopg.connect(dsn, autocommit=True) as conn:
        big_database(conn, args.big_rows)
    q1 = (
        "SELECT c.region, COUNT(*) FROM orders o JOIN customer c ON c.id = o.customer_id "
        "WHERE o.amount > 50 AND o.status <> 'returned' GROUP BY c.region"
    )
    q2 = (
        "SELECT c.region, COUNT(*) FROM orders o JOIN customer c ON c.id = o.customer_id "
        "WHERE o.amount >= 50 GROUP BY c.region"
    )
    with connect(dsn, "bench_big", statement_timeout_ms=600_000) as conn:
        executor = PsycopgExecutor(conn)
        for _ in range(2):  # warm the cache before timing
            started = time.perf_counter()
            executor.run(q1)
            executor.run(q2)
            plain = time.perf_counter() - started
        result = separate(executor, q1, q2)
    total = result["timings"]["total"]
    print(f"\n1M-row join-and-aggregate pair ({args.big_rows} orders, 100000 customers):")
    print(f"  status {result['status']}, {result.get('rows')} rows, tries {result['tries']}")
    print(f"  plain Q1+Q2 {plain:.3f} s; separate {total:.3f} s; ratio {total / plain:.2f}")
    print("  phases: " + ", ".join(f"{k} {v:.3f} s" for k, v in result["timings"].items()))


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--k", type=int, default=24)
    p.add_argument("--max-rows", type=int, default=30)
    p.add_argument("--big-rows", type=int, default=1_000_000, help="0 skips the big pair")
    args = p.parse_args()
    conn, executor = superhero_executor(args)
    catalog = load_catalog(executor)
    tasks = superhero_tasks(args.k)
    pairs = [pair for task in tasks for pair in pairs_of(executor, catalog, task)]
    print(f"superhero, K={args.k}: {len(tasks)} tasks, {len(pairs)} pairs of representatives")
    for strategy in ("minimal", "paper"):
        stats = run_strategy(executor, catalog, pairs, strategy, args.max_rows)
        print(f"\nstrategy {strategy}: statuses {stats['statuses']}")
        print(
            f"  separation rate {stats['rate']:.1%} of {stats['pairs']} pairs "
            f"(instances of at most {args.max_rows} rows)"
        )
        s = stats["sizes"]
        print(f"  instance rows: median {s['median']}, p95 {s['p95']}, max {s['max']}")
        t, r = stats["seconds"], stats["ratio"]
        print(
            f"  time per pair: median {t['median'] * 1000:.1f} ms, p95 {t['p95'] * 1000:.1f} ms; "
            f"ratio to plain Q1+Q2: median {r['median']:.1f}, p95 {r['p95']:.1f}"
        )
        for q1, q2, why in stats["failures"][:10]:
            print(f"  failed: {why}\n    Q1: {q1}\n    Q2: {q2}")
    a, b = pairs[0]
    runs = [
        separate_pair(
            Pair(executor, catalog, (a.tree, b.tree)), a.answer, b.answer, Options(seed=7)
        ).get("instance")
        for _ in range(2)
    ]
    print(f"\nsame seed, same instance: {runs[0] == runs[1]}")
    conn.close()
    if args.big_rows:
        big_pair(args)


if __name__ == "__main__":
    main()
