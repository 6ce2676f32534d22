"""Issue 18: each candidate's witnesses once per tournament (instances/witness_cache.py)."""

import pytest
from tests.test_lineage import POOL_PAIRS, expected_pool, key_order, witness_sqls

from conftest import CountingExecutor
from siselect.instances import integrity, search, witness_cache
from siselect.instances.separate import Options
from siselect.instances.witness_cache import WitnessCache
from siselect.runtime.catalog import ForeignKey, load_catalog
from siselect.selection import tournament
from siselect.selection.judges import ReferenceJudge
from siselect.sqltext.transpile import to_tree
from siselect.witnesses import REGISTRY

LINEAGE = REGISTRY["lineage"]


def lineages_of(queries, catalog):
    return [LINEAGE.witness_query(to_tree(q, "postgres", catalog), catalog) for q in queries]


@pytest.mark.parametrize("q1, q2", POOL_PAIRS)
def test_cached_pool_of_small_sets_is_the_exact_pool(q1, q2, executor):
    catalog = load_catalog(executor)
    lineages = lineages_of((q1, q2), catalog)
    fetched = search.fetch_pool(executor, lineages[0].keyed_sql, lineages[1].keyed_sql, 5,
                                keyed=True)
    cached = WitnessCache(small=search.SMALL).pool(executor, lineages, 5)
    for name in ("only1", "only2", "both"):
        assert getattr(cached, name) == getattr(fetched, name), name
    assert cached.sizes == fetched.sizes and not cached.estimated


@pytest.mark.parametrize("q1, q2", POOL_PAIRS)
def test_sketched_pool_starts_each_class_in_key_order(q1, q2, executor):
    """Sets above ``small`` keep their ``sketch`` first witnesses by key order: each class
    found there starts like the whole class in that order; a class found nowhere there is
    completed on the server, whole."""
    catalog = load_catalog(executor)
    lineages = lineages_of((q1, q2), catalog)
    expected = expected_pool(executor, witness_sqls((q1, q2), catalog), key_order(True, 5))
    pool = WitnessCache(small=100, sketch=100).pool(executor, lineages, 5)
    for name, (first, size) in expected.items():
        found = [tuple(w) for w in getattr(pool, name)]
        if name in pool.estimated:
            assert found and found == first[:len(found)], name
            assert size / 3 < pool.sizes[name] < size * 3, name  # a rough estimate
        else:
            assert found == first and pool.sizes[name] == size, name


def test_a_sketch_is_bounded_whatever_the_set(executor):
    catalog = load_catalog(executor)
    lineage, = lineages_of(["SELECT hero_id FROM hero_power"], catalog)  # 5,825 witnesses
    cache = WitnessCache(small=100, sketch=50)
    cache.pool(executor, [lineage, lineage], 1)
    sample, = cache.samples.values()
    assert not sample.complete and len(sample.witnesses) == 50
    assert 5825 / 2 < sample.size < 5825 * 2


# A stream the planner flattens, of one table (its witness costs too little to be built
# after the sort), and one it cannot (a CTE: every row is built in the subquery).
SKETCHED = ["SELECT hero_id FROM hero_power",
            "SELECT s.full_name FROM superhero AS s JOIN hero_power AS hp ON s.id = hp.hero_id "
            "GROUP BY s.full_name HAVING COUNT(hp.hero_id) > 15"]


def built(plan: dict) -> int:
    """Witnesses built by the plan (EXPLAIN VERBOSE, JSON): rows of the nodes that compute
    an array of row ids (an output a node only passes on is shown in parentheses)."""
    own = plan["Actual Rows"] * plan["Actual Loops"] \
        if any(o.startswith("array_remove(") for o in plan.get("Output", [])) else 0
    return own + sum(built(p) for p in plan.get("Plans", []))


@pytest.mark.parametrize("sql", SKETCHED)
def test_a_sketch_builds_only_the_witnesses_it_keeps(sql, executor):
    """Issue 18: the sketch of a set of millions built every witness below its sort (the
    row ids written out as text cost more than the rest of the witness query); the
    deferred form carries the row identities and builds the kept ones. Same sample."""
    catalog = load_catalog(executor)
    lineage, = lineages_of([sql], catalog)
    assert lineage.deferred is not None
    counts = []
    for form in (None, lineage.deferred):
        sketch = witness_cache.sketch_sql(lineage.keyed_sql, 3, 50, form)
        (plan,), = executor.conn.execute(
            f"EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) {sketch}").fetchone()
        counts.append(built(plan["Plan"]))
    assert counts[0] > 1000 and counts[1] == 50, counts
    deferred = witness_cache.fetch_sample(executor, lineage.keyed_sql, 3, 50, 50,
                                          lineage.deferred)
    assert deferred == witness_cache.fetch_sample(executor, lineage.keyed_sql, 3, 50, 50)
    assert len(deferred.witnesses) == 50 and not deferred.complete


@pytest.mark.parametrize("sql", [*SKETCHED, "SELECT COUNT(*) FROM superhero WHERE id < 0",
                                 "SELECT id FROM superhero WHERE id < 0"])
def test_a_sketch_comes_back_as_one_row(sql, executor):
    """Issue 18: 8,192 rows fetched one by one through PL/Python cost about as much as the
    statement that sorted them; packed as arrays they come as one row, the same sample
    (an empty witness and an empty set included)."""
    catalog = load_catalog(executor)
    lineage, = lineages_of([sql], catalog)
    counting = CountingExecutor(executor)
    sample = witness_cache.fetch_sample(counting, lineage.keyed_sql, 3, 50, 50,
                                        lineage.deferred)
    assert counting.statements == 1 and counting.fetched == 1
    rows = executor.run(witness_cache.sketch_sql(lineage.keyed_sql, 3, 50)).rows
    assert sample.witnesses == {k: (e, o, tuple(w)) for w, k, e, o in rows}


def test_a_tournament_sketches_with_the_deferred_form(executor):
    """The cache runs each candidate's sketch in the deferred form when its lineage has one."""
    catalog = load_catalog(executor)
    lineages = lineages_of(SKETCHED, catalog)
    counting = CountingExecutor(executor)
    WitnessCache(small=100, sketch=100).pool(counting, lineages, 0, defer=True)
    sketches = [t for t in counting.texts if "ORDER BY o LIMIT 100" in t]
    assert len(sketches) == 2
    assert all(lin.deferred is not None and lin.deferred.sql in t and lin.keyed_sql not in t
               for lin, t in zip(lineages, sketches, strict=True))


QUESTION = "How many superheroes are taller than 200 cm?"
RIGHT = "SELECT COUNT(*) FROM superhero WHERE height_cm > 200"
# Four groups on D: six duels, each candidate in three of them.
CANDIDATES = [RIGHT, "SELECT COUNT(*) FROM superhero WHERE height_cm >= 198",
              "SELECT COUNT(*) FROM superhero WHERE height_cm > 185",
              "SELECT COUNT(*) FROM superhero WHERE height_cm > 210"]


def test_a_tournament_computes_each_candidates_witnesses_once(executor):
    catalog = load_catalog(executor)
    counting = CountingExecutor(executor)
    result = tournament.run_tournament(
        counting, CANDIDATES, QUESTION, None,
        ReferenceJudge(to_tree(RIGHT, "postgres", catalog)), Options(), catalog=catalog)
    duels = [(d["a"], d["b"]) for d in result["duels"] if d["separation"] == "separated"]
    assert len(result["groups"]) == 4 and result["winner"]["index"] == 0
    taking_part = {i: sum(i in d for d in duels) for i in range(len(CANDIDATES))}
    # Without the cache each duel reads both sides' witnesses again.
    assert max(taking_part.values()) >= 2, taking_part
    for i, sql in enumerate(CANDIDATES):
        lineage = LINEAGE.witness_query(to_tree(sql, "postgres", catalog), catalog)
        forms = [lineage.keyed_sql] + ([lineage.deferred.sql] if lineage.deferred else [])
        runs = [t for t in counting.texts if any(form in t for form in forms)]
        assert len(runs) == min(1, taking_part[i]), (sql, len(runs), taking_part[i])


def test_a_whole_side_above_the_bound_is_looked_up_not_joined(executor):
    """An empty COUNT has one witness, the empty one; against a sketched set it is looked up
    there (one filtering scan) rather than both sets joined to complete W1-W2."""
    catalog = load_catalog(executor)
    lineages = lineages_of(("SELECT COUNT(*) FROM hero_power WHERE power_id = -1",
                            "SELECT COUNT(*) FROM hero_power"), catalog)
    counting = CountingExecutor(executor)
    cache = WitnessCache(small=100, sketch=100)
    for seed in range(4):  # whether the empty witness lies above the bound depends on it
        pool = cache.pool(counting, lineages, seed)
        assert pool.only1 == [[]] and pool.sizes["only1"] == 1 and pool.both == []
        assert len(pool.only2) == 48 and "only2" in pool.estimated
    assert not any("EXISTS" in t for t in counting.texts)
    assert len(counting.texts) <= 4 * 3


def test_a_sketched_set_met_by_several_whole_ones_gives_its_keys_once(executor, monkeypatch):
    """Three whole sets against one sketched set: each looked its witnesses up in the
    sketched set's query, run once per look-up; its keys (at most KEYS_KEPT) are now fetched
    once, and every pool is the one the look-ups gave."""
    catalog = load_catalog(executor)
    big, *small = lineages_of(["SELECT COUNT(*) FROM hero_power"] + [
        f"SELECT COUNT(*) FROM hero_power WHERE power_id = {p}" for p in (3, 4, 5)], catalog)

    def pools(kept: int) -> tuple[list, list[str]]:
        monkeypatch.setattr(witness_cache, "KEYS_KEPT", kept)
        counting = CountingExecutor(executor)
        cache = WitnessCache(small=100, sketch=100)
        found = [cache.pool(counting, [s, big], 2) for s in small]
        return [(p.only1, p.only2, p.both, p.sizes) for p in found], counting.texts

    with_keys, texts = pools(witness_cache.KEYS_KEPT)
    looked_up, old_texts = pools(-1)
    assert with_keys == looked_up
    assert sum("WHERE k = ANY(" in t for t in old_texts) == 3
    assert sum("array_agg(k)" in t and "DISTINCT k" in t for t in texts) == 1
    assert not any("WHERE k = ANY(" in t for t in texts)


def test_a_trees_text_is_written_once_and_names_that_tree_only(executor):
    """Facts are asked for at every row set tested: the tree's text is kept per tree object,
    and a tree with another id (a copy, changed) gets its own text, never a stale one."""
    catalog = load_catalog(executor)
    cache = WitnessCache()
    tree = to_tree("SELECT id FROM superhero ORDER BY id LIMIT 1", "postgres", catalog)
    calls = []
    for _ in range(3):
        cache.remember("fact", tree, lambda: calls.append(1) or len(calls))
    assert calls == [1] and len(cache.texts) == 1
    changed = tree.copy()
    changed.set("limit", None)
    assert cache.text(changed) == changed.sql("postgres") != cache.text(tree)
    assert cache.remember("fact", changed, lambda: "other") == "other"


@pytest.mark.parametrize("sql, limit", [
    ("SELECT hero_id FROM hero_power", 100),  # 5,825 witnesses, each its own row
    ("SELECT id FROM superhero", 1000),  # 750 rows: all of them, in the seeded order
    ("SELECT s.id FROM superhero AS s, colour AS c", 100),  # rows shared by many witnesses
    ("SELECT COUNT(*) FROM hero_power WHERE power_id = -1", 10),  # one empty witness
])
def test_witness_rows_are_rows_sqls_own(sql, limit, executor):
    """All rows of the witnesses, or None beyond ``limit``: what the grouping of every row
    of every witness says, first asked of the first witnesses."""
    catalog = load_catalog(executor)
    lineage, = lineages_of([sql], catalog)
    whole = [int(r) for (r,) in executor.run(witness_cache.rows_sql([lineage.sql], limit, 3)
                                             ).rows]
    expected = whole if len(whole) <= limit else None
    assert witness_cache.witness_rows(executor, [lineage.sql], limit, 3) == expected


def test_too_many_witness_rows_show_in_the_first_witnesses(executor):
    """A set whose first witnesses already hold more than ``limit`` rows is not grouped
    whole: one statement, that reads ``limit + 1`` witnesses."""
    catalog = load_catalog(executor)
    lineage, = lineages_of(["SELECT hero_id FROM hero_power"], catalog)
    counting = CountingExecutor(executor)
    assert witness_cache.witness_rows(counting, [lineage.sql], 100, 0) is None
    assert counting.statements == 1 and "GROUP BY" not in counting.texts[0]
    assert counting.fetched == 1


def _heights_tournament(executor, join: str) -> tuple[dict, list[str]]:
    """A tournament of three heroes' counts over superhero ``join`` hero_power, with
    references kept; its result and the statements that asked D whether a join holds."""
    catalog = load_catalog(executor)
    joined = (f"SELECT COUNT(*) FROM superhero AS s {join} hero_power AS hp "
              "ON s.id = hp.hero_id WHERE s.height_cm > {}")
    candidates = [joined.format(h) for h in (200, 198, 185)]
    counting = CountingExecutor(executor)
    result = tournament.run_tournament(
        counting, candidates, QUESTION, None,
        ReferenceJudge(to_tree(candidates[0], "postgres", catalog)),
        Options(with_references=True), catalog=catalog)
    return result, [t for t in counting.texts if "AS kept_inclusion" in t]


def test_a_tournament_asks_d_once_per_join_it_keeps(executor):
    """Whether D keeps a join is a fact of D: candidates that join the same columns ask it
    once per tournament (each such statement reads both tables whole); a declared foreign
    key is followed as it is, not asked."""
    catalog = load_catalog(executor)
    assert ForeignKey(["hero_id"], "superhero", ["id"]) in catalog.tables["hero_power"].foreign_keys
    # A hero without powers counts here (the outer join keeps it): whether D has one is asked.
    result, asked = _heights_tournament(executor, "LEFT JOIN")
    assert any(d["separation"] == "separated" for d in result["duels"])  # two candidates
    # s.id -> hp.hero_id once; hp.hero_id -> s.id is the declared key.
    assert len(asked) == 1 and '"superhero"."superhero" AS k' in asked[0]


def test_a_join_no_query_can_see_broken_is_not_asked(executor):
    """Issue 18: where both queries read superhero only inner-joined to hero_power on its
    id, a hero without powers is in no query's rows, so D is not asked whether every hero
    has one (a statement that reads both tables whole), and the instance, 1-minimal, holds
    no such hero anyway: each of its heroes has a power there."""
    result, asked = _heights_tournament(executor, "JOIN")
    separated = [d for d in result["duels"] if d["separation"] == "separated"]
    assert separated
    assert not asked
    for duel in separated:
        heroes, powers = duel["instance"]["superhero"], duel["instance"]["hero_power"]
        with_power = {row[powers["columns"].index("hero_id")] for row in powers["rows"]}
        assert {row[heroes["columns"].index("id")] for row in heroes["rows"]} <= with_power


def test_a_row_another_table_references_may_come_without_its_partner(executor):
    """A hero comes into D' with the attribute row that references it (a declared key),
    whether or not D' holds a power of it: with hero_attribute read too, whether every hero
    has a power is asked of D, though both queries join superhero to hero_power inner."""
    catalog = load_catalog(executor)
    powers = to_tree("SELECT COUNT(*) FROM superhero AS s JOIN hero_power AS hp "
                     "ON s.id = hp.hero_id", "postgres", catalog)
    attributes = to_tree("SELECT COUNT(*) FROM hero_attribute AS ha WHERE ha.hero_id IN "
                         "(SELECT s.id FROM superhero AS s JOIN hero_power AS hp "
                         "ON s.id = hp.hero_id)", "postgres", catalog)
    join = ("superhero", "id", "hero_power", "hero_id")
    assert integrity.hidden([powers], catalog, *join)
    assert not integrity.hidden([powers, attributes], catalog, *join)


def test_a_join_onto_a_primary_key_is_not_counted(executor):
    """A one-column primary key is unique by PostgreSQL's word: no count over its table."""
    catalog = load_catalog(executor)
    counting = CountingExecutor(executor)
    tree = to_tree("SELECT COUNT(*) FROM superhero AS s JOIN hero_power AS hp "
                   "ON hp.power_id = s.id", "postgres", catalog)
    integrity.kept_joins(counting, catalog, tree)
    onto_key, = [t for t in counting.texts if '"hero_power" AS k' in t]
    onto_other, = [t for t in counting.texts if '"superhero" AS k' in t]
    assert "count(DISTINCT" not in onto_key and "count(DISTINCT" in onto_other


@pytest.mark.parametrize("first_rows", [integrity.FIRST_ROWS, 1])
def test_join_holds_is_ds_own_answer(executor, monkeypatch, first_rows):
    """Covered and unique as counted over the whole tables; uniqueness decided by the first
    rows, or (one row shows no duplicate) counted over all of them."""
    monkeypatch.setattr(integrity, "FIRST_ROWS", first_rows)
    catalog = load_catalog(executor)
    s = "superhero"
    for a, x, b, y in [("superhero", "id", "hero_power", "hero_id"),
                       ("superpower", "id", "hero_power", "power_id"),
                       ("hero_power", "power_id", "superpower", "id"),
                       ("hero_attribute", "attribute_id", "attribute", "id")]:
        (missing, shared), = executor.run(
            f"SELECT (SELECT count(*) FROM {s}.{a} AS k WHERE k.{x} IS NOT NULL AND k.{x} NOT IN "
            f"(SELECT {y} FROM {s}.{b} WHERE {y} IS NOT NULL)), "
            f"(SELECT count({y}) - count(DISTINCT {y}) FROM {s}.{b})").rows
        covered = missing == 0
        assert integrity.join_holds(executor, catalog, a, x, b, y) == \
            (covered, covered and shared == 0), (a, x, b, y)


@pytest.mark.parametrize("order", [1, -1], ids=["again", "the other way round"])
def test_a_pair_asked_again_gets_its_pool_without_a_statement(executor, order):
    """A pair separated again (away from an earlier instance), or met the other way round (B
    against A after A against B: the first pool with W1-W2 and W2-W1 exchanged), gets its
    pool with no statement: its completion on the server (a join of both whole sets, 1.6 s
    of superhero x100 task 720) is not run again, what one duel does to its copy is not
    seen by the next, and the pool is the one a fresh cache computes."""
    catalog = load_catalog(executor)
    completed = []
    for q1, q2 in POOL_PAIRS:
        lineages = lineages_of((q1, q2), catalog)
        counting = CountingExecutor(executor)
        cache = WitnessCache(small=100, sketch=100)
        first = cache.pool(counting, lineages, 5)
        ran = counting.statements
        completed.append(any("AS sides" in t for t in counting.texts))
        first.only1.clear()
        again = cache.pool(counting, lineages[::order], 5)
        assert counting.statements == ran, (q1, q2)
        fresh = WitnessCache(small=100, sketch=100).pool(executor, lineages[::order], 5)
        assert (again.only1, again.only2, again.both, again.sizes) == \
            (fresh.only1, fresh.only2, fresh.both, fresh.sizes), (q1, q2)
        assert sorted(again.estimated) == sorted(fresh.estimated), (q1, q2)
    assert any(completed)  # some pool was completed on the server


def test_the_whole_lineage_stops_at_a_side_too_large(executor, monkeypatch):
    """One side's witnesses above the limit decide the union: the other side is not asked."""
    from siselect.instances import separate
    from siselect.instances.pair import Pair

    monkeypatch.setattr(separate, "UNION_LIMIT", 100)
    catalog = load_catalog(executor)
    queries = ("SELECT hero_id FROM hero_power", "SELECT id FROM superhero WHERE id < 50")
    counting = CountingExecutor(executor)
    pair = Pair(counting, catalog, tuple(to_tree(q, "postgres", catalog) for q in queries),
                witnesses=WitnessCache(small=10, sketch=10))
    lineages = lineages_of(queries, catalog)
    counting.statements, counting.texts = 0, []
    assert separate._union(pair, lineages, 0) is None
    assert counting.statements == 1 and "FROM hero_power" in counting.texts[0]


def test_a_cross_joins_witnesses_are_not_grouped_into_their_rows(executor, monkeypatch):
    """A side whose sketch estimates more witnesses than GROUPED_MOST is not grouped into
    its rows (a cross join's millions hold only its tables' rows): no statement, and the
    search goes on to every row of the tables read."""
    from siselect.instances import separate
    from siselect.instances.pair import Pair

    catalog = load_catalog(executor)
    queries = ("SELECT s.id FROM superhero AS s JOIN colour AS c ON 1 = 1",
               "SELECT s.id FROM superhero AS s JOIN colour AS c ON s.eye_colour_id = c.id")
    trees = tuple(to_tree(q, "postgres", catalog) for q in queries)
    lineages = lineages_of(queries, catalog)
    cache = WitnessCache(small=100, sketch=100)
    cache.pool(executor, lineages, 0)  # the sketches, as a search has them
    (crossed,) = cache._samples(lineages[0])
    assert not crossed.complete and crossed.size > 20_000  # every hero with every colour
    monkeypatch.setattr(witness_cache, "GROUPED_MOST", 20_000)
    counting = CountingExecutor(executor)
    assert separate._union(Pair(counting, catalog, trees, witnesses=cache), lineages, 0) \
        is None
    assert counting.statements == 0
    monkeypatch.setattr(witness_cache, "GROUPED_MOST", 10**9)  # grouped: two statements a side
    rows = separate._union(Pair(counting, catalog, trees, witnesses=cache), lineages, 0)
    assert counting.statements == 4 and rows is not None and len(rows) > 750


def test_the_whole_lineage_asks_a_side_known_too_large_first(executor, monkeypatch):
    """The pair met the other way round: the side already found too large decides the
    union again, without a statement for the side not asked before."""
    from siselect.instances import separate
    from siselect.instances.pair import Pair

    monkeypatch.setattr(separate, "UNION_LIMIT", 100)
    catalog = load_catalog(executor)
    queries = ("SELECT hero_id FROM hero_power", "SELECT id FROM superhero WHERE id < 50")
    counting = CountingExecutor(executor)
    cache = WitnessCache(small=10, sketch=10)
    trees = tuple(to_tree(q, "postgres", catalog) for q in queries)
    lineages = lineages_of(queries, catalog)
    assert separate._union(Pair(counting, catalog, trees, witnesses=cache), lineages, 0) is None
    counting.statements = 0
    again = Pair(counting, catalog, trees[::-1], witnesses=cache)
    assert separate._union(again, lineages[::-1], 0) is None
    assert counting.statements == 0
    # Both sides small: the union keeps the pair's own order, whichever side was known.
    monkeypatch.setattr(separate, "UNION_LIMIT", 20_000)
    small = ("SELECT id FROM superhero WHERE id < 5", "SELECT id FROM superhero WHERE id < 9")
    lineages = lineages_of(small, catalog)
    trees = tuple(to_tree(q, "postgres", catalog) for q in small)
    known = WitnessCache()
    separate._union(Pair(executor, catalog, trees[::-1], witnesses=known), lineages[::-1], 0)
    asked = separate._union(Pair(executor, catalog, trees, witnesses=known), lineages, 0)
    fresh = separate._union(Pair(executor, catalog, trees, witnesses=WitnessCache()),
                            lineages, 0)
    assert asked == fresh and asked is not None and len(asked) == 8


def test_every_row_of_the_tables_read_is_asked_once_per_tournament(executor, monkeypatch):
    """The fallback's every row of the tables read: a pair separated again (or another pair
    reading the same tables) asks no statement; tables holding more than the limit are
    known from counts, without building a row id."""
    from siselect.instances import separate
    from siselect.instances.pair import Pair
    from siselect.instances.references import referenced_rows

    catalog = load_catalog(executor)
    queries = ("SELECT COUNT(*) FROM colour", "SELECT COUNT(id) FROM colour WHERE id > 3")
    trees = tuple(to_tree(q, "postgres", catalog) for q in queries)
    counting = CountingExecutor(executor)
    cache = WitnessCache()
    first = separate._referenced_rows(Pair(counting, catalog, trees, witnesses=cache))
    assert first == referenced_rows(executor, catalog, trees, separate.UNION_LIMIT)
    assert first is not None and len(first) == executor.run(
        "SELECT count(*) FROM colour").rows[0][0]
    counting.statements = 0
    again = separate._referenced_rows(Pair(counting, catalog, trees[::-1], witnesses=cache))
    assert again == first and counting.statements == 0
    monkeypatch.setattr(separate, "UNION_LIMIT", 10)
    counting.fetched = 0
    assert separate._referenced_rows(Pair(counting, catalog, trees, witnesses=cache)) is None
    assert counting.fetched == 1  # one count, no row id


# A join whose condition reads a subquery: its witnesses are deduplicated (every colour with
# every hero of a B... eye colour), as a cross join's repeated rows would be.
REPEATING = ("SELECT c.colour FROM colour AS c JOIN superhero AS s "
             "ON s.eye_colour_id IN (SELECT id FROM colour WHERE colour LIKE 'B%')")


def subplan_runs(plan: dict) -> int:
    """Runs of the plan's correlated subplans: here, the one that builds each witness of the
    deduplicated set (its rows sorted, repeats removed)."""
    own = plan["Actual Loops"] if plan.get("Subplan Name", "").startswith("SubPlan") else 0
    return own + sum(subplan_runs(p) for p in plan.get("Plans", []))


def test_a_deduplicated_set_is_read_as_it_comes_where_repeats_do_not_matter(executor):
    """Deduplicating reads and builds every witness before the first comes out, so the exact
    step's limit stopped nothing (formula_1 975 at scale 10: 8 million witnesses, past the
    60 s statement timeout). It reads them as they come now: the limit stops it."""
    catalog = load_catalog(executor)
    lineage, other = lineages_of([REPEATING, "SELECT id FROM colour"], catalog)
    assert lineage.raw_sql is not None and "DISTINCT w, k" in lineage.keyed_sql
    assert "DISTINCT w, k" not in lineage.raw_sql
    streams = {1: lineage.keyed_sql, 2: other.keyed_sql}
    counts = []
    for raw in ({}, {1: lineage.raw, 2: other.raw}):
        exact = search.exact_sql(search.Sides(0, streams, raw), limit=50)
        (plan,), = executor.conn.execute(
            f"EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) {exact}").fetchone()
        counts.append(subplan_runs(plan["Plan"]))
    assert counts == [13_650, 51], counts  # 35 colours by 390 heroes; the limit
    # Through every step, the pool is the first witnesses of each class, as before: the
    # exact step's in the order of a hash of the witness, the sampled steps' in key order.
    keyed = [lineage.keyed_sql, other.keyed_sql]
    for small, bits, order in ((50_000, 6, "hash_array_extended(w, 5)"),
                               (50, 2, key_order(True, 5))):
        expected = expected_pool(executor, keyed, order)
        pool = search.fetch_pool(executor, *keyed, 5, keyed=True, small=small, bits=bits,
                                 raw=(lineage.raw, other.raw))
        assert bool(pool.estimated) == (small == 50), small
        for name, (first, size) in expected.items():
            found = [tuple(w) for w in getattr(pool, name)]
            if name in pool.estimated:
                assert found and found == first[:len(found)], name
            else:
                assert found == first and pool.sizes[name] == size, (name, small)


def test_a_sample_of_repeated_witnesses_is_whole_only_when_it_is(executor):
    """A set read with repeats is whole only when fewer rows than the sketch holds came
    back: counting the distinct witnesses instead took a set cut by its repeats for whole."""
    catalog = load_catalog(executor)
    lineage, = lineages_of(["SELECT COUNT(*) FROM superhero AS s "
                            "WHERE s.weight_kg > (SELECT AVG(weight_kg) FROM superhero)"],
                           catalog)
    every = {tuple(w) for (w,) in executor.run(lineage.sql).rows}
    (rows,), = executor.run(f"SELECT count(*) FROM ({lineage.raw}) AS __r").rows
    assert rows > len(every)  # repeats
    for sketch in range(len(every) - 3, rows + 2):
        sample = witness_cache.fetch_sample(executor, lineage.raw, 3, sketch, sketch,
                                            lineage.raw_built_later)
        found = {w for _, _, w in sample.witnesses.values()}
        assert found <= every
        assert sample.complete == (sketch > rows), sketch
        if sample.complete:
            assert found == every


CROSSED = "SELECT s.id FROM superhero AS s JOIN colour AS c ON 1 = 1"


@pytest.mark.parametrize("first", [
    "SELECT s.id FROM superhero AS s JOIN hero_power AS hp ON hp.hero_id = s.id "
    "WHERE hp.power_id < 3",
    # Every witness also one of the cross join's: W1-W2 is empty.
    "SELECT s.id FROM superhero AS s JOIN colour AS c ON s.eye_colour_id = c.id "
    "WHERE c.id < 6"], ids=["apart", "within"])
def test_a_pool_against_a_huge_set_is_finished_by_look_ups_not_a_join(first, executor,
                                                                      monkeypatch):
    """Completing W1-W2 against a set of millions (a cross join's) joined both whole sets and
    passed the statement timeout (student_club 1390 at scale 10). Above JOINED_MOST the first
    witnesses of the other sample past the bound are looked up in it instead: one filtering
    scan, and the same first witnesses of W1-W2 as the join gives (none where the look-ups
    found every one in the large set)."""
    monkeypatch.setattr(witness_cache, "JOINED_MOST", 5_000)
    monkeypatch.setattr(witness_cache, "KEYS_KEPT", 1_000)  # millions: never all its keys
    catalog = load_catalog(executor)
    lineages = lineages_of((first, CROSSED), catalog)
    finished = 0
    for seed in range(6):
        order = key_order(True, seed)
        expected = expected_pool(executor, [lin.keyed_sql for lin in lineages], order)
        counting = CountingExecutor(executor)
        pool = WitnessCache(small=100, sketch=100).pool(counting, lineages, seed, defer=True)
        if pool.only1 or pool.finish is None:
            continue  # W1-W2 seen in the samples: nothing to complete
        before = counting.statements
        done = pool.finish()
        assert not any("EXISTS" in t for t in counting.texts)
        assert counting.statements == before + 1 and "k = ANY(" in counting.texts[-1]
        witnesses, size = expected["only1"]
        assert [tuple(w) for w in done.only1] == witnesses[:len(done.only1)]
        if size:
            assert done.only1 and "only1" in done.estimated and done.both == []
        else:
            assert done.both and not done.only1
        finished += 1
    assert finished  # some seed left W1-W2 to complete


def test_a_pair_outside_a_tournament_never_joins_a_huge_set(executor, monkeypatch):
    """``separate`` without a tournament's samples: a class the sample step missed is not
    completed against a set estimated above JOINED_MOST (it stays empty); below, it is."""
    catalog = load_catalog(executor)
    first = ("SELECT s.id FROM superhero AS s JOIN colour AS c ON s.eye_colour_id = c.id "
             "WHERE c.id = 4")  # a few dozen witnesses, all within the cross join's
    lineages = lineages_of((first, CROSSED), catalog)
    texts = {}
    for most in (10**9, 5_000):
        monkeypatch.setattr(search, "JOINED_MOST", most)
        counting = CountingExecutor(executor)
        pool = search.fetch_pool(counting, lineages[0].keyed_sql, lineages[1].keyed_sql, 3,
                                 keyed=True, small=100, bits=6,
                                 raw=(lineages[0].raw, lineages[1].raw))
        texts[most] = counting.texts
        assert pool.only1 == [] and pool.only2
    assert any("EXISTS" in t for t in texts[10**9])
    assert not any("EXISTS" in t for t in texts[5_000]) and len(texts[5_000]) == 2
