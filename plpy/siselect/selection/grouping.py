"""Groups: the candidates with the same answer on D (docs/selection.md, "Grouping").

``exact`` (the default): BIRD's execution-accuracy rule, the set of row tuples (column
order counts; duplicates and row order do not), numbers rounded to a fixed number of
significant digits (:func:`siselect.runtime.answers.exact_key`): two candidates share a
group exactly when BIRD would count both right or both wrong.

``paper``: the paper's normalised answer (all-NULL rows dropped, column order ignored,
:func:`siselect.runtime.answers.answer_key`), for reproducing its figures. It can put a
right and a wrong column order in one group.
"""

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from siselect.runtime.answers import answer_key, exact_key
from siselect.runtime.executor import Rows


def group_key(rows: Sequence[Sequence[Any]], grouping: str) -> Hashable:
    return answer_key(rows) if grouping == "paper" else exact_key(rows)


class _Ran(Protocol):
    index: int
    answer: Rows | None


@dataclass
class Group:
    """Candidates with one answer on D; ``representative`` is the first (input order)."""

    members: list[int]
    representative: int
    answer: Rows
    score: float = 0.0


def group(entries: Sequence[_Ran], grouping: str = "paper") -> list[Group]:
    """Candidates with the same answer on D (by ``grouping``) form one group; groups and
    members in input order; candidates that failed on D are in none."""
    groups: dict[Hashable, Group] = {}
    for e in entries:
        if e.answer is None:
            continue
        key = group_key(e.answer.rows, grouping)
        if key in groups:
            groups[key].members.append(e.index)
        else:
            groups[key] = Group([e.index], e.index, e.answer)
    return list(groups.values())
