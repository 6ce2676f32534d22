"""The groups a minimisation removes together (:func:`.minimise.ddmin_blocks`).

What an instance means often holds of groups of rows rather than of rows: a ``HAVING
COUNT(*) >= 5`` group kept whole, the rows at the top of an ``ORDER BY ... LIMIT``. A
witness belongs to the *blocks* its rows' values name in the columns that carry such
groups:

* the columns the queries group by or count distinct (:func:`.targeted.key_columns`),
  one block per value, in no particular order;
* the plain columns a query orders by under a ``LIMIT`` (a cut), one block per value,
  ordered as that query orders them: ddmin's halves are then the top and the bottom of
  the order, and the rows below the cut go first.
"""

from collections import defaultdict
from collections.abc import Collection, Hashable, Sequence
from typing import Any

from sqlglot import exp

from siselect.instances.targeted import key_columns, row_values
from siselect.runtime.catalog import Catalog
from siselect.runtime.executor import Executor

Block = tuple[str, str, Any]  # (table, column, value)


def cut_columns(trees: Sequence[exp.Query]) -> dict[str, bool]:
    """Plain columns the queries order by in a SELECT with a ``LIMIT`` (or ``FETCH``):
    name (lower case) -> descending (the first query's direction)."""
    found: dict[str, bool] = {}
    for tree in trees:
        for select in tree.find_all(exp.Select):
            order = select.args.get("order")
            if order is None or not (select.args.get("limit") or select.args.get("fetch")):
                continue
            for ordered in order.expressions:
                if isinstance(ordered.this, exp.Column):
                    found.setdefault(ordered.this.name.lower(), bool(ordered.args.get("desc")))
    return found


def block_columns(trees: Sequence[exp.Query]) -> set[str]:
    """Every column a block can be named by."""
    return key_columns(trees) | set(cut_columns(trees))


def witness_blocks(executor: Executor, catalog: Catalog, trees: Sequence[exp.Query],
                   witnesses: Sequence[Sequence[int]], rows: Collection[int]
                   ) -> list[tuple[Sequence[int], frozenset[Block]]]:
    """Each of ``witnesses`` within ``rows``, and each row of ``rows`` in none of them, with
    the blocks it belongs to (module), in the order of their values of the columns ordered
    under a cut, so that the blocks first seen come first in that order."""
    columns, cut = block_columns(trees), cut_columns(trees)
    if not columns:
        return []
    present = set(rows)
    inside = [w for w in witnesses if present.issuperset(w)]
    named: dict[int, set[Block]] = defaultdict(set)
    for rowid, (table, row) in row_values(executor, catalog, present).items():
        for column, value in row.items():
            if column.lower() in columns and value is not None:
                named[rowid].add((table, column,
                                  value if isinstance(value, Hashable) else repr(value)))
    # A row in no witness (every row of the tables read, say) is a unit of its own.
    alone = present.difference(r for w in inside for r in w)
    units = [(w, frozenset(b for r in w for b in named.get(r, ())))
             for w in [*inside, *([r] for r in rows if r in alone)]]
    for name, descending in reversed(list(cut.items())):  # stable: the first column last
        units = _sorted(units, name, descending)
    return units


def _sorted(units: list[tuple[Sequence[int], frozenset[Block]]], name: str, descending: bool
            ) -> list[tuple[Sequence[int], frozenset[Block]]]:
    """``units`` in the order of their value of column ``name`` (of several, the one first
    in that order; no value last); as they were when the values do not compare."""
    def value(unit: tuple[Sequence[int], frozenset[Block]]) -> Any:
        values = [v for _, column, v in unit[1] if column.lower() == name]
        return (max if descending else min)(values) if values else None

    valued = [(value(u), u) for u in units]
    try:
        with_value = sorted((p for p in valued if p[0] is not None), key=lambda p: p[0],
                            reverse=descending)
    except TypeError:
        return units
    return [u for _, u in with_value] + [u for v, u in valued if v is None]
