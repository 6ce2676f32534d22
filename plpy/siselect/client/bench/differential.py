"""Differential testing of the transpiler: one query on SQLite and, transpiled, on PostgreSQL.

A query's verdict is ``agree`` (same multiset of rows), ``agree as text`` (equal once
text reading as a number is taken as that number: a column that mixes numbers and text
in SQLite is text in PostgreSQL), ``nondeterministic`` (flagged: clock, random(), ties at
a LIMIT cut, bare-column picks), ``disagree`` or ``postgres error``; a query SQLite itself
rejects, or that either engine cannot finish in time, is ``skipped``.
"""

import sqlite3
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from siselect.client.bench.querygen import QueryGenerator, sample_values
from siselect.client.bench.sqlite_compare import same_rows, sqlite_rows
from siselect.runtime.catalog import Catalog
from siselect.runtime.errors import SiselectError
from siselect.runtime.executor import Executor
from siselect.sqltext.nondeterminism import reason_on
from siselect.sqltext.transpile import to_tree

AGREE, AS_TEXT, FLAGGED, DISAGREE, ERROR, SKIPPED = (
    "agree", "agree as text", "nondeterministic", "disagree", "postgres error", "skipped")


@dataclass
class Verdict:
    kind: str
    detail: str = ""


@dataclass
class Outcome:
    counts: Counter = field(default_factory=Counter)
    examples: list[tuple[str, str, str]] = field(default_factory=list)  # kind, SQL, detail

    @property
    def tried(self) -> int:
        return sum(n for kind, n in self.counts.items() if kind != SKIPPED)

    @property
    def consistent(self) -> int:
        """Queries that agree or are flagged nondeterministic."""
        return self.counts[AGREE] + self.counts[AS_TEXT] + self.counts[FLAGGED]


def compare(db: sqlite3.Connection, executor: Executor, catalog: Catalog, sql: str,
            timeout_s: float | None = None) -> Verdict:
    """Run ``sql`` (SQLite) on both engines and judge the pair of results."""
    try:
        expected = sqlite_rows(db, sql, timeout_s)
    except sqlite3.Error as exc:
        return Verdict(SKIPPED, f"sqlite: {exc}")
    try:
        tree = to_tree(sql, "sqlite", catalog)
        got = executor.run(tree.sql(dialect="postgres")).rows
        reason = reason_on(executor.run, tree)
    except SiselectError as exc:
        if exc.sqlstate == "57014":  # statement timeout: too slow to tell, like SQLite's
            return Verdict(SKIPPED, f"postgres: {exc.message}")
        return Verdict(ERROR, exc.message)
    if reason is not None:
        return Verdict(FLAGGED, reason)
    if same_rows(expected, got):
        return Verdict(AGREE)
    detail = f"sqlite {expected[:3]} postgres {got[:3]}"
    if same_rows(expected, got, numbers_as_text=True):
        return Verdict(AS_TEXT, detail)
    return Verdict(DISAGREE, detail)


def differential(db: sqlite3.Connection, executor: Executor, catalog: Catalog, count: int,
                 seed: int, timeout_s: float = 2.0,
                 progress: Callable[[int, Outcome], None] | None = None) -> Outcome:
    """Generate ``count`` queries from ``seed`` and compare each on both engines."""
    generator = QueryGenerator(catalog, sample_values(db, catalog), seed)
    outcome = Outcome()
    for number in range(count):
        sql = generator.query()
        verdict = compare(db, executor, catalog, sql, timeout_s)
        outcome.counts[verdict.kind] += 1
        if verdict.kind in (DISAGREE, ERROR, AS_TEXT):
            outcome.examples.append((verdict.kind, sql, verdict.detail))
        if progress is not None:
            progress(number + 1, outcome)
    return outcome
