"""Tournaments with the reference judge (the gold query) on the superhero tasks: accuracy
of the tournament, of the consistency baseline and the upper bound, coverage, instance
sizes and time per pair. A thin call into the harness behind ``siselect bench``, with the
settings ``siselect bench --judge reference`` runs with (:func:`common.bench_settings`);
results, reports and summary.json go to bench/out/tournament-k<K>/.

    python bench/tournament.py [--k 24] [--workers 1] [--judge-noise P] [--dsn DSN]
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))

from common import DATA, TASKS, bench_settings, parser  # noqa: E402
from siselect.client.bench.run import BenchRun, run_bench  # noqa: E402
from siselect.client.bench.summary import summary_table  # noqa: E402
from siselect.client.options import info, resolve_dsn  # noqa: E402


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--k", type=int, default=24)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--judge-noise", type=float, default=0.0)
    args = p.parse_args()
    out = Path(__file__).resolve().parent / "out" / f"tournament-k{args.k}"
    candidates = DATA / "siselection" / "candidates" / str(args.k) / "stage1.json"
    databases = DATA / "bird" / "dev_databases"
    settings = bench_settings(TASKS, candidates, "--databases", str(databases), "--judge",
                              "reference", "--judge-noise", str(args.judge_noise))
    run = BenchRun(TASKS, candidates, databases, out, lambda: resolve_dsn(args), settings,
                   workers=args.workers, force=True, label=str(args.k))
    print(summary_table(run_bench(run, info)))


if __name__ == "__main__":
    main()
