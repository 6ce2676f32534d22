"""Renaming changes no answer: each query on a renamed variant of a database, both engines.

For one variant (:mod:`siselect.client.bench.mutate`) and one query, two judgements:

- ``renaming`` (proof a): the renamed query's PostgreSQL answer on the variant against the
  original query's PostgreSQL answer on the original: ``same``, ``nondeterministic``
  (flagged: the answer hangs on ties), ``differs``, ``postgres error``; ``sqlite changed``
  when the renaming changed SQLite's own answer (a new name that collides with a name the
  query uses: the query means something else now), ``skipped`` when SQLite rejects the
  query or an engine runs out of time.
- ``differential`` (proof b): the renamed query on the variant, SQLite against PostgreSQL,
  as :func:`siselect.client.bench.differential.compare` judges it (``agree as text`` is
  the class of values stored under another SQLite type than their column's).
"""

import sqlite3
from collections import Counter
from dataclasses import dataclass, field

from siselect.client.bench.differential import SKIPPED, compare
from siselect.client.bench.mutate import Renaming
from siselect.client.bench.sqlite_compare import same_rows, sqlite_rows
from siselect.runtime.catalog import Catalog
from siselect.runtime.errors import SiselectError
from siselect.runtime.executor import Executor
from siselect.sqltext.nondeterminism import reason_on
from siselect.sqltext.transpile import to_tree

SAME, FLAGGED, DIFFERS, ERROR, SQLITE_CHANGED = (
    "same", "nondeterministic", "differs", "postgres error", "sqlite changed")


@dataclass
class Engine:
    """One database on both engines."""

    sqlite: sqlite3.Connection
    postgres: Executor
    catalog: Catalog


@dataclass
class Tally:
    renaming: Counter = field(default_factory=Counter)
    differential: Counter = field(default_factory=Counter)
    examples: list[tuple[str, str, str]] = field(default_factory=list)  # judgement, SQL, detail

    def add(self, other: "Tally") -> None:
        self.renaming.update(other.renaming)
        self.differential.update(other.differential)
        self.examples.extend(other.examples)


def _postgres(engine: Engine, sql: str):
    tree = to_tree(sql, "sqlite", engine.catalog)
    return tree, engine.postgres.run(tree.sql(dialect="postgres")).rows


def renaming_verdict(original: Engine, variant: Engine, sql: str, renamed: str,
                     timeout_s: float) -> tuple[str, str]:
    try:
        before = sqlite_rows(original.sqlite, sql, timeout_s)
        after = sqlite_rows(variant.sqlite, renamed, timeout_s)
    except sqlite3.Error as exc:
        return SKIPPED, f"sqlite: {exc}"
    if not same_rows(before, after):
        return SQLITE_CHANGED, ""
    try:
        tree, expected = _postgres(original, sql)
        _, got = _postgres(variant, renamed)
        if same_rows(expected, got):
            return SAME, ""
        reason = reason_on(original.postgres.run, tree)
    except SiselectError as exc:
        if exc.sqlstate == "57014":
            return SKIPPED, f"postgres: {exc.message}"
        return ERROR, exc.message
    if reason is not None:
        return FLAGGED, reason
    return DIFFERS, f"original {expected[:3]} renamed {got[:3]}"


def run_variant(original: Engine, variant: Engine, names: Renaming, queries: list[str],
                timeout_s: float = 2.0) -> Tally:
    tally = Tally()
    for sql in queries:
        try:
            renamed = names.query(sql)
        except Exception as exc:  # noqa: BLE001 - a query sqlglot cannot read is no test
            tally.renaming[SKIPPED] += 1
            tally.examples.append((SKIPPED, sql, f"not renamed: {exc}"))
            continue
        kind, detail = renaming_verdict(original, variant, sql, renamed, timeout_s)
        tally.renaming[kind] += 1
        if kind in (DIFFERS, ERROR):
            tally.examples.append((f"renaming {kind}", renamed, detail))
        verdict = compare(variant.sqlite, variant.postgres, variant.catalog, renamed, timeout_s)
        tally.differential[verdict.kind] += 1
        if verdict.kind not in ("agree", "nondeterministic", SKIPPED):
            tally.examples.append((f"differential {verdict.kind}", renamed, verdict.detail))
    return tally
