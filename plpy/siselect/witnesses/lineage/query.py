"""Dispatch over query kinds and CTE hoisting. Blocks reach back here for their subqueries
through ``Context.rewrite`` (set by :func:`siselect.witnesses.lineage.witness_query`), so
that imports go one way."""

from sqlglot import exp

from siselect.witnesses.lineage.analysis import alias_columns, unwrap
from siselect.witnesses.lineage.block import rewrite_select
from siselect.witnesses.lineage.collect import Rewritten
from siselect.witnesses.lineage.context import CteInfo, Env, UnsupportedLineage, ident_key
from siselect.witnesses.lineage.groups import shape
from siselect.witnesses.lineage.rep import (
    quoted,
    sql,
)
from siselect.witnesses.lineage.setops import rewrite_setop


def rewrite_query(query: exp.Expr, env: Env, top: bool = False,
                  keep: exp.Expr | None = None) -> Rewritten:
    """A copy of ``query`` returning its own columns followed by witness columns.

    With ``top`` (the query whose answer is witnessed), an aggregate SELECT is witnessed
    by the rows it groups rather than group by group where it can (see :mod:`.groups`),
    and a cut narrows the grouped items it reads (see :mod:`.cut`). ``keep``: a condition
    on the rows of a SELECT before it groups them (the narrowing of :mod:`.cut`).
    """
    query = unwrap(query)
    if isinstance(query, exp.Subquery):
        if any(query.args.get(k) for k in ("order", "limit", "offset")):
            raise UnsupportedLineage("ORDER BY/LIMIT on a parenthesized query")
        query = query.this
    query = query.copy()
    env = _hoist_ctes(query, env)
    if isinstance(query, exp.Select):
        return rewrite_select(query, env, shape(query) if top else "groups", keep=keep, top=top)
    if keep is not None:
        raise UnsupportedLineage("a narrowing condition on a set operation")
    if isinstance(query, exp.SetOperation):
        return rewrite_setop(query, env)
    raise UnsupportedLineage(f"{query.key.upper()} query")


def _hoist_ctes(query: exp.Expr, env: Env) -> Env:
    """Move the query's WITH to the top: the original bodies under their own names (for the
    parts of the query kept as they are) and the rewritten ones under fresh names."""
    with_ = query.args.get("with_")
    if with_ is None:
        return env
    if with_.args.get("recursive"):
        raise UnsupportedLineage("recursive CTE")
    ctx = env.ctx
    for cte in with_.expressions:
        ident = cte.args["alias"].this
        key = ident_key(ident)
        if key in ctx.cte_keys:
            raise UnsupportedLineage("a CTE name defined twice")
        ctx.cte_keys.add(key)
        columns = alias_columns(cte)
        column_list = f"({', '.join(quoted(c) for c in columns)})" if columns else ""
        ctx.ctes.append(f"{sql(ident)}{column_list} AS ({sql(cte.this)})")
        rewritten = rewrite_query(cte.this, env)
        name = ctx.names.fresh("w")
        ctx.ctes.append(f"{name}{column_list} AS ({sql(rewritten.query)})")
        env = env.with_cte(key, CteInfo(name, rewritten.rep, columns or rewritten.names,
                                        body=cte.this, renamed=columns, scope=env))
    query.set("with_", None)
    return env
