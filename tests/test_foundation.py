"""The foundation: installation, version check, loader and the sql command."""

import json
import sqlite3

import psycopg
import pytest

from siselect import __version__
from siselect.client.cli import main
from siselect.client.loader import load, open_sqlite
from siselect.runtime.errors import SiselectError

from .conftest import SUPERHERO


def test_version_from_server_matches_package(conn):
    assert conn.execute("SELECT siselect.version()").fetchone()[0] == __version__


def test_superhero_loads_with_keys_and_comments(conn, superhero):
    tables = conn.execute(
        "SELECT count(*) FROM pg_tables WHERE schemaname = %s", (superhero,)
    ).fetchone()[0]
    assert tables == 10
    pk = conn.execute(
        "SELECT count(*) FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace "
        "WHERE n.nspname = %s AND contype = 'p'",
        (superhero,),
    ).fetchone()[0]
    fk = conn.execute(
        "SELECT count(*) FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace "
        "WHERE n.nspname = %s AND contype = 'f'",
        (superhero,),
    ).fetchone()[0]
    assert pk == 8 and fk >= 10
    comment = conn.execute("SELECT col_description('superhero.superhero'::regclass, 2)").fetchone()[
        0
    ]
    assert "name of the superhero" in comment
    types = dict(
        conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'superhero' AND table_name = 'superhero'"
        ).fetchall()
    )
    assert types["weight_kg"] == "bigint" and types["superhero_name"] == "text"


def test_reload_unchanged_is_a_no_op(dsn, superhero):
    with psycopg.connect(dsn, autocommit=True) as c:
        assert load(c, SUPERHERO, superhero).status == "unchanged"


def test_identifiers_with_spaces_and_capitals_survive(dsn, tmp_path):
    path = tmp_path / "odd.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            'CREATE TABLE "School Info" ("CDS Code" TEXT PRIMARY KEY, '
            '"Charter School (Y/N)" INTEGER, "Mixed" NUMERIC)'
        )
        db.executemany(
            'INSERT INTO "School Info" VALUES (?, ?, ?)',
            [("01", 1, 2.5), ("02", 0, "n/a"), ("03", None, 7)],
        )
    with psycopg.connect(dsn, autocommit=True) as c:
        report = load(c, path, "odd")
        assert report.tables == {"School Info": 3}
        rows = c.execute(
            'SELECT "CDS Code", "Charter School (Y/N)", "Mixed" FROM odd."School Info" ORDER BY 1'
        ).fetchall()
    assert rows == [("01", 1, "2.5"), ("02", 0, "n/a"), ("03", None, "7")]


@pytest.mark.parametrize(
    "content", [b"", b"hello, not a database" * 10, b"SQLite format 3\x00" + b"\x00" * 200]
)
def test_bad_files_are_refused_and_leave_nothing(dsn, tmp_path, content):
    path = tmp_path / "bad.sqlite"
    path.write_bytes(content)
    with psycopg.connect(dsn, autocommit=True) as c:
        with pytest.raises(SiselectError):
            load(c, path, "bad")
        assert c.execute("SELECT 1 FROM pg_namespace WHERE nspname = 'bad'").fetchone() is None


def test_missing_file(tmp_path):
    with pytest.raises(SiselectError, match="no such file"):
        open_sqlite(tmp_path / "nope.sqlite")


def test_name_taken_by_foreign_schema(dsn):
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("CREATE SCHEMA IF NOT EXISTS someone_elses")
        with pytest.raises(SiselectError, match="taken"):
            load(c, SUPERHERO, "someone_elses")
        assert (
            c.execute(
                "SELECT count(*) FROM pg_tables WHERE schemaname = 'someone_elses'"
            ).fetchone()[0]
            == 0
        )


@pytest.mark.parametrize(
    "query",
    [
        "DELETE FROM superhero",
        "DROP TABLE superhero",
        "INSERT INTO colour VALUES (999, 'x') RETURNING *",
        "SELECT 1; DELETE FROM colour",
    ],
)
def test_sql_refuses_writes(dsn, superhero, query, capsys):
    code = main(["sql", "--dsn", dsn, "--db", superhero, query])
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert err.startswith("siselect: error:") and "\n" not in err


def test_sql_json_last_line(dsn, superhero, capsys):
    code = main(
        [
            "sql",
            "--dsn",
            dsn,
            "--db",
            superhero,
            "--dialect",
            "sqlite",
            "--json",
            "SELECT colour FROM colour WHERE id IN (1, 2) ORDER BY id",
        ]
    )
    out = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert json.loads(out[-1])["rows"] == [["No Colour"], ["Amber"]]


def test_the_embedded_server_preloads_provsql_where_it_is_installed(monkeypatch, tmp_path):
    from siselect.client import embedded
    from siselect.runtime.errors import ConfigError

    monkeypatch.setenv("SISELECT_HOME", str(tmp_path))
    installed = embedded.provsql_library() is not None
    assert ("shared_preload_libraries" in embedded.cluster().settings) == installed
    assert embedded.cluster(False).settings == {}
    if installed:
        assert embedded.cluster(True).settings == {"shared_preload_libraries": "provsql"}
    else:
        with pytest.raises(ConfigError, match="ProvSQL is not installed"):
            embedded.cluster(True)

