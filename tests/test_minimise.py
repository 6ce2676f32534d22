"""ddmin: the result still fails and is 1-minimal."""

import random

import pytest

from siselect.instances.minimise import ddmin, ddmin_blocks


def one_minimal(result, predicate) -> bool:
    return all(not predicate(result[:i] + result[i + 1 :]) for i in range(len(result)))


@pytest.mark.parametrize("seed", range(5))
def test_finds_the_two_needed_items_among_many(seed):
    items = list(range(2000))
    random.Random(seed).shuffle(items)
    calls = []

    def needs_pair(subset):
        calls.append(len(subset))
        return 17 in subset and 1234 in subset

    result = ddmin(items, needs_pair)
    assert sorted(result) == [17, 1234]
    assert len(calls) < 200, "chunked removal should need far fewer tests than items"


def test_threshold_predicate_is_one_minimal():
    def heavy(subset):
        return sum(subset) >= 100

    result = ddmin(list(range(30)), heavy)
    assert heavy(result)
    assert one_minimal(result, heavy)


def test_single_item_is_kept():
    assert ddmin([5], lambda s: 5 in s) == [5]


def _groups_whole(members_of: dict[str, list[int]], rare: int):
    """A property of groups, as an instance's meaning is: every group present is whole,
    one of them at least, and the rare item is there."""
    def holds(subset: list[int]) -> bool:
        present = set(subset)
        seen = [g for g, members in members_of.items() if present & set(members)]
        return (rare in present and bool(seen)
                and all(present >= set(members_of[g]) for g in seen))
    return holds


def test_blocks_first_remove_whole_groups_where_chunks_of_items_fail():
    # 40 groups of 5 items in a shuffled order and a rare item: a chunk of items cut at
    # random leaves some group partly there, so ddmin alone removes almost nothing.
    rng = random.Random(3)
    members_of = {f"g{i}": list(range(5 * i, 5 * i + 5)) for i in range(40)}
    rare = 1000
    items = [x for members in members_of.values() for x in members] + [rare]
    rng.shuffle(items)
    holds = _groups_whole(members_of, rare)
    units = [([x], frozenset({g})) for g, members in members_of.items() for x in members]
    tested_plain, tested_blocks = [], []

    def counted(log):
        return lambda subset: log.append(len(subset)) or holds(subset)

    plain = ddmin(items, counted(tested_plain))
    kept = ddmin_blocks(items, units, counted(tested_blocks))
    assert holds(kept) and rare in kept and len(kept) == 6, kept  # one group and the rare
    blocked = ddmin(kept, counted(tested_blocks))
    assert sorted(blocked) == sorted(kept) and one_minimal(blocked, holds)
    assert holds(plain) and one_minimal(plain, holds)
    assert len(tested_blocks) * 3 < len(tested_plain), (len(tested_blocks), len(tested_plain))


def test_blocks_keep_items_no_unit_holds_and_stop_at_most_chunks():
    units = [([i], frozenset({f"g{i}"})) for i in range(64)]
    tested = []

    def every_group(subset):  # no block can go: each round tests its chunks, then stops
        tested.append(subset)
        return all(i in subset for i in range(64))

    items = list(range(64)) + [500, 501]  # 500 and 501 are in no unit
    assert ddmin_blocks(items, units, every_group, most_chunks=8) == items
    # complements of 2 chunks, chunks and complements of 4, then complements of 8: chunks
    # no larger than chunks that failed alone are not tested alone
    assert len(tested) == 2 + (4 + 4) + 8, len(tested)
    assert all(500 in s and 501 in s for s in tested)


def _blocks_by_definition(items, units, still_fails, ahead):
    """ddmin_blocks as its docstring defines it, every witness looked at for every set."""
    held = [(list(m), keys) for m, keys in units if keys and set(items) >= set(m)]
    blocks = list(dict.fromkeys(k for _, keys in held for k in keys))
    loose = set(items) - {x for members, _ in held for x in members}

    def items_of(kept):
        alive = loose | {x for members, keys in held if keys <= set(kept) for x in members}
        return [x for x in items if x in alive]

    kept = ddmin(blocks, lambda keys: still_fails(items_of(keys)),
                 lambda batch: ahead([items_of(k) for k in batch]), 16)
    return items_of(kept)


@pytest.mark.parametrize("seed", range(4))
def test_blocks_test_the_sets_their_definition_gives(seed):
    # Witnesses of one to three blocks, items in several witnesses and in none: the sets
    # tested and shown ahead, in order, are those of the definition, whatever index serves it.
    rng = random.Random(seed)
    items = rng.sample(range(10_000), 300)
    blocks = [f"b{i}" for i in range(40)]
    units = [(rng.sample(items[:290], rng.randint(1, 3)),
              frozenset(rng.sample(blocks, rng.randint(1, 3)))) for _ in range(400)]
    needed = set(rng.sample(items, 3))
    seen = {"ours": [], "defined": []}

    def logged(name):
        def holds(subset):
            seen[name].append(("test", subset))
            return needed <= set(subset)
        return holds, lambda batch: seen[name].append(("ahead", batch))

    ours = ddmin_blocks(items, units, *logged("ours"))
    defined = _blocks_by_definition(items, units, *logged("defined"))
    assert needed <= set(ours) and ours == defined
    assert len(seen["ours"]) > 10 and seen["ours"] == seen["defined"]


def test_complements_go_on_after_the_last_removed():
    # Ten items of which 3 and 7 can go: once 7 and then 3 went, the next set tried also
    # leaves out 4 (the items before 3 were kept in a larger set), not 0 again, and no
    # chunk is tried alone (chunks of one item, inside chunks that failed alone).
    tested = []

    def all_but_3_and_7(subset):
        tested.append(frozenset(subset))
        return set(range(10)) - {3, 7} <= set(subset)

    assert ddmin(list(range(10)), all_but_3_and_7) == [0, 1, 2, 4, 5, 6, 8, 9]
    both_gone = tested.index(frozenset(range(10)) - {3, 7})
    assert tested[both_gone + 1] == frozenset(range(10)) - {3, 4, 7}, tested[both_gone + 1]
    assert all(len(s) >= 7 for s in tested[both_gone:])


@pytest.mark.parametrize("seed", range(3))
def test_a_dense_set_costs_few_tests(seed):
    # 60 items of which 20 are needed, the shape of a HAVING COUNT(*) > 15 instance: about
    # 140 distinct sets tested (Zeller's ddmin tests about 380 here).
    rng = random.Random(seed)
    items = list(range(60))
    needed = set(rng.sample(items, 20))
    tested = set()

    def holds(subset):
        tested.add(frozenset(subset))
        return needed <= set(subset)

    assert sorted(ddmin(items, holds)) == sorted(needed)
    assert len(tested) < 260, len(tested)
