"""Issue 18: whether D keeps an inclusion (integrity.join_holds) is asked in a form whose plan
stays linear in the tables' sizes where the inclusion holds."""

from conftest import CountingExecutor
from siselect.instances import integrity
from siselect.runtime.catalog import load_catalog


def _plan(conn, sql: str) -> str:
    conn.execute("SET search_path TO superhero")
    return "\n".join(row[0] for row in conn.execute(f"EXPLAIN {sql}").fetchall())


def _asked(executor, catalog, a, x, b, y) -> tuple[tuple[bool, bool], str]:
    counting = CountingExecutor(executor)
    answer = integrity.join_holds(counting, catalog, a, x, b, y)
    text, = counting.texts
    return answer, text


def test_an_inclusion_into_a_column_without_a_key_is_no_nested_loop(executor, conn):
    """Into hero_power.hero_id (no index), EXISTS planned to stop early is a nested loop
    that rescans hero_power for each hero: quadratic where every hero has a power (over 60 s
    at superhero x100). The check counts the heroes missing instead, and answers as before:
    some hero of D has no power."""
    catalog = load_catalog(executor)
    answer, text = _asked(executor, catalog, "superhero", "id", "hero_power", "hero_id")
    (missing,), = executor.run(
        "SELECT count(*) FROM superhero AS k WHERE NOT EXISTS "
        "(SELECT 1 FROM hero_power AS t WHERE t.hero_id = k.id)").rows
    assert answer == (missing == 0, False) and missing > 0
    # The plan at x1 is a hash anti-join either way (too small to show the nested loop):
    # the form is what decides it at scale.
    assert "count(*) = 0" in text and "Nested Loop" not in _plan(conn, text)


def test_an_inclusion_onto_a_key_stops_at_its_first_missing_row(executor, conn):
    """Onto superpower's key each row is one index probe: EXISTS, which stops early."""
    catalog = load_catalog(executor)
    answer, text = _asked(executor, catalog, "hero_power", "power_id", "superpower", "id")
    assert answer == (True, True)
    assert "count(*) = 0" not in text and "NOT EXISTS" in text
