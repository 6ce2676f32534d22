"""Two finished benchmark runs side by side (``siselect bench-compare A B``).

What changed between A and B: the settings, the summary's figures with B - A, the task
sets (a difference makes the accuracies incomparable, and is said first), and per
method the tasks that flipped, correct -> wrong or wrong -> correct, each with why: what
decided the tournament in either run and the duels whose separation, instance size or
verdict changed. Everything comes from the runs' files alone (summary.json,
results.jsonl, run.json when present); nothing is run again.
"""

import contextlib
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from siselect.client.bench.inputs import sort_key
from siselect.client.bench.output import REPORTS, RUN, read_results, report_name
from siselect.runtime.errors import InvalidInput

#: Settings shown side by side: from the summary, then from run.json where present.
SETTINGS = ("label", "judge", "judge_noise", "noise_model", "seed", "strategy", "backend",
            "with_references", "max_rows", "pair_budget", "baselines", "llm_model")
DUEL_FIELDS = ("separation", "rows", "reference_rows", "verdict")
FIXED, BROKEN = "wrong -> correct", "correct -> wrong"


def _run(path: Path) -> dict[str, Any]:
    """One run's summary, records by question id and settings; a clear error otherwise."""
    if not path.exists():
        raise InvalidInput(f"{path}: no such folder (give the --out folder of a finished "
                           "siselect bench run)", "58P01")
    summary, records = read_results(path)
    folder = path.parent if path.is_file() else path
    if not isinstance(summary, dict) or not all(
            isinstance(r, dict) and "question_id" in r and "status" in r for r in records):
        raise InvalidInput(f"{folder}: summary.json or results.jsonl is not a bench run's "
                           "(a record without question_id or status)")
    settings = dict(summary)
    with contextlib.suppress(OSError, ValueError):  # optional: the summary names the main ones
        settings = {**json.loads((folder / RUN).read_text(encoding="utf-8")), **summary}
    return {"folder": folder, "summary": summary, "settings": settings,
            "records": {str(r["question_id"]): r for r in records}}


def _methods(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    found = [*a["summary"].get("accuracy", {}), *b["summary"].get("accuracy", {})]
    return [m for m in dict.fromkeys(found) if m != "upper_bound"]


def _difference(a: Any, b: Any) -> float | None:
    if isinstance(a, bool) or isinstance(b, bool):
        return None
    if isinstance(a, int | float) and isinstance(b, int | float):
        return round(b - a, 6)
    return None


def _figures(a: dict[str, Any], b: dict[str, Any], methods: list[str]) -> list[dict[str, Any]]:
    """Each summary figure in A and B, with B - A (accuracies as fractions)."""
    sa, sb = a["summary"], b["summary"]

    def get(summary: dict[str, Any], *keys: str) -> Any:
        value: Any = summary
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        return value

    rows: list[tuple[str, tuple[str, ...], str]] = [
        ("tasks", ("tasks",), "count"), ("scored", ("scored",), "count")]
    for m in [*methods, "upper_bound"]:
        rows += [(f"accuracy {m.replace('_', ' ')}", ("accuracy", m), "share"),
                 (f"correct {m.replace('_', ' ')}", ("correct", m), "count")]
    rows += [("pairs", ("pairs",), "count"), ("separated", ("separated",), "count"),
             ("separation rate", ("separation_rate",), "share"),
             ("instance rows, median", ("instance_rows", "median"), "number"),
             ("instance rows, p95", ("instance_rows", "p95"), "number"),
             ("judge calls", ("judge_calls",), "count")]
    decided = dict.fromkeys([*sa.get("decided_by", {}), *sb.get("decided_by", {})])
    rows += [(f"decided by {how}", ("decided_by", how), "count") for how in decided]
    rows += [("seconds per task, median", ("task_seconds", "median"), "number"),
             ("seconds in all", ("elapsed_seconds",), "number")]
    figures = []
    for name, keys, kind in rows:
        # A way of deciding that one run never took counts 0 there, not "unknown".
        zero = 0 if keys[0] == "decided_by" else None
        va, vb = (get(s, *keys) if get(s, *keys) is not None else zero for s in (sa, sb))
        figures.append({"name": name, "kind": kind, "a": va, "b": vb,
                        "difference": _difference(va, vb)})
    return figures


def _duels(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The record's duels by pair, ``0-1``; a pair played again is ``0-1 (2)``."""
    found: dict[str, dict[str, Any]] = {}
    seen: Counter[str] = Counter()
    for d in record.get("duels") or []:
        pair = f"{d['a']}-{d['b']}"
        seen[pair] += 1
        found[pair if seen[pair] == 1 else f"{pair} ({seen[pair]})"] = {
            k: d.get(k) for k in DUEL_FIELDS}
    return found


def duel_changes(ra: dict[str, Any], rb: dict[str, Any]) -> list[dict[str, Any]]:
    """The duels (by their pair of representatives) whose separation, size or verdict
    differs between the two records, or that only one of them played."""
    da, db = _duels(ra), _duels(rb)
    changes = []
    for pair in dict.fromkeys([*da, *db]):
        a, b = da.get(pair), db.get(pair)
        changed = ["played"] if a is None or b is None else [
            k for k in DUEL_FIELDS if a.get(k) != b.get(k)]
        if changed:
            changes.append({"pair": pair, "a": a, "b": b, "changed": changed})
    return changes


def separation_text(record: dict[str, Any]) -> str:
    """How the record's duels were separated: ``2 separated, 1 timeout``."""
    counts = Counter(str(d.get("separation")) for d in record.get("duels") or [])
    return ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no duel"


def _side(run: dict[str, Any], record: dict[str, Any], method: str,
          base: Path | None) -> dict[str, Any]:
    report = run["folder"] / REPORTS / report_name(record["question_id"])
    return {"choice": (record.get("choices") or {}).get(method),
            "correct": bool((record.get("hits") or {}).get(method)),
            "decided_by": record.get("decided_by"), "duels": len(record.get("duels") or []),
            "separation": separation_text(record),
            "tournament_error": (record.get("tournament_error") or {}).get("message"),
            "report": _link(report, base) if report.is_file() else None}


def _link(target: Path, base: Path | None) -> str:
    """``target`` as the HTML page at ``base`` reaches it (absolute for the console)."""
    if base is None:
        return str(target)
    return Path(os.path.relpath(target.resolve(), base.resolve())).as_posix()


def _flips(a: dict[str, Any], b: dict[str, Any], common: list[str], methods: list[str],
           base: Path | None) -> dict[str, list[dict[str, Any]]]:
    flips: dict[str, list[dict[str, Any]]] = {}
    for method in methods:
        found = []
        for qid in common:
            ra, rb = a["records"][qid], b["records"][qid]
            ha, hb = (bool((r.get("hits") or {}).get(method)) for r in (ra, rb))
            if ha == hb or method not in (ra.get("hits") or {}) or method not in (
                    rb.get("hits") or {}):
                continue
            found.append({"question_id": ra["question_id"], "db_id": ra.get("db_id"),
                          "difficulty": ra.get("difficulty"),
                          "direction": FIXED if hb else BROKEN,
                          "a": _side(a, ra, method, base), "b": _side(b, rb, method, base),
                          "duels": duel_changes(ra, rb)})
        flips[method] = found
    return flips


def _task_sets(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    ra, rb = a["records"], b["records"]
    scored_a = {q for q, r in ra.items() if r["status"] == "ok"}
    scored_b = {q for q, r in rb.items() if r["status"] == "ok"}
    order = sorted({*ra, *rb}, key=sort_key)
    return {"a": len(scored_a), "b": len(scored_b),
            "common": [q for q in order if q in scored_a and q in scored_b],
            "only_a": [q for q in order if q in scored_a and q not in scored_b],
            "only_b": [q for q in order if q in scored_b and q not in scored_a]}


def compare(path_a: Path, path_b: Path, html_at: Path | None = None) -> dict[str, Any]:
    """Everything bench-compare shows; ``html_at`` is the page's folder, for its links."""
    a, b = _run(Path(path_a)), _run(Path(path_b))
    methods = _methods(a, b)
    tasks = _task_sets(a, b)
    warning = None
    if tasks["only_a"] or tasks["only_b"]:
        warning = (f"the runs score different task sets (A {tasks['a']}, B {tasks['b']}, "
                   f"{len(tasks['common'])} in both): the accuracies are not comparable as "
                   "they stand; flips are counted on the tasks in both")
    flips = _flips(a, b, tasks["common"], methods, html_at)
    return {
        "a": _header(a, html_at), "b": _header(b, html_at),
        "settings": [{"name": k, "a": a["settings"].get(k), "b": b["settings"].get(k),
                      "differs": a["settings"].get(k) != b["settings"].get(k)}
                     for k in SETTINGS if k in a["settings"] or k in b["settings"]],
        "methods": methods, "figures": _figures(a, b, methods), "tasks": tasks,
        "warning": warning, "flips": flips,
        "flip_counts": {m: {FIXED: sum(f["direction"] == FIXED for f in found),
                            BROKEN: sum(f["direction"] == BROKEN for f in found)}
                        for m, found in flips.items()},
    }


def _header(run: dict[str, Any], base: Path | None) -> dict[str, Any]:
    index = run["folder"] / "index.html"
    summary = run["summary"]
    return {"path": str(run["folder"]), "label": summary.get("label") or run["folder"].name,
            "index": _link(index, base) if index.is_file() else None}


# ---- the console ------------------------------------------------------------------------


def _shown(value: Any, kind: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "none"
    if kind == "share":
        return f"{value:.1%}"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _delta(value: float | None, kind: str) -> str:
    if value is None:
        return "-"
    if kind == "share":
        return f"{value * 100:+.1f} pts"
    return f"{value:+.4g}"


def _duel_text(change: dict[str, Any]) -> str:
    a, b = change["a"], change["b"]
    if a is None or b is None:
        return f"duel {change['pair']} only in {'B' if a is None else 'A'}"
    parts = [f"{k} {_shown(a[k], '')} -> {_shown(b[k], '')}" for k in change["changed"]]
    return f"duel {change['pair']}: " + ", ".join(parts)


def compare_text(result: dict[str, Any]) -> str:
    """The comparison as lines for the terminal."""
    lines = [f"A: {result['a']['label']} ({result['a']['path']})",
             f"B: {result['b']['label']} ({result['b']['path']})"]
    if result["warning"]:
        lines.append(f"warning: {result['warning']}")
    differing = [s for s in result["settings"] if s["differs"]]
    lines.append("settings that differ: " + (", ".join(
        f"{s['name']} {_shown(s['a'], '')} -> {_shown(s['b'], '')}" for s in differing)
        if differing else "none"))
    lines.append(f"  {'figure':28s} {'A':>9s} {'B':>9s} {'B - A':>10s}")
    for f in result["figures"]:
        lines.append(f"  {f['name']:28s} {_shown(f['a'], f['kind']):>9s} "
                     f"{_shown(f['b'], f['kind']):>9s} {_delta(f['difference'], f['kind']):>10s}")
    tasks = result["tasks"]
    for side in ("a", "b"):
        if tasks[f"only_{side}"]:
            lines.append(f"  scored only in {side.upper()}: {', '.join(tasks[f'only_{side}'])}")
    for method, found in result["flips"].items():
        counts = result["flip_counts"][method]
        lines.append(f"{method}: {len(found)} of {len(tasks['common'])} tasks flipped "
                     f"({counts[FIXED]} {FIXED}, {counts[BROKEN]} {BROKEN})")
        for f in found:
            a, b = f["a"], f["b"]
            separation = a["separation"] if a["separation"] == b["separation"] else \
                f"{a['separation']} -> {b['separation']}"
            why = [f"chose {_shown(a['choice'], '')} -> {_shown(b['choice'], '')}",
                   f"decided by {a['decided_by']} -> {b['decided_by']}",
                   f"duels {separation}",
                   *(_duel_text(c) for c in f["duels"])]
            lines.append(f"  task {f['question_id']} {f['direction']}: " + "; ".join(why))
    return "\n".join(lines)


def compare_html(result: dict[str, Any]) -> str:
    from siselect.client.report_html import environment

    return environment().get_template("bench_compare.html.j2").render(
        r=result, FIXED=FIXED, BROKEN=BROKEN, delta=_delta, shown=_shown)
