"""SQLite against PostgreSQL on superhero: the 129 gold queries and the K=24 candidates.

Each query runs on the SQLite file and, transpiled, on the loaded copy; the result sets
must agree (as multisets, numbers within 1e-9 relative) unless the query is flagged
nondeterministic (clock, random(), ties at a LIMIT cut, bare-column picks). Prints the
counts and lists every nondeterministic and every disagreeing query.

    python3 bench/transpile_gold.py [--dsn DSN] [--k 24]
"""

import json
import sys

from common import DATA, SUPERHERO, TASKS, parser, superhero_executor
from siselect.client.bench.sqlite_compare import open_readonly, same_rows, sqlite_rows
from siselect.runtime.catalog import load_catalog
from siselect.runtime.errors import SiselectError
from siselect.sqltext.nondeterminism import check, static_reason
from siselect.sqltext.transpile import to_tree


def queries(k: int) -> list[tuple[str, str]]:
    """(label, SQL) for every gold query and every distinct superhero candidate at K."""
    tasks = json.loads(TASKS.read_text())
    found = [(f"gold {t['question_id']}", t["SQL"]) for t in tasks]
    ids = {str(t["question_id"]) for t in tasks}
    candidates = json.loads((DATA / "siselection" / "candidates" / str(k) / "stage1.json")
                            .read_text())
    for qid, sqls in candidates.items():
        if qid in ids:
            found += [(f"candidate {qid}", sql) for sql in dict.fromkeys(sqls)]
    return found


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--k", type=int, default=24)
    args = p.parse_args()
    conn, executor = superhero_executor(args)
    catalog = load_catalog(executor)
    db = open_readonly(SUPERHERO)
    counts = {"agree": 0, "nondeterministic": 0, "disagree": 0, "error": 0}
    listed: dict[str, list[str]] = {k: [] for k in counts}
    items = queries(args.k)
    for label, sql in items:
        try:
            expected = sqlite_rows(db, sql)
            tree = to_tree(sql, "sqlite", catalog)
            got = executor.run(tree.sql(dialect="postgres")).rows
            reason = static_reason(tree) or check(
                lambda t: executor.run(t.sql(dialect="postgres")), tree)
        except (SiselectError, Exception) as exc:  # noqa: BLE001 - every failure is listed
            counts["error"] += 1
            listed["error"].append(f"{label}: {exc}\n      {sql}")
            continue
        if reason is not None:
            verdict = "nondeterministic"
            note = f"{reason}; results {'agree' if same_rows(expected, got) else 'differ'}"
        else:
            verdict = "agree" if same_rows(expected, got) else "disagree"
            note = f"sqlite {expected[:3]} postgres {got[:3]}"
        counts[verdict] += 1
        if verdict != "agree":
            listed[verdict].append(f"{label}: {note}\n      {sql}")
    conn.close()
    gold = sum(1 for label, _ in items if label.startswith("gold"))
    print(f"queries: {len(items)} ({gold} gold, {len(items) - gold} distinct candidates, "
          f"K={args.k})")
    print("  ".join(f"{k}: {v}" for k, v in counts.items()))
    for kind in ("nondeterministic", "disagree", "error"):
        if listed[kind]:
            print(f"{kind}:")
            print("\n".join(f"  {line}" for line in listed[kind]))
    return 0 if counts["disagree"] == counts["error"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
