"""Smaller views of a separating instance D', for a judge whose prompt must fit a size
limit (the LLM judge's ``max_prompt_tokens``).

Two steps, in this order, each offered only when it leaves something out:

1. the rows that other rows of D' reference through foreign keys (the context that
   ``with_references`` adds), each left out while the two queries' answers still differ;
2. then any row left out while they still differ: what remains is a set of rows each of
   which the separation needs.

Every view still separates the queries, so a verdict on it means what a verdict on D'
means; each carries the answers on it (the verdict compares the judge's answer with
them) and says in words what was left out, for the prompt. The steps run queries (they
are database work, for the main thread), and only when a prompt is too large.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from siselect.instances.pair import Pair, group_rows
from siselect.instances.references import fetch_instance
from siselect.runtime.executor import Rows


@dataclass
class Shrunk:
    """A smaller view of D' that still separates the queries."""

    instance: dict[str, Any]
    row_ids: list[int]
    answers: tuple[Rows, Rows]  # each query's answer on it
    left_out: str  # what is missing from D', in words for the prompt
    run: Callable[[exp.Query], Rows]  # another query (a reference) on it


def _table(pair: Pair, rowid: int) -> str:
    return next(iter(group_rows([rowid], pair.catalog)))


def _referenced_tables(pair: Pair, tables: set[str]) -> set[str]:
    """Tables of D' that another table of D' references through a foreign key."""
    found = set()
    for name in tables:
        for fk in pair.catalog.tables[name].foreign_keys:
            target = pair.catalog.table(fk.ref_table)
            if target is not None and target.name in tables and target.name != name:
                found.add(target.name)
    return found


def _drop(pair: Pair, rows: list[int], candidates: list[int]) -> list[int]:
    """``rows`` without each of ``candidates`` (latest first) whose absence keeps the
    queries told apart."""
    kept = list(rows)
    for rowid in reversed(candidates):
        trial = [r for r in kept if r != rowid]
        if trial and pair.separation(trial) is not None:
            kept = trial
    return kept


def _counted(dropped: list[int], pair: Pair) -> str:
    by_table: dict[str, int] = {}
    for rowid in dropped:
        by_table[_table(pair, rowid)] = by_table.get(_table(pair, rowid), 0) + 1
    return ", ".join(f"{n} of {t}" for t, n in sorted(by_table.items()))


def _view(pair: Pair, rows: list[int], left_out: str) -> Shrunk:
    answers = pair.separation(rows)
    assert answers is not None, "a view is built only from rows that separate"
    grouped = group_rows(rows, pair.catalog)
    return Shrunk(fetch_instance(pair.executor, pair.catalog, rows), rows, answers, left_out,
                  lambda tree: pair.run_on(tree, grouped))


def smaller_instances(pair: Pair, row_ids: list[int]) -> Iterator[Shrunk]:
    """The views of D' = ``row_ids``, smaller and smaller (see the module's text)."""
    rows = sorted(set(row_ids))
    referenced = _referenced_tables(pair, {_table(pair, r) for r in rows})
    without_refs = _drop(pair, rows, [r for r in rows if _table(pair, r) in referenced])
    said: list[str] = []
    if len(without_refs) < len(rows):
        dropped = [r for r in rows if r not in without_refs]
        said.append(f"{len(dropped)} row(s) that the rows shown refer to "
                    f"({_counted(dropped, pair)})")
        yield _view(pair, without_refs, _sentence(said))
    least = _drop(pair, without_refs, without_refs)
    if len(least) < len(without_refs):
        dropped = [r for r in without_refs if r not in least]
        said.append(f"{len(dropped)} further row(s) ({_counted(dropped, pair)})")
        yield _view(pair, least, _sentence(said))


def _sentence(parts: list[str]) -> str:
    return ("To fit the prompt's size limit, " + " and ".join(parts)
            + " were left out of this instance. Answer on the rows shown, as if they were "
              "the whole database.")
