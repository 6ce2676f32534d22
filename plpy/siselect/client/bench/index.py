"""``DIR/index.html`` beside ``summary.json``: a benchmark run to browse.

The summary with BIRD's difficulty breakdown (simple / moderate / challenging, from the
records), the figures found in ``DIR/plots`` (embedded: the page stands alone; each links
to its file and shows the warnings its PNG carries, see :mod:`siselect.client.plot`), a table
of tasks linking to each task's report, and the dropped candidates. Sorting needs no
script (the CSP allows none): each order is its own table, shown when its link is the
page's target.
"""

import base64
from pathlib import Path
from typing import Any

from siselect.client.bench.inputs import sort_key
from siselect.client.bench.output import REPORTS, report_name

INDEX, PLOTS = "index.html", "plots"
WARNING_KEY = "Warning"  # the PNG text chunk where siselect plot keeps a figure's warnings
DIFFICULTIES = ("simple", "moderate", "challenging")
ORDERS = {"id": "question id", "result": "tournament wrong first", "seconds": "slowest first",
          "duels": "most duels first"}


def _accuracy(records: list[dict[str, Any]], methods: list[str]) -> dict[str, Any]:
    n = len(records)
    right = {m: sum(bool(r.get("hits", {}).get(m)) for r in records) for m in methods}
    return {"n": n, "right": right,
            "share": {m: (right[m] / n if n else None) for m in methods}}


def difficulty_rows(records: list[dict[str, Any]], methods: list[str]) -> list[dict[str, Any]]:
    """Accuracy by BIRD difficulty over the scored tasks; unlabelled tasks apart, and all."""
    scored = [r for r in records if r["status"] == "ok"]
    seen = {r.get("difficulty") or "(none)" for r in scored}
    labels = [d for d in DIFFICULTIES if d in seen] + sorted(seen - set(DIFFICULTIES))
    rows = [{"difficulty": d, **_accuracy([r for r in scored if (r.get("difficulty")
                                                                or "(none)") == d], methods)}
            for d in labels]
    return [*rows, {"difficulty": "all", **_accuracy(scored, methods)}]


def breakdown_text(records: list[dict[str, Any]], methods: list[str]) -> str:
    """:func:`difficulty_rows` as terminal lines."""
    lines = ["  difficulty       n  " + "  ".join(f"{m:>12s}" for m in methods)]
    for row in difficulty_rows(records, methods):
        cells = "  ".join(f"{_percent(row['share'][m]):>6s} ({row['right'][m]:3d})"
                          for m in methods)
        lines.append(f"  {row['difficulty']:12s} {row['n']:4d}  {cells}")
    return "\n".join(lines)


def dropped_lines(records: list[dict[str, Any]]) -> list[str]:
    """One line per candidate that failed to transpile or run, in task order."""
    return [f"  dropped: task {r['question_id']} candidate {d['index']} ({d['stage']}): "
            f"{d['message']} (SQLSTATE {d['sqlstate']})"
            for r in sorted(records, key=lambda r: sort_key(r["question_id"]))
            for d in r.get("dropped") or []]


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{share:.1%}"


def _task_row(record: dict[str, Any], methods: list[str], folder: Path) -> dict[str, Any]:
    report = Path(REPORTS) / report_name(record["question_id"])
    return {
        "id": record["question_id"], "db": record.get("db_id"),
        "difficulty": record.get("difficulty") or "", "status": record["status"],
        "hits": {m: record.get("hits", {}).get(m) for m in methods},
        "decided_by": record.get("decided_by") or "",
        "duels": len(record.get("duels") or []),
        "seconds": (record.get("timings") or {}).get("task"),
        "report": report.as_posix() if (folder / report).exists() else None,
    }


def _sorted(rows: list[dict[str, Any]], order: str) -> list[dict[str, Any]]:
    by_id = sorted(rows, key=lambda r: sort_key(r["id"]))
    if order == "result":
        return sorted(by_id, key=lambda r: r["hits"].get("tournament") is True)
    if order == "seconds":
        return sorted(by_id, key=lambda r: -(r["seconds"] or 0.0))
    if order == "duels":
        return sorted(by_id, key=lambda r: -r["duels"])
    return by_id


def figure_warnings(path: Path) -> list[str]:
    """The warnings a PNG of ``siselect plot`` carries (none for other PNGs)."""
    from PIL import Image  # matplotlib's own dependency: there wherever figures are drawn

    with Image.open(path) as image:
        text = getattr(image, "text", {}).get(WARNING_KEY, "")
    return [line for line in text.splitlines() if line]


def _plots(folder: Path) -> list[dict[str, Any]]:
    """Each figure embedded, linked to its file, with the warnings its PNG carries."""
    return [{"name": p.stem.replace("_", " "), "href": p.relative_to(folder).as_posix(),
             "src": "data:image/png;base64," + base64.b64encode(p.read_bytes()).decode(),
             "warnings": figure_warnings(p)}
            for p in sorted((folder / PLOTS).glob("*.png"))]


def index_html(folder: Path, summary: dict[str, Any], records: list[dict[str, Any]]) -> str:
    from siselect.client.report_html import environment

    methods = [m for m in summary.get("accuracy", {}) if m != "upper_bound"]
    rows = [_task_row(r, methods, folder) for r in records]
    dropped = [{"id": r["question_id"], **d} for r in sorted(
        records, key=lambda r: sort_key(r["question_id"])) for d in r.get("dropped") or []]
    return environment().get_template("bench_index.html.j2").render(
        summary=summary, methods=methods, difficulty=difficulty_rows(records, methods),
        orders=ORDERS, tables={o: _sorted(rows, o) for o in ORDERS}, dropped=dropped,
        plots=_plots(folder))


def write_index(folder: Path, summary: dict[str, Any], records: list[dict[str, Any]]) -> Path:
    target = Path(folder) / INDEX
    target.write_text(index_html(Path(folder), summary, records), encoding="utf-8")
    return target
