"""Aggregates side by side in one FROM: their witnesses listed apart, not multiplied.

A FROM item that aggregates (a derived table or a CTE) hands each of its rows the set of
witnesses of the rows it merged. One such item per block is cheap: each outer row gets its
group's witnesses. Two or more multiply: a row of ``(SELECT COUNT(*) FROM a) CROSS JOIN
(SELECT COUNT(*) FROM b)`` has |a| x |b| witnesses. Then each aggregated item's witnesses
are listed as witnesses of their own (a sampler can combine them), as for an uncorrelated
scalar subquery, and the outer row keeps only what its other items give: an
over-approximation, named in the notes.
"""

from dataclasses import dataclass

from sqlglot import exp

from siselect.witnesses.lineage.collect import Rewritten
from siselect.witnesses.lineage.context import Env
from siselect.witnesses.lineage.rep import Parts, Rep
from siselect.witnesses.lineage.rows import witness_rows

NOTE = "join of aggregated FROM items (their witnesses listed apart)"


@dataclass
class Item:
    """A rewritten FROM item that carries witness columns."""

    ref: str  # the alias by which the block reads its witness columns
    rep: Rep
    body: exp.Query | None  # its rows with their witness columns, alone; None: correlated


def add_items(items: list[Item], parts: Parts, env: Env) -> None:
    """Give the block the witnesses of ``items``, listing aggregated ones apart when
    several would multiply (see the module's docstring)."""
    gathered = [i for i in items if i.body is not None and i.rep.groups
                and all(g.multi for g in i.rep.groups)]
    if sum(len(i.rep.multis) for i in items) < 2 or not gathered:
        gathered = []
    for item in items:
        if item in gathered:
            _list_apart(item, env)
        else:
            parts.add_source(item.ref, item.rep)


def _list_apart(item: Item, env: Env) -> None:
    assert item.body is not None
    env.ctx.extras.append(witness_rows(Rewritten(item.body, item.rep, None), env.ctx))
    env.ctx.approximate(NOTE)
