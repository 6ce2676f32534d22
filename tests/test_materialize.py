"""Issue 12, item 7: siselect.instances.materialize writes each instance into a fresh schema of its
own, never into pg_temp where it would hide the caller's tables, and refuses a malformed
instance with a SQLSTATE before writing anything."""

import json
import os

import psycopg
import pytest

SHOP = f"mat_shop_{os.getpid()}"
INSTANCE = {"item": {"columns": ["id", "price"], "rows": [[1, 10.0], [2, 20.0]]}}
MATERIALIZE = "SELECT siselect.materialize(%s::jsonb, search_path => %s)"


@pytest.fixture
def shop(dsn: str):
    """A schema with one 50-row table, and a connection whose search_path is it."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {SHOP}")
        conn.execute(f"CREATE TABLE {SHOP}.item (id bigint PRIMARY KEY, name text, "
                     "price double precision)")
        conn.execute(f"INSERT INTO {SHOP}.item SELECT i, 'item ' || i, i * 10 "
                     "FROM generate_series(1, 50) i")
        conn.execute(f"SET search_path = {SHOP}")
        yield conn
        for (schema,) in conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'siselect\\_instance\\_%'"
        ).fetchall():
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
        conn.execute(f"DROP SCHEMA {SHOP} CASCADE")


def materialize(conn: psycopg.Connection, instance, schema: str | None = None) -> str:
    if schema is None:
        return conn.execute(MATERIALIZE, (json.dumps(instance), SHOP)).fetchone()[0]
    return conn.execute("SELECT siselect.materialize(%s::jsonb, %s, %s)",
                        (json.dumps(instance), schema, SHOP)).fetchone()[0]


def schemas(conn: psycopg.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT nspname FROM pg_namespace").fetchall()}


def test_two_calls_in_one_session_write_two_schemas(shop):
    first = materialize(shop, INSTANCE)
    second = materialize(shop, {"item": {"columns": ["id"], "rows": [[7]]}})
    assert first != second and {first, second} <= schemas(shop)
    assert shop.execute(f"SELECT id, name, price FROM {first}.item ORDER BY id").fetchall() \
        == [(1, None, 10.0), (2, None, 20.0)]
    assert shop.execute(f"SELECT id FROM {second}.item").fetchall() == [(7,)]
    types = shop.execute(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = %s::regclass AND attnum > 0 ORDER BY attnum", (f"{first}.item",),
    ).fetchall()
    assert types == [("bigint",), ("text",), ("double precision",)]


def test_the_callers_tables_are_not_hidden_afterwards(shop):
    materialize(shop, INSTANCE)
    materialize(shop, INSTANCE)
    assert shop.execute("SELECT count(*) FROM item").fetchone()[0] == 50
    assert shop.execute("SELECT count(*) FROM pg_class WHERE relnamespace = "
                        "pg_my_temp_schema()").fetchone()[0] == 0
    separated = shop.execute(
        "SELECT siselect.separate('SELECT count(*) FROM item WHERE price > 100', "
        "'SELECT count(*) FROM item WHERE price >= 100')"
    ).fetchone()[0]
    assert separated["status"] == "separated"
    # Rows of the caller's 50 items: the one priced 100 tells the queries apart, and one
    # priced over 100 keeps the strict count from counting none of its rows (degenerate).
    rows = separated["instance"]["item"]["rows"]
    assert [10, "item 10", 100.0] in rows and len(rows) == 2
    assert all(price > 100 for _, _, price in rows if price != 100.0)


def test_a_named_schema_is_new_or_refused(shop):
    assert materialize(shop, INSTANCE, "mat_named") == "mat_named"
    try:
        with pytest.raises(psycopg.errors.DuplicateSchema):
            materialize(shop, {"item": {"columns": ["id"], "rows": [[9]]}}, "mat_named")
        assert shop.execute("SELECT id FROM mat_named.item ORDER BY id").fetchall() \
            == [(1,), (2,)]
        with pytest.raises(psycopg.errors.DuplicateSchema):
            materialize(shop, INSTANCE, SHOP)
        assert shop.execute(f"SELECT count(*) FROM {SHOP}.item").fetchone()[0] == 50
    finally:
        shop.execute("DROP SCHEMA mat_named CASCADE")


@pytest.mark.parametrize("instance", [
    [],
    {},
    "item",
    {"item": []},
    {"item": {"columns": ["id"]}},
    {"item": {"columns": "id", "rows": []}},
    {"item": {"columns": ["id", "price"], "rows": [[1]]}},
    {"item": {"columns": ["id"], "rows": [5]}},
    {"item": {"columns": [1], "rows": [[1]]}},
    {"item": {"columns": ["id", "id"], "rows": [[1, 1]]}},
    {"item": {"columns": ["id"], "rows": []}, "ITEM": {"columns": ["id"], "rows": []}},
])
def test_a_malformed_instance_is_22023_and_writes_nothing(shop, instance):
    before = schemas(shop)
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        materialize(shop, instance)
    assert schemas(shop) == before


def test_an_unknown_table_or_column_is_named(shop):
    before = schemas(shop)
    with pytest.raises(psycopg.errors.UndefinedColumn, match="colour"):
        materialize(shop, {"item": {"columns": ["colour"], "rows": [["red"]]}})
    with pytest.raises(psycopg.errors.UndefinedTable, match="nowhere"):
        materialize(shop, {"nowhere": {"columns": [], "rows": []}})
    assert schemas(shop) == before
