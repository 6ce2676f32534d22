"""SQLite's answers on PostgreSQL where the two engines part: issue 16's remaining causes.

A small SQLite file is loaded into PostgreSQL by the loader; each query is run on SQLite
and, transpiled, on PostgreSQL, and the differential's verdict must be ``agree`` (same
rows) or, where SQLite leaves the answer to the engine, ``nondeterministic``. Each case
names the construct that failed on the yardstick's databases (numbers out of a double's
range, GROUP_CONCAT's order, ``t.*`` beside aggregates, the implicit rowid).
"""

import sqlite3

import pytest

from conftest import loaded_executor
from siselect.client.bench.differential import AGREE, FLAGGED, compare
from siselect.client.bench.sqlite_compare import open_readonly, same_rows, sqlite_rows
from siselect.runtime.catalog import load_catalog
from siselect.sqltext.transpile import to_postgres

SCHEMA = "dialect_fidelity"

DATA = """
CREATE TABLE Cards (Name TEXT, Power TEXT, Cost INTEGER);
INSERT INTO Cards VALUES ('Ancestral', '239e3286', 1), ('Bolt', '-1e999', 1),
  ('Counter', '5', 2), ('Dark', 'x', 3), ('Elf', '1e-400', 1),
  ('Fog', '99999999999999999999', 1), ('Giant', ' 12.5e2 tall', 5), ('Hydra', NULL, 4);
CREATE TABLE Member (Member_Id TEXT PRIMARY KEY, First TEXT, Zip INTEGER);
CREATE TABLE Expense (Expense_Id TEXT PRIMARY KEY, Link_To_Member TEXT, Cost REAL);
INSERT INTO Member VALUES ('m1', 'Ann', 1000), ('m2', 'Bob', 2000), ('m3', 'Cy', 3000);
INSERT INTO Expense VALUES ('e1', 'm1', 10), ('e2', 'm1', 30), ('e3', 'm2', 5), ('e4', 'm2', 6),
  ('e5', 'm2', 7), ('e6', 'm3', 100);
"""

# query -> the verdict the differential must give
CASES = {
    # Text that reads as a number beyond a double's range: SQLite gives Inf or 0.0.
    "number text past a double": ("SELECT name, power + 0, ABS(power), CAST(power AS REAL), "
                                  "CAST(power AS INTEGER) FROM cards", AGREE),
    "sum of such numbers": ("SELECT SUM(power), MAX(ABS(power)) FROM cards "
                            "WHERE name <> 'Bolt'", AGREE),
    "literals past a double": ("SELECT '239e3286' + 0, -'1e999', CAST('99999999999999999999' "
                               "AS INTEGER) FROM cards WHERE name = 'Bolt'", AGREE),
    # t.* beside aggregates: each column taken from the group's row, not one composite value.
    "t.* in a grouped query": ("SELECT m.* FROM member AS m JOIN expense AS e ON m.member_id = "
                               "e.link_to_member GROUP BY m.member_id HAVING COUNT(*) > 1 "
                               "ORDER BY SUM(e.cost) DESC", AGREE),
    "* beside an aggregate": ("SELECT *, COUNT(*) FROM member AS m JOIN expense AS e "
                              "ON m.member_id = e.link_to_member GROUP BY m.member_id, e.cost "
                              "ORDER BY e.cost", AGREE),
    # GROUP_CONCAT leaves the order of a group's values to the engine: flagged where a group
    # has two different values, compared where each has one.
    "GROUP_CONCAT of several values": ("SELECT link_to_member, GROUP_CONCAT(expense_id) "
                                       "FROM expense GROUP BY link_to_member", FLAGGED),
    "GROUP_CONCAT DISTINCT in a CTE": ("WITH c AS (SELECT GROUP_CONCAT(DISTINCT m.first) AS "
                                       "names FROM member AS m JOIN expense AS e ON "
                                       "m.member_id = e.link_to_member) SELECT names FROM c",
                                       FLAGGED),
    "GROUP_CONCAT of one value": ("SELECT expense_id, GROUP_CONCAT(cost, ';') FROM expense "
                                  "GROUP BY expense_id", AGREE),
}


@pytest.fixture(scope="module")
def sqlite_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("fidelity") / f"{SCHEMA}.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(DATA)
    return path


@pytest.fixture(scope="module")
def fidelity_executor(dsn: str, sqlite_file):
    with loaded_executor(dsn, sqlite_file, SCHEMA) as executor:
        yield executor


@pytest.mark.parametrize(("sql", "verdict"), list(CASES.values()), ids=list(CASES))
def test_differential_verdict(sql: str, verdict: str, sqlite_file, fidelity_executor) -> None:
    db = open_readonly(sqlite_file)
    catalog = load_catalog(fidelity_executor)
    got = compare(db, fidelity_executor, catalog, sql)
    assert got.kind == verdict, (got, to_postgres(sql, "sqlite", catalog))
    if verdict == AGREE:
        rows = fidelity_executor.run(to_postgres(sql, "sqlite", catalog)).rows
        assert rows and same_rows(sqlite_rows(db, sql), rows)
