"""Issue 18: a row reaching a tied MIN/MAX subquery's extreme is witnessed by itself, not
paired with every row tied there (witnesses/lineage/rep.py ``absorbed``)."""

from conftest import CountingExecutor
from siselect.instances.separate import Options
from siselect.runtime.catalog import load_catalog
from siselect.selection import tournament
from siselect.selection.judges import ReferenceJudge
from siselect.sqltext.transpile import to_tree
from siselect.witnesses.lineage import witness_query

# 155 heroes share the least height (0), 172 the least weight; 153 have a publisher.
AT_LEAST_HEIGHT = ("SELECT s.superhero_name, p.publisher_name FROM superhero s "
                   "JOIN publisher p ON p.id = s.publisher_id "
                   "WHERE s.height_cm = (SELECT MIN(height_cm) FROM superhero)")
AT_BOTH_LEAST = ("SELECT s.superhero_name FROM superhero s "
                 "WHERE s.height_cm = (SELECT MIN(height_cm) FROM superhero) "
                 "AND s.weight_kg = (SELECT MIN(weight_kg) FROM superhero)")


def test_each_row_at_a_tied_extreme_has_one_witness_of_its_own_rows(executor):
    catalog = load_catalog(executor)
    for sql in (AT_LEAST_HEIGHT, AT_BOTH_LEAST):
        lineage = witness_query(to_tree(sql, "postgres", catalog), catalog)
        counting = CountingExecutor(executor)
        witnesses = [list(w) for (w,) in counting.run(lineage.sql).rows]
        answer = executor.run(sql).rows
        # Paired with each tied row, the 153 rows had 153 x 155 witnesses (and the rows at
        # both extremes one per tied height and tied weight).
        assert counting.fetched == len(witnesses) == len(answer), sql
        tables = 2 if "publisher" in sql else 1
        assert all(len(w) == tables for w in witnesses)


def test_a_tournament_over_tied_extremes_reads_witnesses_by_the_answer_row(executor):
    catalog = load_catalog(executor)
    candidates = [AT_LEAST_HEIGHT.replace(", p.publisher_name", ""), AT_BOTH_LEAST]
    counting = CountingExecutor(executor)
    result = tournament.run_tournament(
        counting, candidates, "Which heroes are the shortest?", None,
        ReferenceJudge(to_tree(candidates[0], "postgres", catalog)), Options(),
        catalog=catalog)
    assert result["winner"]["index"] == 0
    duel, = (d for d in result["duels"] if d["attempt"] == 1)
    assert duel["separation"] == "separated" and duel["rows"] <= 3
    # Every statement together brings back fewer rows than one pairing of the tied rows.
    assert counting.fetched < 155 * 30
