"""Merging rows: gather the witnesses of equal rows into one multi column.

Used wherever rows are merged by value outside a SELECT's own GROUP BY: DISTINCT over an
aggregate, UNION/INTERSECT/EXCEPT, and the grouped side of a decorrelated subquery.
"""

from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from siselect.witnesses.lineage.context import Env
from siselect.witnesses.lineage.rep import Parts, Rep, emit, expansion, quoted


@dataclass
class Rewritten:
    """A rewritten query: its own columns (named ``names``) then the witness columns."""

    query: exp.Query
    rep: Rep
    names: list[str] | None  # None: unknown (a ``*`` over a source of unknown columns)


def wrap(inner: exp.Query, text: str, placeholder: str = "__inner") -> exp.Select:
    """Parse ``text`` (a SELECT reading ``__inner AS alias``) and put ``inner`` in its place."""
    outer = sqlglot.parse_one(text, read="postgres")
    assert isinstance(outer, exp.Select)
    for table in outer.find_all(exp.Table):
        if table.name == placeholder:
            table.replace(exp.Subquery(this=inner, alias=table.args.get("alias")))
            break
    return outer


def column_aliases(alias: str, count: int) -> str:
    if count == 0:
        return alias
    return f"{alias}(" + ", ".join(f"__c{i}" for i in range(1, count + 1)) + ")"


def collect(inner: exp.Query, rep: Rep, keys: list[str], env: Env, having: str | None = None,
            only: str | None = None, ordered: bool = False) -> Rewritten:
    """One row per distinct value of ``inner``'s first ``len(keys)`` columns, named ``keys``.

    Every witness of the merged rows goes into one multi column, sorted with ``ordered``.
    ``only`` (a condition in which ``{q}`` stands for ``inner``'s alias) limits which rows
    lend their witnesses; ``having`` (same convention) filters the groups.
    """
    names = env.ctx.names
    q = names.fresh("q")
    parts = Parts()
    parts.add_source(q, rep)
    laterals, _, slots = expansion(parts, names)
    projections = [f"{q}.__c{i} AS {quoted(k)}" for i, k in enumerate(keys, 1)]
    entries, group = emit(slots, names, aggregate=True,
                          only=only.replace("{q}", q) if only else None, ordered=ordered)
    projections += entries
    if not projections:
        projections = ["1"]
    text = (f"SELECT {', '.join(projections)} FROM __inner AS {column_aliases(q, len(keys))}"
            + "".join(f", {lat}" for lat in laterals))
    if keys:
        text += " GROUP BY " + ", ".join(str(i) for i in range(1, len(keys) + 1))
    if having:
        text += f" HAVING {having.replace('{q}', q)}"
    return Rewritten(wrap(inner, text), Rep([group] if slots else []), list(keys))
