"""Separations kept across tournaments of one task, so that replays redo only the judge.

A noise curve runs the same task's tournament many times (noise levels, seeds), each time
with another judge. Separating is the database work of a duel and does not depend on the
judge; the judge's answer does. :class:`SeparationMemo` keeps each separation, and every
member's answer on its instance, under a key made of

- both representatives' SQL (as PostgreSQL runs them),
- the rows excluded from the search (a duel separated again, see docs/selection.md),
- the separation options that change what is found (strategy, max_rows, seed, backend,
  with_references);

The other members of the two groups (``Pair.related``, whose joins D' keeps) are not in the
key: a replay whose groups were split otherwise reuses the instance found first for the two
representatives, as a replay should, and runs every member it has on it.

So a second :func:`~siselect.selection.tournament.run_tournament` with the same candidates
and another judge separates nothing again (``len(memo)`` does not grow). Which duels a
tournament plays may depend on the judge (the adaptive schedule, separating again after a
draw): a duel first met in a replay is separated then and kept for the next one.

The memo holds rows of the database: keep it for one task and one connection's session,
not across users.
"""

from dataclasses import dataclass, field
from typing import Any

from siselect.runtime.executor import Rows

MemoKey = tuple[str, str, tuple[int, ...], tuple[Any, ...]]


@dataclass
class Separated:
    """A duel's database work: the separation and the answers on its instance."""

    status: dict[str, Any]  # the duel record's separation, verdict and reason when not separated
    sep: dict[str, Any]  # the separation's result (instance, row_ids, meaning, ...)
    on_d: tuple[Rows, Rows] | None = None  # the representatives' answers on D'
    members: dict[str, Rows] = field(default_factory=dict)  # member SQL -> its answer on D'


class SeparationMemo(dict[MemoKey, Separated]):
    """Separations by :data:`MemoKey` (see the module); any dict serves as well."""


def memo_key(sql_a: str, sql_b: str, exclude: tuple[int, ...], options: Any) -> MemoKey:
    settings = (options.strategy, options.max_rows, options.seed, options.backend,
                options.with_references, options.dialect)
    return sql_a, sql_b, tuple(sorted(exclude)), settings
