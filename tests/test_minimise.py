"""ddmin: the result still fails and is 1-minimal."""

import random

import pytest

from siselect.instances.minimise import ddmin


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
