"""The PostgreSQL-dialect corpus (bench/pg_corpus/), a stratified sample: a few pairs of every
construct, each query against its mutated twin through ``separate`` (dialect postgres) with a
time budget per pair, separated or correctly reported ``same_answer``. The whole corpus and
its figures are bench/pg_corpus.py's."""

import itertools
import sys
from collections import defaultdict
from pathlib import Path

import psycopg
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from pg_corpus.corpus import Pair, generate  # noqa: E402
from pg_corpus.measure import measure  # noqa: E402
from pg_corpus.templates import CONSTRUCTS  # noqa: E402
from siselect.client.loader import load  # noqa: E402
from siselect.client.pgexec import connect  # noqa: E402
from siselect.instances.separate import Options  # noqa: E402

pytest.importorskip("faker", reason="the yardstick's synthetic databases need Faker")

from yardstick import TABLES_JSON  # noqa: E402
from yardstick import synth as S  # noqa: E402
from yardstick.schema import read_schemas  # noqa: E402

if not TABLES_JSON.is_file():
    pytest.skip("the shared BIRD data (../shared/data) is not present", allow_module_level=True)

# Superhero has no dates; two small synthetic databases bring dates and text keys.
SYNTHETIC = ["debit_card_specializing", "financial"]
PER_CONSTRUCT = 3
BUDGET_SECONDS = 20.0


@pytest.fixture(scope="module")
def connections(tmp_path_factory, dsn, superhero):
    out = tmp_path_factory.mktemp("pgcorpus")
    schemas = read_schemas()
    with psycopg.connect(dsn, autocommit=True) as admin:
        for db in SYNTHETIC:
            load(admin, S.build(schemas[db], out, scale=0.2, seed=7), db)
    conns = {db: connect(dsn, db, statement_timeout_ms=20_000)
             for db in [superhero, *SYNTHETIC]}
    yield conns
    for conn in conns.values():
        conn.close()


@pytest.fixture(scope="module")
def corpus(connections) -> list[Pair]:
    pairs, broken = generate(connections)
    assert broken == []  # every query and every twin runs
    return pairs


def sample(pairs: list[Pair]) -> list[Pair]:
    """Per construct, one pair of each template in turn (each template's list rotated, so
    that the databases vary too), up to PER_CONSTRUCT."""
    chosen = []
    for construct in CONSTRUCTS:
        by_template: dict[int, list[Pair]] = defaultdict(list)
        for pair in pairs:
            if pair.construct == construct:
                by_template[pair.template].append(pair)
        rotated = [items[n % len(items):] + items[:n % len(items)]
                   for n, (_, items) in enumerate(sorted(by_template.items()))]
        turns = [pair for turn in itertools.zip_longest(*rotated) for pair in turn if pair]
        chosen += turns[:PER_CONSTRUCT]
    return chosen


def test_every_construct_is_in_the_corpus(corpus):
    counts = {c: sum(p.construct == c for p in corpus) for c in CONSTRUCTS}
    assert all(n >= 2 for n in counts.values()), counts
    assert all(p.query != p.twin for p in corpus)


@pytest.mark.parametrize("construct", CONSTRUCTS)
def test_each_pair_is_separated_or_truly_the_same(corpus, connections, construct):
    pairs = [p for p in sample(corpus) if p.construct == construct]
    assert pairs
    tally = measure(connections, pairs, Options(dialect="postgres",
                                                budget_seconds=BUDGET_SECONDS, seed=1))
    failed = [(v.pair.key, v.status, v.reason, v.pair.query, v.pair.twin)
              for v in tally.failures()]
    assert failed == []
    for v in tally.verdicts:
        assert v.seconds < BUDGET_SECONDS + 5
        if v.status == "separated":
            assert v.rows is not None and 1 <= v.rows <= 30
    assert any(v.status == "separated" for v in tally.verdicts), construct
