"""Issue 18: whether D keeps an inclusion (integrity.join_holds) is asked in a form whose plan
stays linear in the tables' sizes where the inclusion holds."""

from conftest import CountingExecutor
from siselect.instances import integrity
from siselect.instances.inclusions import Closure
from siselect.runtime import rowids
from siselect.runtime.catalog import ForeignKey, load_catalog


def _plan(conn, sql: str, verbose: bool = False) -> str:
    conn.execute("SET search_path TO superhero")
    explain = "EXPLAIN VERBOSE" if verbose else "EXPLAIN"
    return "\n".join(row[0] for row in conn.execute(f"{explain} {sql}").fetchall())


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


def test_a_rows_partner_is_its_smallest_and_its_id_is_computed_before_the_join(executor,
                                                                                conn):
    """Every power some hero has (superpower.id into hero_power.power_id): a power row
    taken into D' brings the hero_power row of the smallest ctid among its partners. The
    power's row id is computed in a subquery the planner keeps (OFFSET 0), once per power,
    not once per partner row joined (millions at scale): the scan of the powers outputs it."""
    catalog = load_catalog(executor)
    counting = CountingExecutor(executor)
    closure = Closure(counting, catalog, [("superpower", ForeignKey(["id"], "hero_power",
                                                                    ["power_id"]))])
    own = rowids.row_id(catalog.tables["superpower"], catalog.number("superpower"), "t")
    powers = {int(i): int(r) for i, r in executor.run(
        f"SELECT id, {own} FROM superpower AS t WHERE id IN (1, 2, 3)").rows}
    closed = closure(sorted(powers.values()))
    smallest = {int(r) for (r,) in executor.run(
        f"SELECT {rowids.rowid_of_tid(catalog.number('hero_power'), 'min(ctid)')} "
        "FROM hero_power WHERE power_id IN (1, 2, 3) GROUP BY power_id").rows}
    assert set(closed) == set(powers.values()) | smallest and len(smallest) == 3
    needs = next(t for t in counting.texts if "LEFT JOIN" in t)
    plan = _plan(conn, needs, verbose=True).splitlines()
    scan = next(i for i, line in enumerate(plan) if "Scan" in line and " k  (cost" in line)
    assert "Output:" in plan[scan + 1] and "tidsend(k.ctid)" in plan[scan + 1]


def test_rows_referencing_one_key_close_transitively_reading_it_once(executor):
    """A hero_power row and a hero_attribute row of two heroes, and a third hero, bring the
    two heroes, and the three heroes their genders (a closure of three levels). What a hero
    offers is read once for the two inclusions into superhero.id (tens of tables referencing
    one key read its rows once each, codebase_community 604 at scale 10), and only for the
    hero the set starts with: a hero added as a partner is known to be one."""
    catalog = load_catalog(executor)
    counting = CountingExecutor(executor)
    into_hero = [(table, ForeignKey(["hero_id"], "superhero", ["id"]))
                 for table in ("hero_power", "hero_attribute")]
    closure = Closure(counting, catalog,
                      [*into_hero, ("superhero", ForeignKey(["gender_id"], "gender", ["id"]))])

    def ids(table: str, where: str) -> list[int]:
        own = rowids.row_id(catalog.tables[table], catalog.number(table), "t")
        return sorted(int(r) for (r,) in executor.run(
            f"SELECT {own} FROM {table} AS t WHERE {where}").rows)

    power = ids("hero_power", "hero_id = 1")[0]
    attribute = ids("hero_attribute", "hero_id = 2")[0]
    third = ids("superhero", "id = 3")
    heroes = ids("superhero", "id IN (1, 2)")
    genders = ids("gender", "id IN (SELECT gender_id FROM superhero WHERE id IN (1, 2, 3))")
    closed = closure([power, attribute, *third])
    assert closed[:3] == [power, attribute, *third]
    assert set(closed) == {power, attribute, *third, *heroes, *genders}
    assert len(heroes) == 2 and len(third) == 1
    offers = [t for t in counting.texts
              if "LEFT JOIN" not in t and 'FROM "superhero"."superhero"' in t]
    assert len(offers) == 1, offers
    counting.texts.clear()
    assert closure([attribute, power, *third]) == [attribute, power, *third,
                                                   *sorted(closed[3:])]
    assert counting.texts == []  # every fact read already
