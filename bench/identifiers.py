"""Identifiers on any schema: every shared gold and candidate query on renamed databases.

For each database (BIRD's superhero, and the yardstick's synthetic databases where
``make yardstick`` has built them), five variants under the naming styles of
siselect.client.bench.mutate; every gold query and every candidate of
shared/data/siselection/candidates/*/stage1.json for that database is renamed and run on
the variant. Prints per database and style: queries tried, the renaming judgement (same /
flagged / SQLite's own answer changed / PostgreSQL errors / differs) and the SQLite-vs-
PostgreSQL differential on the variant (agree / agree as text: values stored under another
SQLite type / flagged / disagree / errors).

    python3 bench/identifiers.py [--dsn DSN] [--db ID ...] [--style S ...] [--timeout 2]
                                 [--show 5] [--json OUT]
"""

import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import psycopg

from common import DATA, SUPERHERO, parser
from siselect.client.bench.differential import AGREE, AS_TEXT, DISAGREE, SKIPPED
from siselect.client.bench.differential import ERROR as DIFF_ERROR
from siselect.client.bench.differential import FLAGGED as DIFF_FLAGGED
from siselect.client.bench.mutate import STYLES, aliases_used, renaming, write_variant
from siselect.client.bench.renamed import (
    DIFFERS,
    ERROR,
    FLAGGED,
    SAME,
    SQLITE_CHANGED,
    Engine,
    Tally,
    run_variant,
)
from siselect.client.bench.sqlite_compare import open_readonly
from siselect.client.loader import load
from siselect.client.options import resolve_dsn
from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.runtime.catalog import load_catalog

GOLD = DATA / "siselection" / "bird_corrected.json"
CANDIDATES = DATA / "siselection" / "candidates"
SYNTHETIC = Path(__file__).resolve().parent / "out" / "yardstick" / "data"


def databases() -> dict[str, Path]:
    found = {"superhero": SUPERHERO}
    for path in sorted(SYNTHETIC.glob("*/*.sqlite")):
        found.setdefault(path.stem, path)
    return found


def queries(db_id: str) -> list[str]:
    gold = [t for t in json.loads(GOLD.read_text()) if t["db_id"] == db_id]
    found = [t["SQL"] for t in gold]
    for path in sorted(CANDIDATES.glob("*/stage1.json")):
        candidates = json.loads(path.read_text())
        found += [q for t in gold for q in candidates.get(str(t["question_id"]), [])]
    return list(dict.fromkeys(found))


def engine(dsn: str, path: Path, schema: str, timeout_s: float) -> Engine:
    with psycopg.connect(dsn, autocommit=True) as conn:
        load(conn, path, schema, cascade=True)
    executor = PsycopgExecutor(connect(dsn, schema, statement_timeout_ms=int(timeout_s * 1000)))
    return Engine(open_readonly(path), executor, load_catalog(executor))


def row(db_id: str, style: str, tally: Tally) -> str:
    r, d = tally.renaming, tally.differential
    tried = sum(n for k, n in r.items() if k != SKIPPED)
    return (f"{db_id:24} {style:9} {tried:6} | {r[SAME]:5} {r[FLAGGED]:5} {r[SQLITE_CHANGED]:5} "
            f"{r[ERROR]:5} {r[DIFFERS]:5} | {d[AGREE]:5} {d[AS_TEXT]:5} {d[DIFF_FLAGGED]:5} "
            f"{d[DISAGREE]:5} {d[DIFF_ERROR]:5}")


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--db", nargs="*", help="database ids (default: all found)")
    p.add_argument("--style", nargs="*", default=list(STYLES), choices=STYLES)
    p.add_argument("--timeout", type=float, default=2.0, help="seconds per query and engine")
    p.add_argument("--show", type=int, default=5, help="examples per database and style")
    p.add_argument("--json", type=Path, help="write the counts here")
    args = p.parse_args()
    dsn = resolve_dsn(args)
    chosen = {k: v for k, v in databases().items() if not args.db or k in args.db}
    print(f"{'database':24} {'style':9} {'tried':>6} | {'same':>5} {'flag':>5} {'sqlch':>5} "
          f"{'err':>5} {'diff':>5} | {'agree':>5} {'text':>5} {'flag':>5} {'disag':>5} "
          f"{'err':>5}")
    total, results = Tally(), {}
    with tempfile.TemporaryDirectory() as tmp:
        for db_id, path in chosen.items():
            sql = queries(db_id)
            original = engine(dsn, path, f"ident_{db_id}"[:60], args.timeout)
            used = aliases_used(sql)
            for style in args.style:
                started = time.perf_counter()
                names = renaming(sqlite3.connect(path), style, used)
                variant_path = Path(tmp) / f"{db_id}_{style}.sqlite"
                write_variant(path, variant_path, names)
                variant = engine(dsn, variant_path, f"ident_{db_id}_{style}"[:60], args.timeout)
                tally = run_variant(original, variant, names, sql, args.timeout)
                total.add(tally)
                results[f"{db_id}/{style}"] = {"renaming": dict(tally.renaming),
                                               "differential": dict(tally.differential)}
                print(row(db_id, style, tally), f"{time.perf_counter() - started:.0f}s",
                      flush=True)
                for kind, text, detail in tally.examples[:args.show]:
                    print(f"    [{kind}] {text[:300]}\n        {detail[:300]}")
    print(row("all", "all", total))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    bad = total.renaming[ERROR] + total.renaming[DIFFERS] + total.differential[DIFF_ERROR] + \
        total.differential[DISAGREE]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
