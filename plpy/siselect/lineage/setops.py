"""UNION, INTERSECT and EXCEPT.

Each side is rewritten, then its witness columns are laid out anew so that all sides
return the same ones (a side's slots hold 0 in the other sides' rows, its multi columns are
NULL there); the sides' own columns are left untouched, so their types resolve as before. UNION ALL stops there; the others merge
equal rows with :func:`collect`, which gathers the witnesses of the merged rows.
"""

from sqlglot import exp

from .collect import Rewritten, collect, column_aliases, wrap
from .context import Env, UnsupportedLineage
from .rep import Rep, WitnessColumn, parse_expr, quoted, sql, zeros


def _layout(sides: list[Rewritten], names: list[str], tagged: bool, env: Env) \
        -> tuple[list[exp.Select], Rep]:
    """The sides wrapped to a common set of witness columns, and that set."""
    ctx = env.ctx
    singles = [side.rep.single.slots if side.rep.single else [] for side in sides]
    single_name = ctx.names.fresh("s") if any(singles) else None
    multis = [(k, col) for k, side in enumerate(sides) for col in side.rep.multis]
    multi_names = [ctx.names.fresh("m") for _ in multis]
    wrapped = []
    for k, side in enumerate(sides):
        before = sum(len(slots) for slots in singles[:k])
        after = sum(len(slots) for slots in singles[k + 1:])
        tail = _witness_tail(side)
        if tail is None:
            side = _wrapped(side, names, env)
            tail = _witness_tail(side)
            assert tail is not None
        query = side.query
        assert isinstance(query, exp.Select)
        kept = query.expressions[:len(query.expressions) - len(side.rep.columns)]
        if tagged:
            kept.append(parse_expr(f"{k + 1} AS __b"))
        if single_name is not None:
            single = side.rep.single
            pieces = [zeros(before)] if before else []
            pieces += [sql(tail[single.name])] if single else []
            pieces += [zeros(after)] if after else []
            kept.append(parse_expr(f"({' || '.join(f'({p})' for p in pieces)}) AS {single_name}"))
        for (owner, col), name in zip(multis, multi_names):
            value = sql(tail[col.name]) if owner == k else "NULL::tid[]"
            kept.append(parse_expr(f"{value} AS {name}"))
        query.set("expressions", kept)
        wrapped.append(query)
    columns = []
    if single_name is not None:
        columns.append(WitnessColumn(single_name, [t for s in singles for t in s], False))
    columns.extend(WitnessColumn(name, col.slots, True)
                   for (_, col), name in zip(multis, multi_names))
    return wrapped, Rep(columns)


def _witness_tail(side: Rewritten) -> dict[str, exp.Expression] | None:
    """The expressions of a SELECT's trailing witness columns, by name (None: not a SELECT)."""
    query = side.query
    count = len(side.rep.columns)
    if not isinstance(query, exp.Select) or len(query.expressions) < count:
        return None
    tail = query.expressions[len(query.expressions) - count:]
    if not all(isinstance(p, exp.Alias) and p.alias == c.name
               for p, c in zip(tail, side.rep.columns)):
        return None
    return {p.alias: p.this for p in tail}


def _wrapped(side: Rewritten, names: list[str], env: Env) -> Rewritten:
    """A side that is not a plain SELECT (a nested set operation), as one."""
    q = env.ctx.names.fresh("q")
    cols = [f"{q}.__c{i} AS {quoted(name)}" for i, name in enumerate(names, 1)]
    cols += [f"{q}.{c.name} AS {c.name}" for c in side.rep.columns]
    text = f"SELECT {', '.join(cols)} FROM __inner AS {column_aliases(q, len(names))}"
    return Rewritten(wrap(side.query, text), side.rep, names)


def _union_all(parts: list[exp.Select]) -> exp.Query:
    def operand(part: exp.Select) -> exp.Query:
        ordered = any(part.args.get(k) for k in ("order", "limit", "offset"))
        return exp.Subquery(this=part) if ordered else part

    query: exp.Query = operand(parts[0])
    for part in parts[1:]:
        query = exp.Union(this=query, expression=operand(part), distinct=False)
    return query


def _sides(op: exp.SetOperation, kind: type, distinct: bool) -> list[exp.Expression]:
    """Operands of a chain of the same operation (A UNION B UNION C), left to right."""
    left = op.this
    if type(left) is kind and bool(left.args.get("distinct")) == distinct \
            and not any(left.args.get(k) for k in ("order", "limit", "offset", "with_")):
        return _sides(left, kind, distinct) + [op.expression]
    return [left, op.expression]


def rewrite_setop(op: exp.SetOperation, env: Env) -> Rewritten:
    from .query import rewrite_query

    distinct = bool(op.args.get("distinct"))
    env.ctx.may_repeat = True  # the same rows can reach the result through several sides
    sides = [rewrite_query(s, env) for s in _sides(op, type(op), distinct)]
    names = sides[0].names
    if any(len(s.names) != len(names) for s in sides):
        raise UnsupportedLineage("set operation with sides of different widths")
    kind = type(op)
    if kind is exp.Union:
        wrapped, rep = _layout(sides, names, False, env)
        if distinct:
            result = collect(_union_all(wrapped), rep, names, env)
        else:
            result = Rewritten(_union_all(wrapped), rep, names)
    else:
        if len(sides) != 2:
            raise UnsupportedLineage(f"{kind.__name__.upper()} of more than two queries")
        if not distinct:
            env.ctx.approximate(f"{kind.__name__.upper()} ALL (treated as {kind.__name__.upper()})")
        wrapped, rep = _layout(sides, names, True, env)
        if kind is exp.Intersect:
            env.ctx.approximate("INTERSECT (witnesses of either side)")
            having = "bool_or({q}.__b = 1) AND bool_or({q}.__b = 2)"
            result = collect(_union_all(wrapped), rep, names, env, having=having)
        else:
            having = "bool_or({q}.__b = 1) AND NOT bool_or({q}.__b = 2)"
            result = collect(_union_all(wrapped), rep, names, env, having=having,
                             only="{q}.__b = 1")
    _keep_order(op, result)
    return result


def _keep_order(op: exp.SetOperation, result: Rewritten) -> None:
    """The set operation's own ORDER BY / LIMIT / OFFSET, on the rewritten result."""
    keys = [k for k in ("order", "limit", "offset") if op.args.get(k) is not None]
    if not keys:
        return
    query = result.query
    if isinstance(query, exp.Union) and not query.args.get("distinct"):
        target: exp.Query = query
    elif isinstance(query, exp.Select):
        target = query
    else:
        raise UnsupportedLineage("ORDER BY on a set operation")
    for key in keys:
        target.set(key, op.args[key].copy())
