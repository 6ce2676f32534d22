"""Subqueries in expressions (WHERE, ON, SELECT, HAVING, ORDER BY).

The original subquery always stays where it is, so the block keeps its meaning; what is
added is where its witnesses come from:

- a positive IN, EXISTS or scalar subquery evaluated per row, uncorrelated IN or correlated
  through equalities: its witnesses grouped by the matching key and LEFT JOINed to the
  block (one hash join, no per-row re-execution); a row's witnesses then include one
  witness of the inner rows it matched;
- an uncorrelated ``(SELECT MIN/MAX(e) ...)``, anywhere (or SQLite's MIN/MAX of numbers
  loaded as text, :func:`_picked`): the rows reaching the extreme, joined to every row
  (ON TRUE) - any one of them gives the subquery its value, so a row holding one of them is
  witnessed without the others (:func:`.rep.absorbed`); the same subquery used again is
  joined once;
- anything else (negated, correlated otherwise, uncorrelated scalar, at the group level):
  the witnesses of the rows the subquery reads are listed on their own, next to the
  query's witnesses (over-approximation, noted).
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from sqlglot import exp

from siselect.witnesses.lineage.analysis import (
    ROW_CLAUSES,
    Source,
    clause_roots,
    conjuncts,
    has_window,
    is_aggregate_call,
    is_aggregated,
    is_query,
    outer_references,
    own_nodes,
    resolves,
    unwrap,
)
from siselect.witnesses.lineage.collect import collect
from siselect.witnesses.lineage.context import Env, ident_key
from siselect.witnesses.lineage.rep import Multi
from siselect.witnesses.lineage.rows import witness_rows

KEEP = "lineage_keep"  # meta flag: a subquery added by the rewrite, with no witnesses


@dataclass
class Use:
    kind: str  # "in", "exists" or "scalar"
    query: exp.Query
    lhs: exp.Expr | None
    negated: bool
    clause: str


@dataclass
class JoinPlan:
    join: exp.Join
    multi: Multi | None  # the witnesses the join provides (None: the subquery reads no table)
    needed: set[str]  # FROM aliases the ON condition reads
    fallback: Callable[[], None]


def _negated(node: exp.Expr | None, root: exp.Expr) -> bool:
    """Whether ``node`` sits under an odd number of NOTs below ``root``."""
    flips = 0
    while node is not None and node is not root:
        if isinstance(node, exp.Not):
            flips += 1
        node = node.parent
    return flips % 2 == 1


def uses_of(select: exp.Select) -> list[Use]:
    """The subqueries this SELECT evaluates in its own expressions."""
    uses = []
    for clause, root in clause_roots(select):
        for node in own_nodes(root):
            if node is root or not is_query(node) or node.meta.get(KEEP):
                continue
            parent = node.parent
            query = unwrap(node)
            assert isinstance(query, exp.Query)
            if isinstance(parent, exp.Exists):
                uses.append(Use("exists", query, None, _negated(parent, root), clause))
            elif isinstance(parent, exp.In) and parent.args.get("query") is node:
                uses.append(Use("in", query, parent.this, _negated(parent, root), clause))
            elif isinstance(parent, (exp.Any, exp.All)):
                comparison = parent.parent
                is_in = (isinstance(parent, exp.Any) and isinstance(comparison, exp.EQ)) or (
                    isinstance(parent, exp.All) and isinstance(comparison, exp.NEQ))
                negated = _negated(comparison, root) != isinstance(parent, exp.All)
                if is_in and comparison is not None and comparison.expression is parent:
                    uses.append(Use("in", query, comparison.this, negated, clause))
                else:
                    uses.append(Use("scalar", query, None, _negated(comparison, root), clause))
            else:
                uses.append(Use("scalar", query, None, _negated(node, root), clause))
    return uses


def _describe(use: Use, row_level: bool) -> str:
    """A short name of the construct, for notes: "NOT EXISTS subquery", ..."""
    words = ["NOT"] if use.negated else []
    words += [{"in": "IN", "exists": "EXISTS", "scalar": "scalar"}[use.kind], "subquery"]
    if not row_level:
        words += ["in", {"select": "SELECT", "order": "ORDER BY"}.get(use.clause,
                                                                     use.clause.upper())]
    return " ".join(words)


def plan_subqueries(select: exp.Select, sources: list[Source], grouped: bool,
                    env: Env) -> list[JoinPlan]:
    """Decide, for each subquery of ``select``, how its witnesses are obtained.

    Side witnesses are registered at once; joins are returned for the caller to attach.
    """
    plans = []
    extremes: set[str] = set()
    for use in uses_of(select):
        refs = outer_references(use.query, env.ctx.catalog, env)
        row_level = use.clause in ROW_CLAUSES or (use.clause in ("select", "order")
                                                  and not grouped)
        name = _describe(use, row_level)

        fallback = partial(_listed_apart, use, bool(refs), name, env)
        plan = None
        extreme = _extreme_rows(use.query) if not refs and use.kind == "scalar" else None
        if extreme is not None and extreme.sql() in extremes:
            # The same uncorrelated subquery again (SQLite's comparison rules repeat it in
            # each branch of a CASE): the same value, reached by the same rows, witnessed
            # once.
            continue
        if extreme is not None:
            extremes.add(extreme.sql())
            # Any one row reaching the extreme does: the rows are alternatives.
            plan = _join(extreme, sources, env, [], partial(_list_body, extreme, env),
                         alternatives=True)
        elif row_level and not use.negated:
            if not refs and use.kind == "in" and not isinstance(use.lhs, exp.Tuple):
                plan = _uncorrelated_in(use, sources, env, fallback)
            elif refs and all(resolves(r, sources) for r in refs):
                plan = _correlated(use, sources, env, fallback)
        if plan is None:
            fallback()
        else:
            plans.append(plan)
    return plans


def _listed_apart(use: Use, correlated: bool, name: str, env: Env) -> None:
    """The witnesses of what the subquery reads, as witnesses of their own."""
    if not _list_apart(use.query, env):
        env.ctx.approximate(f"{name} (correlated; its rows are not included)")
    elif correlated:
        env.ctx.approximate(f"{name} (correlated; the rows it reads listed apart)")
    else:
        env.ctx.approximate(f"{name} (its witnesses listed apart)")


def _list_apart(query: exp.Query, env: Env) -> bool:
    """Add the witnesses of ``query`` (uncorrelated) or of the rows it reads (correlated:
    its conditions on outer columns dropped, and the subqueries inside those conditions
    listed apart in turn). False when the rows it reads cannot be told."""
    ctx = env.ctx
    if not outer_references(query, ctx.catalog, env):
        ctx.extras.append(witness_rows(env.ctx.rewrite(query, env), ctx))
        return True
    found = _reading_body(query, env)
    if found is None:
        return False
    body, dropped = found
    ctx.extras.append(witness_rows(env.ctx.rewrite(body, env), ctx))
    for conjunct in dropped:
        for node in own_nodes(conjunct):
            if node is not conjunct and is_query(node):
                inner = unwrap(node)
                assert isinstance(inner, exp.Query)
                _list_apart(inner, env)
    return True


def _ids_within(node: exp.Expr) -> set[int]:
    return {id(n) for n in node.walk()}


def _reading_body(subquery: exp.Query, env: Env) -> tuple[exp.Select, list[exp.Expr]] | None:
    """``SELECT 1 FROM <query's FROM> WHERE <its conditions not reading outer columns>``,
    and the conditions dropped."""
    query = unwrap(subquery)
    if not isinstance(query, exp.Select) or query.args.get("from_") is None:
        return None
    query = query.copy()
    refs = {id(r) for r in outer_references(query, env.ctx.catalog, env)}
    kept: list[exp.Expr] = []
    dropped: list[exp.Expr] = []
    for conjunct in conjuncts(query.args.get("where")):
        (dropped if _ids_within(conjunct) & refs else kept).append(conjunct)
    for join in query.args.get("joins") or []:
        on = join.args.get("on")
        if on is not None and _ids_within(on) & refs:
            ons = [c for c in conjuncts(on) if not _ids_within(c) & refs]
            dropped.extend(c for c in conjuncts(on) if _ids_within(c) & refs)
            join.set("on", exp.and_(*ons) if ons else exp.true())
    body = exp.Select(expressions=[exp.Literal.number(1)])
    for key in ("from_", "joins", "with_"):
        if query.args.get(key):
            body.set(key, query.args[key])
    if kept:
        body.set("where", exp.Where(this=exp.and_(*kept)))
    if outer_references(body, env.ctx.catalog, env):
        return None
    return body, dropped


def _needed(exprs: list[exp.Expr], sources: list[Source]) -> set[str]:
    keys: set[str] = set()
    for expr in exprs:
        for col in expr.find_all(exp.Column):
            if col.table:
                keys.add(ident_key(col.args["table"]))
                continue
            name = col.name.lower()
            owners = {s.key for s in sources if s.key and s.columns is not None
                      and name in {c.lower() for c in s.columns}}
            keys |= owners or {s.key for s in sources if s.key}
    return keys


def _join(inner: exp.Query, sources: list[Source], env: Env, outer_keys: list[exp.Expr],
          fallback: Callable[[], None], alternatives: bool = False) -> JoinPlan:
    """LEFT JOIN the witnesses of ``inner`` grouped by its leading key columns.

    Without keys, all of them are one set joined to every row (ON TRUE). ``alternatives``:
    any one of them does (:class:`.rep.Multi`), kept sorted (:func:`.rep.absorbed`).
    """
    rewritten = env.ctx.rewrite(inner, env)
    keys = [f"__k{i}" for i in range(len(outer_keys))]
    grouped = collect(rewritten.query, rewritten.rep, keys, env, ordered=alternatives)
    alias = env.ctx.names.fresh("j")
    on = exp.and_(*(exp.EQ(this=exp.column(k, table=alias), expression=outer.copy())
                    for k, outer in zip(keys, outer_keys, strict=True))) if keys else exp.true()
    join = exp.Join(this=exp.Subquery(this=grouped.query,
                                      alias=exp.TableAlias(this=exp.to_identifier(alias))),
                    side="LEFT", on=on)
    groups = grouped.rep.groups
    multi = Multi([f"{alias}.{c}" for c in groups[0].columns], groups[0].tables,
                  alternatives) if groups else None
    return JoinPlan(join, multi, _needed(outer_keys, sources), fallback)


def _uncorrelated_in(use: Use, sources: list[Source], env: Env,
                     fallback: Callable[[], None]) -> JoinPlan:
    assert use.lhs is not None
    return _join(use.query, sources, env, [use.lhs], fallback)


def _extreme_rows(subquery: exp.Query) -> exp.Select | None:
    """For ``(SELECT MAX(e) FROM ... WHERE c)``: ``SELECT 1 FROM ... WHERE c AND e = (that)``.

    Any one row reaching the extreme gives the subquery its value, so those rows, not all
    the rows it reads, witness it (and few enough to pair with every outer row).
    """
    query = unwrap(subquery)
    if not isinstance(query, exp.Select) or len(query.expressions) != 1 \
            or query.args.get("from_") is None or has_window(query) or any(
                query.args.get(k) for k in ("group", "having", "distinct", "limit", "offset")):
        return None
    value = query.expressions[0]
    while isinstance(value, (exp.Alias, exp.Cast, exp.Paren)):
        value = value.this
    picked = _picked(value)
    if picked is None:
        return None
    body = exp.Select(expressions=[exp.Literal.number(1)])
    for key in ("from_", "joins", "with_"):
        if query.args.get(key):
            body.set(key, query.args[key].copy())
    extreme = exp.Subquery(this=query.copy())
    extreme.meta[KEEP] = True  # computes the value only: its own witnesses are these rows
    reached = exp.EQ(this=picked.copy(), expression=extreme)
    where = query.args.get("where")
    body.set("where", exp.Where(this=exp.and_(where.this.copy(), reached) if where else reached))
    return body


def _picked(value: exp.Expr) -> exp.Expr | None:
    """``e`` when every value of ``value`` is the ``e`` of a row it aggregates, one that
    reaches an extreme: ``MIN(e)``, ``MAX(e)``, or SQLite's order of a column of numbers
    loaded as text (:mod:`siselect.sqltext.sqlite_rules.stored_numbers_order`), a COALESCE
    of picks of ``e`` each by a filter and an order that read ``e`` alone (so a row with
    the same ``e`` passes the same filter and sorts at the same place)."""
    if isinstance(value, (exp.Max, exp.Min)):
        if not _one_extreme(value) or value.parent is None \
                or isinstance(value.parent, exp.Filter):
            return None
        return value.this
    if not isinstance(value, exp.Coalesce):
        return None
    picks = [_pick_of(v) for v in (value.this, *value.expressions)]
    first = picks[0]
    if first is None or any(p is None or p != first for p in picks):
        return None
    return first


def _pick_of(value: exp.Expr) -> exp.Expr | None:
    """``e`` of one COALESCE branch of :func:`_picked`: ``MIN/MAX(e)``, filtered or not, or
    ``(ARRAY_AGG(e ORDER BY ...) FILTER (...))[1]``; None otherwise."""
    if isinstance(value, exp.Bracket) and len(value.expressions) == 1:
        index = value.expressions[0]
        value = value.this.unnest()
        if not (isinstance(index, exp.Literal) and index.this in (0, "0")):
            return None  # sqlglot keeps PostgreSQL's [1] as offset 0
    condition = None
    if isinstance(value, exp.Filter):
        value, condition = value.this, value.expression
    if _one_extreme(value):
        picked, keys = value.this, []
    elif isinstance(value, exp.ArrayAgg) and isinstance(value.this, exp.Order):
        picked, keys = value.this.this, [o.this for o in value.this.expressions]
    else:
        return None
    if not isinstance(picked, exp.Column):
        return None
    for part in (condition, *keys):
        if part is not None and any(is_query(n) or (isinstance(n, exp.Column) and n != picked)
                                    for n in part.walk()):
            return None
    return picked


def _one_extreme(value: exp.Expr) -> bool:
    """``MIN(e)`` or ``MAX(e)`` of one argument, not DISTINCT."""
    return isinstance(value, (exp.Max, exp.Min)) and not value.args.get("expressions") \
        and not isinstance(value.this, exp.Distinct)


def _list_body(body: exp.Select, env: Env) -> None:
    env.ctx.extras.append(witness_rows(env.ctx.rewrite(body, env), env.ctx))
    env.ctx.approximate("MIN/MAX subquery (the rows reaching it listed apart)")


def _plain(expr: exp.Expr) -> bool:
    return not any(is_query(n) or is_aggregate_call(n) or isinstance(n, exp.Window)
                   for n in expr.walk())


def _correlated(use: Use, sources: list[Source], env: Env,
                fallback: Callable[[], None]) -> JoinPlan | None:
    """Decorrelate ``inner.col = outer expr`` conditions into a grouped LEFT JOIN."""

    query = unwrap(use.query)
    if not isinstance(query, exp.Select) or query.args.get("from_") is None:
        return None
    query = query.copy()
    refs = {id(r) for r in outer_references(query, env.ctx.catalog, env)}
    inner_keys: list[exp.Expr] = []
    outer_keys: list[exp.Expr] = []
    rest = []
    covered: set[int] = set()
    for conjunct in conjuncts(query.args.get("where")):
        inside = _ids_within(conjunct) & refs
        if not inside:
            rest.append(conjunct)
            continue
        pair = _correlation(conjunct, refs)
        if pair is None:
            return None
        inner_keys.append(pair[0])
        outer_keys.append(pair[1])
        covered |= inside
    select_ids = set().union(*(_ids_within(p) for p in query.expressions))
    if (refs - covered) - select_ids or (use.kind == "in" and refs - covered):
        return None
    if use.kind == "in":
        if is_aggregated(query) or isinstance(query.expressions[0], exp.Star):
            return None
        first = query.expressions[0]
        inner_keys.insert(0, first.this if isinstance(first, exp.Alias) else first)
        assert use.lhs is not None
        outer_keys.insert(0, use.lhs)
    loose = [k for k in ("group", "having", "limit", "offset") if query.args.get(k)]
    if use.kind == "exists":
        loose = [k for k in loose if k not in ("limit", "offset")]
    if loose:
        env.ctx.approximate(f"correlated subquery with {'/'.join(k.upper() for k in loose)} "
                            "(all rows of the matching group)")
    body = exp.Select(expressions=[exp.alias_(k.copy(), f"__k{i}")
                                   for i, k in enumerate(inner_keys)])
    for key in ("from_", "joins", "with_"):
        if query.args.get(key):
            body.set(key, query.args[key])
    if rest:
        body.set("where", exp.Where(this=exp.and_(*rest)))
    return _join(body, sources, env, outer_keys, fallback)


def _correlation(conjunct: exp.Expr, refs: set[int]) \
        -> tuple[exp.Expr, exp.Expr] | None:
    """``(inner side, outer side)`` of ``inner = outer``, or None."""
    if not isinstance(conjunct, exp.EQ):
        return None
    for outer, inner in ((conjunct.this, conjunct.expression),
                         (conjunct.expression, conjunct.this)):
        columns = list(outer.find_all(exp.Column))
        if columns and all(id(c) in refs for c in columns) and _plain(outer) \
                and not _ids_within(inner) & refs and _plain(inner):
            return inner, outer
    return None
