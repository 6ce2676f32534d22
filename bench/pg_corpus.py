"""The PostgreSQL-dialect corpus: queries with ::, FILTER, ILIKE, NULLIF, EXTRACT, DATE_TRUNC,
STRING_AGG, DISTINCT ON, windows, LATERAL, generate_series, MATERIALIZED CTEs and division
kinds, each against a mutated twin through ``separate`` (dialect postgres, lineage or ProvSQL).

Loads superhero and whichever yardstick databases are built (``make yardstick`` writes them
to bench/out/yardstick/data), generates the corpus (bench/pg_corpus/), checks every query
and twin runs, and prints the corpus size per construct, the share separated or correctly
reported ``same_answer`` (goal 99%) and the failures by construct.

    python3 bench/pg_corpus.py [--dsn DSN] [--budget 30] [--show 3] [--construct NAME ...]
"""

import sys
import time
from collections import Counter
from pathlib import Path

import psycopg

from common import SUPERHERO, parser
from pg_corpus.corpus import generate
from pg_corpus.measure import measure
from pg_corpus.profiles import PROFILES
from pg_corpus.templates import CONSTRUCTS
from siselect.client.loader import load
from siselect.client.options import resolve_dsn
from siselect.client.pgexec import connect
from siselect.instances.separate import Options

GOAL = 0.99
YARDSTICK = Path(__file__).resolve().parent / "out" / "yardstick" / "data"


def sources() -> dict[str, Path]:
    found = {"superhero": SUPERHERO}
    for db in sorted({p.db for p in PROFILES} - {"superhero"}):
        path = YARDSTICK / db / f"{db}.sqlite"
        if path.is_file():
            found[db] = path
    return found


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--budget", type=float, default=30.0, help="seconds per pair")
    p.add_argument("--show", type=int, default=3, help="failures shown per construct")
    p.add_argument("--construct", action="append", choices=CONSTRUCTS, metavar="NAME",
                   help="measure only this construct (repeatable; default: all): "
                        + ", ".join(CONSTRUCTS))
    args = p.parse_args()
    dsn = resolve_dsn(args)
    files = sources()
    with psycopg.connect(dsn, autocommit=True) as admin:
        for db, path in files.items():
            load(admin, path, db)
    missing = sorted({p.db for p in PROFILES} - set(files))
    if missing:
        print(f"not built (make yardstick): {', '.join(missing)}")
    conns = {db: connect(dsn, db, statement_timeout_ms=60_000) for db in files}
    started = time.perf_counter()
    pairs, broken = generate(conns)
    if args.construct:
        pairs = [pair for pair in pairs if pair.construct in args.construct]
    size = Counter(pair.construct for pair in pairs)
    print(f"corpus: {len(pairs)} pairs on {len(files)} databases, every query and twin runs "
          f"({len(broken)} generated pairs did not run and are left out)")
    for pair, why in broken:
        print(f"  does not run [{pair.key}] {why}: {pair.query}")
    def progress(done: int) -> None:
        if done % 50 == 0 or done == len(pairs):
            print(f"  {done}/{len(pairs)} pairs, {time.perf_counter() - started:.0f} s",
                  file=sys.stderr, flush=True)

    tally = measure(conns, pairs, Options(dialect="postgres", budget_seconds=args.budget),
                    progress)
    seconds = time.perf_counter() - started
    by = tally.by_construct()
    print(f"{'construct':28s} {'pairs':>5s} {'separated':>9s} {'same':>5s} {'failed':>6s}")
    for construct in args.construct or CONSTRUCTS:
        counts = by.get(construct, Counter())
        failed = sum(n for s, n in counts.items() if s not in ("separated", "same_answer"))
        print(f"{construct:28s} {size[construct]:5d} {counts['separated']:9d} "
              f"{counts['same_answer']:5d} {failed:6d}")
    ok = sum(v.ok for v in tally.verdicts)
    separated = [v for v in tally.verdicts if v.status == "separated"]
    rows = sorted(v.rows or 0 for v in separated)
    print(f"separated or correctly same_answer: {ok}/{len(tally.verdicts)} "
          f"({100 * tally.share_ok:.2f}%; goal {100 * GOAL:.0f}%); separated {len(separated)}, "
          f"instance rows median {rows[len(rows) // 2] if rows else 0}, max "
          f"{rows[-1] if rows else 0}; backends {dict(Counter(v.backend for v in separated))}; "
          f"{seconds:.0f} s")
    failures = tally.failures()
    if failures:
        print("failures by construct:")
        per: dict[str, list] = {}
        for v in failures:
            per.setdefault(v.pair.construct, []).append(v)
        for construct, items in sorted(per.items(), key=lambda kv: -len(kv[1])):
            print(f"  {construct}: {len(items)}")
            for v in items[:args.show]:
                print(f"    [{v.pair.key}] {v.status}: {v.reason[:200]}\n      {v.pair.query}\n"
                      f"      {v.pair.twin}")
    for conn in conns.values():
        conn.close()
    return 0 if tally.share_ok >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
