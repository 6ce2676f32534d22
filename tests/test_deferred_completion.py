"""Issue 18: a tournament's pool completes the classes its samples did not see only when a
search needs them (WitnessCache.pool(defer=True), separate._search)."""

import pytest

from conftest import CountingExecutor
from siselect.instances import separate as separation
from siselect.instances.pair import Pair
from siselect.instances.witness_cache import WitnessCache
from siselect.runtime.catalog import load_catalog
from siselect.sqltext.transpile import to_tree
from siselect.witnesses import REGISTRY

# W2 within W1: the sketches (100 witnesses of thousands) see W1-W2 and W1∩W2, never W2-W1,
# which is empty: the completion would join both whole sets to find nothing.
SUBSET = ("SELECT COUNT(*) FROM hero_power WHERE power_id < 60",
          "SELECT COUNT(*) FROM hero_power WHERE power_id < 30")
# W1 within W2 but for three witnesses (three powers one hero each holds): nothing the
# sketches see separates, the completion finds them.
TINY_DIFFERENCE = ("SELECT COUNT(*) FROM hero_power WHERE power_id < 60",
                   "SELECT COUNT(*) FROM hero_power WHERE power_id < 60 "
                   "OR power_id IN (82, 116, 165)")


def _completions(texts):
    return [t for t in texts if "AS sides" in t and "EXISTS" in t]


def _separated(executor, queries, cache, eager):
    """The pair separated with ``cache``; ``eager``: its pool completed beforehand, as
    before completions were deferred. The result and the statements of the separation."""
    catalog = load_catalog(executor)
    trees = tuple(to_tree(q, "postgres", catalog) for q in queries)
    on_d = tuple(Pair(executor, catalog, trees).run_strict(t) for t in trees)
    options = separation.Options()
    if eager:
        lineages = [cache.lineage(REGISTRY["lineage"], t, catalog) for t in trees]
        cache.pool(executor, lineages, options.seed)
    counting = CountingExecutor(executor)
    result = separation.separate_pair(Pair(counting, catalog, trees, witnesses=cache), *on_d,
                                      options)
    return result, counting.texts


@pytest.mark.parametrize("queries, completed", [(SUBSET, False), (TINY_DIFFERENCE, True)])
def test_the_completion_runs_only_when_the_search_needs_it(queries, completed, executor):
    """A search that separates meaningfully from the samples' classes runs no completion;
    one that does not completes the pool and searches again. Either way the instance is the
    one the pool completed first gives."""
    deferred, texts = _separated(executor, queries, WitnessCache(small=100, sketch=100), False)
    before, _ = _separated(executor, queries, WitnessCache(small=100, sketch=100), True)
    assert bool(_completions(texts)) == completed, queries
    assert deferred["status"] == before["status"] == "separated"
    assert deferred["meaning"] == "meaningful"
    assert sorted(deferred["row_ids"]) == sorted(before["row_ids"])
    assert deferred["tries"] == before["tries"] or completed  # a second search counts on


def test_a_pair_separated_again_does_not_complete_its_pool(executor):
    """The searches away from an earlier instance (the tournament's overlapping instances)
    use the pool as the first search left it: no completion, even where they fail."""
    catalog = load_catalog(executor)
    trees = tuple(to_tree(q, "postgres", catalog) for q in SUBSET)
    on_d = tuple(Pair(executor, catalog, trees).run_strict(t) for t in trees)
    cache = WitnessCache(small=100, sketch=100)
    counting = CountingExecutor(executor)
    first = separation.separate_pair(Pair(counting, catalog, trees, witnesses=cache), *on_d,
                                     separation.Options())
    excluded = tuple(first["row_ids"])
    for _ in range(3):
        again = separation.separate_pair(Pair(counting, catalog, trees, witnesses=cache),
                                         *on_d, separation.Options(exclude=excluded))
        assert not set(again.get("row_ids") or ()) & set(excluded)
        excluded += tuple(again.get("row_ids") or ())
    assert _completions(counting.texts) == []
    assert cache.unfinished  # still deferred: nothing asked for it
