"""A subquery compared as a number is written, and run, once (sqlite_rules/as_number.double).

SQLite compares a NUMERIC column's stored numbers with a subquery's MAX of them as numbers;
the transpiled comparison reads each side as a double, an expression that names its operand
six times. A subquery operand is bound once in a derived table instead, so its text (and its
run) is not repeated per mention and nested ones do not multiply (financial 95: 5.5 kB of
SQL became 23.6 kB). The answers stay SQLite's, outer references and numbers past a double's
range included.
"""


import pytest
from sqlglot import exp

from conftest import loaded_executor, sqlite_file_from
from siselect.client.bench.differential import AGREE, compare
from siselect.client.bench.sqlite_compare import open_readonly, same_rows, sqlite_rows
from siselect.runtime.catalog import load_catalog
from siselect.sqltext.sqlite_rules.as_number import double
from siselect.sqltext.transpile import to_postgres, to_tree

SCHEMA = "bound_operands"

DATA = """
CREATE TABLE client (id INTEGER PRIMARY KEY, name TEXT, born DATE);
INSERT INTO client VALUES (1, 'ann', '1970-01-02'), (2, 'bob', '1999-12-31'), (3, 'cid', '1985'),
  (4, 'dan', '1e400'), (5, 'eve', NULL), (6, 'fay', '1999-12-31'), (7, 'gus', '1985.0');
CREATE TABLE district (id INTEGER PRIMARY KEY, salary NUMERIC);
INSERT INTO district VALUES (1, '9000'), (2, '12000.5'), (3, '12000.50'), (4, '1e400'), (5, NULL);
"""

QUERIES = {
    "the highest": "SELECT id FROM district WHERE salary = (SELECT MAX(salary) FROM district)",
    "below a highest": ("SELECT id FROM district WHERE salary < (SELECT MAX(salary) FROM "
                        "district WHERE id < 4) ORDER BY id"),
    "correlated": ("SELECT a.id FROM district AS a WHERE a.salary >= (SELECT MIN(b.salary) "
                   "FROM district AS b WHERE b.id <> a.id) ORDER BY a.id"),
}


@pytest.fixture(scope="module")
def sqlite_file(tmp_path_factory):
    return sqlite_file_from(tmp_path_factory, SCHEMA, DATA)


@pytest.fixture(scope="module")
def bound_executor(dsn: str, sqlite_file):
    with loaded_executor(dsn, sqlite_file, SCHEMA) as executor:
        yield executor


@pytest.mark.parametrize("sql", list(QUERIES.values()), ids=list(QUERIES))
def test_a_subquery_compared_as_a_number_gives_sqlites_answer(sql, sqlite_file,
                                                              bound_executor):
    db = open_readonly(sqlite_file)
    catalog = load_catalog(bound_executor)
    text = to_postgres(sql, "sqlite", catalog)
    assert compare(db, bound_executor, catalog, sql).kind == AGREE, text
    rows = bound_executor.run(text).rows
    assert rows and same_rows(sqlite_rows(db, sql), rows)


def test_a_subquery_read_as_a_double_is_named_once():
    subquery = to_tree("SELECT (SELECT MAX(x) FROM t)", "postgres").expressions[0]
    for read_from in (None, subquery.copy()):
        text = double(subquery, read_from).sql("postgres")
        assert text.count("MAX(") == (1 if read_from is None else 2), text
    column = exp.column("x", "t")
    assert double(column).sql("postgres").count("t.x") == 7  # a column is not bound
