"""Issue 12, item 7: a caller who may read only some tables or columns still gets
separating instances. siselect's own SQL reads only what the caller may read; rows
referenced in a table the caller may not read are left out and the result says so; a
candidate that reads a forbidden column fails with 42501 naming it."""

import os

import psycopg
import pytest

from siselect.runtime.executor import quote_ident

SUFFIX = os.getpid()
SCHEMA = f"colgrant_{SUFFIX}"
SEPARATE = ("SELECT siselect.separate(%s, %s, with_references => true, "
            f"search_path => '{SCHEMA}')")
TOURNAMENT = ("SELECT siselect.tournament(%s, 'Which heroes?', judge => 'reference', "
              f"reference => %s, search_path => '{SCHEMA}')")
ABOVE_3 = "SELECT name FROM hero WHERE id > 3"
FROM_3 = "SELECT name FROM hero WHERE id >= 3"


@pytest.fixture(scope="module")
def roles(dsn: str):
    """``no_lookup``: may read hero, not the colour table hero references; ``some_columns``:
    may read hero's id, name and row ids (ctid) only; ``no_ctid``: id and name only."""
    names = {k: f"colgrant_{k}_{SUFFIX}" for k in ("no_lookup", "some_columns", "no_ctid")}
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {SCHEMA}")
        conn.execute(f"CREATE TABLE {SCHEMA}.colour (id int PRIMARY KEY, colour text)")
        conn.execute(f"CREATE TABLE {SCHEMA}.hero (id int PRIMARY KEY, name text, "
                     f"salary int, colour_id int REFERENCES {SCHEMA}.colour (id))")
        conn.execute(f"INSERT INTO {SCHEMA}.colour VALUES (1, 'red'), (2, 'blue')")
        conn.execute(f"INSERT INTO {SCHEMA}.hero SELECT i, 'hero ' || i, 1000 * i, "
                     "1 + i % 2 FROM generate_series(1, 6) i")
        for role in names.values():
            conn.execute(f"CREATE ROLE {role}")
            conn.execute(f"GRANT siselect_user TO {role}")
            conn.execute(f"GRANT USAGE ON SCHEMA {SCHEMA} TO {role}")
        conn.execute(f"GRANT SELECT ON {SCHEMA}.hero TO {names['no_lookup']}")
        conn.execute(f"GRANT SELECT (id, name, ctid) ON {SCHEMA}.hero "
                     f"TO {names['some_columns']}")
        conn.execute(f"GRANT SELECT (id, name) ON {SCHEMA}.hero TO {names['no_ctid']}")
    yield names
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {SCHEMA} CASCADE")
        for role in names.values():
            conn.execute(f"DROP OWNED BY {role}")
            conn.execute(f"DROP ROLE {role}")


@pytest.fixture
def as_role(dsn: str, roles):
    """A connection whose privileges are the role's (``SET ROLE``: PostgreSQL checks every
    privilege against it, as it would for a login of that role)."""
    opened = []

    def connect(kind: str) -> psycopg.Connection:
        conn = psycopg.connect(dsn, autocommit=True)
        conn.execute(f"SET ROLE {quote_ident(roles[kind])}")
        opened.append(conn)
        return conn

    yield connect
    for conn in opened:
        conn.close()


def test_the_role_setup_is_what_the_tests_need(as_role):
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        as_role("no_lookup").execute(f"SELECT * FROM {SCHEMA}.colour")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        as_role("some_columns").execute(f"SELECT * FROM {SCHEMA}.hero")
    assert as_role("some_columns").execute(
        f"SELECT count(*) FROM {SCHEMA}.hero").fetchone() == (6,)


def test_unreadable_referenced_rows_are_left_out_and_named(as_role):
    conn = as_role("no_lookup")
    result = conn.execute(SEPARATE, (ABOVE_3, FROM_3)).fetchone()[0]
    assert result["status"] == "separated"
    assert result["references_left_out"] == ["colour"]
    assert any("colour" in note and "left out" in note for note in result["notes"])
    assert set(result["instance"]) == {"hero"}
    # Both answers non-degenerate (docs/instances.md): a hero on each side of the bound.
    assert result["instance"]["hero"]["rows"] == [[3, "hero 3", 3000, 2], [4, "hero 4", 4000, 1]]


def test_referenced_rows_are_added_when_readable(dsn, roles):
    with psycopg.connect(dsn, autocommit=True) as conn:
        result = conn.execute(SEPARATE, (ABOVE_3, FROM_3)).fetchone()[0]
    assert result["status"] == "separated" and "references_left_out" not in result
    assert result["instance"]["colour"]["rows"] == [[1, "red"], [2, "blue"]]


def test_a_tournament_with_an_unreadable_lookup_table_still_duels(as_role):
    conn = as_role("no_lookup")
    result = conn.execute(TOURNAMENT, ([ABOVE_3, FROM_3], FROM_3)).fetchone()[0]
    assert [d["separation"] for d in result["duels"]] == ["separated"]
    assert result["duels"][0]["references_left_out"] == ["colour"]
    assert result["winner"]["index"] == 1


def test_column_grants_on_the_used_columns_separate(as_role):
    conn = as_role("some_columns")
    result = conn.execute(SEPARATE, (ABOVE_3, FROM_3)).fetchone()[0]
    assert result["status"] == "separated"
    assert result["instance"]["hero"] == {"columns": ["id", "name"],
                                          "rows": [[3, "hero 3"], [4, "hero 4"]]}
    assert result["answers"]["q2"]["rows"] == [["hero 3"], ["hero 4"]]


@pytest.mark.parametrize("query", ["SELECT name FROM hero WHERE salary > 2500",
                                   "SELECT h.* FROM hero AS h",
                                   "SELECT * FROM hero"])
def test_a_candidate_reading_a_forbidden_column_fails_naming_it(as_role, query):
    conn = as_role("some_columns")
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match=r"hero\.salary"):
        conn.execute(SEPARATE, (query, FROM_3))


def test_a_forbidden_column_drops_only_that_candidate_from_a_tournament(as_role):
    conn = as_role("some_columns")
    candidates = [ABOVE_3, "SELECT name FROM hero WHERE salary >= 3000", FROM_3]
    result = conn.execute(TOURNAMENT, (candidates, FROM_3)).fetchone()[0]
    assert [d["index"] for d in result["dropped"]] == [1]
    assert result["dropped"][0]["sqlstate"] == "42501"
    assert "hero.salary" in result["dropped"][0]["message"]
    assert result["winner"]["index"] == 2


def test_without_ctid_the_refusal_names_it(as_role):
    conn = as_role("no_ctid")
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match=r"hero\.ctid"):
        conn.execute(SEPARATE, (ABOVE_3, FROM_3))
