"""Proposing row sets that may separate two queries, from the witnesses of their answers.

The witness sets W1, W2 are compared and sampled on the server, so only a small pool of
witnesses per class (W1-W2, W2-W1, W1∩W2) travels to Python: in each class, the witnesses
first in a seeded pseudo-random order.

Comparing two sets of a million witnesses whole costs several times more than computing
them (hash tables outgrow ``work_mem`` and spill), and building every witness's ``bigint[]``
costs more than computing its key ``k`` (equal witnesses have equal keys; see
:func:`siselect.witnesses.lineage.rep.witness_key`). So the pool comes in steps:

1. *exact*: when each set has at most ``SMALL`` witnesses, everything in one statement (it
   stops reading a larger set there), the order a seeded hash of the witness;
2. *sample*: otherwise, the order is ``hashint8extended(k, seed)``, and first come the
   witnesses whose order value falls in the first ``2**-SAMPLE_BITS`` of its range, found
   by a filter on keys that builds only their arrays. Equal witnesses fall in it together,
   so the members of each class found there are exactly its first ones in the order; a
   class found there is taken from there (then maybe fewer than ``POOL`` of it);
3. *completion*: each class with no witness in the sample (small, or empty: a query whose
   witnesses are a subset of the other's) computed whole, by one anti- or semi-join on keys
   (in a tournament only when a search needs it: ``Pool.finish``); never against a set of
   more than ``JOINED_MOST`` witnesses.

The steps taken depend on the sizes only, so a seed always gives the same pool.
"""

import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from siselect.runtime.executor import Executor
from siselect.witnesses.interface import Lineage

POOL = 48  # witnesses fetched per class; tries draw from these
SMALL = 50_000  # witnesses per side compared in one exact statement
SAMPLE_BITS = 6  # larger sets: first the witnesses in 1/64 of the order range
CLASSES = {1: "only1", 2: "only2", 3: "both"}  # bit 1: in W1, bit 2: in W2
#: A set estimated larger is never joined whole with another to complete a pool's classes
#: (a cross join's 40 million witnesses, yardstick student_club 1390 at scale 10, spilled
#: such a join past the 60 s statement timeout): a class its sample did not see stays empty,
#: or a tournament looks the other side's first witnesses up in it (witness_cache).
JOINED_MOST = 1_000_000


@dataclass
class Pool:
    """Samples of W1-W2 ("only1"), W2-W1 ("only2") and of W1∩W2 ("both"), with set sizes.

    A size is exact unless its class is named in ``estimated`` (scaled from the sample).
    ``finish``, when set: the classes the samples did not see are not completed yet (step
    3 deferred, :meth:`siselect.instances.witness_cache.WitnessCache.pool`); calling it
    gives the completed pool.
    """

    only1: list[list[int]] = field(default_factory=list)
    only2: list[list[int]] = field(default_factory=list)
    both: list[list[int]] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)
    estimated: list[str] = field(default_factory=list)
    finish: Callable[[], "Pool"] | None = field(default=None, repr=False, compare=False)


@dataclass
class Sides:
    """The witness queries (with keys) that a pool's statements read, by class bits.

    Two identical queries have the same witnesses: one query, all of it common (bits 3).
    ``raw``: the same witnesses, some perhaps repeated (see :attr:`Lineage.raw_sql`), read
    by the sampled steps, which group them afterwards; by default ``streams``.
    """

    seed: int
    streams: dict[int, str]
    raw: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.raw = {bits: self.raw.get(bits, sql) for bits, sql in self.streams.items()}

    def order(self) -> str:
        """The order of the sampled steps: a seeded hash of the key."""
        return f"hashint8extended(k, {int(self.seed)})"


def keyed_stream(lineage: str, keyed: bool) -> str:
    """The witnesses with a key column ``k``: the lineage's own, or a hash of ``w``."""
    if keyed:
        return lineage
    return f"SELECT w, hash_array_extended(w, 0) AS k FROM ({lineage}) AS __l"


def _ranked(sides: Sides, tagged: str, size: int, order: str) -> str:
    """The first ``size`` witnesses of each class among ``tagged`` rows (side, w, k) by
    ``order`` (an expression of ``w`` and ``k``), with the number of witnesses of the class."""
    return (
        "SELECT sides, w, n FROM (SELECT sides, w, "
        "row_number() OVER (PARTITION BY sides ORDER BY o, w) AS r, "
        "count(*) OVER (PARTITION BY sides) AS n FROM ("
        f"SELECT bit_or(side) AS sides, w, {order} AS o FROM ({tagged}) AS __s "
        f"GROUP BY k, w) AS __g) AS __r WHERE r <= {size}"
    )


def exact_sql(sides: Sides, size: int = POOL, limit: int = SMALL) -> str:
    """Step 1: the pool of witness sets of at most ``limit`` witnesses each.

    When a set has more, the statement stops reading it there and answers only one row,
    of class 0, instead of the pool. Every witness is built here anyway, so they are
    ordered by a seeded hash of the witness itself rather than of its key.
    """
    # Repeats read there count towards the limit (a set that passes it by repeats goes to
    # the sample step) and are grouped away by _ranked.
    ctes = [f"__w{bits} AS MATERIALIZED (SELECT w, k FROM ({sql}) AS __l LIMIT {limit + 1})"
            for bits, sql in sides.raw.items()]
    # Counting stops at the first set found too large. Shorter SQL first: a longer witness
    # query is more likely to do much before its first witness (a nested copy of the
    # query, a gathering), which reading the other first may spare.
    counted = " AND ".join(f"(SELECT count(*) FROM __w{bits}) <= {limit}"
                           for bits in sorted(sides.raw, key=lambda b: len(sides.raw[b])))
    small = "(SELECT small FROM __n)"
    tagged = " UNION ALL ".join(f"SELECT {bits} AS side, w, k FROM __w{bits} WHERE {small}"
                                for bits in sides.streams)
    return (
        f"WITH {', '.join(ctes)}, __n AS MATERIALIZED (SELECT {counted} AS small) "
        "SELECT 0 AS sides, NULL::bigint[] AS w, 0::bigint AS n FROM __n WHERE NOT small "
        f"UNION ALL {_ranked(sides, tagged, size, f'hash_array_extended(w, {int(sides.seed)})')}"
    )


def sample_sql(sides: Sides, size: int = POOL, bits: int = SAMPLE_BITS) -> str:
    """Step 2: the pool of the witnesses whose order value is in the first ``2**-bits`` of
    its range (a filter on the key: only the witnesses kept are built)."""
    below = -(2**63) + (2**64 >> bits)
    tagged = " UNION ALL ".join(
        f"SELECT {side} AS side, w, k FROM ({sql}) AS __l WHERE {sides.order()} < {below}"
        for side, sql in sides.raw.items())
    return _ranked(sides, tagged, size, sides.order())


def completion_sql(sides: Sides, classes: list[int], counted: tuple[int, ...] = (),
                   size: int = POOL) -> str:
    """Step 3: the pool of the given classes (1: W1-W2, 2: W2-W1, 3: W1∩W2), computed whole,
    and the sizes of the ``counted`` witness sets (1: W1, 2: W2), as class ``-1``, ``-2``.

    Witnesses are matched by key only: two different witnesses of equal keys (a 64-bit
    hash) would be taken for one, which could only move a witness between classes.
    """
    parts = []
    for bits in classes:
        if list(sides.streams) == [3]:  # identical queries: all their witnesses common
            where = ""
            outer = sides.streams[3]
        else:
            # Deduplicated on both sides (no completion reads a set above JOINED_MOST): a
            # stream read with repeats is estimated from its unnests' ten rows a call, and
            # an anti-join on it was planned as a nested loop (20,000 by 20,000, 6.5 s for
            # card_games 403 at scale 10, against 0.1 s as a hash anti-join).
            first, second = sides.streams[1], sides.streams[2]
            outer, inner = (second, first) if bits == 2 else (first, second)
            match = "EXISTS" if bits == 3 else "NOT EXISTS"
            where = f"WHERE {match} (SELECT FROM ({inner}) AS __b WHERE __b.k = __a.k) "
        parts.append(
            f"(SELECT {bits} AS sides, w, count(*) OVER () AS n FROM ({outer}) AS __a {where}"
            f"ORDER BY {sides.order()}, w LIMIT {size})"
        )
    parts += [f"SELECT {-bits}, NULL::bigint[], count(*) FROM ({sides.streams[bits]}) AS __l"
              for bits in counted]
    return " UNION ALL ".join(parts)


def _read(rows: list[tuple], pool: Pool) -> dict[int, int]:
    """Add witnesses and class sizes to ``pool``; the set sizes counted, by side."""
    counts = {}
    for bits, w, n in rows:
        if bits < 0:
            counts[-bits] = int(n)
            continue
        name = CLASSES[bits]
        getattr(pool, name).append([int(x) for x in w])
        pool.sizes[name] = int(n)
    return counts


def fetch_pool(executor: Executor, lineage1: str, lineage2: str, seed: int,
               keyed: bool = False, small: int = SMALL, bits: int = SAMPLE_BITS,
               raw: tuple[str, str] | None = None) -> Pool:
    """The pool of two witness queries (SQL returning ``w``, and ``k`` when ``keyed``).

    ``small`` and ``bits`` set the steps (``SMALL``, ``SAMPLE_BITS``); ``raw``: both keyed
    queries' witnesses with repeats allowed (:attr:`Sides.raw`).
    """
    keyed1, keyed2 = keyed_stream(lineage1, keyed), keyed_stream(lineage2, keyed)
    raw1, raw2 = raw or (keyed1, keyed2)
    sides = Sides(seed, {3: keyed1}, {3: raw1}) if lineage1 == lineage2 else Sides(
        seed, {1: keyed1, 2: keyed2}, {1: raw1, 2: raw2})
    pool = Pool(sizes={name: 0 for name in CLASSES.values()})
    rows = executor.run(exact_sql(sides, limit=small)).rows
    if not rows or rows[0][0] != 0:
        _read(rows, pool)
        return pool
    _read(executor.run(sample_sql(sides, bits=bits)).rows, pool)
    unseen = [b for b, name in CLASSES.items() if not getattr(pool, name)]
    for b, name in CLASSES.items():
        if b not in unseen:
            pool.sizes[name] <<= bits
            pool.estimated.append(name)
    if max(pool.sizes["only1"], pool.sizes["only2"]) + pool.sizes["both"] <= JOINED_MOST:
        complete(executor, sides, unseen, pool)
    return pool


def complete(executor: Executor, sides: Sides, unseen: list[int], pool: Pool) -> None:
    """Step 3 for the classes (bits) ``unseen`` in the sample."""
    # Identical queries have no witnesses of their own: nothing to complete there.
    unseen = [b for b in unseen if b in sides.streams or 3 not in sides.streams]
    if {1, 2} <= set(unseen):
        _complete_differences(executor, sides, unseen, pool)
    elif unseen:
        _read(executor.run(completion_sql(sides, unseen)).rows, pool)


def fetch_lineage_pool(executor: Executor, lineages: Sequence[Lineage], seed: int) -> Pool:
    """:func:`fetch_pool` of two :class:`Lineage`, by their keys when both have some."""
    first, second = lineages
    if first.keyed_sql is not None and second.keyed_sql is not None:
        return fetch_pool(executor, first.keyed_sql, second.keyed_sql, seed, keyed=True,
                          raw=(first.raw or first.keyed_sql, second.raw or second.keyed_sql))
    return fetch_pool(executor, first.sql, second.sql, seed)


def _complete_differences(executor: Executor, sides: Sides, unseen: list[int],
                          pool: Pool) -> None:
    """Complete W1-W2 and W2-W1, both missing from the sample: often both are empty (the
    same witnesses, reached another way). Counting W1 and W2 costs less than a join, and
    with |W1-W2| it tells |W2-W1| = |W2| - (|W1| - |W1-W2|); a second join only if not 0."""
    classes = [b for b in unseen if b != 2]
    counts = _read(executor.run(completion_sql(sides, classes, counted=(1, 2))).rows, pool)
    if counts[2] - (counts[1] - pool.sizes["only1"]) > 0:
        _read(executor.run(completion_sql(sides, [2])).rows, pool)


def paper_sizes(sql1: str, sql2: str) -> tuple[int, int]:
    """The paper's (M, N): by the words the queries contain (section II)."""
    text = f"{sql1} {sql2}".lower()
    words = set(re.findall(r"[a-z_]+", text))
    if {"sum", "case", "when"} <= words:
        return 3, 4
    if "count" in words:
        return 1, 2
    return 1, 1


def _rows(witnesses: list[list[int]]) -> list[int]:
    return sorted({r for w in witnesses for r in w})


def paper_proposals(pool: Pool, m: int, n: int, seed: int, tries: int = 42) -> Iterator[list[int]]:
    """The paper's rule: M terms of P1-P2 and N of P2-P1, or two of P1 when P1 = P2."""
    rng = random.Random(seed)
    for _ in range(tries):
        if not pool.only1 and not pool.only2:
            if not pool.both:
                return
            yield _rows(rng.sample(pool.both, min(2, len(pool.both))))
        else:
            yield _rows(
                rng.sample(pool.only1, min(m, len(pool.only1)))
                + rng.sample(pool.only2, min(n, len(pool.only2)))
            )


def growing_proposals(pool: Pool, seed: int, tries_per_size: int = 3) -> Iterator[list[int]]:
    """Small samples first (one witness a side), doubling up to the whole pool.

    Witnesses common to both queries come along from the second size on: a differing
    aggregate often needs shared rows too (a count that one side exceeds).
    """
    rng = random.Random(seed)
    size = 1
    while True:
        for _ in range(tries_per_size):
            chosen = rng.sample(pool.only1, min(size, len(pool.only1)))
            chosen += rng.sample(pool.only2, min(size, len(pool.only2)))
            if size > 1 or not chosen:
                chosen += rng.sample(pool.both, min(size, len(pool.both)))
            if chosen:
                yield _rows(chosen)
        if size >= max(len(pool.only1), len(pool.only2), len(pool.both)):
            return
        size *= 2


def one_sided_proposals(pool: Pool, seed: int) -> Iterator[list[int]]:
    """Targeted proposals for when the growing ones fail on large pools: the fewest rows
    that change one side's aggregate only.

    :func:`growing_proposals` takes as many witnesses of W1-W2 as of W2-W1, which on large
    sets makes a COUNT against a COUNT of other rows agree on every proposal (n against n);
    here one class at a time grows alone (1, 2, 4, ... witnesses), then with common
    witnesses under it (a comparison that one side's extra rows tip, a HAVING threshold that
    only one side's group crosses)."""
    rng = random.Random(seed)
    for shared in (False, True):
        for name in ("only1", "only2", "both"):
            members = getattr(pool, name)
            size = 1
            while members:
                chosen = rng.sample(members, min(size, len(members)))
                if shared and name != "both":
                    chosen += rng.sample(pool.both, min(size, len(pool.both)))
                yield _rows(chosen)
                if size >= len(members):
                    break
                size *= 2
