"""Proposing row sets that may separate two queries, from the witnesses of their answers.

The witness sets W1, W2 are compared and sampled on the server (EXCEPT, then an order by
a seeded hash), so only a small pool of witnesses per side travels to Python.
"""

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from .executor import Executor

POOL = 48  # witnesses fetched per side; tries draw from these


@dataclass
class Pool:
    """Samples of W1-W2 ("only1"), W2-W1 ("only2") and of W1∩W2 ("both"), with set sizes."""

    only1: list[list[int]] = field(default_factory=list)
    only2: list[list[int]] = field(default_factory=list)
    both: list[list[int]] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)


def pool_sql(lineage1: str, lineage2: str, seed: int, size: int = POOL) -> str:
    """One statement: both lineages, their differences, a seeded sample of each, the sizes."""
    parts = []
    for side, source in (("only1", "d12"), ("only2", "d21"), ("both", "common")):
        # A seeded hash of the witness orders it at random, reproducibly, without text.
        parts.append(
            f"(SELECT '{side}' AS side, w, count(*) OVER () AS n FROM {source} "
            f"ORDER BY hash_array_extended(w, {int(seed)}), w LIMIT {size})"
        )
    return (
        f"WITH w1 AS MATERIALIZED ({lineage1}), w2 AS MATERIALIZED ({lineage2}), "
        "d12 AS (SELECT w FROM w1 EXCEPT SELECT w FROM w2), "
        "d21 AS (SELECT w FROM w2 EXCEPT SELECT w FROM w1), "
        "common AS (SELECT w FROM w1 INTERSECT SELECT w FROM w2) " + " UNION ALL ".join(parts)
    )


def fetch_pool(executor: Executor, lineage1: str, lineage2: str, seed: int) -> Pool:
    pool = Pool(sizes={"only1": 0, "only2": 0, "both": 0})
    for side, w, n in executor.run(pool_sql(lineage1, lineage2, seed)).rows:
        getattr(pool, side).append([int(x) for x in w])
        pool.sizes[side] = int(n)
    return pool


def union_sql(lineage1: str, lineage2: str, limit: int) -> str:
    """Every base row of every witness of either query, up to ``limit`` rows."""
    return (
        f"SELECT DISTINCT unnest(w) AS r FROM (({lineage1}) UNION ALL ({lineage2})) u "
        f"LIMIT {limit + 1}"
    )


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
