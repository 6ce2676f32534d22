"""Issue 12, item 6: reloading a schema never drops, without an explicit --cascade, what
others built on it outside the schema, nor replaces a database loaded from another file."""

import os
import sqlite3
from pathlib import Path

import psycopg
import pytest

from siselect.client.cli import main
from siselect.client.loader import load
from siselect.runtime.errors import SiselectError
from siselect.runtime.executor import quote_ident

SUFFIX = os.getpid()


def make_db(path: Path, prices: list[int]) -> Path:
    """A small shop: items and the orders that reference them."""
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price INTEGER)")
        db.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, "
                   "item_id INTEGER REFERENCES item(id), qty INTEGER)")
        db.executemany("INSERT INTO item VALUES (?, ?, ?)",
                       [(i, f"item {i}", p) for i, p in enumerate(prices, 1)])
        db.executemany("INSERT INTO orders VALUES (?, ?, ?)",
                       [(i, i, i * 2) for i in range(1, len(prices) + 1)])
    db.close()
    return path


def contents(conn: psycopg.Connection, schema: str) -> dict[str, list[tuple]]:
    """Every row of the schema's two tables, in key order."""
    return {
        t: conn.execute(f"SELECT * FROM {quote_ident(schema)}.{t} ORDER BY id").fetchall()
        for t in ("item", "orders")
    }


def exists(conn: psycopg.Connection, regclass: str) -> bool:
    return conn.execute("SELECT pg_catalog.to_regclass(%s) IS NOT NULL",
                        (regclass,)).fetchone()[0]


@pytest.fixture
def world(dsn: str, tmp_path: Path):
    """Schema ``shop`` loaded by siselect, a view over it in another schema ``theirs``
    that a role may read, and that role's SELECT on ``shop.item``."""
    shop, theirs, role = (f"reload_shop_{SUFFIX}", f"reload_theirs_{SUFFIX}",
                          f"reload_reader_{SUFFIX}")
    path = make_db(tmp_path / "shop.sqlite", [10, 20, 30])
    with psycopg.connect(dsn, autocommit=True) as conn:
        load(conn, path, shop)
        conn.execute(f"CREATE ROLE {role}")
        conn.execute(f"CREATE SCHEMA {theirs}")
        conn.execute(f"CREATE VIEW {theirs}.dear AS SELECT name FROM {shop}.item "
                     "WHERE price > 15")
        conn.execute(f"GRANT USAGE ON SCHEMA {theirs}, {shop} TO {role}")
        conn.execute(f"GRANT SELECT ON {theirs}.dear TO {role}")
        conn.execute(f"GRANT SELECT ON {shop}.item TO {role}")
        conn.execute(f"GRANT SELECT (id, qty) ON {shop}.orders TO {role}")
        yield conn, path, shop, theirs, role
        conn.execute(f"DROP SCHEMA IF EXISTS {theirs} CASCADE")
        conn.execute(f"DROP SCHEMA IF EXISTS {shop} CASCADE")
        conn.execute(f"DROP OWNED BY {role}")
        conn.execute(f"DROP ROLE {role}")


def test_a_view_outside_makes_a_reload_refused_and_survives(world):
    conn, path, shop, theirs, role = world
    before = contents(conn, shop)
    make_db(path, [10, 20, 30, 40])
    with pytest.raises(SiselectError) as caught:
        load(conn, path, shop, force=True)
    assert caught.value.sqlstate == "2BP01"
    assert f"view {theirs}.dear" in caught.value.message
    assert exists(conn, f"{theirs}.dear")
    assert conn.execute("SELECT has_table_privilege(%s, %s, 'SELECT')",
                        (role, f"{theirs}.dear")).fetchone()[0]
    assert conn.execute(f"SELECT count(*) FROM {theirs}.dear").fetchone()[0] == 2
    assert contents(conn, shop) == before


def test_cascade_drops_the_view_and_reports_it(world):
    conn, path, shop, theirs, role = world
    make_db(path, [10, 20, 30, 40])
    said: list[str] = []
    report = load(conn, path, shop, say=said.append, cascade=True)
    assert report.status == "loaded" and report.tables["item"] == 4
    assert report.dropped == [f"view {theirs}.dear"]
    assert not exists(conn, f"{theirs}.dear")
    assert any("drop cascades to view" in line for line in said)
    assert len(contents(conn, shop)["item"]) == 4


def test_a_reload_keeps_the_privileges_others_had(world):
    conn, path, shop, theirs, role = world
    conn.execute(f"DROP VIEW {theirs}.dear")
    report = load(conn, path, shop, force=True)
    assert report.status == "loaded" and report.dropped == []
    privileges = conn.execute(
        "SELECT has_table_privilege(%(r)s, %(t)s, 'SELECT'), "
        "has_column_privilege(%(r)s, %(o)s, 'qty', 'SELECT'), "
        "has_column_privilege(%(r)s, %(o)s, 'item_id', 'SELECT')",
        {"r": role, "t": f"{shop}.item", "o": f"{shop}.orders"},
    ).fetchone()
    assert privileges == (True, True, False)


def test_a_foreign_key_from_outside_makes_a_reload_refused(world):
    conn, path, shop, theirs, role = world
    conn.execute(f"DROP VIEW {theirs}.dear")
    conn.execute(f"CREATE TABLE {theirs}.wish (item_id bigint REFERENCES {shop}.item (id))")
    with pytest.raises(SiselectError) as caught:
        load(conn, path, shop, force=True)
    assert caught.value.sqlstate == "2BP01"
    assert f"on table {theirs}.wish" in caught.value.message
    constraints = conn.execute(
        "SELECT count(*) FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'f'",
        (f"{theirs}.wish",),
    ).fetchone()[0]
    assert constraints == 1


def test_another_file_needs_cascade(world, tmp_path):
    conn, path, shop, theirs, role = world
    conn.execute(f"DROP VIEW {theirs}.dear")
    before = contents(conn, shop)
    mark = conn.execute("SELECT obj_description(%s::regnamespace, 'pg_namespace')",
                        (shop,)).fetchone()[0]
    other = make_db(tmp_path / "elsewhere.sqlite", [7, 8])
    with pytest.raises(SiselectError) as caught:
        load(conn, other, shop)
    assert caught.value.sqlstate == "42P06" and str(path.resolve()) in caught.value.message
    assert contents(conn, shop) == before
    assert conn.execute("SELECT obj_description(%s::regnamespace, 'pg_namespace')",
                        (shop,)).fetchone()[0] == mark
    assert load(conn, other, shop, cascade=True).tables == {"item": 2, "orders": 2}
    assert len(contents(conn, shop)["item"]) == 2


def test_the_cli_refuses_then_cascades(world, dsn, capsys):
    conn, path, shop, theirs, role = world
    make_db(path, [10, 20, 30, 40])
    assert main(["load", str(path), "--name", shop, "--dsn", dsn]) == 1
    err = capsys.readouterr().err
    assert "SQLSTATE 2BP01" in err and f"view {theirs}.dear" in err
    assert exists(conn, f"{theirs}.dear")
    assert main(["load", str(path), "--name", shop, "--dsn", dsn, "--cascade"]) == 0
    err = capsys.readouterr().err
    assert f"dropped (--cascade): view {theirs}.dear" in err
    assert not exists(conn, f"{theirs}.dear")


def test_loads_of_one_file_at_once_both_succeed(dsn: str, tmp_path: Path):
    """Two users load the same file under one name at the same moment: one loads it, the
    other waits and finds it unchanged; neither fails on the schema the other created."""
    import threading

    name = f"reload_twice_{SUFFIX}"
    path = make_db(tmp_path / "twice.sqlite", [5, 6, 7])
    start = threading.Barrier(2)
    outcomes: list[object] = []

    def one() -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            start.wait()
            try:
                outcomes.append(load(conn, path, name).status)
            except Exception as exc:  # the failure itself is the finding
                outcomes.append(exc)

    threads = [threading.Thread(target=one) for _ in range(2)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert sorted(map(str, outcomes)) == ["loaded", "unchanged"], outcomes
        with psycopg.connect(dsn, autocommit=True) as conn:
            assert contents(conn, name)["item"] == [(1, "item 1", 5), (2, "item 2", 6),
                                                    (3, "item 3", 7)]
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
