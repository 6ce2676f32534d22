"""Transpile and execute every distinct candidate SQL string on empty BIRD databases.

The candidate files cover eleven databases, ten of which exist here only as a schema
(``dev_tables.json``); each is created empty (see ``siselect.client.bird_schema``) and
every distinct candidate is transpiled from SQLite and executed there. Prints the share
that transpiles and executes, and the failures grouped by the construct that failed.

    python3 bench/transpile_coverage.py [--dsn DSN] [--data DIR] [--show N]
"""

import argparse
import glob
import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from siselect.client.bird_schema import create_empty
from siselect.client.options import resolve_dsn
from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.runtime.catalog import load_catalog
from siselect.runtime.errors import SiselectError
from siselect.sqltext.transpile import to_postgres

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def distinct_candidates(data: Path) -> dict[str, str]:
    """Each distinct candidate SQL string -> the database it was written for."""
    tasks = json.loads((data / "siselection" / "bird_corrected.json").read_text())
    db_of = {str(t["question_id"]): t["db_id"] for t in tasks}
    found: dict[str, str] = {}
    for path in sorted(glob.glob(str(data / "siselection" / "candidates" / "*" / "stage1.json"))):
        for qid, sqls in json.loads(Path(path).read_text()).items():
            for sql in sqls:
                found.setdefault(sql, db_of[str(qid)])
    return found


def construct(message: str) -> str:
    """A short name for what failed, from PostgreSQL's or sqlglot's message."""
    message = re.sub(r"column \S+\.(\w+) does not exist", r"column ….\1 does not exist", message)
    message = re.sub(r'"[^"]*"', '"…"', message)
    message = re.sub(r"'[^']*'", "'…'", message)
    message = re.sub(r"\d+", "N", message)
    return message[:110]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--show", type=int, default=2, help="examples per failure kind")
    args = parser.parse_args()
    dsn = resolve_dsn(args)
    candidates = distinct_candidates(args.data)
    tables_json = args.data / "bird" / "dev_tables.json"
    by_db: dict[str, list[str]] = defaultdict(list)
    for sql, db_id in candidates.items():
        by_db[db_id].append(sql)
    failures: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    transpiled = executed = 0
    started = time.perf_counter()
    with connect(dsn) as admin:
        for db_id in sorted(by_db):
            create_empty(admin, tables_json, db_id, f"empty_{db_id}")
    for db_id in sorted(by_db):
        with connect(dsn, f"empty_{db_id}", statement_timeout_ms=10_000) as conn:
            executor = PsycopgExecutor(conn)
            catalog = load_catalog(executor)
            for sql in by_db[db_id]:
                try:
                    text = to_postgres(sql, "sqlite", catalog)
                except SiselectError as exc:
                    failures["transpile: " + construct(exc.message)].append((db_id, sql, ""))
                    continue
                transpiled += 1
                try:
                    executor.run(text, max_rows=1)
                except SiselectError as exc:
                    failures["execute: " + construct(exc.message)].append((db_id, sql, text))
                    continue
                executed += 1
    total = len(candidates)
    print(f"distinct candidate SQL strings: {total} over {len(by_db)} databases "
          f"({time.perf_counter() - started:.1f} s)")
    print(f"transpiled: {transpiled} ({100 * transpiled / total:.2f}%)")
    print(f"executed on the empty databases: {executed} ({100 * executed / total:.2f}%)")
    counts = Counter({kind: len(items) for kind, items in failures.items()})
    if counts:
        print("failures by construct:")
    for kind, count in counts.most_common():
        print(f"  {count:4d}  {kind}")
        for db_id, sql, text in failures[kind][:args.show]:
            print(f"          [{db_id}] {sql}")
            if text:
                print(f"          -> {text}")
    return 0 if executed / total >= 0.995 else 1


if __name__ == "__main__":
    sys.exit(main())
