"""UNION, INTERSECT and EXCEPT.

Each side is rewritten, then its witness columns are laid out anew so that all sides
return the same ones (a side's slots are NULL in the other sides' rows, and so are its multi
groups); the sides' own columns are left untouched, so their types resolve as before.
UNION ALL stops there; the others merge equal rows with :func:`collect`, which gathers the
witnesses of the merged rows.
"""

from sqlglot import exp

from siselect.witnesses.lineage.collect import Rewritten, collect, column_aliases, wrap
from siselect.witnesses.lineage.context import Env, UnsupportedLineage
from siselect.witnesses.lineage.rep import Rep, WitnessGroup, parse_expr, quoted, sql
from siselect.witnesses.lineage.rows import witness_rows


def _layout(sides: list[Rewritten], names: list[str], tagged: bool, env: Env) \
        -> tuple[list[exp.Select], Rep]:
    """The sides with a common set of witness groups, and that set."""
    fresh = env.ctx.names.fresh
    singles = [side.rep.single.tables if side.rep.single else [] for side in sides]
    single = WitnessGroup([], [], False)
    if any(singles):
        base = fresh("s")
        single.columns = [f"{base}_{j}" for j in range(1, sum(map(len, singles)) + 1)]
        single.tables = [t for tables in singles for t in tables]
    multis = [(k, group) for k, side in enumerate(sides) for group in side.rep.multis]
    renamed = []
    for _, group in multis:
        base = fresh("m")
        renamed.append(WitnessGroup([f"{base}_{j}" for j in range(1, len(group.columns) + 1)],
                                    list(group.tables), True))
    layout = []
    for k, side in enumerate(sides):
        tail = _witness_tail(side)
        if tail is None:
            side = _wrapped(side, names, env)
            tail = _witness_tail(side)
            assert tail is not None
        query = side.query
        assert isinstance(query, exp.Select)
        entries = [f"{k + 1} AS __b"] if tagged else []
        own = side.rep.single.columns if side.rep.single else []
        offset = sum(len(tables) for tables in singles[:k])
        for j, (column, held) in enumerate(zip(single.columns, single.tables, strict=True)):
            inside = offset <= j < offset + len(own)
            value = sql(tail[own[j - offset]]) if inside else f"NULL::{held.sql_type}"
            entries.append(f"{value} AS {column}")
        for (owner, group), new in zip(multis, renamed, strict=True):
            for old, column, held in zip(group.columns, new.columns, group.tables, strict=True):
                value = sql(tail[old]) if owner == k else f"NULL::{held.sql_type}[]"
                entries.append(f"{value} AS {column}")
        kept = query.expressions[:len(query.expressions) - side.rep.column_count]
        query.set("expressions", kept + [parse_expr(e) for e in entries])
        layout.append(query)
    groups = ([single] if single.columns else []) + renamed
    return layout, Rep(groups)


def _witness_tail(side: Rewritten) -> dict[str, exp.Expr] | None:
    """The expressions of a SELECT's trailing witness columns, by name (None: not a SELECT)."""
    query = side.query
    columns = [c for g in side.rep.groups for c in g.columns]
    if not isinstance(query, exp.Select) or len(query.expressions) < len(columns):
        return None
    tail = query.expressions[len(query.expressions) - len(columns):]
    if not all(isinstance(p, exp.Alias) and p.alias == c
               for p, c in zip(tail, columns, strict=True)):
        return None
    return {p.alias: p.this for p in tail}


def _wrapped(side: Rewritten, names: list[str], env: Env) -> Rewritten:
    """A side that is not a plain SELECT (a nested set operation), as one."""
    q = env.ctx.names.fresh("q")
    cols = [f"{q}.__c{i} AS {quoted(name)}" for i, name in enumerate(names, 1)]
    cols += [f"{q}.{c} AS {c}" for g in side.rep.groups for c in g.columns]
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


def _sides(op: exp.SetOperation, kind: type, distinct: bool) -> list[exp.Expr]:
    """Operands of a chain of the same operation (A UNION B UNION C), left to right."""
    left = op.this
    chained = isinstance(left, exp.SetOperation) and type(left) is kind \
        and bool(left.args.get("distinct")) == distinct \
        and not any(left.args.get(k) for k in ("order", "limit", "offset", "with_"))
    if chained:
        return _sides(left, kind, distinct) + [op.expression]
    return [left, op.expression]


def rewrite_setop(op: exp.SetOperation, env: Env) -> Rewritten:
    distinct = bool(op.args.get("distinct"))
    env.ctx.may_repeat = True  # the same rows can reach the result through several sides
    sides = [env.ctx.rewrite(s, env) for s in _sides(op, type(op), distinct)]
    names = sides[0].names
    if names is None or any(s.names is None or len(s.names) != len(names) for s in sides):
        raise UnsupportedLineage("set operation over sides of unknown or different widths")
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
        if kind is exp.Except:
            # Like NOT IN: the rows that remove rows are listed as witnesses of their own,
            # so that a sub-instance keeps them (and the search can pick them).
            env.ctx.extras.append(witness_rows(sides[1], env.ctx))
            env.ctx.approximate("EXCEPT (the witnesses of its right side listed apart)")
            having = "bool_or({q}.__b = 1) AND NOT bool_or({q}.__b = 2)"
            only: str | None = "{q}.__b = 1"
        else:
            env.ctx.approximate("INTERSECT (witnesses of either side)")
            having = "bool_or({q}.__b = 1) AND bool_or({q}.__b = 2)"
            only = None
        wrapped, rep = _layout(sides, names, True, env)
        result = collect(_union_all(wrapped), rep, names, env, having=having, only=only)
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
