"""Relations named with their schema (``"Shop"."Order"``), on the search_path or not.

siselect knows a relation by its name; before the catalog read the schemas the queries
name, a schema-named relation outside the search_path was unknown to the lineage (the
server's separate failed) or, where a relation of the same name in another letter case was
on the search_path, taken for that one: the search ran on the wrong table and reported
that no separating instance exists.
"""

import json

import psycopg
import pytest

from conftest import readable_schema
from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.instances.separate import Options, separate
from siselect.runtime.errors import SiselectError
from siselect.selection.judges import ReferenceJudge
from siselect.selection.tournament import run_tournament
from siselect.sqltext.transpile import to_tree

SHOP = '"Shop"'
ORDERS = [
    f'CREATE TABLE {SHOP}."Order" (order_id int PRIMARY KEY, amount numeric, placed date)',
    f"INSERT INTO {SHOP}.\"Order\" SELECT i, (i % 40) * 2.5, date '2024-01-01' + i "
    "FROM generate_series(1, 400) i",
]
# On the search_path: a relation named like the other schema's but for the letter case
# (PostgreSQL tells "Order" and "order" apart; siselect's name lookup falls back to any
# case), and one named exactly like a relation of "Shop".
LOCAL = [
    "CREATE TABLE named_local.\"order\" (order_id int PRIMARY KEY, amount numeric)",
    "INSERT INTO named_local.\"order\" SELECT i, 1000 + i FROM generate_series(1, 50) i",
    "CREATE TABLE named_local.ledger (id int PRIMARY KEY)",
    "INSERT INTO named_local.ledger VALUES (1)",
]
Q1 = f'SELECT count(*) FROM {SHOP}."Order" WHERE amount > 50'
Q2 = f'SELECT count(*) FROM {SHOP}."Order" WHERE amount >= 50'


@pytest.fixture(scope="module")
def schemas(dsn: str) -> str:
    readable_schema(dsn, SHOP, *ORDERS)
    readable_schema(dsn, "named_local", *LOCAL)
    with psycopg.connect(dsn, autocommit=True) as conn:  # a relation "Shop" shares a name
        conn.execute(f"CREATE TABLE {SHOP}.ledger (id int)")
        conn.execute(f"GRANT SELECT ON {SHOP}.ledger TO PUBLIC")
    return "named_local"


@pytest.fixture
def local(dsn: str, schemas: str):
    with connect(dsn, schemas, statement_timeout_ms=30_000) as conn:
        yield PsycopgExecutor(conn)


def _amounts_of_d(dsn: str, table: str) -> dict[int, float]:
    with psycopg.connect(dsn) as conn:
        return {i: float(a) for i, a in conn.execute(f"SELECT order_id, amount FROM {table}")}


def test_a_schema_off_the_search_path_is_read(dsn: str, local):
    result = separate(local, Q1, Q2, Options(dialect="postgres"))
    assert result["status"] == "separated", result.get("reason")
    (rows,) = [t["rows"] for name, t in result["instance"].items() if name == "Order"]
    # The instance's rows are rows of "Shop"."Order" (not of named_local."order") and hold
    # the boundary value both queries read differently.
    shop = _amounts_of_d(dsn, f'{SHOP}."Order"')
    assert [(shop[r[0]], float(r[1])) for r in rows] == [(50.0, 50.0)]
    assert result["answers"]["q1"]["rows"] == [[0]]
    assert result["answers"]["q2"]["rows"] == [[1]]


def test_the_server_reads_it_too(dsn: str, schemas: str):
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {schemas}, public")
        (result,), = conn.execute("SELECT siselect.separate(%s, %s, dialect => 'postgres')",
                                  (Q1, Q2)).fetchall()
    assert result["status"] == "separated", result.get("reason")
    assert set(result["instance"]) == {"Order"}


def test_a_hidden_relation_is_refused(local):
    with pytest.raises(SiselectError) as caught:
        separate(local, f"SELECT count(*) FROM {SHOP}.ledger",
                 "SELECT count(*) FROM ledger", Options(dialect="postgres"))
    assert caught.value.sqlstate == "0A000"
    assert caught.value.message.startswith("q1: ")


def test_a_tournament_over_named_relations(local):
    gold = f'SELECT count(*) FROM {SHOP}."Order" WHERE amount >= 50'
    result = run_tournament(local, [Q1, Q2, f'SELECT count(*) FROM {SHOP}."Order"'],
                            "How many?", None, ReferenceJudge(to_tree(gold, "postgres")),
                            Options(dialect="postgres"), reference=gold)
    assert result["winner"]["index"] == 1, json.dumps(result["duels"])[:2000]
    assert all(d["separation"] == "separated" for d in result["duels"])


def test_a_hidden_candidate_drops_out_alone(local):
    result = run_tournament(local, [Q1, f"SELECT count(*) FROM {SHOP}.ledger"], "How many?",
                            None, ReferenceJudge(to_tree(Q1, "postgres")),
                            Options(dialect="postgres"))
    assert [(d["index"], d["sqlstate"]) for d in result["dropped"]] == [(1, "0A000")]
    assert result["winner"]["index"] == 0
