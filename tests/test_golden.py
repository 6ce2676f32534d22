"""Golden outputs: what separate, tournament and bench return on fixed inputs and seeds.

Recorded before a restructuring (``SISELECT_RECORD_GOLDEN=1 pytest tests/test_golden.py``)
and compared after it: a result may gain keys, never lose or change one. Timings vary from
run to run and are left out.
"""

import json
import os
from pathlib import Path

import pytest

from conftest import FIXTURES, SHARED, SUPERHERO, schema_valid, server_neutral
from siselect.client.cli import main

GOLDEN = FIXTURES / "golden"
RECORD = os.environ.get("SISELECT_RECORD_GOLDEN") == "1"
TIMINGS = {"timings", "seconds", "pair_seconds", "task_seconds", "elapsed_seconds", "elapsed"}

PAIRS = [
    ("SELECT COUNT(*) FROM superhero WHERE height_cm > 200",
     "SELECT COUNT(*) FROM superhero WHERE height_cm > 191"),
    ("SELECT superhero_name FROM superhero WHERE publisher_id = 4 ORDER BY id LIMIT 5",
     "SELECT superhero_name FROM superhero WHERE publisher_id = 13 ORDER BY id LIMIT 5"),
    ("SELECT p.publisher_name, COUNT(*) FROM superhero s JOIN publisher p "
     "ON s.publisher_id = p.id GROUP BY p.publisher_name HAVING COUNT(*) > 20",
     "SELECT p.publisher_name, COUNT(s.id) FROM publisher p LEFT JOIN superhero s "
     "ON s.publisher_id = p.id GROUP BY p.publisher_name HAVING COUNT(*) > 10"),
]
TOURNAMENT = {
    "candidates": [
        "SELECT COUNT(*) FROM superhero WHERE height_cm > 200",
        "SELECT COUNT(*) FROM superhero WHERE height_cm >= 200",
        "SELECT COUNT(id) FROM superhero WHERE height_cm > 200",
        "SELECT COUNT(*) FROM superhero WHERE height_cm > 190",
    ],
    "question": "How many superheroes are taller than 200 cm?",
    "reference": "SELECT COUNT(*) FROM superhero WHERE height_cm > 200",
}
BENCH_TASKS = [735, 744, 793]


def stable(value):
    """``value`` without the fields that change from run to run, or from server to server."""
    value = server_neutral(value)
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def contained(golden, got, path="result") -> list[str]:
    """Where ``got`` lost or changed what ``golden`` holds (added keys are fine)."""
    if isinstance(golden, dict):
        if not isinstance(got, dict):
            return [f"{path}: was an object"]
        problems = []
        for key, value in golden.items():
            if key not in got:
                problems.append(f"{path}.{key}: missing")
            else:
                problems += contained(value, got[key], f"{path}.{key}")
        return problems
    if isinstance(golden, list):
        if not isinstance(got, list) or len(got) != len(golden):
            return [f"{path}: list changed"]
        return [p for i, (a, b) in enumerate(zip(golden, got, strict=True))
                for p in contained(a, b, f"{path}[{i}]")]
    return [] if golden == got else [f"{path}: {golden!r} became {got!r}"]


def check(name: str, kind: str, result) -> None:
    """``result`` holds what was recorded, and is valid under its kind's JSON Schema."""
    for one in result if isinstance(result, list) else [result]:
        schema_valid(kind, one)
    path = GOLDEN / f"{name}.json"
    result = stable(result)
    if RECORD:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=1, sort_keys=True, default=str) + "\n")
        return
    golden = json.loads(path.read_text())
    # Through JSON, as recorded: tuples become lists, numbers keep their value.
    problems = contained(golden, json.loads(json.dumps(result, default=str)))
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("index", range(len(PAIRS)))
def test_separate_in_sql(conn, superhero, index):
    q1, q2 = PAIRS[index]
    result = conn.execute("SELECT siselect.separate(%s, %s, seed => 7, search_path => %s)",
                          (q1, q2, superhero)).fetchone()[0]
    check(f"separate_{index}", "separation", result)


def test_tournament_in_sql(conn, superhero):
    result = conn.execute(
        "SELECT siselect.tournament(%s, %s, judge => 'reference', reference => %s, seed => 3,"
        " search_path => %s)",
        (TOURNAMENT["candidates"], TOURNAMENT["question"], TOURNAMENT["reference"], superhero),
    ).fetchone()[0]
    check("tournament", "tournament", result)


def test_bench(dsn, tmp_path, capsys):
    tasks = json.loads((SHARED / "bird" / "dev_superhero.json").read_text())
    chosen = [t for t in tasks if t["question_id"] in BENCH_TASKS]
    (tmp_path / "tasks.json").write_text(json.dumps(chosen))
    databases = tmp_path / "databases" / "superhero"
    databases.mkdir(parents=True)
    (databases / "superhero.sqlite").symlink_to(SUPERHERO)
    out = tmp_path / "out"
    assert main(["bench", "--dsn", dsn, "--tasks", str(tmp_path / "tasks.json"),
                 "--candidates", str(SHARED / "siselection" / "candidates" / "2" / "stage1.json"),
                 "--databases", str(tmp_path / "databases"), "--judge", "reference",
                 "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    check("bench_summary", "bench_summary", summary)
    check("bench_results", "bench_record", sorted(records, key=lambda r: r["question_id"]))


def test_golden_files_exist():
    assert RECORD or sorted(p.name for p in Path(GOLDEN).glob("*.json")) == sorted(
        [f"separate_{i}.json" for i in range(len(PAIRS))]
        + ["tournament.json", "bench_summary.json", "bench_results.json"]
    )
