"""The yardstick's synthetic databases: BIRD's names and keys, deterministic, tasks kept.

SQLite only: the generator never talks to PostgreSQL (the runner does, through the CLI).
"""

import json
import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

pytest.importorskip("faker", reason="the yardstick's optional dependency Faker is not installed")

from yardstick import CANDIDATES_DIR, GOLD_JSON, TABLES_JSON  # noqa: E402
from yardstick import synth as S  # noqa: E402
from yardstick.candidates import candidates_for  # noqa: E402
from yardstick.retention import retention  # noqa: E402
from yardstick.schema import read_schemas  # noqa: E402

if not TABLES_JSON.is_file():
    pytest.skip("the shared BIRD data (../shared/data) is not present", allow_module_level=True)

# Names with spaces, parentheses and mixed case; composite keys; keys to non-key columns.
DATABASES = ["california_schools", "card_games", "formula_1"]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("synth")
    schemas = read_schemas()
    return {db: S.build(schemas[db], out, scale=0.5, seed=7) for db in DATABASES}


@pytest.mark.parametrize("db_id", DATABASES)
def test_names_types_and_keys_as_in_the_schema(built, db_id):
    schema = read_schemas()[db_id]
    conn = sqlite3.connect(built[db_id])
    for table in schema.tables:
        info = conn.execute(f'PRAGMA table_info("{table.name}")').fetchall()
        assert [(r[1], r[2]) for r in info] == [(c.name, c.type.upper()) for c in table.columns]
        count = conn.execute(f'SELECT COUNT(*) FROM "{table.name}"').fetchone()[0]
        assert count > 0, table.name
        if table.primary_key:
            key = ", ".join(f'"{c.name}"' for c in table.primary_key)
            distinct = conn.execute(
                f'SELECT COUNT(*) FROM (SELECT DISTINCT {key} FROM "{table.name}")').fetchone()[0]
            assert distinct == count, f"{table.name}: primary key repeats"
        for c in table.columns:
            if c.references:
                orphans = conn.execute(
                    f'SELECT COUNT(*) FROM "{table.name}" WHERE "{c.name}" IS NOT NULL AND '
                    f'"{c.name}" NOT IN (SELECT "{c.references.name}" FROM '
                    f'"{c.references.table}")').fetchone()[0]
                assert orphans == 0, f"{table.name}.{c.name}"


def test_same_seed_same_bytes_other_seed_other_data(built, tmp_path):
    schema = read_schemas()["california_schools"]
    again = S.build(schema, tmp_path / "a", scale=0.5, seed=7)
    other = S.build(schema, tmp_path / "b", scale=0.5, seed=8)
    assert S.digest(again) == S.digest(built["california_schools"])
    assert S.digest(other) != S.digest(again)


@pytest.mark.parametrize("db_id", DATABASES)
def test_at_least_half_of_the_tasks_remain(built, db_id):
    gold = [t for t in json.loads(GOLD_JSON.read_text()) if t["db_id"] == db_id]
    candidates = json.loads((CANDIDATES_DIR / "24" / "stage1.json").read_text())
    tasks = [t for t in gold if str(t["question_id"]) in candidates]
    kept = retention(built[db_id], tasks, candidates)
    assert len(kept.kept) * 2 >= len(tasks), kept.figures(len(tasks))


def test_planted_literals_select_rows(built):
    conn = sqlite3.connect(built["california_schools"])
    # A gold filter of task 0: `County Name` = 'Alameda'.
    assert conn.execute('SELECT COUNT(*) FROM frpm WHERE "County Name" = \'Alameda\'').fetchone()[0]


def test_rewrites_agree_with_gold_and_carry_provenance(built):
    schema = read_schemas()["formula_1"]
    conn = sqlite3.connect(built["formula_1"])
    gold = [t for t in json.loads(GOLD_JSON.read_text()) if t["db_id"] == "formula_1"][:40]
    checked = 0
    for task in gold:
        made = candidates_for(task["SQL"], schema, 8, 0.5, 0, str(task["question_id"]))
        assert all(c["how"] for c in made)
        try:
            expected = set(conn.execute(task["SQL"]).fetchall())
        except sqlite3.Error:
            continue
        for c in made:
            if c["correct"]:
                assert set(conn.execute(c["sql"]).fetchall()) == expected, (c["how"], c["sql"])
                checked += 1
    assert checked > 40


def _character(path: Path) -> dict[tuple[str, str], tuple[bool, bool, bool]]:
    """Per column: whether it holds NULLs, empty strings, and (numeric affinity) text."""
    conn = sqlite3.connect(path)
    found = {}
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        for _, column, declared, *_ in conn.execute(f'PRAGMA table_info("{table}")'):
            c, t = f'"{column}"', f'"{table}"'
            nulls, empties, text = conn.execute(
                f"SELECT count(*) FILTER (WHERE {c} IS NULL), count(*) FILTER (WHERE {c} = ''),"
                f" count(*) FILTER (WHERE typeof({c}) = 'text') FROM {t}").fetchone()
            numeric = declared.upper() in ("INTEGER", "REAL")
            found[(table, column)] = (nulls > 0, empties > 0, numeric and text > 0)
    return found


def test_a_column_keeps_its_character_at_every_scale(tmp_path):
    """A scaled database is the same database with more rows: a column that holds NULLs,
    empty strings or text among numbers at scale 1 does at scale 3, and one that does not,
    does not (text among numbers makes PostgreSQL's loader type the column text, and the
    candidates then translate to other queries)."""
    schema = read_schemas()["thrombosis_prediction"]
    one = _character(S.build(schema, tmp_path / "one", scale=1, seed=0))
    three = _character(S.build(schema, tmp_path / "three", scale=3, seed=0))
    assert one == three, sorted(k for k in one if one[k] != three[k])
    assert any(n for n, _, _ in one.values()) and any(t for _, _, t in one.values())


def test_dates_without_separators_are_written_as_the_queries_compare_them(tmp_path):
    """debit_card_specializing's yearmonth.Date: BIRD writes '201304', and so do the queries
    (``Date BETWEEN '201201' AND '201212'``); ISO dates there made those candidates select
    nothing. A column whose literals are mostly not compact keeps ISO dates."""
    path = S.build(read_schemas()["debit_card_specializing"], tmp_path, scale=0.5, seed=7)
    conn = sqlite3.connect(path)
    months = [d for (d,) in conn.execute("SELECT Date FROM yearmonth")]
    assert months and all(len(d) == 6 and d.isdigit() and 1 <= int(d[4:]) <= 12 for d in months)
    in_2012, = conn.execute("SELECT count(*) FROM yearmonth "
                            "WHERE Date BETWEEN '201201' AND '201212'").fetchone()
    by_year, = conn.execute("SELECT count(*) FROM yearmonth "
                            "WHERE SUBSTR(Date, 1, 4) = '2012'").fetchone()
    assert in_2012 == by_year > 0
    iso = [d for (d,) in conn.execute("SELECT Date FROM transactions_1k WHERE Date IS NOT NULL")]
    assert iso and all(d[4] == "-" for d in iso)


def test_a_text_column_the_queries_cast_to_a_number_holds_numbers(built):
    """formula_1's results.fastestLapSpeed is text that BIRD's queries read with
    ``CAST(fastestLapSpeed AS REAL)``: words there made every cast 0, so every row tied."""
    conn = sqlite3.connect(built["formula_1"])
    speeds = [s for (s,) in conn.execute(
        "SELECT fastestLapSpeed FROM results WHERE fastestLapSpeed IS NOT NULL")]
    assert speeds and all(isinstance(s, str) for s in speeds)
    assert all(float(s) >= 0 for s in speeds)  # every one a number written as text
    assert len(set(speeds)) > len(speeds) // 4  # and not one value repeated


def test_a_database_built_before_the_generators_revision_is_built_again(tmp_path):
    """Seeds hold the generator's VERSION, not its REVISION: a revision changes some columns
    and keeps the rest byte for byte, and data stamped before it is rebuilt, not reused."""
    from yardstick.run import prepare
    gold = [t for t in json.loads(GOLD_JSON.read_text())
            if t["db_id"] == "debit_card_specializing"]
    candidates = json.loads((CANDIDATES_DIR / "24" / "stage1.json").read_text())
    first = prepare("debit_card_specializing", tmp_path / "data", tmp_path / "inputs", 0.2, 7,
                    candidates, gold)
    assert first["revision"] == S.REVISION
    path = tmp_path / "data" / "debit_card_specializing" / "debit_card_specializing.sqlite"
    stamp = path.with_suffix(".json")
    stamp.write_text(json.dumps({k: v for k, v in json.loads(stamp.read_text()).items()
                                 if k != "revision"}))
    path.write_bytes(b"an older build")
    again = prepare("debit_card_specializing", tmp_path / "data", tmp_path / "inputs", 0.2, 7,
                    candidates, gold)
    assert again["sha256"] == first["sha256"] == S.digest(path)
