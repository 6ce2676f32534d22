"""The caches' one rule (siselect.runtime.bounded): at most N entries, emptied whole when
full, so that a long session's caches stay bounded."""

from siselect.runtime.bounded import keep


def test_a_cache_holds_at_most_its_bound_and_empties_when_full():
    cache: dict[int, str] = {}
    for i in range(3):
        assert keep(cache, i, str(i), most=3) == str(i)
    assert cache == {0: "0", 1: "1", 2: "2"}
    assert keep(cache, 3, "3", most=3) == "3"
    assert cache == {3: "3"}
    sizes = []
    for i in range(4, 100):
        keep(cache, i, str(i), most=3)
        sizes.append(len(cache))
    assert max(sizes) == 3


def test_a_key_kept_again_is_replaced_below_the_bound():
    cache = {"a": 1}
    keep(cache, "a", 2, most=3)
    assert cache == {"a": 2}
