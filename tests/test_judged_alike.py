"""A D' separates only where a judge can see the difference.

Every judge compares answers reading numeric text as its number. Two candidates of
yardstick debit_card_specializing 1498 (seed 4), the largest single consumption
(``MAX`` of a text column: text) against the largest monthly sum (``SUM``: a number), were
"separated" three times on one row, where both answered the same value, one as text and
one as a number; each duel was drawn and input order picked the wrong one. Two rows of one
month tell them apart.
"""

from conftest import row_ids
from siselect.instances import separate
from siselect.instances.pair import Pair, judged_alike, same_result
from siselect.runtime.answers import normal_answer
from siselect.runtime.catalog import load_catalog
from siselect.sqltext.transpile import to_tree

LARGEST_AS_TEXT = ("SELECT MAX(CAST(height_cm AS TEXT)) FROM superhero "
                   "WHERE publisher_id = {p} AND height_cm BETWEEN 100 AND 999")
TOTAL = ("SELECT SUM(height_cm) FROM superhero "
         "WHERE publisher_id = {p} AND height_cm BETWEEN 100 AND 999")


def _publisher_and_hero(executor) -> tuple[int, int]:
    publisher, hero = executor.run(
        "SELECT publisher_id, id FROM superhero WHERE height_cm BETWEEN 100 AND 999 "
        "AND publisher_id IN (SELECT publisher_id FROM superhero "
        "WHERE height_cm BETWEEN 100 AND 999 GROUP BY publisher_id HAVING count(*) > 1) "
        "ORDER BY id LIMIT 1").rows[0]
    return publisher, row_ids(executor, load_catalog(executor), "superhero", f"id = {hero}")[0]


def _alike(a: list[tuple], b: list[tuple]) -> bool:
    return judged_alike(normal_answer(a), normal_answer(b))


def test_numeric_text_and_its_number_are_alike_to_a_judge():
    assert not same_result([("214226.23",)], [(214226.23,)])
    assert _alike([("214226.23",)], [(214226.23,)])
    assert _alike([(" 7 ", "x")], [("x", 7)])
    assert _alike([("null",)], [(None,)])
    assert not _alike([("null",)], [])  # a row of NULLs is a row (BIRD's rule)
    assert not _alike([("214226.23",)], [(139008.05,)])
    assert not _alike([("abc",)], [("abd",)])
    assert not _alike([("7", "x")], [(7, "y")])


def test_a_row_on_which_only_the_type_differs_separates_nothing(executor):
    publisher, hero = _publisher_and_hero(executor)
    catalog = load_catalog(executor)
    pair = Pair(executor, catalog, tuple(to_tree(q.format(p=publisher), "postgres", catalog)
                                         for q in (LARGEST_AS_TEXT, TOTAL)))
    a1, a2 = pair.answers_on([hero])
    assert isinstance(a1.rows[0][0], str) and not isinstance(a2.rows[0][0], str)
    assert not same_result(a1.rows, a2.rows)
    assert not pair.differ(a1, a2)
    assert pair.separation([hero]) is None


def test_the_search_finds_a_difference_in_value(executor):
    publisher, _ = _publisher_and_hero(executor)
    q1, q2 = LARGEST_AS_TEXT.format(p=publisher), TOTAL.format(p=publisher)
    found = separate.separate(executor, q1, q2, separate.Options(dialect="postgres"))
    assert found["status"] == "separated"
    assert found["rows"] >= 2
    (text,), = found["answers"]["q1"]["rows"]
    (total,), = found["answers"]["q2"]["rows"]
    assert float(text) < float(total)


def test_answers_on_d_that_differ_only_so_are_reported_so(executor):
    """No D' can show such a pair apart: the failure says why, not only that the search
    found nothing."""
    found = separate.separate(executor, "SELECT CAST(height_cm AS TEXT) FROM superhero "
                              "WHERE id = 1", "SELECT height_cm FROM superhero WHERE id = 1",
                              separate.Options(dialect="postgres"))
    assert found["status"] == "failed"
    assert found["reason"] == ("no separating instance was found: on D the answers differ "
                               "only as numeric text against the number it spells, which no "
                               "judge tells apart")
