"""Dispatch over query kinds, CTE hoisting, and the final witness rows."""

from sqlglot import exp

from .analysis import alias_columns, unwrap
from .collect import Rewritten
from .context import Context, CteInfo, Env, UnsupportedLineage, ident_key
from .groups import shape
from .rep import Parts, expansion, normalized, quoted, repeats_tables, sql, witness_key


def rewrite_query(query: exp.Expr, env: Env, top: bool = False) -> Rewritten:
    """A copy of ``query`` returning its own columns followed by witness columns.

    With ``top`` (the query whose answer is witnessed), an aggregate SELECT is witnessed
    by the rows it groups rather than group by group where it can (see :mod:`.groups`).
    """
    from .block import rewrite_select
    from .setops import rewrite_setop

    query = unwrap(query)
    if isinstance(query, exp.Subquery):
        if any(query.args.get(k) for k in ("order", "limit", "offset")):
            raise UnsupportedLineage("ORDER BY/LIMIT on a parenthesized query")
        query = query.this
    query = query.copy()
    env = _hoist_ctes(query, env)
    if isinstance(query, exp.Select):
        return rewrite_select(query, env, shape(query) if top else "groups")
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
        env = env.with_cte(key, CteInfo(name, rewritten.rep, columns or rewritten.names))
    query.set("with_", None)
    return env


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
