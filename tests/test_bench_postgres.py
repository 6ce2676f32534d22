"""``siselect bench --dialect postgres``: PostgreSQL tasks (BIRD mini-dev's format) on
databases that are schemas already on the server, named by db_id or by --schema-map, against
the SQLite run of the same tasks; and the errors for a schema that is not there."""

import json
import urllib.parse
from pathlib import Path

import psycopg
import pytest

from conftest import SHARED, SUPERHERO, schema_valid
from siselect.client.cli import main
from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.runtime.catalog import load_catalog
from siselect.sqltext.transpile import to_postgres

TASK_IDS = [735, 744, 766, 793, 810]  # as in test_bench: K=2 tasks, each well under a second
CANDIDATES_K2 = SHARED / "siselection" / "candidates" / "2" / "stage1.json"
MINI_DEV_KEYS = {"question_id", "db_id", "question", "evidence", "SQL", "difficulty"}


@pytest.fixture(scope="module")
def files(tmp_path_factory, dsn, superhero) -> dict[str, Path]:
    """The tasks in BIRD's SQLite form, and in mini-dev's PostgreSQL form (the gold and the
    candidates transpiled on the loaded superhero, as a user would write them)."""
    root = tmp_path_factory.mktemp("pgbench")
    tasks = [t for t in json.loads((SHARED / "bird" / "dev_superhero.json").read_text())
             if t["question_id"] in TASK_IDS]
    candidates = {q: c for q, c in json.loads(CANDIDATES_K2.read_text()).items()
                  if int(q) in TASK_IDS}
    with connect(dsn, superhero) as conn:
        catalog = load_catalog(PsycopgExecutor(conn))
    pg_tasks = [{k: t[k] for k in MINI_DEV_KEYS} | {"SQL": to_postgres(t["SQL"], "sqlite", catalog)}
                for t in tasks]
    pg_candidates = {q: [to_postgres(s, "sqlite", catalog) for s in c]
                     for q, c in candidates.items()}
    (root / "dbs").mkdir()
    (root / "dbs" / "superhero").symlink_to(SUPERHERO.parent)
    paths = {"tasks": root / "tasks.json", "candidates": root / "candidates.json",
             "pg_tasks": root / "mini_dev_postgresql.json",
             "pg_candidates": root / "pg_candidates.json", "dbs": root / "dbs", "root": root}
    paths["tasks"].write_text(json.dumps(tasks))
    paths["candidates"].write_text(json.dumps(candidates))
    paths["pg_tasks"].write_text(json.dumps(pg_tasks, indent=1))
    paths["pg_candidates"].write_text(json.dumps(pg_candidates))
    return paths


def bench(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["bench", "--statement-timeout", "20000", *args])
    out, err = capsys.readouterr()
    return code, out, err


def summary_of(out: str) -> dict:
    return schema_valid("bench_summary", json.loads(out.strip().splitlines()[-1]))


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


SAME = ("tasks", "scored", "gold_failed", "pairs", "separated", "separation_rate",
        "separation_status", "accuracy", "correct", "instance_rows", "decided_by")


def test_postgres_tasks_on_a_schema_agree_with_the_sqlite_run(files, dsn, capsys):
    sqlite_out, pg_out = files["root"] / "sqlite", files["root"] / "pg"
    code, out, err = bench(capsys, "--tasks", str(files["tasks"]), "--candidates",
                           str(files["candidates"]), "--databases", str(files["dbs"]),
                           "--dsn", dsn, "--out", str(sqlite_out), "--json")
    assert code == 0, err
    on_sqlite = summary_of(out)
    code, out, err = bench(capsys, "--dialect", "postgres", "--tasks", str(files["pg_tasks"]),
                           "--candidates", str(files["pg_candidates"]), "--dsn", dsn,
                           "--out", str(pg_out), "--json")
    assert code == 0, err
    on_postgres = summary_of(out)
    assert "schema 'superhero'" in err and "loaded" not in err  # nothing was loaded
    assert on_postgres["scored"] == len(TASK_IDS) and on_postgres["separated"] >= 1
    assert {k: on_postgres[k] for k in SAME} == {k: on_sqlite[k] for k in SAME}
    for pg, lite in zip(records(pg_out), records(sqlite_out), strict=True):
        assert (pg["question_id"], pg["correct"], pg["choices"], pg["hits"],
                pg["upper_bound"]) == (lite["question_id"], lite["correct"], lite["choices"],
                                       lite["hits"], lite["upper_bound"])
    report = (pg_out / "reports" / f"{TASK_IDS[0]}.md").read_text()
    assert "**Gold (PostgreSQL)**" in report
    run = json.loads((pg_out / "run.json").read_text())
    assert run["dialect"] == "postgres" and run["schemas"] == "superhero=superhero"


def test_schema_map_places_a_db_id_in_a_schema_or_another_database(files, dsn, capsys):
    """db_ids that are not schema names: mapped to the schema, and to database.schema (the
    test database named explicitly, which takes the worker's other-database connection)."""
    renamed = [dict(t, db_id=f"heroes{i % 2}")
               for i, t in enumerate(json.loads(files["pg_tasks"].read_text()))]
    tasks = files["root"] / "renamed.json"
    tasks.write_text(json.dumps(renamed))
    database = urllib.parse.urlparse(dsn).path.lstrip("/")
    out = files["root"] / "mapped"
    code, stdout, err = bench(capsys, "--dialect", "postgres", "--tasks", str(tasks),
                              "--candidates", str(files["pg_candidates"]), "--dsn", dsn,
                              "--schema-map", f"heroes0=superhero,heroes1={database}.superhero",
                              "--out", str(out), "--json")
    assert code == 0, err
    summary = summary_of(stdout)
    assert summary["scored"] == len(TASK_IDS) and summary["gold_failed"] == []
    assert {r["db_id"] for r in records(out)} == {"heroes0", "heroes1"}
    pg_summary = json.loads((files["root"] / "pg" / "summary.json").read_text()) \
        if (files["root"] / "pg" / "summary.json").exists() else None
    if pg_summary is not None:  # the first test ran: the same tasks give the same figures
        assert summary["correct"] == pg_summary["correct"]


def test_a_missing_schema_is_an_error_naming_every_one(files, dsn, capsys):
    renamed = [dict(t, db_id="nowhere") for t in json.loads(files["pg_tasks"].read_text())]
    tasks = files["root"] / "nowhere.json"
    tasks.write_text(json.dumps(renamed))
    out = files["root"] / "missing"
    code, _, err = bench(capsys, "--dialect", "postgres", "--tasks", str(tasks), "--candidates",
                         str(files["pg_candidates"]), "--dsn", dsn, "--out", str(out),
                         "--schema-map", "nowhere=no_such_schema")
    assert code == 1
    assert "no schema 'no_such_schema'" in err and "(db_id nowhere)" in err
    assert "SQLSTATE 3F000" in err
    assert not (out / "results.jsonl").exists() or not (out / "results.jsonl").read_text()
    # A database of the map that does not exist is named too.
    code, _, err = bench(capsys, "--dialect", "postgres", "--tasks", str(tasks), "--candidates",
                         str(files["pg_candidates"]), "--dsn", dsn, "--out", str(out),
                         "--force", "--schema-map", "nowhere=no_such_db.superhero")
    assert code == 1 and "cannot connect to database 'no_such_db'" in err
    assert "SQLSTATE 3F000" in err


def test_a_schema_the_runner_may_not_use_is_refused(files, dsn, capsys):
    """The check runs as the role of --dsn: a role without USAGE on the schema is told so."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS pgbench_outsider")
        conn.execute("CREATE ROLE pgbench_outsider LOGIN PASSWORD 'outsider-pw'")
    url = urllib.parse.urlparse(dsn)
    outsider = url._replace(netloc=f"pgbench_outsider:outsider-pw@{url.hostname}:{url.port}",
                            query="").geturl()
    try:
        code, _, err = bench(capsys, "--dialect", "postgres", "--tasks", str(files["pg_tasks"]),
                             "--candidates", str(files["pg_candidates"]), "--dsn", outsider,
                             "--out", str(files["root"] / "outsider"))
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DROP OWNED BY pgbench_outsider")
            conn.execute("DROP ROLE pgbench_outsider")
    assert code == 1
    assert "you may not use the schema 'superhero'" in err and "SQLSTATE 3F000" in err


@pytest.mark.parametrize("args, message", [
    (("--dialect", "postgres", "--databases", "{dbs}"), "--databases is for SQLite files"),
    ((), "--databases DIR is needed with --dialect sqlite"),
    (("--dialect", "postgres", "--schema-map", "superhero"),
     "--schema-map expects db_id=schema or db_id=database.schema, got 'superhero'"),
    (("--dialect", "postgres", "--schema-map", "a=x,a=y"), "--schema-map names 'a' twice"),
    (("--databases", "{dbs}", "--schema-map", "a=x"), "--schema-map is for --dialect postgres"),
])
def test_option_mistakes_are_refused_before_any_connection(files, tmp_path, capsys, args,
                                                           message):
    given = [a.format(dbs=files["dbs"]) for a in args]
    code, _, err = bench(capsys, "--tasks", str(files["pg_tasks"]), "--candidates",
                         str(files["pg_candidates"]), "--dsn",
                         "postgresql://nobody@127.0.0.1:1/none", "--out", str(tmp_path / "o"),
                         *given)
    assert code == 1 and message in err
