"""Separation on the real superhero database: verified, 1-minimal, reproducible."""

import pytest

from conftest import schema_valid
from siselect.instances import separate as separation
from siselect.instances.pair import Pair
from siselect.instances.separate import Options
from siselect.runtime.answers import same_answer
from siselect.runtime.catalog import load_catalog
from siselect.runtime.errors import NotASelect, QueryFailed
from siselect.sqltext.transpile import to_tree

TALL = "SELECT COUNT(*) FROM superhero WHERE height_cm > 190"
TALLISH = "SELECT COUNT(*) FROM superhero WHERE height_cm >= 188"
MARVEL_EXACT = (
    "SELECT s.superhero_name FROM superhero s JOIN publisher p ON p.id = s.publisher_id "
    "WHERE p.publisher_name = 'Marvel Comics' AND s.height_cm > 210"
)
MARVEL_ANY = (
    "SELECT s.superhero_name FROM superhero s JOIN publisher p ON p.id = s.publisher_id "
    "WHERE s.height_cm > 210"
)


def separate(*args, **kwargs):
    """Every separation these tests make, checked against the published JSON Schema."""
    return schema_valid("separation", separation.separate(*args, **kwargs))


def rows_of(result) -> list[tuple[str, list]]:
    return [(t, row) for t, data in result["instance"].items() for row in data["rows"]]


def one_minimal(executor, q1, q2, result) -> bool:
    """Removing any single row of the instance makes the two queries agree, or one of their
    answers empty or all NULL (1-minimal among the non-degenerate instances)."""
    catalog = load_catalog(executor)
    trees = (to_tree(q1, "postgres", catalog), to_tree(q2, "postgres", catalog))
    return one_minimal_on(Pair(executor, catalog, trees), result["row_ids"])


def one_minimal_on(pair: Pair, ids: list[int]) -> bool:
    """:func:`one_minimal` for the row ids ``ids`` of an instance of ``pair``."""

    def meaningful(rows):
        return pair.separates(rows) and all(
            any(v is not None for row in a.rows for v in row) for a in pair.answers_on(rows))

    return meaningful(ids) and all(
        not meaningful(ids[:i] + ids[i + 1 :]) for i in range(len(ids))
    )


@pytest.mark.parametrize(("q1", "q2"), [(TALL, TALLISH), (MARVEL_EXACT, MARVEL_ANY)])
def test_separated_instances_are_verified_and_one_minimal(executor, q1, q2):
    result = separate(executor, q1, q2)
    assert result["status"] == "separated"
    assert 1 <= result["rows"] <= 4
    assert result["meaning"] == "meaningful" and result["degenerate"] is False
    assert not same_answer(result["answers"]["q1"]["rows"], result["answers"]["q2"]["rows"])
    assert one_minimal(executor, q1, q2, result)
    assert set(result["timings"]) >= {"lineage", "search", "verification", "minimisation", "total"}


def test_instance_rows_are_real_rows(executor):
    result = separate(executor, MARVEL_EXACT, MARVEL_ANY)
    for table, row in rows_of(result):
        columns = result["instance"][table]["columns"]
        where = " AND ".join(
            f'"{c}" IS NULL' if v is None else f"\"{c}\" = '{v}'"
            for c, v in zip(columns, row, strict=True)
        )
        assert executor.run(f'SELECT count(*) FROM "{table}" WHERE {where}').rows[0][0] >= 1


def test_the_boundary_row_is_the_instance(executor):
    result = separate(executor, TALL, TALLISH)
    heights = [
        row[result["instance"]["superhero"]["columns"].index("height_cm")]
        for _, row in rows_of(result)
    ]
    assert heights and all(188 <= h <= 190 for h in heights)


def test_same_answer_in_another_order(executor):
    result = separate(
        executor,
        "SELECT colour FROM colour WHERE id < 5",
        "SELECT colour FROM colour WHERE id < 5 ORDER BY colour DESC",
    )
    assert result["status"] == "same_answer"


def test_no_instance_left_without_the_rows_of_earlier_ones_says_so(executor):
    """A pair separated again away from its earlier instances (a drawn duel) may have no
    other instance: the failure names the rows left out, not a search that found nothing."""
    one = "SELECT id FROM colour WHERE id = 3"
    found = separate(executor, one, one.replace("= 3", "= 3 AND false"))
    assert found["status"] == "separated" and found["rows"] == 1
    again = separate(executor, one, one.replace("= 3", "= 3 AND false"),
                     Options(exclude=tuple(found["row_ids"])))
    assert again["status"] == "failed"
    assert again["reason"] == ("no separating instance was found without the 1 row of the "
                               "pair's earlier instances")


def test_same_seed_same_instance(executor):
    first = separate(executor, MARVEL_EXACT, MARVEL_ANY, Options(seed=11))
    second = separate(executor, MARVEL_EXACT, MARVEL_ANY, Options(seed=11))
    assert first["instance"] == second["instance"]


def test_paper_strategy_samples_without_minimising(executor):
    result = separate(executor, TALL, TALLISH, Options(strategy="paper"))
    assert result["strategy"] == "paper"
    assert result["status"] in ("separated", "failed")
    assert result["tries"] <= 42
    assert "minimisation" not in result["timings"]


def test_with_references_adds_referenced_rows(executor):
    q1 = (
        "SELECT sp.power_name FROM hero_power hp JOIN superpower sp ON sp.id = hp.power_id "
        "WHERE hp.hero_id = 1"
    )
    q2 = (
        "SELECT sp.power_name FROM hero_power hp JOIN superpower sp ON sp.id = hp.power_id "
        "WHERE hp.hero_id = 2"
    )
    plain = separate(executor, q1, q2)
    full = separate(executor, q1, q2, Options(with_references=True, max_rows=100))
    assert plain["status"] == full["status"] == "separated"
    assert full["rows"] >= plain["rows"]
    assert full["rows"] > plain["rows"]
    assert "superhero" in full["instance"], "hero_power rows bring the heroes they name"


def test_sqlite_dialect_is_transpiled(executor):
    result = separate(
        executor,
        "SELECT `superhero_name` FROM superhero WHERE height_cm > 210",
        "SELECT `superhero_name` FROM superhero WHERE height_cm > 205",
        Options(dialect="sqlite"),
    )
    # One hero above 210 cm and one between: each query's answer non-empty.
    assert result["status"] == "separated" and result["rows"] == 2


def test_ties_at_the_cut_are_not_separated(executor):
    q1 = "SELECT superhero_name FROM superhero WHERE height_cm = 188 ORDER BY height_cm LIMIT 1"
    q2 = (
        "SELECT superhero_name FROM superhero WHERE height_cm = 188 "
        "ORDER BY height_cm, superhero_name DESC LIMIT 1"
    )
    assert executor.run("SELECT count(*) FROM superhero WHERE height_cm = 188").rows[0][0] > 1
    result = separate(executor, q1, q2)
    assert result["status"] in ("nondeterministic", "same_answer")


@pytest.mark.parametrize(
    ("q1", "error", "sqlstate"),
    [
        ("DELETE FROM superhero", NotASelect, "25006"),
        ("SELECT FROM WHERE", NotASelect, "42601"),
        ("SELECT * FROM no_such_table", QueryFailed, "42P01"),
        ("SELECT no_such_column FROM superhero", QueryFailed, "42703"),
        ("SELECT 1 / (id - id) FROM superhero", QueryFailed, "22012"),
    ],
)
def test_bad_input_is_an_error_with_sqlstate(executor, q1, error, sqlstate):
    with pytest.raises(error) as caught:
        separate(executor, q1, TALL)
    assert caught.value.sqlstate == sqlstate
    assert caught.value.message.startswith("q1:")


def test_queries_that_disagree_on_no_rows_get_the_empty_instance_only_if_nothing_else(executor):
    # They disagree on the empty instance already (0 against NULL), but a tall hero gives
    # both a value: that instance, not the empty one.
    q1 = "SELECT COUNT(*) FROM superhero WHERE height_cm > 100000"
    q2 = "SELECT SUM(height_cm) FROM superhero WHERE height_cm > 200"
    assert executor.run("SELECT max(height_cm) FROM superhero").rows[0][0] < 100000
    result = separate(executor, q1, q2)
    assert result["status"] == "separated"
    assert result["rows"] == 1 and result["degenerate"] is False
    assert result["answers"]["q1"]["rows"] == [[0]]
    assert result["answers"]["q2"]["rows"][0][0] > 200
    # No row gives the SUM a value, on D or on any D': its NULL is D's own answer (from no
    # row), so a D' of one hero shows D's disagreement and comes before the empty instance,
    # which is used only when nothing else separates.
    q2 = "SELECT SUM(height_cm) FROM superhero WHERE height_cm > 100000"
    result = separate(executor, q1, q2)
    assert result["status"] == "separated"
    assert result["rows"] == 1 and result["instance"] != {}
    assert result["degenerate"] is False and result["meaning"] == "meaningful"
    assert result["answers"]["q1"]["rows"] == [[0]]
    assert result["answers"]["q2"]["rows"] == [[None]]


PER_PUBLISHER = ("SELECT id, SUM(weight_kg) OVER (PARTITION BY publisher_id) AS total "
                 "FROM superhero WHERE weight_kg > 80")
OVER_ALL = PER_PUBLISHER.replace("PARTITION BY publisher_id", "")


def test_window_partitions_separate_on_one_row_of_each_of_two_partitions(executor):
    """A window value's witnesses include its partition's rows: two rows of two publishers
    are a meaningful instance (each query's totals as it computes them on D')."""
    result = separate(executor, PER_PUBLISHER, OVER_ALL, Options(budget_seconds=60))
    assert result["status"] == "separated" and result["meaning"] == "meaningful"
    assert result["rows"] == 2
    shown = result["instance"]["superhero"]
    publishers = {row[shown["columns"].index("publisher_id")] for row in shown["rows"]}
    assert len(publishers) == 2
    assert one_minimal(executor, PER_PUBLISHER, OVER_ALL, result)


def test_a_sampled_table_is_reported_nondeterministic(executor):
    """TABLESAMPLE reads rows by where they lie on disk: no D' can be sampled as D was, so
    the pair is nondeterministic with the reason, not 'no separating instance was found'."""
    sampled = "SELECT superhero_name FROM superhero TABLESAMPLE SYSTEM (50) REPEATABLE (1)"
    result = separate(executor, sampled, "SELECT superhero_name FROM superhero",
                      Options(dialect="postgres"))
    assert result["status"] == "nondeterministic", result
    assert "TABLESAMPLE" in result["reason"]
