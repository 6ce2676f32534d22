"""One reading of which table's column a query's column is, shared by the rules that ask
(instances/shadow.column_owner: the NULL rule of unknowns, the neighbours' links) and one
reading of a column's name in a table (catalog.Table.column), as SQL scopes them.

Pure Python on a hand-made catalog: no statement runs."""

import pytest
import sqlglot
from sqlglot import exp

from siselect.instances import neighbours, unknowns
from siselect.instances.shadow import column_owner, table_aliases
from siselect.runtime.catalog import Catalog, Column, Table

CATALOG = Catalog({
    "hero": Table("s", "hero", [Column("id", "bigint"), Column("name", "text"),
                                Column("height", "bigint")]),
    "power": Table("s", "power", [Column("hero_id", "bigint"), Column("name", "text"),
                                  Column("level", "bigint")]),
    # PostgreSQL holds two columns that differ only in case side by side.
    "Mixed": Table("s", "Mixed", [Column("Name", "text"), Column("name", "text"),
                                  Column("Level", "bigint")]),
})


def test_a_column_name_is_exact_first_then_the_one_column_it_names_in_any_case():
    mixed = CATALOG.tables["Mixed"]
    assert mixed.column("Name").name == "Name"
    assert mixed.column("name").name == "name"
    assert mixed.column("level").name == "Level"
    # "NAME" names both "Name" and "name": neither is more the one meant.
    assert mixed.column("NAME") is None
    assert mixed.column("other") is None


def _owner(sql: str, column: str) -> tuple[str, str, str] | None:
    """The owner of the first column spelt ``column`` (qualifier ignored) in ``sql``."""
    tree = sqlglot.parse_one(sql, read="postgres")
    found = next(c for c in tree.find_all(exp.Column) if c.name == column)
    return column_owner(found, table_aliases(tree, CATALOG), CATALOG)


@pytest.mark.parametrize("sql, column, owner", [
    ("SELECT h.name FROM hero AS h", "name", ("h", "hero", "name")),
    ("SELECT height FROM hero AS h JOIN power AS p ON p.hero_id = h.id", "height",
     ("h", "hero", "height")),
    # Unqualified in a subquery: its own FROM first, although the outer table holds it too.
    ("SELECT h.id FROM hero AS h WHERE h.id IN (SELECT hero_id FROM power WHERE name = 'x')",
     "name", ("power", "power", "name")),
    # Not in its own FROM: the enclosing query's (a correlated reference).
    ("SELECT h.id FROM hero AS h WHERE EXISTS (SELECT 1 FROM power AS p "
     "WHERE p.hero_id = h.id AND height > 2)", "height", ("h", "hero", "height")),
    # Folded to the catalog's spelling.
    ('SELECT "LEVEL" FROM "Mixed"', "LEVEL", ("Mixed", "Mixed", "Level")),
])
def test_a_column_is_owned_as_sql_scopes_it(sql, column, owner):
    assert _owner(sql, column) == owner


@pytest.mark.parametrize("sql, column", [
    # two tables of one FROM hold it (PostgreSQL would refuse the query)
    ("SELECT name FROM hero JOIN power ON power.hero_id = hero.id", "name"),
    # a derived table may be what it reads
    ("SELECT name FROM (SELECT name FROM hero) AS d", "name"),
    ("SELECT height FROM (SELECT id FROM hero) AS d JOIN power ON power.hero_id = d.id",
     "height"),
    # a qualifier that names no table, a name no table holds, a name two columns answer
    ("SELECT d.name FROM (SELECT name FROM hero) AS d", "name"),
    ("SELECT weight FROM hero", "weight"),
    ('SELECT "NAME" FROM "Mixed"', "NAME"),
])
def test_no_owner_where_sql_would_not_tell_one_table(sql, column):
    assert _owner(sql, column) is None


def test_a_subquerys_unqualified_column_is_tested_in_its_own_table():
    # Both tables hold "name": read as SQL scopes it, the subquery's is power's. Looked up
    # in every table of the query, it was no one's, and no NULL name of a power was avoided.
    trees = [sqlglot.parse_one("SELECT h.id FROM hero AS h WHERE h.id IN (SELECT hero_id "
                               "FROM power WHERE name = 'flight')", read="postgres")]
    assert unknowns.tested_columns(trees, CATALOG) == {"power": {"hero_id", "name"},
                                                       "hero": {"id"}}


def test_a_window_over_two_keys_of_one_table_links_its_partition():
    found = neighbours.links([sqlglot.parse_one(
        "SELECT ROW_NUMBER() OVER (PARTITION BY p.hero_id, level ORDER BY p.name) "
        "FROM power AS p", read="postgres")], CATALOG)
    assert found == [neighbours.Link("power", ("hero_id", "level"), "power",
                                     ("hero_id", "level"), '"t"."name"')]
