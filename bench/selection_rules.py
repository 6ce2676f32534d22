"""The tournament's rules compared on noise curves (issue 15): scoring (evidence, points) and
schedule (adaptive, round-robin), each with the reference judge and with a noisy one.

Every task is separated once: one SeparationMemo per task serves every variant and every
replay (only the judge, and what a different schedule plays, runs again). Figures: accuracy
(share of the tasks with a correct candidate, and count), per noise level the mean over
seeds with a 95% interval (t), the judged duels per task (what an LLM judge is called
for), and consistency (the largest exact group) on the same tasks.

    PYTHONPATH=plpy python3 bench/selection_rules.py --tasks T.json --candidates C.json \
        --databases DIR [--noise 0.1,0.2,0.3] [--seeds 5] [--limit N] [--out FILE.json]

Default inputs: the shared superhero tasks at K = 24.
"""

import argparse
import json
import random
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import DATA, TASKS  # noqa: E402
from siselect.client.bench.inputs import load_inputs  # noqa: E402
from siselect.client.bench.task import bird_equal  # noqa: E402
from siselect.client.loader import load  # noqa: E402
from siselect.client.options import resolve_dsn  # noqa: E402
from siselect.client.pgexec import PsycopgExecutor, connect  # noqa: E402
from siselect.instances.pair import run_capped  # noqa: E402
from siselect.instances.separate import Options  # noqa: E402
from siselect.runtime.catalog import load_catalog  # noqa: E402
from siselect.runtime.errors import SiselectError  # noqa: E402
from siselect.selection.grouping import group  # noqa: E402
from siselect.selection.judges import NoisyJudge, ReferenceJudge  # noqa: E402
from siselect.selection.memo import SeparationMemo  # noqa: E402
from siselect.selection.rules import Rules  # noqa: E402
from siselect.selection.tournament import prepare, run_tournament  # noqa: E402
from siselect.sqltext.transpile import to_tree  # noqa: E402

VARIANTS: dict[str, Rules | None] = {
    "evidence/adaptive": Rules(scoring="evidence", schedule="adaptive"),
    # the judge's accuracy taken as known (DEFAULT_ACCURACY), the default until session 14
    "evidence/fixed-accuracy": Rules(scoring="evidence", schedule="adaptive",
                                     uncertain_accuracy=False),
    # verdicts weigh only on the duel's two units (the rule before every unit ran on D')
    "evidence/pair": Rules(scoring="evidence", schedule="adaptive", scope="pair"),
    "points/adaptive": Rules(scoring="points", schedule="adaptive"),
    "evidence/round-robin": Rules(scoring="evidence", schedule="round-robin"),
    "points/round-robin": Rules(scoring="points", schedule="round-robin"),
    "paper": None,  # strategy paper's own rules, on its own separations
    # the noisy judge's accuracy told to the tournament (1 - noise), as a user who measured
    # their judge would set judge_accuracy
    "evidence/known-accuracy": Rules(scoring="evidence", schedule="adaptive"),
}
KNOWN_ACCURACY = {"evidence/known-accuracy"}
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26}


def interval(values: list[float]) -> tuple[float, float]:
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, 0.0
    return mean, T95.get(len(values) - 1, 2.0) * statistics.stdev(values) / len(values) ** 0.5


def run_task(executor: PsycopgExecutor, task: Any, noise: list[float], seeds: int,
             variants: dict[str, Rules | None]) -> dict[str, Any] | None:
    catalog = load_catalog(executor)
    try:
        gold = to_tree(task.sql, "sqlite", catalog)
        gold_rows = run_capped(executor, gold).rows
    except SiselectError:
        return None
    entries = prepare(executor, catalog, task.candidates, "sqlite")
    correct = {e.index for e in entries if e.answer is not None
               and bird_equal(e.answer.rows, gold_rows)}
    exact = group(entries, "exact")
    if len(exact) < 2 or not correct:
        return {"key": task.key, "skip": "one group" if len(exact) < 2 else "no correct"}
    rivals = [t for t in (entries[g.members[0]].tree for g in exact) if t is not None]
    largest = max(exact, key=lambda g: (len(g.members), -g.members[0]))
    out: dict[str, Any] = {"key": task.key, "consistency": largest.members[0] in correct,
                           "variants": {}}
    memos = {"minimal": SeparationMemo(), "paper": SeparationMemo()}
    for name, rules in variants.items():
        options = Options(dialect="sqlite", strategy="paper" if rules is None else "minimal",
                          with_references=True)
        memo = memos[options.strategy]

        def play(judge: Any, options: Options = options, rules: Rules | None = rules,
                 memo: SeparationMemo = memo) -> tuple[bool, int]:
            result = run_tournament(executor, task.candidates, task.question, task.evidence,
                                    judge, options, None, catalog, separations=memo,
                                    rules=rules)
            winner = (result.get("winner") or {}).get("index")
            return winner in correct, result["schedule"]["judged"]

        hit, judged = play(ReferenceJudge(gold))
        runs: dict[str, Any] = {"0": {"hits": [hit], "judged": [judged]}}
        for p in noise:
            cell: dict[str, list] = {"hits": [], "judged": []}
            for s in range(seeds):
                rng = random.Random(f"{s}:{task.key}:{p:g}")
                told = replace(rules, judge_accuracy=1 - p) \
                    if name in KNOWN_ACCURACY and rules is not None and 0 < p < 0.5 else rules
                h, j = play(NoisyJudge(ReferenceJudge(gold), p, rng, rivals), rules=told)
                cell["hits"].append(h)
                cell["judged"].append(j)
            runs[f"{p:g}"] = cell
        out["variants"][name] = runs
    return out


def table(records: list[dict[str, Any]], noise: list[float], seeds: int) -> str:
    scored = [r for r in records if "variants" in r]
    n = len(scored)
    lines = [f"{n} tasks with a correct candidate and two groups or more; consistency "
             f"{sum(r['consistency'] for r in scored)}/{n}"]
    header = ["variant", "noise 0 (judged/task)"] + [
        f"noise {p:g}: mean hits ±95% (judged/task)" for p in noise]
    lines.append(" | ".join(header))
    for name in scored[0]["variants"] if scored else []:
        cells = []
        for level in ["0"] + [f"{p:g}" for p in noise]:
            per_seed = [sum(r["variants"][name][level]["hits"][s] for r in scored)
                        for s in range(len(scored[0]["variants"][name][level]["hits"]))]
            judged = statistics.fmean(j for r in scored
                                      for j in r["variants"][name][level]["judged"])
            mean, half = interval(per_seed)
            cells.append(f"{mean:.1f}±{half:.1f} ({judged:.2f})" if level != "0"
                         else f"{mean:.0f}/{n} ({judged:.2f})")
        lines.append(" | ".join([name, *cells]))
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", type=Path, default=TASKS)
    p.add_argument("--candidates", type=Path,
                   default=DATA / "siselection" / "candidates" / "24" / "stage1.json")
    p.add_argument("--databases", type=Path, default=DATA / "bird" / "dev_databases")
    p.add_argument("--noise", default="0.1,0.2,0.3")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--limit", type=int)
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--out", type=Path)
    p.add_argument("--dsn")
    args = p.parse_args()
    noise = [float(x) for x in args.noise.split(",") if x.strip()]
    variants = {k: VARIANTS[k] for k in args.variants.split(",")}
    inputs = load_inputs(args.tasks, args.candidates, args.databases, args.limit)
    dsn = resolve_dsn(args)
    import psycopg

    records = []
    started = time.perf_counter()
    for db_id, path in inputs.databases.items():
        with psycopg.connect(dsn, autocommit=True) as conn:
            load(conn, path, db_id)
        with connect(dsn, db_id, statement_timeout_ms=60_000) as conn:
            executor = PsycopgExecutor(conn)
            for task in (t for t in inputs.tasks if t.db_id == db_id):
                record = run_task(executor, task, noise, args.seeds, variants)
                if record is not None:
                    records.append(record)
                    print(f"{task.key}: {record.get('skip') or 'done'} "
                          f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    text = table(records, noise, args.seeds)
    print(text)
    if args.out:
        args.out.write_text(json.dumps({"records": records, "table": text}, indent=1) + "\n")


if __name__ == "__main__":
    main()
