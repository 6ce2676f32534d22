"""A conditional aggregate counting a rare condition, on a D large enough that the search's
witnesses are a random sample (yardstick codebase_community 614 at scale 10): the share of
users with a Teacher badge, counted per badge row against per user. The two part only on
rows holding a Teacher badge and a user with two badges. The search's random witnesses
show users with many badges, not the one Teacher badge among 100,000, so the targeted
search reads the rows the condition holds for (separate._counted_witnesses), also when an
instance that loses the question's meaning (a share over no row) already separates."""

import pytest

from conftest import loaded_executor, row_ids, schema_valid, sqlite_file_from
from siselect.instances import separate as separation
from siselect.instances.targeted import counted_variants
from siselect.runtime.catalog import load_catalog
from siselect.sqltext.transpile import to_tree

BADGES = """
CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE badges (id INTEGER PRIMARY KEY, userid INTEGER, name TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
INSERT INTO users SELECT i, 'user ' || i FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
INSERT INTO badges SELECT i, (i % 200) + 1, CASE WHEN i = 77777 THEN 'Teacher'
  ELSE 'Student' END FROM n;
CREATE TABLE awards (id INTEGER PRIMARY KEY, name TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
INSERT INTO awards SELECT i, CASE WHEN i IN (33333, 66666) THEN 'Teacher'
  ELSE 'Student' END FROM n;
"""
PER_ROW = ("SELECT CAST(COUNT(CASE WHEN b.name = 'Teacher' THEN 1 END) AS REAL) * 100 / "
           "COUNT(u.id) FROM users AS u LEFT JOIN badges AS b ON u.id = b.userid")
PER_USER = PER_ROW.replace("COUNT(u.id)", "COUNT(DISTINCT u.id)")


@pytest.fixture(scope="module")
def badges(dsn: str, tmp_path_factory):
    with loaded_executor(dsn, sqlite_file_from(tmp_path_factory, "rare_conditions", BADGES),
                         "rare_conditions") as executor:
        yield executor


def test_a_counted_condition_becomes_a_filter_of_its_select():
    catalog_free = to_tree(PER_ROW + " WHERE u.id > 0", "postgres")
    [variant] = counted_variants(catalog_free)
    assert variant.args["where"].sql("postgres") == \
        "WHERE u.id > 0 AND b.name = 'Teacher'"
    assert counted_variants(to_tree("SELECT COUNT(*) FROM users", "postgres")) == []
    iif = to_tree("SELECT SUM(IIF(name = 'x', 1, 0)) FROM badges", "sqlite")
    assert [v.args["where"].sql("postgres") for v in counted_variants(iif)] == \
        ["WHERE name = 'x'"]


def test_a_sort_key_condition_is_not_counted():
    """``ARRAY_AGG(v ORDER BY CASE WHEN c ...)`` aggregates every row, whatever c: only the
    FILTER says which rows it takes (SQLite's MIN over a text column is written so)."""
    pick = to_tree("SELECT (ARRAY_AGG(name ORDER BY CASE WHEN LENGTH(name) < 5 THEN 0 ELSE 1 "
                   "END) FILTER (WHERE name ~ '^T'))[1] FROM badges", "postgres")
    assert [v.args["where"].sql("postgres") for v in counted_variants(pick)] == \
        ["WHERE name ~ '^T'"]
    unfiltered = to_tree("SELECT (ARRAY_AGG(name ORDER BY CASE WHEN LENGTH(name) < 5 THEN 0 "
                         "ELSE 1 END))[1] FROM badges", "postgres")
    assert counted_variants(unfiltered) == []


def test_a_rare_counted_row_is_found_on_a_sampled_d(badges):
    result = schema_valid("separation", separation.separate(badges, PER_ROW, PER_USER))
    assert result["status"] == "separated", result.get("reason")
    assert [r[2] for r in result["instance"]["badges"]["rows"]].count("Teacher") >= 1
    q1, q2 = (result["answers"][q]["rows"][0][0] for q in ("q1", "q2"))
    assert q1 != q2 and q1 > 0 and q2 > 0
    catalog = load_catalog(badges)
    assert [len(counted_variants(to_tree(q, "postgres", catalog))) for q in
            (PER_ROW, PER_USER)] == [1, 1]


def test_without_the_counted_rows_the_search_finds_nothing(badges, monkeypatch):
    """What the test above needs the counted rows for: without them, no instance."""
    monkeypatch.setattr(separation, "_counted_witnesses", lambda pair, options: [])
    assert separation.separate(badges, PER_ROW, PER_USER)["status"] == "failed"


def test_an_excluded_counted_row_stays_out_of_every_proposal(badges):
    """A pair separated again away from earlier rows (the tournament's next instance) never
    gets them back through the counted rows: with the one Teacher badge excluded, no
    instance holds it, and none separates."""
    catalog = load_catalog(badges)
    teacher, = row_ids(badges, catalog, "badges", "name = 'Teacher'", order_by=None)
    result = separation.separate(badges, PER_ROW, PER_USER,
                                 separation.Options(exclude=(teacher,)))
    assert teacher not in (result.get("row_ids") or [])
    assert result["status"] == "failed", result.get("reason")


# The share of Teacher badges against the share of Teacher awards (yardstick card_games 352
# at scale 10: cards in Chinese among foreign_data rows against set_translations rows). One
# badge row alone separates them at once, degenerate (no award: the second share is NULL);
# only an instance with a Teacher row keeps the question's meaning.
BADGE_SHARE = ("SELECT CAST(COUNT(CASE WHEN name = 'Teacher' THEN 1 END) AS REAL) * 100 / "
               "COUNT(*) FROM badges")
AWARD_SHARE = ("SELECT CAST(SUM(CASE WHEN name = 'Teacher' THEN 1 ELSE 0 END) AS REAL) * 100 / "
               "COUNT(*) FROM awards")


def test_a_degenerate_instance_does_not_stop_the_search_for_counted_rows(badges):
    result = schema_valid("separation", separation.separate(badges, BADGE_SHARE, AWARD_SHARE))
    assert result["status"] == "separated", result.get("reason")
    assert result["meaning"] == "meaningful", result.get("meaning_reason")
    held = [r[-1] for table in ("badges", "awards")
            for r in result["instance"].get(table, {"rows": []})["rows"]]
    assert "Teacher" in held
    q1, q2 = (result["answers"][q]["rows"][0][0] for q in ("q1", "q2"))
    assert q1 is not None and q2 is not None and q1 != q2
