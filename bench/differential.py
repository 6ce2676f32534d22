"""Differential test of the transpiler at scale: generated queries on SQLite and PostgreSQL.

Generates queries over BIRD's superhero database (joins along foreign keys, LIKE/GLOB,
comparisons across types, GROUP BY with aggregates, ORDER BY/LIMIT, subqueries, date
functions), runs each on the SQLite file and, transpiled, on the loaded copy, and prints
how many were tried and how many agree, are flagged nondeterministic, or disagree.

    python3 bench/differential.py [--dsn DSN] [--count 5000] [--seed 1] [--show 10]
"""

import sys
import time

from common import SUPERHERO, parser, superhero_executor
from siselect.client.bench.differential import SKIPPED, differential
from siselect.client.bench.sqlite_compare import open_readonly
from siselect.runtime.catalog import load_catalog


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=5000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--show", type=int, default=10, help="examples of each non-agreement")
    args = p.parse_args()
    conn, executor = superhero_executor(args)
    started = time.perf_counter()
    outcome = differential(open_readonly(SUPERHERO), executor, load_catalog(executor),
                           args.count, args.seed)
    conn.close()
    seconds = time.perf_counter() - started
    print(f"generated: {args.count} (seed {args.seed}), skipped as invalid or slow on SQLite: "
          f"{outcome.counts[SKIPPED]}, tried: {outcome.tried} in {seconds:.0f} s")
    for kind, n in outcome.counts.most_common():
        if kind != SKIPPED:
            print(f"  {kind}: {n}")
    print(f"agree or flagged: {outcome.consistent} of {outcome.tried}")
    shown: dict[str, int] = {}
    for kind, sql, detail in outcome.examples:
        shown[kind] = shown.get(kind, 0) + 1
        if shown[kind] <= args.show:
            print(f"[{kind}] {sql}\n    {detail}")
    return 0 if outcome.consistent == outcome.tried else 1


if __name__ == "__main__":
    sys.exit(main())
