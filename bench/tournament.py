"""Issue 4's figures: tournaments with the reference judge (the gold query) on the
superhero tasks: accuracy of the tournament, of the consistency baseline, the upper
bound, and the time per task.

    python bench/tournament.py [--k 24] [--dsn DSN]
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

from common import parser, summary, superhero_executor, superhero_tasks  # noqa: E402
from siselect.catalog import load_catalog  # noqa: E402
from siselect.judges import ReferenceJudge  # noqa: E402
from siselect.pair import run_capped  # noqa: E402
from siselect.separation import Options  # noqa: E402
from siselect.tournament import group, prepare, run_tournament  # noqa: E402
from siselect.transpile import to_tree  # noqa: E402


def rows_set(rows) -> set:
    return {tuple(r) for r in rows}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--k", type=int, default=24)
    args = p.parse_args()
    conn, executor = superhero_executor(args)
    catalog = load_catalog(executor)
    tasks = superhero_tasks(args.k)
    counts = {"tournament": 0, "consistency": 0, "upper_bound": 0}
    seconds, misses = [], []
    for task in tasks:
        gold_tree = to_tree(task["SQL"], "sqlite", catalog)
        gold = rows_set(run_capped(executor, gold_tree).rows)
        entries = prepare(executor, catalog, task["candidates"], "sqlite")
        correct = {
            e.index for e in entries if e.answer is not None and rows_set(e.answer.rows) == gold
        }
        groups = group(entries)
        consistency = max(groups, key=lambda g: (len(g.members), -g.representative)).representative
        started = time.perf_counter()
        result = run_tournament(
            executor,
            task["candidates"],
            task["question"],
            task["evidence"],
            ReferenceJudge(gold_tree),
            Options(dialect="sqlite"),
            catalog=catalog,
        )
        seconds.append(time.perf_counter() - started)
        chosen = result["winner"]["index"] if result["winner"] else None
        counts["tournament"] += chosen in correct
        counts["consistency"] += consistency in correct
        counts["upper_bound"] += bool(correct)
        if correct and chosen not in correct:
            misses.append(
                (task["question_id"], result["decided_by"], [d["reason"] for d in result["duels"]])
            )
    n = len(tasks)
    print(f"superhero, K={args.k}, reference judge: {n} tasks")
    for name, c in counts.items():
        print(f"  {name:12s} {c:3d} / {n} = {c / n:.1%}")
    ub = counts["upper_bound"]
    print(f"  tournament / upper bound = {counts['tournament'] / ub:.1%}" if ub else "")
    s = summary(seconds)
    print(
        f"  time per task: median {s['median']:.2f} s, p95 {s['p95']:.2f} s, max {s['max']:.2f} s"
    )
    for qid, how, reasons in misses:
        print(f"  missed {qid} (decided by {how}): {reasons}")
    conn.close()


if __name__ == "__main__":
    main()
