"""Renaming changes no answer: superhero under five naming styles, a stratified sample of
BIRD's gold and candidate queries on each (bench/identifiers.py runs all of them, on every
database).

For every variant: the renamed query's PostgreSQL answer equals the original's (or the
answer hangs on ties and is flagged), and SQLite and PostgreSQL agree on the variant.
"""

import json
import re
import sqlite3

import psycopg
import pytest

from conftest import SHARED, SUPERHERO
from siselect.client.bench.differential import AGREE, AS_TEXT, FLAGGED, SKIPPED
from siselect.client.bench.mutate import STYLES, aliases_used, renaming, write_variant
from siselect.client.bench.renamed import SAME, SQLITE_CHANGED, Engine, run_variant
from siselect.client.bench.sqlite_compare import open_readonly
from siselect.runtime.catalog import load_catalog

PER_STRATUM = 3
# Constructs that exercise name resolution; a query falls in the first stratum it matches.
STRATA = {
    "cte": r"\bWITH\b", "union": r"\b(UNION|INTERSECT|EXCEPT)\b", "derived": r"FROM\s*\(",
    "subquery": r"\(\s*SELECT\b", "using": r"\b(USING|NATURAL)\b",
    "order alias": r"\bAS\s+\w+.*ORDER BY\s+\w+\s*(DESC|ASC)?\s*(LIMIT|$)",
    "order aggregate": r"ORDER BY\s+(COUNT|SUM|MAX|MIN|AVG)\(", "having": r"\bHAVING\b",
    "group": r"\bGROUP BY\b", "distinct": r"\bDISTINCT\b", "case": r"\bCASE\b|\bIIF\(",
    "join": r"\bJOIN\b", "like": r"\bLIKE\b", "quoted": r"[\"`]", "plain": r"",
}


def stratified(queries: list[str]) -> list[str]:
    chosen: dict[str, list[str]] = {name: [] for name in STRATA}
    for sql in queries:
        stratum = next(n for n, p in STRATA.items() if re.search(p, sql, re.I | re.S))
        if len(chosen[stratum]) < PER_STRATUM:
            chosen[stratum].append(sql)
    return [sql for group in chosen.values() for sql in group]


def superhero_queries() -> list[str]:
    gold = [t for t in json.loads((SHARED / "siselection" / "bird_corrected.json").read_text())
            if t["db_id"] == "superhero"]
    queries = [t["SQL"] for t in gold]
    for path in sorted((SHARED / "siselection" / "candidates").glob("*/stage1.json")):
        candidates = json.loads(path.read_text())
        queries += [q for t in gold for q in candidates.get(str(t["question_id"]), [])]
    return list(dict.fromkeys(queries))


@pytest.fixture(scope="module")
def sample() -> list[str]:
    queries = stratified(superhero_queries())
    assert len(queries) >= 30
    return queries


@pytest.fixture(scope="module")
def original(dsn: str, superhero: str):
    from siselect.client.pgexec import PsycopgExecutor, connect

    with connect(dsn, superhero, statement_timeout_ms=5_000) as connection:
        executor = PsycopgExecutor(connection)
        yield Engine(open_readonly(SUPERHERO), executor, load_catalog(executor))


@pytest.mark.parametrize("style", STYLES)
def test_renaming_changes_no_answer(style: str, sample, original, dsn, tmp_path) -> None:
    from siselect.client.loader import load
    from siselect.client.pgexec import PsycopgExecutor, connect

    names = renaming(sqlite3.connect(SUPERHERO), style, aliases_used(sample))
    path = tmp_path / f"superhero_{style}.sqlite"
    write_variant(SUPERHERO, path, names)
    schema = f"superhero_{style}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        load(conn, path, schema, force=True)
    with connect(dsn, schema, statement_timeout_ms=5_000) as connection:
        executor = PsycopgExecutor(connection)
        catalog = load_catalog(executor)
        assert set(catalog.tables) == set(names.tables.values())
        assert set(catalog.tables).isdisjoint(original.catalog.tables)  # really renamed
        variant = Engine(open_readonly(path), executor, catalog)
        tally = run_variant(original, variant, names, sample, timeout_s=2.0)
    allowed = {SAME, FLAGGED, SKIPPED} | ({SQLITE_CHANGED} if style == "collide" else set())
    assert set(tally.renaming) <= allowed, tally.examples[:3]
    assert set(tally.differential) <= {AGREE, AS_TEXT, FLAGGED, SKIPPED}, tally.examples[:3]
    assert tally.renaming[SAME] >= len(sample) * 0.8
