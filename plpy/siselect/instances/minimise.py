"""Shrink a separating row set until it is 1-minimal (delta debugging, Zeller's ddmin).

Removing chunks first matters: starting sets reach thousands of rows for queries like
``ORDER BY COUNT(*) DESC LIMIT 1``, where testing one row at a time would be quadratic.
Removing whole *blocks* first (:func:`ddmin_blocks`, hierarchical delta debugging) matters
when what holds is a property of groups: a chunk of rows cut at random thins every group
it meets, a block removes some groups and leaves the others whole.
"""

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from functools import partial
from itertools import islice
from typing import TypeVar

from siselect.runtime import deadline

T = TypeVar("T")


def _split(items: Sequence[T], n: int) -> list[list[T]]:
    size, extra = divmod(len(items), n)
    chunks, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        chunks.append(list(items[start:end]))
        start = end
    return [c for c in chunks if c]


def ddmin(items: Sequence[T], still_fails: Callable[[list[T]], bool],
          ahead: Callable[[list[list[T]]], None] | None = None,
          most_chunks: int | None = None) -> list[T]:
    """A 1-minimal subsequence of ``items`` on which ``still_fails`` holds.

    ``still_fails(items)`` must be True on entry. The result is 1-minimal: removing any
    single element makes ``still_fails`` False. ``ahead``, when given, is shown the subsets
    about to be tested, in test order and in batches that double (the first alone, then 2,
    then 4: :data:`AHEAD_MOST`), before the first of them is tested:
    it may fetch what their tests need at once (one statement for many sets,
    :meth:`.pair.Pair.prefetch`). Which subsets are tested, in which order, and the result
    stay as they were: the tests still stop at the first subset that fails. With
    ``most_chunks``, it stops before splitting into more chunks: then not 1-minimal.

    Two departures from Zeller's ddmin, for sets most of whose items are needed (a HAVING
    COUNT(*) > 15 instance: 19 rows of 23, where each round's tests mostly fail): chunks
    are tried alone only while larger than those of the last round whose chunks all failed
    alone (a smaller chunk lies about inside one of them, and a part of a set that does not
    hold rarely does), and complements are tried from the chunk after the one last
    removed (those before it were needed in a larger set). Neither skips a complement of
    the last round, on which 1-minimality rests; they change which 1-minimal set is found,
    where the property is not monotone, and how many sets are tried.
    """
    current = list(items)
    n = 2
    failed = 0  # the largest chunk of the last round whose chunks all failed alone
    start = 0  # the chunk whose complement is tested first
    while len(current) >= 2:
        deadline.check()  # each round builds O(len(current)) complements in Python
        chunks = _split(current, min(n, len(current)))
        largest = len(chunks[0])  # _split puts the longer chunks first
        found: tuple[int, list[T]] | None = None
        if len(chunks) > 2 and largest > failed:
            found = _first(range(len(chunks)), chunks.__getitem__, still_fails, ahead)
            if found is None:
                failed = largest
        if found is not None:
            current, n, start, failed = found[1], 2, 0, 0
            continue
        order = [(start + i) % len(chunks) for i in range(len(chunks))]
        found = _first(order, partial(_complement, chunks), still_fails, ahead)
        if found is not None:
            current, n = found[1], max(n - 1, 2)
            start = found[0] if n < len(chunks) else 0
            continue
        if n >= len(current) or (most_chunks is not None and n >= most_chunks):
            break
        n = min(2 * n, len(current))
    return current


def ddmin_blocks(items: Sequence[T], units: Sequence[tuple[Sequence[T], frozenset[Hashable]]],
                 still_fails: Callable[[list[T]], bool],
                 ahead: Callable[[list[list[T]]], None] | None = None,
                 most_chunks: int = 16) -> list[T]:
    """``items`` without the blocks whose removal keeps ``still_fails``: :func:`ddmin` over
    the blocks that ``units`` name. A unit (a witness: items and the blocks, the groups, it
    counts in) is kept while all its blocks are; an item is kept while a unit holding it is,
    or when no unit holds it. Chunks of blocks at most ``most_chunks`` a round, so that a
    set whose blocks all matter costs a few tests: follow it with :func:`ddmin`."""
    present = set(items)
    held: dict[frozenset[Hashable], set[T]] = {}  # one entry per set of blocks
    for members, keys in units:
        if keys and present.issuperset(members):
            held.setdefault(keys, set()).update(members)
    blocks = list(dict.fromkeys(k for keys in held for k in keys))
    if len(blocks) < 2:
        return list(items)
    loose = present.difference(*held.values())
    # Each set of blocks under one of its blocks: a test looks at the sets under the blocks
    # it keeps, not at every witness (thousands a test, each test of thousands of rows).
    under: dict[Hashable, list[tuple[frozenset[Hashable], set[T]]]] = {}
    for keys, kept_members in held.items():
        under.setdefault(next(iter(keys)), []).append((keys, kept_members))
    place = {x: i for i, x in enumerate(items)}
    sortable = len(place) == len(items)  # each item once: a small set sorted by place
    made: dict[tuple[Hashable, ...], list[T]] = {}  # ahead's sets, tested next

    def items_of(kept: list[Hashable]) -> list[T]:
        found = made.pop(tuple(kept), None)
        if found is not None:
            return found
        chosen = set(kept)
        alive = set(loose)
        for block in kept:
            for keys, members in under.get(block, ()):
                if keys <= chosen:
                    alive |= members
        if sortable and 8 * len(alive) < len(items):
            return sorted(alive, key=place.__getitem__)
        return [x for x in items if x in alive]

    def shown(batch: list[list[Hashable]]) -> None:
        made.clear()
        made.update((tuple(keys), items_of(keys)) for keys in batch)
        assert ahead is not None
        ahead([made[tuple(keys)] for keys in batch])

    kept = ddmin(blocks, lambda keys: still_fails(items_of(keys)),
                 None if ahead is None else shown, most_chunks)
    return items_of(kept)


#: A batch's first set goes alone (a search often stops at its first proposal), then twice
#: as many, up to 4: in the server, where a statement costs little, larger batches ran more
#: branches for nothing than they saved in statements (superhero x100, six heavy tasks
#: alternating, 3 runs each, medians summed: 14.85 s with batches of up to 16, 14.28 s with
#: 4, the same instances; all 20 tasks from a client over psycopg: 23.6-25.4 s against
#: 23.8-23.9 s).
AHEAD_FIRST, AHEAD_MOST = 1, 4


def _complement(chunks: list[list[T]], i: int) -> list[T]:
    deadline.check()  # O(len(current)) in Python
    return [x for j, c in enumerate(chunks) if j != i for x in c]


def shown_ahead(items: Iterable[T], ahead: Callable[[list[T]], None] | None) -> Iterator[T]:
    """``items`` as they come, ``ahead`` (when given) shown them first in batches that double
    (the first alone, then twice as many, up to :data:`AHEAD_MOST`), each batch built only
    when the one before it is used up."""
    if ahead is None:
        yield from items
        return
    size, items = AHEAD_FIRST, iter(items)
    while batch := list(islice(items, size)):
        if len(batch) > 1:
            ahead(batch)
        yield from batch
        size = min(2 * size, AHEAD_MOST)


def _first(order: Sequence[int], subset: Callable[[int], list[T]],
           still_fails: Callable[[list[T]], bool],
           ahead: Callable[[list[list[T]]], None] | None) -> tuple[int, list[T]] | None:
    """The first of ``subset(i)`` for ``i`` in ``order`` that still fails, with its ``i``;
    ``ahead`` sees them batch by batch (:func:`shown_ahead`)."""
    tried = shown_ahead(((i, subset(i)) for i in order),
                        None if ahead is None else lambda b: ahead([s for _, s in b]))
    for i, candidate in tried:
        if still_fails(candidate):
            return i, candidate
    return None
