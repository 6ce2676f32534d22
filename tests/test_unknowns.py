"""An instance is chosen away from rows holding NULL in a column the queries compare.

Most districts' names are unknown here. The question's ``SUM(a2 = 'Decin')`` and a
candidate's ``COUNT(CASE WHEN a2 = 'Decin' THEN 1 END)`` agree on D, where some names are
known, and part on an account of a district of unknown name (NULL against 0): on such a D'
the candidate right on D loses to one that matches no account at all (yardstick financial
126 at scale 10).
"""

import pytest
import sqlglot

from conftest import readable_schema
from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.instances import separate as separate_module
from siselect.instances import unknowns
from siselect.instances.separate import Options, separate
from siselect.runtime.catalog import load_catalog

RIGHT = ("SELECT CAST(COUNT(CASE WHEN d.a2 = 'Decin' THEN 1 END) AS REAL) * 100 / "
         "NULLIF(COUNT(*), 0) AS share FROM account AS a JOIN district AS d "
         "ON a.district_id = d.district_id WHERE a.opened LIKE '1993%'")
NOTHING = RIGHT.replace("LIKE '1993%'", "LIKE '93%'")


@pytest.fixture(scope="module")
def districts(dsn: str) -> str:
    return readable_schema(
        dsn, "unknowns",
        "CREATE TABLE unknowns.district (district_id int PRIMARY KEY, a2 text)",
        "CREATE TABLE unknowns.account (account_id int PRIMARY KEY, district_id int "
        "REFERENCES unknowns.district, opened text)",
        "INSERT INTO unknowns.district SELECT i, CASE i WHEN 19 THEN 'Decin' WHEN 20 THEN "
        "'Praha' END FROM generate_series(1, 20) AS i",
        "INSERT INTO unknowns.account SELECT i, 1 + i % 20, '1993-0' || (1 + i % 9) "
        "FROM generate_series(1, 60) AS i")


def _separated(dsn: str, schema: str, q1: str, q2: str) -> dict:
    with connect(dsn, schema, statement_timeout_ms=30_000) as conn:
        result = separate(PsycopgExecutor(conn), q1, q2, Options())
    assert result["status"] == "separated", result
    return result


def test_the_instance_holds_no_unknown_name_where_one_without_separates(dsn, districts):
    result = _separated(dsn, districts, RIGHT, NOTHING)
    names = [row[1] for row in result["instance"]["district"]["rows"]]
    assert names and None not in names, result["instance"]
    assert any("hold NULL in a column the queries compare" in n for n in result["notes"])
    assert result["answers"]["q1"]["rows"][0][0] is not None


def test_without_the_rule_the_instance_holds_one(dsn, districts, monkeypatch):
    # What the rule is for: the smallest instance the search finds first is an account of
    # a district whose name is unknown (19 of 20 here), where the right answer is NULL.
    monkeypatch.setattr(separate_module, "UNKNOWN_TRIES", 0)
    result = _separated(dsn, districts, RIGHT, NOTHING)
    assert None in [row[1] for row in result["instance"]["district"]["rows"]]


def test_a_pair_that_parts_only_on_nulls_keeps_its_instance(dsn, districts):
    # NOT (a2 = 'Decin') skips the unknown names, the other counts them: only a NULL parts
    # them, so no instance without one separates, and the first instance stays.
    result = _separated(dsn, districts,
                        "SELECT COUNT(*) FROM district WHERE NOT (a2 = 'Decin')",
                        "SELECT COUNT(*) FROM district WHERE a2 <> 'Decin' OR a2 IS NULL")
    assert None in [row[1] for row in result["instance"]["district"]["rows"]]


def test_tested_columns_are_those_a_comparison_reads(executor):
    catalog = load_catalog(executor)
    trees = [sqlglot.parse_one(
        "SELECT s.full_name FROM superhero AS s JOIN colour AS c ON s.eye_colour_id = c.id "
        "WHERE c.colour = 'Blue' AND s.height_cm IS NULL AND weight_kg > 50", read="postgres")]
    assert unknowns.tested_columns(trees, catalog) == {
        "superhero": {"eye_colour_id", "weight_kg"}, "colour": {"id", "colour"}}
