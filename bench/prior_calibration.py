"""How strong the consistency prior should be, read from finished bench runs (issue 15).

Evidence scoring starts every unit at ``weight * log |group|`` (docs/selection.md,
"Scoring"): before any verdict, the chance that group g holds the right answer is taken as
``|g| ** weight`` over the sum of that over the task's groups. This script asks the runs'
tasks how well each weight predicts which group was right: per task with two groups or more
and a group that returns the reference's answer, the log-likelihood of that group under
the model, summed per run, for a range of weights (the best one marked), with how often the
largest group was the right one. A weight fitted here belongs to the candidates' source: a
generator that rewrites the reference query several times makes the right group large
almost always, which a real model's candidates do not.

    python3 bench/prior_calibration.py RUN_DIR [RUN_DIR ...] [--weights 0.5,1,1.5,2,3]

RUN_DIR: a ``siselect bench`` output directory (results.jsonl) or a yardstick run's
``--out`` (every results.jsonl below it, the calibration's superhero runs included).
"""

import argparse
import json
import math
from pathlib import Path


def tasks_of(run: Path) -> list[tuple[list[int], int]]:
    """``(group sizes, size of the right group)`` of every task of ``run`` that tells
    anything: two groups or more, one of them the reference's answer."""
    found = []
    for results in sorted(run.rglob("results.jsonl")):
        for line in results.read_text().splitlines():
            record = json.loads(line)
            sizes = record.get("groups") or []
            right = len(record.get("correct") or [])
            # Candidates right under BIRD's rule form one exact group, unless rounding split
            # them: such a task is left out rather than guessed.
            if len(sizes) >= 2 and right and right in sizes:
                found.append((sizes, right))
    return found


def log_likelihood(tasks: list[tuple[list[int], int]], weight: float) -> float:
    return sum(weight * math.log(right) - math.log(sum(s ** weight for s in sizes))
               for sizes, right in tasks)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--weights", default="0,0.5,1,1.5,2,3,4",
                   help="comma-separated prior weights to score (default: %(default)s)")
    args = p.parse_args(argv)
    weights = [float(w) for w in args.weights.split(",")]
    for run in args.runs:
        tasks = tasks_of(run)
        if not tasks:
            print(f"{run}: no task with two groups or more and a right one")
            continue
        largest = sum(1 for sizes, right in tasks
                      if right == max(sizes) and sizes.count(right) == 1)
        scores = {w: log_likelihood(tasks, w) for w in weights}
        best = max(scores, key=lambda w: scores[w])
        print(f"{run}: {len(tasks)} tasks, the right group the only largest in {largest}")
        print("  " + "  ".join(f"{w:g}: {s:.1f}{' *' if w == best else ''}"
                               for w, s in scores.items()))


if __name__ == "__main__":
    main()
