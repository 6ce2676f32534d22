"""The final witness rows of a rewritten query."""

from sqlglot import exp

from siselect.witnesses.lineage.collect import Rewritten
from siselect.witnesses.lineage.context import Context
from siselect.witnesses.lineage.rep import (
    Parts,
    expansion,
    normalized,
    repeats_tables,
    sql,
    witness_key,
)


def witness_rows(rewritten: Rewritten, ctx: Context) -> str:
    """``SELECT w, k`` for every witness of every row of a rewritten query (may repeat).

    ``w`` is the witness (sorted row ids), ``k`` its key (:func:`.rep.witness_key`).
    """
    query = rewritten.query.copy()
    absorb_offset(query, ctx)
    q = ctx.names.fresh("q")
    parts = Parts()
    parts.add_source(q, rewritten.rep)
    laterals, _, slots = expansion(parts, ctx.names)
    if not slots or repeats_tables(slots):
        ctx.may_repeat = True  # e.g. every row's witness is empty
    sources = ", ".join([f"({sql(query)}) AS {q}", *laterals])
    return f"SELECT {normalized(slots)} AS w, {witness_key(slots)} AS k FROM {sources}"


def absorb_offset(query: exp.Expr, ctx: Context) -> None:
    """``LIMIT n OFFSET k`` -> ``LIMIT n + k`` at the top: the skipped rows decide which rows
    make the cut, so a sub-instance without them would give other rows."""
    offset = query.args.get("offset")
    if offset is None:
        return
    ctx.approximate("OFFSET (the skipped rows are included)")
    query.set("offset", None)
    limit = query.args.get("limit")
    if limit is None:
        return
    count, skip = limit.expression, offset.expression
    if isinstance(count, exp.Literal) and count.is_int and isinstance(skip, exp.Literal) \
            and skip.is_int:
        limit.set("expression", exp.Literal.number(int(count.this) + int(skip.this)))
    else:
        query.set("limit", None)
