"""Each corpus pair through ``separate`` (dialect postgres), judged on its own evidence.

A pair *succeeds* when it is ``separated`` (the instance is verified by ``separate`` on D')
or ``same_answer`` and the two answers on D are, fetched here apart from siselect, the same
multiset of rows (numbers within a relative 1e-9, as the differential compares them).
Anything else fails, with the status and reason, under its construct.
"""

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import psycopg

from siselect.client.bench.sqlite_compare import same_rows
from siselect.client.pgexec import PsycopgExecutor
from siselect.instances.separate import Options, separate
from siselect.runtime.catalog import Catalog, load_catalog
from siselect.runtime.errors import SiselectError

from .corpus import Pair


@dataclass
class Verdict:
    pair: Pair
    status: str  # separated, same_answer, or what went wrong
    ok: bool
    rows: int | None = None
    seconds: float = 0.0
    reason: str = ""
    backend: str | None = None


@dataclass
class Tally:
    verdicts: list[Verdict] = field(default_factory=list)

    def by_construct(self) -> dict[str, Counter]:
        out: dict[str, Counter] = {}
        for v in self.verdicts:
            out.setdefault(v.pair.construct, Counter())[v.status] += 1
        return out

    @property
    def share_ok(self) -> float:
        return sum(v.ok for v in self.verdicts) / max(1, len(self.verdicts))

    def failures(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.ok]


def _rows(conn: psycopg.Connection, sql: str) -> list[tuple]:
    """The rows as psycopg returns them, exact numbers as floats: numeric and double
    precision answers of the same value compare equal (BIRD's rule, within 1e-9)."""
    with conn.transaction(force_rollback=True):
        return [tuple(float(v) if isinstance(v, Decimal) else v for v in row)
                for row in conn.execute(sql).fetchall()]


def judge(conn: psycopg.Connection, executor: PsycopgExecutor, catalog: Catalog, pair: Pair,
          options: Options) -> Verdict:
    started = time.perf_counter()
    try:
        result: dict[str, Any] = separate(executor, pair.query, pair.twin, options, catalog)
    except SiselectError as exc:
        return Verdict(pair, "error", False, seconds=time.perf_counter() - started,
                       reason=f"{exc.message} ({exc.sqlstate})")
    except Exception as exc:  # noqa: BLE001 - a bug of siselect: counted, the run goes on
        return Verdict(pair, "crash", False, seconds=time.perf_counter() - started,
                       reason=f"{type(exc).__name__}: {exc}")
    seconds = time.perf_counter() - started
    status = result["status"]
    backend = result.get("backend")
    if status == "separated":
        return Verdict(pair, status, True, result.get("rows"), seconds, backend=backend)
    if status == "same_answer":
        equal = same_rows(_rows(conn, pair.query), _rows(conn, pair.twin))
        return Verdict(pair, status if equal else "same_answer (wrong)", equal, None, seconds,
                       "" if equal else "the answers on D differ", backend)
    return Verdict(pair, status, False, None, seconds, str(result.get("reason") or ""), backend)


def measure(connections: dict[str, psycopg.Connection], pairs: list[Pair],
            options: Options, progress: Callable[[int], None] | None = None) -> Tally:
    """``connections``: db -> a connection whose search_path is that database's schema."""
    tally = Tally()
    places: dict[str, tuple[PsycopgExecutor, Catalog]] = {}
    for pair in pairs:
        if pair.db not in places:
            executor = PsycopgExecutor(connections[pair.db])
            places[pair.db] = (executor, load_catalog(executor))
        executor, catalog = places[pair.db]
        tally.verdicts.append(judge(connections[pair.db], executor, catalog, pair, options))
        if progress is not None:
            progress(len(tally.verdicts))
    return tally
