"""Two queries evaluated side by side on D and on sub-instances D' of D.

Verification is the only judge of separation: a row set separates when both queries,
run by PostgreSQL on exactly those rows, give different answers (see
:func:`siselect.runtime.answers.same_answer`). Results are cached per row set.
"""

import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlglot import exp

from siselect.instances.shadow import restrict
from siselect.instances.ties import tie_explained, tie_sensitive, with_ties
from siselect.runtime import privileges, rowids
from siselect.runtime.answers import same_answer
from siselect.runtime.catalog import Catalog
from siselect.runtime.errors import QueryFailed
from siselect.runtime.executor import Executor, Rows

MAX_ANSWER_ROWS = 100_000


def run_capped(executor: Executor, tree: exp.Query, max_rows: int = MAX_ANSWER_ROWS) -> Rows:
    rows = executor.run(tree.sql(dialect="postgres"), max_rows=max_rows)
    if rows.truncated:
        raise QueryFailed(
            f"the answer has more than {max_rows} rows, the most siselect compares", "54000"
        )
    return rows


class BudgetExceeded(QueryFailed):
    """The call's total time budget ran out between two queries."""


@dataclass
class Timer:
    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def add(self, phase: str, started: float) -> None:
        self.seconds[phase] += time.perf_counter() - started


def group_rows(rows: Iterable[int], catalog: Catalog) -> dict[str, list[str]]:
    """Encoded row ids -> ``{table name: [ctid, ...]}``."""
    grouped: dict[str, list[str]] = defaultdict(list)
    for rowid in sorted(set(rows)):
        number, ctid = rowids.decode(rowid)
        grouped[catalog.by_number(number).name].append(ctid)
    return dict(grouped)


@dataclass
class Pair:
    executor: Executor
    catalog: Catalog
    trees: tuple[exp.Query, exp.Query]
    timer: Timer = field(default_factory=Timer)
    tests: int = 0
    deadline: float | None = None  # time.monotonic() value after which work stops
    _cache: dict[frozenset[int], tuple[Rows, Rows]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Before any restrict(): it must not name columns the caller may not read.
        privileges.denied(self.executor, self.catalog)

    def run(self, tree: exp.Query, max_rows: int = MAX_ANSWER_ROWS) -> Rows:
        """Run ``tree``; an answer cut at ``max_rows`` cannot be compared, so it is an error."""
        self.check_budget()
        try:
            return run_capped(self.executor, tree, max_rows)
        except QueryFailed as exc:
            raise privileges.explain(exc, tree, self.catalog) from None

    def check_budget(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise BudgetExceeded("the time budget of this call is spent", "57014")

    def answers_on(self, rows: Iterable[int]) -> tuple[Rows, Rows]:
        """Both queries' answers on D' = ``rows`` (encoded row ids)."""
        key = frozenset(rows)
        if key not in self._cache:
            started = time.perf_counter()
            grouped = group_rows(key, self.catalog)
            self._cache[key] = (
                self.run(restrict(self.trees[0], self.catalog, grouped)),
                self.run(restrict(self.trees[1], self.catalog, grouped)),
            )
            self.tests += 1
            self.timer.add("verification", started)
        return self._cache[key]

    def separates(self, rows: Iterable[int]) -> bool:
        """The answers on ``rows`` differ, and not only by how ties at a LIMIT were broken."""
        key = frozenset(rows)
        a1, a2 = self.answers_on(key)
        if same_answer(a1.rows, a2.rows):
            return False
        if not any(tie_sensitive(t) for t in self.trees):
            return True
        grouped = group_rows(key, self.catalog)
        r1, r2 = (self.run(restrict(with_ties(t), self.catalog, grouped)) for t in self.trees)
        return not tie_explained(a1, a2, r1, r2)
