"""SQLite's answers on PostgreSQL where the two engines part: issue 16's remaining causes.

A small SQLite file is loaded into PostgreSQL by the loader; each query is run on SQLite
and, transpiled, on PostgreSQL, and the differential's verdict must be ``agree`` (same
rows) or, where SQLite leaves the answer to the engine, ``nondeterministic``. Each case
names the construct that failed on the yardstick's databases (numbers out of a double's
range, GROUP_CONCAT's order, ``t.*`` beside aggregates, the implicit rowid).
"""

import sqlite3

import pytest

from conftest import loaded_executor, sqlite_file_from
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
-- No INTEGER PRIMARY KEY: SQLite numbers the rows itself (rowid), with gaps after deletes.
CREATE TABLE Lab (Patient INTEGER, Alb REAL);
INSERT INTO Lab VALUES (1, 3.0), (9, 9.9), (2, 4.0), (3, 5.0), (9, 9.9), (1, 6.0);
DELETE FROM Lab WHERE Patient = 9;
CREATE TABLE Exam (Patient INTEGER, Result TEXT);
INSERT INTO Exam VALUES (1, 'a'), (2, 'b'), (3, 'c'), (3, 'd'), (2, 'e'), (1, 'f');
CREATE TABLE Patient (Id INTEGER PRIMARY KEY, Sex TEXT);
INSERT INTO Patient VALUES (1, 'F'), (3, 'M'), (4, 'F'), (6, 'M');
-- A column named rowid: SQLite's rowid is that column, _rowid_ the row number.
CREATE TABLE Odd (RowId TEXT, V INTEGER);
INSERT INTO Odd VALUES ('x', 1), ('y', 2);
-- INT (not INTEGER) PRIMARY KEY is no rowid alias; WITHOUT ROWID has no rowid.
CREATE TABLE Keyed (Id INT PRIMARY KEY, V TEXT);
INSERT INTO Keyed VALUES (20, 'p'), (10, 'q');
CREATE TABLE Plain (K TEXT PRIMARY KEY, V INTEGER) WITHOUT ROWID;
INSERT INTO Plain VALUES ('b', 2), ('a', 1);
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
    # SQLite's implicit rowid, kept by the loader and hidden from *, NATURAL and USING.
    "rowid joined to a key": ("SELECT p.sex, l.alb FROM patient AS p JOIN lab AS l "
                              "ON p.id = l.rowid", AGREE),
    "rowids joined": ("SELECT l.alb, e.result FROM lab AS l JOIN exam AS e "
                      "ON l.rowid = e.rowid", AGREE),
    "rowid aliases": ("SELECT _rowid_, oid, alb FROM lab WHERE rowid > 2", AGREE),
    "* omits the rowid": ("SELECT * FROM lab", AGREE),
    "t.* omits the rowid": ("SELECT e.*, rowid FROM exam AS e WHERE e.rowid IN (2, 5)", AGREE),
    "NATURAL omits the rowid": ("SELECT * FROM lab NATURAL JOIN exam", AGREE),
    "USING omits the rowid": ("SELECT * FROM lab JOIN exam USING (patient)", AGREE),
    "a column named rowid": ("SELECT rowid, _rowid_, v FROM odd", AGREE),
    "INT PRIMARY KEY is no rowid": ("SELECT rowid, id, v FROM keyed", AGREE),
    "WITHOUT ROWID": ("SELECT * FROM plain", AGREE),
}


@pytest.fixture(scope="module")
def sqlite_file(tmp_path_factory):
    return sqlite_file_from(tmp_path_factory, SCHEMA, DATA)


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


def _sqlite_instance(instance: dict, rowids: dict[str, str]) -> sqlite3.Connection:
    """The instance D' as a SQLite database: each table with its rows, under the rowids
    they carry (``rowids``: table -> the column that keeps them)."""
    db = sqlite3.connect(":memory:")
    for table, relation in instance.items():
        own = [c for c in relation.columns if c != rowids.get(table)]
        db.execute(f'CREATE TABLE "{table}" ({", ".join(own)})')
        listed = own + ([rowids[table]] if table in rowids else [])
        db.executemany(f'INSERT INTO "{table}" ({", ".join(listed)}) VALUES '
                       f'({", ".join("?" * len(listed))})',
                       [[row[relation.columns.index(c)] for c in listed]
                        for row in relation.rows])
    return db


def test_separation_over_rowids(dsn: str, sqlite_file, fidelity_executor) -> None:
    """Rows are still told apart by ctid; D' carries each row's SQLite rowid, and the two
    queries answer on D' (as SQLite runs them on those rows) as siselect says."""
    import psycopg

    from siselect.client import api
    from siselect.client.loader import ROWID_COMMENT

    q1 = "SELECT COUNT(*) FROM lab AS l JOIN exam AS e ON l.rowid = e.rowid WHERE l.alb > 3.5"
    q2 = "SELECT COUNT(*) FROM lab AS l JOIN exam AS e ON l.rowid = e.rowid WHERE l.alb > 4.5"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {SCHEMA}")
        result = api.separate(conn, q1, q2, dialect="sqlite", seed=1)
    assert result.status == "separated", result.reason
    assert result.instance is not None and result.answers is not None
    lab = result.instance["Lab"]
    assert load_catalog(fidelity_executor).tables["Lab"].column("rowid").comment == ROWID_COMMENT
    assert "rowid" in lab.columns and result.rows == sum(
        len(r.rows) for r in result.instance.values())
    source = open_readonly(sqlite_file)
    for row in lab.rows:
        kept = source.execute("SELECT Patient, Alb FROM Lab WHERE rowid = ?",
                              (row[lab.columns.index("rowid")],)).fetchone()
        assert kept == (row[lab.columns.index("Patient")], row[lab.columns.index("Alb")])
    on_instance = _sqlite_instance(result.instance, {"Lab": "rowid", "Exam": "rowid"})
    assert [list(r) for r in on_instance.execute(q1)] == result.answers.q1.rows
    assert [list(r) for r in on_instance.execute(q2)] == result.answers.q2.rows
    assert result.answers.q1.rows != result.answers.q2.rows


@pytest.mark.parametrize("style", ["camel", "reserved"])
def test_renamed_variant_keeps_rowids(style: str, sqlite_file, tmp_path) -> None:
    """The renaming proof compares answers across variants: a query reading rowid must
    read the same numbers there (Lab's rowids have a gap)."""
    from siselect.client.bench.mutate import renaming, write_variant

    names = renaming(sqlite3.connect(sqlite_file), style, [])
    target = tmp_path / "variant.sqlite"
    write_variant(sqlite_file, target, names)
    sql = "SELECT _rowid_, patient, alb FROM lab ORDER BY 1"
    before = sqlite3.connect(sqlite_file).execute(sql).fetchall()
    assert [r[0] for r in before] == [1, 3, 4, 6]
    assert sqlite3.connect(target).execute(names.query(sql)).fetchall() == before


def test_a_load_without_the_rowid_is_loaded_again(dsn: str, sqlite_file) -> None:
    """A schema loaded before the loader kept rowids (its mark has no ``layout``) is loaded
    again from the unchanged file, and then holds Lab's rowids."""
    import json

    import psycopg

    from siselect.client.loader import load
    from siselect.runtime.executor import quote_literal

    schema = f"{SCHEMA}_old"
    with psycopg.connect(dsn, autocommit=True) as conn:
        load(conn, sqlite_file, schema, force=True)
        conn.execute(f'ALTER TABLE {schema}."Lab" DROP COLUMN rowid')
        (text,), = conn.execute("SELECT obj_description(%s::regnamespace, 'pg_namespace')",
                                (schema,)).fetchall()
        mark = {k: v for k, v in json.loads(text).items() if k not in ("layout", "rowid")}
        conn.execute(f"COMMENT ON SCHEMA {schema} IS {quote_literal(json.dumps(mark))}")
        assert load(conn, sqlite_file, schema).status == "loaded"
        assert load(conn, sqlite_file, schema).status == "unchanged"
        rowids = conn.execute(f'SELECT rowid FROM {schema}."Lab" ORDER BY 1').fetchall()
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
    assert rowids == [(1,), (3,), (4,), (6,)]
