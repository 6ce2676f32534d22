"""The yardstick in one command: synthetic databases, kept tasks, ``siselect bench``, one table.

    cd bench && python3 -m yardstick.run [--db ID ...] [--limit N] [--calibrate]

Builds what is missing under ``bench/out/yardstick/`` (databases, per-database task and
candidate files), runs ``python3 -m siselect bench`` once per database with the reference
judge, its noise curves replayed on the same instances (``--noise`` levels, ``--noise-seeds``
seeds, both noise models), writes ``summary.json`` (keyed by db_id, plus ``overall``),
plots, and prints the table and what got worse against ``bench/yardstick-baseline.json``.
siselect is run as a subprocess, so this measures whatever the checkout's CLI does (or a
commit's, with ``--at``); the figures are defined in :mod:`yardstick.figures`.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import sqlglot

from . import CANDIDATES_DIR, GOLD_JSON, OUT, REAL_DATABASES, ROOT
from . import candidates as C
from . import synth as S
from .candidates import main as make_candidates
from .figures import figures
from .retention import retention
from .schema import read_schemas

BASELINE = ROOT / "bench" / "yardstick-baseline.json"
#: The yardstick's own embedded cluster: the synthetic superhero must not replace the real one
#: that other runs use under the same schema name. /var/tmp, because as root the cluster
#: belongs to the postgres user, who cannot reach a home under /root or the work tree.
CLUSTER_HOME = "/var/tmp/siselect-yardstick"
#: Figures where more is better; the rest of the compared figures are better when smaller.
HIGHER_BETTER = ("upper_bound", "consistency", "tournament", "tournament_noisy",
                 "tournament_near_miss", "separation_rate", "kept_share")
LOWER_BETTER = ("failed_duel_share", "search_failed_share", "transpile_failures",
                "gold_failed_pg", "degenerate_share", "failed_on_instance_share",
                "lost_by_correct_share", "transpile_disagreements")


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
    stamp = {"generator": S.VERSION, "revision": S.REVISION, "scale": scale, "seed": seed,
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
    _write(inputs_dir / db_id / "sqlite.json", kept.sqlite)
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


def snapshot_worktree(out: Path) -> None:
    """Run siselect from a copy of the work tree's plpy/ (named by HEAD and the digest of
    the uncommitted changes), not from files that may change during the run."""
    import hashlib
    import shutil

    diff = subprocess.run(["git", "diff", "HEAD", "--", "plpy"], cwd=ROOT, capture_output=True,
                          check=True).stdout
    untracked = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "plpy"],
                               cwd=ROOT, capture_output=True, check=True).stdout
    name = f"{_git_commit()}+{hashlib.sha256(diff + untracked).hexdigest()[:12]}"
    target = out / "siselect" / name
    if not (target / "plpy").is_dir():
        shutil.copytree(ROOT / "plpy", target / "plpy",
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    PLPY.update(path=target / "plpy", commit=name)


def bench(inputs: Path, databases: Path, out: Path, args: argparse.Namespace) -> list[dict]:
    """One ``siselect bench`` run (kept when its inputs and options did not change): the
    noiseless tournament and its replays with a noisy judge."""
    limit = args.limit
    options = ["--judge", "reference", "--seed", str(args.seed), "--workers", str(args.workers),
               "--label", inputs.name]
    if args.noise:
        options += ["--judge-noise", args.noise, "--noise-seeds", str(args.noise_seeds),
                    "--noise-model", NOISE_MODELS]
    if limit:
        options += ["--limit", str(limit)]
    # The data too: a generator that writes a column otherwise can keep every task and
    # candidate as they were, and the run kept from before would answer for other data.
    data = databases / inputs.name / f"{inputs.name}.sqlite"
    stamp = {"options": options, "tasks": S.digest(inputs / "tasks.json"),
             "candidates": S.digest(inputs / "candidates.json"),
             "data": S.digest(data) if data.is_file() else None,
             "commit": PLPY["commit"] or _git_commit()}
    if (out / "summary.json").is_file() and (out / "yardstick.json").is_file() \
            and _same_run(_json(out / "yardstick.json"), stamp):
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


def _same_run(kept: dict, stamp: dict) -> bool:
    """The stamps agree but for --workers (bench's figures do not depend on it)."""
    def stable(options: list[str]) -> list[str]:
        at = options.index("--workers") if "--workers" in options else None
        return options if at is None else options[:at] + options[at + 2:]
    return {**kept, "options": stable(kept["options"])} == \
        {**stamp, "options": stable(stamp["options"])}


def _records(out: Path) -> list[dict]:
    path = out / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


#: Both noise models, always: the near miss is measured, never tuned against.
NOISE_MODELS = "rival,near-miss"

COLUMNS = [("tasks", "scored", "{}"), ("kept", "kept_share", "{:.0%}"),
           ("upper", "upper_bound", "{:.1%}"), ("consist", "consistency", "{:.1%}"),
           ("tourn", "tournament", "{:.1%}"), ("t/upper", "tournament_of_upper", "{:.1%}"),
           ("t@.2riv", "tournament_noisy", "{:.1%}"),
           ("t@.2nm", "tournament_near_miss", "{:.1%}"),
           ("sep", "separation_rate", "{:.1%}"), ("degen", "degenerate_share", "{:.1%}"),
           ("faildu", "failed_duel_share", "{:.1%}"),
           ("srchfail", "search_failed_share", "{:.1%}"),
           ("failD'", "failed_on_instance_share", "{:.1%}"),
           ("lostOK", "lost_by_correct", "{}"), ("transp", "transpile_disagreements", "{}"),
           ("goldPG", "gold_failed_pg", "{}"),
           ("med s", ("seconds_per_task", "median"), "{:.2f}"),
           ("p95 s", ("seconds_per_task", "p95"), "{:.2f}"),
           ("judge/t", "judge_calls_per_task", "{:.2f}"),
           ("rr/t", "round_robin_calls_per_task", "{:.2f}")]


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
        return {"data": prepared, **figures([])}
    records = bench(inputs / db_id, data_dir, _run_dir(args, label, db_id), args)
    row = figures(records, _json(inputs / db_id / "sqlite.json"), args.provenance)
    row["kept_share"] = prepared.get("retention", {}).get("kept_share")
    row["data"] = prepared
    return row


def _run_dir(args: argparse.Namespace, label: str, db_id: str) -> Path:
    return args.out / "runs" / label / db_id / "bench"


def _real_inputs(db_id: str, inputs: Path, candidates: dict, gold: list[dict]) -> dict:
    tasks = [t for t in gold if t["db_id"] == db_id and candidates.get(str(t["question_id"]))]
    _write(inputs / db_id / "tasks.json", tasks)
    _write(inputs / db_id / "candidates.json",
           {str(t["question_id"]): candidates[str(t["question_id"])] for t in tasks})
    path = REAL_DATABASES / db_id / f"{db_id}.sqlite"
    _write(inputs / db_id / "sqlite.json", retention(path, tasks, candidates, keep_all=True).sqlite)
    return {"real": True, "sha256": S.digest(path)}


def overall(rows: dict[str, dict], args: argparse.Namespace,
            labels: list[tuple[str, str]]) -> dict:
    records: list[dict] = []
    sqlite: dict[str, dict] = {}
    for label, db_id in labels:
        runs = _run_dir(args, label, db_id)
        if (runs / "results.jsonl").is_file():
            records += _records(runs)
        verdicts = args.out / "inputs" / label / db_id / "sqlite.json"
        if verdicts.is_file():
            sqlite.update(_json(verdicts))
    row = figures(records, sqlite, args.provenance)
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
    p.add_argument("--noise", default="0.1,0.2,0.3",
                   help="judge noise levels replayed on the noiseless instances (default "
                   "0.1,0.2,0.3; 0 or empty: none)")
    p.add_argument("--noise-seeds", type=int, default=5, help="noise seeds per level")
    p.add_argument("--limit", type=int, help="only the first N kept tasks of each database")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--calibrate", action="store_true",
                   help="also superhero: synthetic (its schema only) beside the real data")
    p.add_argument("--baseline", type=Path, default=BASELINE)
    p.add_argument("--write-baseline", metavar="LABEL",
                   help="add this run's figures to the baseline file under LABEL (other "
                   "labels are kept); runs compare with the baseline of the same limit, "
                   "candidates and data (seed, scale)")
    p.add_argument("--snapshot", action="store_true",
                   help="run siselect from a copy of the work tree's plpy/ taken now, so that "
                   "edits made while the yardstick runs do not reach it")
    p.add_argument("--plpy", type=Path, metavar="DIR",
                   help="run siselect from this plpy/ (e.g. an earlier --snapshot's, so that "
                   "its finished runs are reused)")
    p.add_argument("--calibration-limit", type=int, metavar="N",
                   help="--limit for the calibration's superhero runs (default: --limit)")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--at", metavar="COMMIT",
                   help="run siselect as of this commit (exported), not the work tree")
    args = p.parse_args(argv)
    if args.at:
        export_commit(args.at, args.out)
    elif args.snapshot:
        snapshot_worktree(args.out)
    elif args.plpy:
        PLPY.update(path=args.plpy.resolve(), commit=args.plpy.resolve().parent.name)
    args.noise = "" if args.noise.strip() in ("", "0") else args.noise

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
    beside = source.parent / "provenance.json"
    args.provenance = _json(beside)["candidates"] if beside.is_file() else None
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
    limit = args.limit
    if args.calibrate:
        calibration = {}
        if args.calibration_limit is not None:
            args.limit = args.calibration_limit
        for label, directory in (("synthetic", args.out / "calibration"),
                                 ("real", REAL_DATABASES)):
            print(f"superhero ({label}) ...", file=sys.stderr, flush=True)
            calibration[label] = run_database("superhero", args, candidates, gold, directory,
                                              f"superhero-{label}")
        summary["calibration"] = calibration
    summary["run"] = {"generator": S.VERSION, "revision": S.REVISION, "seed": args.seed,
                      "scale": args.scale,
                      "noise": args.noise, "noise_seeds": args.noise_seeds,
                      "noise_models": NOISE_MODELS, "limit": limit,
                      "calibration_limit": args.limit if args.calibrate else None,
                      "candidates": str(source), "candidates_sha256": S.digest(source),
                      "candidates_generator": C.VERSION if args.provenance else None,
                      "gold_sha256": S.digest(GOLD_JSON),
                      "intervals": "95% percentile bootstrap over tasks (a task's seeds "
                                   "kept together), 2000 resamples, seed 0",
                      "versions": versions(),
                      "commit": PLPY["commit"] or _git_commit(),
                      "elapsed_seconds": round(time.monotonic() - started, 1)}
    _write(args.out / "summary.json", summary)
    print(table({k: v for k, v in summary.items() if k != "calibration"}))
    if args.calibrate:
        print("\ncalibration, superhero (same candidates):")
        print(table({f"superhero {k}": v for k, v in summary["calibration"].items()}
                    | {"overall": summary["overall"]}).rsplit("\n", 1)[0])
    for line in report_lines(summary):
        print(line)
    if not args.no_plots:
        from .plots import draw

        for line in draw(summary, [_run_dir(args, lab, db) for lab, db in labels],
                         args.out / "plots"):
            print(line)
    if args.write_baseline:
        _write(args.baseline, with_baseline(_read_baselines(args.baseline), args.write_baseline,
                                            _baseline_view(summary)))
        print(f"baseline {args.write_baseline!r} written: {args.baseline}")
    elif args.baseline.is_file():
        label, base = matching_baseline(_read_baselines(args.baseline), summary["run"])
        if base is None:
            print(f"\nno baseline of limit {limit}, these candidates and this data (seed "
                  f"{args.seed}, scale {args.scale:g}) in {args.baseline}")
            return 0
        lines = worse(summary, base)
        print(f"\nworse than the baseline {label!r}:" if lines
              else f"\nnothing worse than the baseline {label!r}")
        for line in lines:
            print("  " + line)
    return 0


def versions() -> dict[str, str]:
    """Versions of what made the data and ran the bench (this interpreter's)."""
    import platform
    from importlib import metadata

    found = {"python": platform.python_version(), "sqlglot": sqlglot.__version__}
    for name in ("Faker", "numpy", "psycopg"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "absent"
    return found


def report_lines(summary: dict) -> list[str]:
    """Noise curves, duels lost by a correct candidate and the mistake breakdown, overall."""
    row = summary["overall"]
    lines = ["", "noise curves, overall (mean over seeds [95% bootstrap]; minus consistency):"]
    for model, levels in (row.get("noise_curves") or {}).items():
        for level, c in levels.items():
            low, high = c["ci95"]
            dlow, dhigh = c["minus_consistency_ci95"]
            lines.append(f"  {model:9s} {level:>4s}: {c['accuracy']:.1%} [{low:.1%}, {high:.1%}]"
                         f"  {c['minus_consistency']:+.1%} [{dlow:+.1%}, {dhigh:+.1%}]  "
                         f"judged/task {c['judged_per_task']:.2f}")
    if row.get("gold_nondeterministic"):
        determined = row.get("tournament_of_upper_determined")
        lines.append(f"tasks whose gold answer on D is one of several (ties): "
                     f"{row['gold_nondeterministic']}; without them the tournament reaches "
                     + (f"{determined:.2%}" if determined is not None else "-")
                     + " of the upper bound")
    lost = row.get("lost_by_correct_duels") or []
    played = row["pairs"] + (row.get("repeat_duels") or 0)  # the share's denominator
    lines.append(f"duels lost by a candidate correct on D: {len(lost)} of {played} "
                 f"({row.get('lost_by_correct_share') or 0:.2%}; goal <= 0.5%)")
    if row.get("lost_by_correct_right_matched"):
        lines.append(f"  of which with another candidate right on D matching the judge on "
                     f"that D': {row['lost_by_correct_right_matched']}")
    if row.get("lost_by_correct_by_construction") is not None:
        lines.append(f"  of which by a candidate correct by construction: "
                     f"{row['lost_by_correct_by_construction']} (the others are generated "
                     "mistakes right on D by coincidence)")
    for d in lost:
        made = d.get("loser_made")
        how = f" (loser made as {', '.join(made['how']) or 'gold'})" if made else ""
        mates = f", right on D and matching the judge: {d['right_matched']}" \
            if d.get("right_matched") else ""
        lines.append(f"  {d['db_id']} {d['question_id']}: {d['a']} vs {d['b']}, verdict "
                     f"{d['verdict']}, {d['rows']} rows{how}{mates}; D' "
                     f"{json.dumps(d['instance'])}")
    mistakes = row.get("by_mistake")
    if mistakes:
        lines.append("accuracy by mistake type present (tournament / consistency, tasks, "
                     "picked by the tournament):")
        for kind, m in mistakes.items():
            if isinstance(m, dict):
                lines.append(f"  {kind:18s} {m['tournament']:.1%} / {m['consistency']:.1%}  "
                             f"n={m['tasks']}  picked {m['tournament_picked']}")
        lines.append(f"  rewrites wrong on D: {mistakes['rewrites_wrong_on_d']}")
    return lines


def _read_baselines(path: Path) -> dict[str, dict]:
    """The baseline file's baselines by label (a file of one unlabelled baseline, as first
    committed, reads as the label 'first')."""
    if not path.is_file():
        return {}
    data = _json(path)
    return data.get("baselines", {"first": data})


def with_baseline(baselines: dict[str, dict], label: str, view: dict) -> dict:
    return {"baselines": {**baselines, label: view}}


#: What a run and its baseline share: the tasks (limit), the candidates, and the data
#: (the generator's seed and scale; a run on other data is no regression of this one).
BASELINE_KEYS = ("limit", "candidates_sha256", "seed", "scale")
_DATA_DEFAULTS = {"seed": 0, "scale": 1.0}


def matching_baseline(baselines: dict[str, dict], run: dict) -> tuple[str, dict | None]:
    """The last baseline (in label order: the file is written sorted) made with the same
    limit, candidates and data; label new baselines so that they sort after the old."""
    def key(made: dict) -> tuple:
        return tuple(made.get(k, _DATA_DEFAULTS.get(k)) for k in BASELINE_KEYS)

    for label, base in reversed(list(baselines.items())):
        if key(base.get("run", {})) == key(run):
            return label, base
    return "", None


def _baseline_view(summary: dict) -> dict:
    """The committed baseline: the compared figures only (no paths, no timings)."""
    keep = ("tasks", "scored", *HIGHER_BETTER, *LOWER_BETTER)
    out: dict[str, Any] = {k: {f: v.get(f) for f in keep} for k, v in summary.items()
                           if k not in ("run", "calibration")}
    out["run"] = {k: summary["run"].get(k) for k in (
        "generator", "revision", "seed", "scale", "noise", "noise_seeds", "limit",
        "candidates_sha256", "candidates_generator", "gold_sha256", "versions", "commit")}
    out["data_sha256"] = {k: v["data"].get("sha256") for k, v in summary.items()
                          if isinstance(v, dict) and "data" in v}
    if "calibration" in summary:
        out["calibration"] = {k: {f: v.get(f) for f in keep}
                              for k, v in summary["calibration"].items()}
    return out


if __name__ == "__main__":
    sys.exit(main())
