"""Empty BIRD databases from dev_tables.json: types, keys, exact names, idempotence."""

import json

import psycopg
import pytest

from conftest import SHARED
from siselect.client.bird_schema import create_empty, tables_of
from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.runtime.catalog import load_catalog
from siselect.runtime.errors import InvalidInput, SiselectError
from siselect.sqltext.sqlite_types import pg_type
from siselect.sqltext.transpile import to_postgres

TABLES_JSON = SHARED / "bird" / "dev_tables.json"


def entry(db_id: str) -> dict:
    return next(e for e in json.loads(TABLES_JSON.read_text()) if e["db_id"] == db_id)


def test_tables_follow_the_loader_type_rule() -> None:
    e = entry("debit_card_specializing")
    tables = {t.name: t for t in tables_of(e)}
    assert set(tables) == set(e["table_names_original"])
    declared = {(e["table_names_original"][t], c): ty for (t, c), ty in
                zip(e["column_names_original"], e["column_types"], strict=True) if t >= 0}
    for table in tables.values():
        for name, typ in table.columns:
            assert typ == pg_type(declared[(table.name, name)], set())


def test_create_is_exact_keyed_and_idempotent(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert create_empty(conn, TABLES_JSON, "california_schools", "bird_cs") == "created"
        assert create_empty(conn, TABLES_JSON, "california_schools", "bird_cs") == "unchanged"
        row = conn.execute(
            "SELECT obj_description('bird_cs'::regnamespace, 'pg_namespace')").fetchone()
        assert row is not None
        mark = json.loads(row[0])
        assert mark["mark"] == "siselect-load" and mark["empty"] is True
    with connect(dsn, "bird_cs") as conn:
        catalog = load_catalog(PsycopgExecutor(conn))
        assert catalog.tables["frpm"].column("cdscode") == catalog.tables["frpm"].columns[0]
        assert catalog.tables["frpm"].columns[0].name == "CDSCode"
        assert catalog.tables["schools"].primary_key == ["CDSCode"]
        assert any(fk.ref_table == "schools" for fk in catalog.tables["frpm"].foreign_keys)
        # Candidates written for the real database run on the empty one.
        sql = ("SELECT T2.`School Name` FROM schools AS T1 JOIN frpm AS t2 ON t1.cdscode = "
               "T2.CDSCode WHERE t1.county LIKE 'ala%' ORDER BY T2.`Enrollment (K-12)` DESC")
        assert PsycopgExecutor(conn).run(to_postgres(sql, "sqlite", catalog)).rows == []


def test_refuses_foreign_and_loaded_schemas(dsn: str, superhero: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA IF NOT EXISTS not_ours")
        with pytest.raises(SiselectError):
            create_empty(conn, TABLES_JSON, "toxicology", "not_ours")
        with pytest.raises(SiselectError):
            create_empty(conn, TABLES_JSON, "superhero", superhero)
        with pytest.raises(InvalidInput):
            create_empty(conn, TABLES_JSON, "no_such_db")
