"""Differential test: generated SQLite queries over superhero, on SQLite and PostgreSQL.

A few hundred seeded queries here (``bench/differential.py`` runs thousands); every one
must agree, agree once mixed number/text columns are read as text, or be flagged
nondeterministic.
"""

import pytest

from conftest import SUPERHERO
from siselect.client.bench.differential import (
    AGREE,
    DISAGREE,
    ERROR,
    FLAGGED,
    compare,
    differential,
)
from siselect.client.bench.querygen import QueryGenerator, sample_values
from siselect.client.bench.sqlite_compare import open_readonly
from siselect.runtime.catalog import load_catalog

COUNT = 300


@pytest.fixture(scope="module")
def sqlite_db():
    return open_readonly(SUPERHERO)


def test_generated_queries_agree_or_are_flagged(sqlite_db, executor) -> None:
    outcome = differential(sqlite_db, executor, load_catalog(executor), COUNT, seed=8)
    problems = [e for e in outcome.examples if e[0] in (DISAGREE, ERROR)]
    assert outcome.tried >= COUNT * 0.95
    assert outcome.consistent == outcome.tried, problems[:5]
    assert outcome.counts[AGREE] > COUNT // 2  # most queries compare outright
    assert outcome.counts[FLAGGED] > 0  # the generator does produce ties at LIMIT cuts


def test_generator_is_deterministic_for_a_seed(sqlite_db, executor) -> None:
    catalog = load_catalog(executor)
    samples = sample_values(sqlite_db, catalog)

    def batch(seed: int) -> list[str]:
        generator = QueryGenerator(catalog, samples, seed)
        return [generator.query() for _ in range(5)]

    assert batch(3) == batch(3)
    assert batch(3) != batch(4)


def test_a_real_disagreement_is_reported(sqlite_db, executor) -> None:
    # PostgreSQL text that is not the transpiler's: plain LIKE is case-sensitive there.
    class PlainLike:
        def run(self, sql, max_rows=None):
            return executor.run(sql.replace("ILIKE", "LIKE"), max_rows)

    sql = "SELECT COUNT(*) FROM superhero WHERE superhero_name LIKE '%MAN%'"
    verdict = compare(sqlite_db, PlainLike(), load_catalog(executor), sql)
    assert verdict.kind == DISAGREE
    assert compare(sqlite_db, executor, load_catalog(executor), sql).kind == AGREE
