"""Caches that stay small without bookkeeping: emptied whole when they are full.

What siselect keeps across calls (parsed texts, prepared plans, normalised answers) is
asked for again soon after it is made, within one search or tournament, and rarely later;
keeping the most recent N exactly (an LRU) would cost a reordering on every hit for no
measurable gain, and emptying at N keeps memory bounded whatever runs for how long."""

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def keep(cache: dict[K, V], key: K, value: V, most: int) -> V:
    """``cache[key] = value``, the cache emptied first when it holds ``most`` entries."""
    if len(cache) >= most:
        cache.clear()
    cache[key] = value
    return value
