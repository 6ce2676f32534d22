"""The yardstick in one command: synthetic databases, kept tasks, ``siselect bench``, one table.

    cd bench && python3 -m yardstick.run [--db ID ...] [--limit N] [--calibrate]

Builds what is missing under ``bench/out/yardstick/`` (databases, per-database task and
candidate files), runs ``python3 -m siselect bench`` per database with the reference judge,
noiseless and at ``--noise``, writes ``summary.json`` (keyed by db_id, plus ``overall``) and
prints the table and what got worse against ``bench/yardstick-baseline.json``.
siselect is only ever run as a subprocess, so this measures whatever the checkout's CLI does.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import sqlglot

from . import CANDIDATES_DIR, GOLD_JSON, OUT, REAL_DATABASES, ROOT
from . import synth as S
from .candidates import main as make_candidates
from .retention import retention
from .schema import read_schemas

BASELINE = ROOT / "bench" / "yardstick-baseline.json"
#: The yardstick's own embedded cluster: the synthetic superhero must not replace the real one
#: that other runs use under the same schema name. /var/tmp, because as root the cluster
#: belongs to the postgres user, who cannot reach a home under /root or the work tree.
CLUSTER_HOME = "/var/tmp/siselect-yardstick"
#: Figures where more is better; the rest of the compared figures are better when smaller.
HIGHER_BETTER = ("upper_bound", "consistency", "tournament", "tournament_noisy",
                 "separation_rate", "kept_share")
LOWER_BETTER = ("failed_duel_share", "transpile_failures", "gold_failed_pg")


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _git_commit() -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    return done.stdout.strip()


def prepare(db_id: str, data_dir: Path, inputs_dir: Path, scale: float, seed: int,
            candidates: dict[str, list[str]], gold: list[dict]) -> dict:
    """The database (built if missing or made otherwise) and its kept tasks' input files."""
    path = data_dir / db_id / f"{db_id}.sqlite"
    stamp = {"generator": S.VERSION, "scale": scale, "seed": seed,
             "sqlglot": sqlglot.__version__}
    stamp_file = path.with_suffix(".json")
    if not path.is_file() or not stamp_file.is_file() or _json(stamp_file) != stamp:
        S.build(read_schemas()[db_id], data_dir, scale, seed)
        _write(stamp_file, stamp)
    tasks = [t for t in gold if t["db_id"] == db_id and candidates.get(str(t["question_id"]))]
    kept = retention(path, tasks, candidates)
    chosen = [t for t in tasks if str(t["question_id"]) in set(kept.kept)]
    _write(inputs_dir / db_id / "tasks.json", chosen)
    _write(inputs_dir / db_id / "candidates.json",
           {str(t["question_id"]): candidates[str(t["question_id"])] for t in chosen})
    return {**stamp, "sha256": S.digest(path), "retention": kept.figures(len(tasks)),
            "dropped": {"gold_failed": kept.gold_failed, "all_agree": kept.all_agree}}


#: Where siselect is imported from (set by --at to an exported commit's tree).
PLPY = {"path": ROOT / "plpy", "commit": ""}


def export_commit(commit: str, out: Path) -> None:
    """Run siselect as of ``commit`` (its plpy/ exported with git archive), not the work tree."""
    sha = subprocess.run(["git", "rev-parse", commit], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.strip()
    target = out / "siselect" / sha
    if not (target / "plpy").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", sha, "plpy"], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    PLPY.update(path=target / "plpy", commit=sha)


def bench(inputs: Path, databases: Path, out: Path, seed: int, noise: float,
          limit: int | None, workers: int) -> list[dict]:
    """One ``siselect bench`` run (kept when its inputs and options did not change)."""
    options = ["--judge", "reference", "--seed", str(seed), "--workers", str(workers)]
    if noise:
        options += ["--judge-noise", str(noise)]
    if limit:
        options += ["--limit", str(limit)]
    stamp = {"options": options, "tasks": S.digest(inputs / "tasks.json"),
             "candidates": S.digest(inputs / "candidates.json"),
             "commit": PLPY["commit"] or _git_commit()}
    if (out / "summary.json").is_file() and (out / "yardstick.json").is_file() \
            and _json(out / "yardstick.json") == stamp:
        return _records(out)
    command = [sys.executable, "-m", "siselect", "bench", "--tasks", str(inputs / "tasks.json"),
               "--candidates", str(inputs / "candidates.json"), "--databases", str(databases),
               "--out", str(out), "--force", *options]
    env = {**os.environ, "PYTHONPATH": str(PLPY["path"])}
    if not env.get("SISELECT_DSN"):
        env.setdefault("SISELECT_HOME", CLUSTER_HOME)
    # The synthetic and the real superhero share a schema name in the yardstick's own cluster:
    # load this run's file explicitly, replacing whichever was there.
    tasks = _json(inputs / "tasks.json")
    if tasks:
        db_id = tasks[0]["db_id"]
        subprocess.run([sys.executable, "-m", "siselect", "load", "--cascade", "--name", db_id,
                        str(databases / db_id / f"{db_id}.sqlite")], check=True, env=env,
                       stdout=subprocess.DEVNULL)
    print("  $ " + " ".join(command), file=sys.stderr, flush=True)
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    _write(out / "yardstick.json", stamp)
    return _records(out)


def _records(out: Path) -> list[dict]:
    path = out / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def figures(records: list[dict], noisy: list[dict] | None) -> dict:
    """The yardstick's figures from bench's per-task records."""
    scored = [r for r in records if r["status"] == "ok"]
    n = len(scored)
    duels = [d for r in scored for d in r["duels"]]
    separated = sum(d["separation"] == "separated" for d in duels)
    times = [r["timings"]["task"] for r in records if "task" in r.get("timings", {})]

    def share(count: int, total: int) -> float | None:
        return round(count / total, 4) if total else None

    noisy_scored = [r for r in (noisy or []) if r["status"] == "ok"]
    return {
        "tasks": len(records), "scored": n,
        "upper_bound": share(sum(bool(r["upper_bound"]) for r in scored), n),
        "consistency": share(sum(bool(r["hits"].get("consistency")) for r in scored), n),
        "tournament": share(sum(bool(r["hits"].get("tournament")) for r in scored), n),
        "tournament_noisy": share(sum(bool(r["hits"].get("tournament")) for r in noisy_scored),
                                  len(noisy_scored)) if noisy is not None else None,
        "pairs": len(duels), "separation_rate": share(separated, len(duels)),
        "failed_duel_share": share(len(duels) - separated, len(duels)),
        "separation_status": _count(str(d["separation"]) for d in duels),
        # bench does not report degenerate instances yet; kept as a named gap, not a zero.
        "degenerate_share": None,
        "transpile_failures": sum(not r["coverage"]["transpiled"] for r in scored),
        "gold_failed_pg": sum(r["status"] == "gold_failed" for r in records),
        "tournament_errors": sum(bool(r.get("tournament_error")) for r in scored),
        "seconds_per_task": {"median": round(statistics.median(times), 3) if times else None,
                             "p95": _quantile(times, 0.95)},
        "judge_calls_per_task": share(sum(r.get("judge_calls", 0) for r in scored), n),
    }


def _count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return dict(sorted(out.items()))


COLUMNS = [("tasks", "scored", "{}"), ("kept", "kept_share", "{:.0%}"),
           ("upper", "upper_bound", "{:.1%}"), ("consist", "consistency", "{:.1%}"),
           ("tourn", "tournament", "{:.1%}"), ("t@noise", "tournament_noisy", "{:.1%}"),
           ("sep", "separation_rate", "{:.1%}"), ("faildu", "failed_duel_share", "{:.1%}"),
           ("transp", "transpile_failures", "{}"), ("goldPG", "gold_failed_pg", "{}"),
           ("med s", ("seconds_per_task", "median"), "{:.2f}"),
           ("p95 s", ("seconds_per_task", "p95"), "{:.2f}"),
           ("judge/t", "judge_calls_per_task", "{:.2f}")]


def _get(row: dict, key) -> Any:
    if isinstance(key, tuple):
        return (row.get(key[0]) or {}).get(key[1])
    return row.get(key)


def table(summary: dict) -> str:
    names = [k for k in summary if k not in ("overall", "run", "calibration")] + ["overall"]
    lines = ["database                  " + " ".join(f"{h:>8s}" for h, _, _ in COLUMNS)]
    for name in names:
        row = summary[name]
        cells = []
        for _, key, fmt in COLUMNS:
            value = _get(row, key)
            cells.append(f"{'-' if value is None else fmt.format(value):>8s}")
        lines.append(f"{name:25s} " + " ".join(cells))
    return "\n".join(lines)


def worse(summary: dict, baseline: dict, tolerance: float = 1e-9) -> list[str]:
    """What got worse than the baseline, one line each (figures of the same databases)."""
    out = []
    for name, old in baseline.items():
        new = summary.get(name)
        if name in ("run", "calibration") or not isinstance(new, dict):
            continue
        for key in HIGHER_BETTER + LOWER_BETTER:
            a, b = old.get(key), new.get(key)
            if a is None or b is None:
                continue
            if (key in HIGHER_BETTER and b < a - tolerance) or \
                    (key in LOWER_BETTER and b > a + tolerance):
                out.append(f"{name}: {key} {a} -> {b}")
    return out


def run_database(db_id: str, args: argparse.Namespace, candidates: dict, gold: list[dict],
                 data_dir: Path, label: str) -> dict:
    inputs = args.out / "inputs" / label
    prepared = (prepare(db_id, data_dir, inputs, args.scale, args.seed, candidates, gold)
                if data_dir != REAL_DATABASES else _real_inputs(db_id, inputs, candidates, gold))
    if not json.loads((inputs / db_id / "tasks.json").read_text()):
        return {"data": prepared, **figures([], None)}
    runs = args.out / "runs" / label / db_id
    clean = bench(inputs / db_id, data_dir, runs / "noise0", args.seed, 0.0, args.limit,
                  args.workers)
    noisy = bench(inputs / db_id, data_dir, runs / f"noise{args.noise:g}", args.seed,
                  args.noise, args.limit, args.workers) if args.noise else None
    row = figures(clean, noisy)
    row["kept_share"] = prepared.get("retention", {}).get("kept_share")
    row["data"] = prepared
    return row


def _real_inputs(db_id: str, inputs: Path, candidates: dict, gold: list[dict]) -> dict:
    tasks = [t for t in gold if t["db_id"] == db_id and candidates.get(str(t["question_id"]))]
    _write(inputs / db_id / "tasks.json", tasks)
    _write(inputs / db_id / "candidates.json",
           {str(t["question_id"]): candidates[str(t["question_id"])] for t in tasks})
    path = REAL_DATABASES / db_id / f"{db_id}.sqlite"
    return {"real": True, "sha256": S.digest(path)}


def overall(rows: dict[str, dict], args: argparse.Namespace, labels: list[str]) -> dict:
    clean, noisy = [], []
    for label, db_id in labels:
        runs = args.out / "runs" / label / db_id
        if (runs / "noise0" / "results.jsonl").is_file():
            clean += _records(runs / "noise0")
        noisy_dir = runs / f"noise{args.noise:g}"
        if args.noise and (noisy_dir / "results.jsonl").is_file():
            noisy += _records(noisy_dir)
    row = figures(clean, noisy if args.noise else None)
    shares = [r["data"]["retention"]["kept"] for r in rows.values()
              if "retention" in r.get("data", {})]
    totals = [r["data"]["retention"]["tasks"] for r in rows.values()
              if "retention" in r.get("data", {})]
    row["kept_share"] = round(sum(shares) / sum(totals), 4) if sum(totals) else None
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", action="append", help="db_id (repeatable; default all but superhero)")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--candidates", default="24",
                   help="K of the paper's candidate sets, 'generated' (candidates.py, "
                   "default options), or a path to a candidates JSON")
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--noise", type=float, default=0.2)
    p.add_argument("--limit", type=int, help="only the first N kept tasks of each database")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--calibrate", action="store_true",
                   help="also superhero: synthetic (its schema only) beside the real data")
    p.add_argument("--baseline", type=Path, default=BASELINE)
    p.add_argument("--write-baseline", action="store_true")
    p.add_argument("--at", metavar="COMMIT",
                   help="run siselect as of this commit (exported), not the work tree")
    args = p.parse_args(argv)
    if args.at:
        export_commit(args.at, args.out)

    if args.candidates == "generated":
        # The generator's own sets (provenance.json beside them), for every database at once.
        source = args.out / "generated" / "candidates.json"
        if not source.is_file():
            make_candidates(["--out", str(source.parent), "--seed", str(args.seed)])
    elif args.candidates.isdigit():
        source = CANDIDATES_DIR / args.candidates / "stage1.json"
    else:
        source = Path(args.candidates)
    candidates = {str(k): v for k, v in _json(source).items()}
    gold = _json(GOLD_JSON)
    schemas = read_schemas()
    dbs = args.db or [d for d in schemas if d != "superhero"]
    data_dir = args.out / "data"
    started = time.monotonic()
    summary: dict[str, Any] = {}
    labels = []
    for db_id in dbs:
        print(f"{db_id} ...", file=sys.stderr, flush=True)
        summary[db_id] = run_database(db_id, args, candidates, gold, data_dir, "synthetic")
        labels.append(("synthetic", db_id))
    summary["overall"] = overall(summary, args, labels)
    if args.calibrate:
        calibration = {}
        for label, directory in (("synthetic", args.out / "calibration"),
                                 ("real", REAL_DATABASES)):
            print(f"superhero ({label}) ...", file=sys.stderr, flush=True)
            calibration[label] = run_database("superhero", args, candidates, gold, directory,
                                              f"superhero-{label}")
        summary["calibration"] = calibration
    summary["run"] = {"generator": S.VERSION, "seed": args.seed, "scale": args.scale,
                      "noise": args.noise, "limit": args.limit, "candidates": str(source),
                      "candidates_sha256": S.digest(source), "gold_sha256": S.digest(GOLD_JSON),
                      "sqlglot": sqlglot.__version__,
                      "commit": PLPY["commit"] or _git_commit(),
                      "elapsed_seconds": round(time.monotonic() - started, 1)}
    _write(args.out / "summary.json", summary)
    print(table({k: v for k, v in summary.items() if k != "calibration"}))
    if args.calibrate:
        print("\ncalibration, superhero (same candidates):")
        print(table({f"superhero {k}": v for k, v in summary["calibration"].items()}
                    | {"overall": summary["overall"]}).rsplit("\n", 1)[0])
    if args.write_baseline:
        _write(args.baseline, _baseline_view(summary))
        print(f"baseline written: {args.baseline}")
    elif args.baseline.is_file():
        lines = worse(summary, _json(args.baseline))
        print("\nworse than the baseline:" if lines else "\nnothing worse than the baseline")
        for line in lines:
            print("  " + line)
    return 0


def _baseline_view(summary: dict) -> dict:
    """The committed baseline: the compared figures only (no paths, no timings)."""
    keep = ("tasks", "scored", *HIGHER_BETTER, *LOWER_BETTER)
    out: dict[str, Any] = {k: {f: v.get(f) for f in keep} for k, v in summary.items()
                           if k not in ("run", "calibration")}
    out["run"] = {k: summary["run"][k] for k in ("generator", "seed", "scale", "noise", "limit",
                                                 "candidates_sha256", "gold_sha256", "sqlglot",
                                                 "commit")}
    out["data_sha256"] = {k: v["data"].get("sha256") for k, v in summary.items()
                          if isinstance(v, dict) and "data" in v}
    if "calibration" in summary:
        out["calibration"] = {k: {f: v.get(f) for f in keep}
                              for k, v in summary["calibration"].items()}
    return out


if __name__ == "__main__":
    sys.exit(main())
