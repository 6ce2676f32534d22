"""Build and execute the lineage (witness) query of every BIRD candidate at K rollouts.

All tasks of ``candidates/<K>/stage1.json`` on the eleven BIRD dev databases: superhero is
loaded for real, the other ten are created empty from ``dev_tables.json``. Each distinct
candidate is transpiled from SQLite and executed plainly; for those that execute, the
lineage query is built and executed. Prints the share of those whose lineage executes,
the share that is exact, the notes (over-approximated constructs) and the failures by
construct. On superhero (real data) it also checks soundness: the query restricted to the
rows of all its witnesses must give the same answer (as a set of rows) as on the whole
database; differences are listed (expected only for non-monotone queries and ties).

    python3 bench/lineage_coverage.py [--dsn DSN] [--k 24] [--show 2]
"""

import json
import re
import sys
import time
from collections import Counter, defaultdict

import psycopg

from common import DATA, SUPERHERO, parser
from siselect.client.bird_schema import create_empty
from siselect.client.loader import load
from siselect.client.options import resolve_dsn
from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.instances import shadow
from siselect.runtime import rowids
from siselect.runtime.catalog import Catalog, load_catalog
from siselect.runtime.errors import SiselectError
from siselect.runtime.executor import Executor
from siselect.sqltext.transpile import to_tree
from siselect.witnesses.lineage import witness_query

TARGET = 0.98
SOUNDNESS_LIMIT = 100_000  # witnesses; larger lineages are not restricted and compared


def candidates_by_db(k: int) -> dict[str, list[str]]:
    """Distinct candidate SQL strings of the tasks at K rollouts, per database."""
    tasks = json.loads((DATA / "siselection" / "bird_corrected.json").read_text())
    db_of = {str(t["question_id"]): t["db_id"] for t in tasks}
    stage = json.loads((DATA / "siselection" / "candidates" / str(k) / "stage1.json").read_text())
    found: dict[str, dict[str, None]] = defaultdict(dict)
    for qid, sqls in stage.items():
        for sql in sqls:
            found[db_of[qid]][sql] = None
    return {db: list(sqls) for db, sqls in sorted(found.items())}


def construct(message: str) -> str:
    """A short name for what failed, with names and numbers blanked out."""
    message = re.sub(r'"[^"]*"', '"…"', message)
    message = re.sub(r"'[^']*'", "'…'", message)
    return re.sub(r"\d+", "N", message)[:110]


def prepare(dsn: str, db_ids: list[str]) -> dict[str, str]:
    """Schema name per database: superhero loaded, the others empty."""
    schemas = {}
    with psycopg.connect(dsn, autocommit=True) as admin:
        for db_id in db_ids:
            if db_id == "superhero":
                load(admin, SUPERHERO, "superhero")
                schemas[db_id] = "superhero"
            else:
                create_empty(admin, DATA / "bird" / "dev_tables.json", db_id, f"empty_{db_id}")
                schemas[db_id] = f"empty_{db_id}"
    return schemas


def sound(executor: Executor, catalog: Catalog, tree, lineage_sql: str) -> bool | None:
    """Whether the answer on the rows of all witnesses equals the answer (None: too big)."""
    found = executor.run(lineage_sql, max_rows=SOUNDNESS_LIMIT)
    if found.truncated:
        return None
    rows: dict[str, list[str]] = defaultdict(list)
    for witness, *_ in found.rows:
        for rowid in witness:
            table_no, ctid = rowids.decode(rowid)
            rows[catalog.by_number(table_no).name].append(ctid)
    whole = set(executor.run(tree.sql(dialect="postgres")).rows)
    part = set(executor.run(shadow.restrict(tree, catalog, rows).sql(dialect="postgres")).rows)
    return whole == part


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--k", type=int, default=24)
    p.add_argument("--show", type=int, default=2, help="examples per failure kind")
    args = p.parse_args()
    dsn = resolve_dsn(args)
    by_db = candidates_by_db(args.k)
    schemas = prepare(dsn, list(by_db))
    counts: Counter[str] = Counter()
    notes: Counter[str] = Counter()
    failures: dict[str, list[tuple[str, str]]] = defaultdict(list)
    unsound: list[tuple[bool, list[str], str]] = []
    started = time.perf_counter()
    for db_id, sqls in by_db.items():
        with connect(dsn, schemas[db_id], statement_timeout_ms=30_000) as conn:
            executor = PsycopgExecutor(conn)
            catalog = load_catalog(executor)
            for sql in sqls:
                counts["candidates"] += 1
                try:
                    tree = to_tree(sql, "sqlite", catalog)
                    executor.run(tree.sql(dialect="postgres"), max_rows=1)
                except SiselectError:
                    continue
                counts["plain"] += 1
                try:
                    lineage = witness_query(tree, catalog)
                except SiselectError as exc:
                    failures["rewrite: " + construct(exc.message)].append((db_id, sql))
                    continue
                except Exception as exc:  # a bug of the rewrite: count it, keep going
                    failures[f"rewrite crash: {type(exc).__name__}: {construct(str(exc))}"].append(
                        (db_id, sql))
                    continue
                try:
                    executor.run(lineage.sql, max_rows=1)
                except SiselectError as exc:
                    failures["execute: " + construct(exc.message)].append((db_id, sql))
                    continue
                counts["lineage"] += 1
                counts["exact"] += lineage.exact
                notes.update(lineage.notes)
                if db_id == "superhero":
                    verdict = sound(executor, catalog, tree, lineage.sql)
                    counts[{True: "sound", False: "unsound", None: "unchecked"}[verdict]] += 1
                    if verdict is False:
                        unsound.append((lineage.exact, lineage.notes, sql))
    plain, done = counts["plain"], counts["lineage"]
    share = done / plain if plain else 0.0
    print(f"K={args.k}: {counts['candidates']} distinct candidates over {len(by_db)} databases "
          f"({time.perf_counter() - started:.1f} s)")
    print(f"transpile and execute plainly: {plain}")
    print(f"lineage query executes: {done} ({100 * share:.2f}% of those; target "
          f"{100 * TARGET:.0f}%)")
    print(f"exact lineage: {counts['exact']} ({100 * counts['exact'] / max(done, 1):.1f}%)")
    print(f"superhero soundness: {counts['sound']} sound, {counts['unsound']} differ, "
          f"{counts['unchecked']} not checked (over {SOUNDNESS_LIMIT} witnesses)")
    for exact, why, sql in unsound[:args.show * 5]:
        print(f"  differs (exact={exact}, notes={why}): {sql}")
    if notes:
        print("over-approximated constructs (candidates):")
        for note, n in notes.most_common():
            print(f"  {n:5d}  {note}")
    if failures:
        print("failures by construct:")
    for kind, items in sorted(failures.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(items):4d}  {kind}")
        for db_id, sql in items[:args.show]:
            print(f"          [{db_id}] {sql}")
    return 0 if share >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
