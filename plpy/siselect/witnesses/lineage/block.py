"""One SELECT block: its FROM items give slots, and its shape decides what it returns.

- no grouping: the row's single witness (one slot per base-table occurrence) and the
  multi columns of its FROM items, passed through; with window functions, the witnesses
  of the rows of each window's partition besides (see :mod:`.windows`);
- GROUP BY, aggregates or a plain DISTINCT: ``array_agg`` of the witnesses of the rows of
  each group, next to the block's own aggregates (same pass). When FROM items carry multi
  groups, their witnesses are enumerated by LATERAL ``unnest(...) WITH ORDINALITY``, which
  repeats each row; the block's own aggregates then get ``FILTER (WHERE <first copy>)`` so
  that they still see every row once;
- the answer's own aggregate block, where it can: the rows it groups, as if it did not
  group, all or those of the groups answered (see :mod:`.groups`).
"""

import sqlglot
from sqlglot import exp

from siselect.runtime import rowids
from siselect.runtime.catalog import Table
from siselect.runtime.privileges import readable_columns
from siselect.witnesses.lineage import cut, windows
from siselect.witnesses.lineage.analysis import (
    Source,
    alias_ident,
    cte_key_of,
    find_source,
    grouping,
    has_window,
    is_aggregated,
    outer_references,
    own_aggregates,
    pg_column_name,
    sources_of,
)
from siselect.witnesses.lineage.collect import Rewritten, collect, wrap
from siselect.witnesses.lineage.context import Env, UnsupportedLineage, ident_key
from siselect.witnesses.lineage.crossed import Item, add_items
from siselect.witnesses.lineage.groups import answer_keys, survivors_filter
from siselect.witnesses.lineage.rep import (
    Held,
    Parts,
    Rep,
    Slot,
    ctid_slot,
    emit,
    expansion,
    parse_expr,
    pass_through,
    quoted,
    sql,
)
from siselect.witnesses.lineage.rows import absorb_offset
from siselect.witnesses.lineage.subqueries import JoinPlan, plan_subqueries


def rewrite_select(select: exp.Select, env: Env, shape: str = "groups",
                   keep: exp.Expr | None = None, top: bool = False) -> Rewritten:
    """Rewrite a SELECT (already copied, its WITH already hoisted).

    ``shape`` "rows" or "survivors": the answer's own aggregate or DISTINCT SELECT,
    witnessed by the rows it groups (all, or those of the groups it answers: see
    :mod:`.groups`). ``keep``: a condition its rows must meet before any grouping (the
    narrowing of :mod:`.cut`); ``top``: the answer's SELECT, whose cut narrows its items.
    """
    distinct = select.args.get("distinct")
    plain_distinct = distinct is not None and distinct.args.get("on") is None
    if plain_distinct and shape == "groups" and (is_aggregated(select) or has_window(select)):
        return _distinct_over_groups(select, env)
    original = select.copy() if shape == "survivors" else None
    sources = sources_of(select, env.ctx.catalog, env)
    keys = answer_keys(original, sources) if original is not None else None
    if shape == "survivors" and keys is None:
        shape = "groups"
    narrowed = cut.narrow(select, sources, env) if top and shape == "groups" else {}
    parts = Parts()
    items: list[Item] = []
    exposed = [_rewrite_item(source, env, parts, items, narrowed.get(i))
               for i, source in enumerate(sources)]
    add_items(items, parts, env)
    aggregated = is_aggregated(select)
    plans = plan_subqueries(select, sources, aggregated, env)
    if plain_distinct or plans or any(exposed):
        _expand_stars(select, sources)
    names = _names(select, sources, env)
    for plan in plans:
        _attach(select, plan, parts)
    if keep is not None:
        # After the subqueries were planned: the condition's own is no part of the query.
        select.where(keep.copy(), copy=False)
    if has_window(select):
        if aggregated:
            env.ctx.approximate(windows.OVER_GROUPS_NOTE)
        else:
            windows.add_partitions(select, parts, env.ctx)
    if shape == "rows":
        return _ungrouped(select, parts, env)
    if shape == "survivors":
        assert original is not None and keys is not None
        absorb_offset(original, env.ctx)
        return _ungrouped(select, parts, env, survivors_filter(original, keys, env.ctx))
    if plain_distinct:
        select.set("distinct", None)
        select.set("group", exp.Group(expressions=[
            exp.Literal.number(i) for i in range(1, len(select.expressions) + 1)]))
    if aggregated or plain_distinct:
        if grouping(select) == "sets":
            env.ctx.may_repeat = True  # a row in several groups: its witness in each
        rep = _finish_grouped(select, parts, env)
    else:
        rep = _finish_plain(select, parts, env)
    return Rewritten(select, rep, names)


def _names(select: exp.Select, sources: list[Source], env: Env) -> list[str] | None:
    """The output column names (None when a ``*`` reads a source of unknown columns)."""
    names: list[str] = []
    for proj in select.expressions:
        if isinstance(proj, exp.Star) or (isinstance(proj, exp.Column)
                                          and isinstance(proj.this, exp.Star)):
            chosen = sources if isinstance(proj, exp.Star) else [
                s for s in [find_source(sources, proj.table)] if s is not None]
            for src in chosen:
                if src.columns is None:
                    return None
                names.extend(src.columns)
        else:
            names.append(pg_column_name(proj))
    return names


def _rewrite_item(source: Source, env: Env, parts: Parts, items: list[Item],
                  narrowed: cut.Narrowed | None = None) -> bool:
    """Rewrite one FROM item in place and record what it provides: the slot of a base
    table in ``parts``, the witness columns of a CTE or derived table in ``items``
    (``narrowed``: only the groups the answer's cut reads, see :mod:`.cut`).

    True when the item now shows witness columns of its own (``*`` would see them).
    """
    item = source.item
    alias = source.alias
    keep = narrowed.keep if narrowed is not None else None
    cte = cte_key_of(item, env)
    if cte is not None:
        info = env.ctes[cte]
        name, rep = info.global_name, info.rep
        if narrowed is not None:
            assert info.scope is not None
            # Its own copy, narrowed; the CTE's other readers keep every group.
            rewritten = env.ctx.rewrite(narrowed.body, info.scope, keep=keep)
            name, rep = env.ctx.names.fresh("w"), rewritten.rep
            listed = f"({', '.join(quoted(c) for c in info.renamed)})" if info.renamed else ""
            env.ctx.ctes.append(f"{name}{listed} AS ({sql(rewritten.query)})")
        if item.args.get("alias") is None:
            item.set("alias", exp.TableAlias(this=item.this.copy()))
        item.set("this", exp.to_identifier(name))
        items.append(Item(sql(item.args["alias"].this), rep, exp.select("*").from_(name)))
        return True
    if source.table_no is not None:
        assert alias is not None
        table = env.ctx.catalog.by_number(source.table_no)
        parts.singles.append(_base_slot(source, table, env))
        return table.identity == "content"  # its numbering column shows through ``*``
    inner = item.this if isinstance(item, (exp.Subquery, exp.Lateral)) else None
    if isinstance(item, exp.Lateral) and isinstance(inner, exp.Subquery):
        inner = inner.this
    if isinstance(inner, exp.Query):
        if alias is None:
            raise UnsupportedLineage("subquery in FROM without an alias")
        # A LATERAL or correlated item cannot be evaluated alone (see :mod:`.crossed`).
        alone = not isinstance(item, exp.Lateral) \
            and not outer_references(inner, env.ctx.catalog, env)
        rewritten = env.ctx.rewrite(inner, env, keep=keep)
        body = rewritten.query.copy() if alone else None
        inner.replace(rewritten.query)
        items.append(Item(sql(alias), rewritten.rep, body))
        return True
    if isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier):
        raise UnsupportedLineage(f"unknown table {item.sql(dialect='postgres')}")
    return False  # set-returning functions, VALUES, UNNEST: no base rows


def _base_slot(source: Source, table: Table, env: Env) -> Slot:
    """The slot of a relation read by the block, by the relation's row identity.

    A relation of ``content`` identity is read through a subquery that numbers its rows
    (:func:`siselect.runtime.rowids.source`), under the reference's own name and column
    aliases, its numbering column named afresh so that no other item's can meet it."""
    assert source.alias is not None and source.table_no is not None
    number, ref = source.table_no, sql(source.alias)
    if table.identity == "ctid":
        return Slot(ctid_slot(source.alias), Held(number))
    ordinal = env.ctx.names.fresh("o") if table.identity == "content" else rowids.ORDINAL
    if table.identity == "content":
        item = source.item
        alias = item.args.get("alias")
        columns = [c.copy() for c in alias.columns] if isinstance(alias, exp.TableAlias) else []
        numbered: exp.Expr = exp.maybe_parse(
            rowids.source(table, readable_columns(env.ctx.catalog, table.name), ordinal),
            dialect="postgres")
        replacement = exp.Subquery(this=numbered.unnest(), alias=exp.TableAlias(
            this=source.alias.copy(), columns=columns))
        item.replace(replacement)
        source.item = replacement
    return Slot(rowids.row_id(table, number, ref, ordinal), Held(number, encoded=True))


def _expand_stars(select: exp.Select, sources: list[Source]) -> None:
    """Replace ``*`` and ``t.*`` by column lists: added joins must not show through."""
    if not any(isinstance(p, exp.Star) or (isinstance(p, exp.Column)
                                           and isinstance(p.this, exp.Star))
               for p in select.expressions):
        return
    joins = select.args.get("joins") or []
    merged = any(j.args.get("using") or j.args.get("method") for j in joins)
    expanded: list[exp.Expr] = []
    for proj in select.expressions:
        if isinstance(proj, exp.Star):
            if merged:
                raise UnsupportedLineage("SELECT * over USING/NATURAL joins")
            chosen = sources
        elif isinstance(proj, exp.Column) and isinstance(proj.this, exp.Star):
            found = find_source(sources, proj.table)
            if found is None:
                raise UnsupportedLineage(f"unknown source {proj.table}.*")
            chosen = [found]
        else:
            expanded.append(proj)
            continue
        for src in chosen:
            if src.columns is None or src.alias is None:
                raise UnsupportedLineage("SELECT * over a source of unknown columns")
            for name, unique in zip(src.columns, _unique_columns(src), strict=True):
                column = exp.Column(this=exp.to_identifier(unique, quoted=True),
                                    table=src.alias.copy())
                expanded.append(column if unique == name else exp.alias_(column, name,
                                                                         quoted=True))
    select.set("expressions", expanded)


def _unique_columns(src: Source) -> list[str]:
    """Names by which ``*`` can list a source's columns one by one.

    A derived table may repeat a name (``SELECT a.id, b.id``), which only ``*`` can reach;
    such a source gets column aliases that tell the repeats apart.
    """
    assert src.columns is not None
    unique: list[str] = []
    for name in src.columns:
        candidate, n = name, 1
        while candidate in unique:
            n += 1
            candidate = f"{name}__{n}"
        unique.append(candidate)
    if unique != src.columns:
        alias = src.item.args.get("alias")
        if src.table_no is not None or not isinstance(alias, exp.TableAlias):
            raise UnsupportedLineage("SELECT * over a source with repeated column names")
        alias.set("columns", [exp.to_identifier(c, quoted=True) for c in unique])
    return unique


def _item_keys(node: exp.Expr) -> set[str]:
    keys = set()
    for sub in [node, *[j.this for j in node.args.get("joins") or []]]:
        if isinstance(sub, exp.Subquery) and isinstance(sub.this, exp.Table) \
                and sub.this.args.get("joins"):
            keys |= _item_keys(sub.this)
            continue
        ident = alias_ident(sub)
        if ident is not None:
            keys.add(ident_key(ident))
    return keys


def _is_comma(join: exp.Join) -> bool:
    return not any(join.args.get(k) for k in ("on", "using", "side", "kind", "method"))


def _attach(select: exp.Select, plan: JoinPlan, parts: Parts) -> None:
    """Append the plan's LEFT JOIN where every alias its ON reads is visible."""
    if plan.multi is None:
        return  # the subquery reads no table
    from_ = select.args.get("from_")
    if from_ is None:
        plan.fallback()
        return
    joins = list(select.args.get("joins") or [])
    chains: list[tuple[int, set[str]]] = []
    keys = _item_keys(from_.this)
    for i, join in enumerate(joins):
        if _is_comma(join):
            chains.append((i, keys))
            keys = set()
        keys = keys | _item_keys(join.this)
    chains.append((len(joins), keys))
    position = next((end for end, seen in chains if plan.needed <= seen), None)
    if position is None:
        if any(j.args.get("side") in ("RIGHT", "FULL") for j in joins):
            plan.fallback()
            return
        for join in joins:
            if _is_comma(join):
                join.set("kind", "CROSS")
        position = len(joins)
    joins.insert(position, plan.join)
    select.set("joins", joins)
    parts.multis.append(plan.multi)


def _finish_plain(select: exp.Select, parts: Parts, env: Env) -> Rep:
    names = env.ctx.names
    rep = Rep()
    if parts.singles:
        entries, group = emit(parts.singles, names)
        _append(select, entries)
        rep.groups.append(group)
    for multi in parts.multis:
        entries, group = pass_through(multi, names)
        _append(select, entries)
        rep.groups.append(group)
    return rep


def _ungrouped(select: exp.Select, parts: Parts, env: Env,
               survives: exp.Expr | None = None) -> Rewritten:
    """The rows an aggregate or DISTINCT block groups (those for which ``survives`` holds),
    with their witnesses and none of its own columns.

    Without GROUP BY the block answers one row even when no row is grouped: that row's
    witness is empty, so one row of NULL witness columns stands in for it.
    """
    scalar = is_aggregated(select) and grouping(select) == "none"
    for key in ("distinct", "group", "having", "order", "limit", "offset"):
        select.set(key, None)
    select.set("expressions", [])
    if survives is not None:
        select.where(survives, copy=False)
    rep = _finish_plain(select, parts, env)
    if not select.expressions:
        select.set("expressions", [exp.Literal.number(1)])
    if not scalar:
        return Rewritten(select, rep, [])
    one, rows = env.ctx.names.fresh("one"), env.ctx.names.fresh("f")
    text = f"SELECT {rows}.* FROM (SELECT 1) AS {one} LEFT JOIN __inner AS {rows} ON TRUE"
    return Rewritten(wrap(select, text), rep, [])


def _finish_grouped(select: exp.Select, parts: Parts, env: Env) -> Rep:
    names = env.ctx.names
    laterals, firsts, slots = expansion(parts, names)
    if laterals:
        first_copy = parse_expr(" AND ".join(firsts))
        for aggregate in own_aggregates(select):
            _add_filter(aggregate, first_copy.copy())
        for lateral in laterals:
            outer = sqlglot.parse_one(f"SELECT 1 FROM __x, {lateral}", read="postgres")
            select.append("joins", outer.args["joins"][0])
    if not slots:
        return Rep()
    entries, group = emit(slots, names, aggregate=True)
    _append(select, entries)
    return Rep([group])


def _append(select: exp.Select, entries: list[str]) -> None:
    for entry in entries:
        select.append("expressions", parse_expr(entry))


def _add_filter(aggregate: exp.Expr, condition: exp.Expr) -> None:
    target = aggregate
    while isinstance(target.parent, exp.WithinGroup) and target.parent.this is target:
        target = target.parent
    parent = target.parent
    if isinstance(parent, exp.Filter) and parent.this is target:
        where = parent.expression
        where.set("this", exp.and_(exp.Paren(this=where.this), condition))
        return
    target.replace(exp.Filter(this=target.copy(), expression=exp.Where(this=condition)))


def _distinct_over_groups(select: exp.Select, env: Env) -> Rewritten:
    """``SELECT DISTINCT`` over aggregates or windows: group the block's result again."""
    projections = list(select.expressions)
    inner = select.copy()
    inner.set("distinct", None)
    tail = {k: inner.args.get(k) for k in ("order", "limit", "offset")}
    for key in tail:
        inner.set(key, None)
    rewritten = rewrite_select(inner, env)
    if rewritten.names is None:
        raise UnsupportedLineage("SELECT DISTINCT * over a source of unknown columns")
    result = collect(rewritten.query, rewritten.rep, rewritten.names, env)
    order = tail["order"]
    if order is not None:
        order = order.copy()
        for ordered in order.expressions:
            ordered.set("this", _position(ordered.this, projections))
    for key, value in (("order", order), ("limit", tail["limit"]), ("offset", tail["offset"])):
        if value is not None:
            result.query.set(key, value)
    return result


def _position(expr: exp.Expr, projections: list[exp.Expr]) -> exp.Expr:
    """An ORDER BY item of a DISTINCT block as the position of the output it names."""
    if isinstance(expr, exp.Literal) and expr.is_int:
        return expr
    text = sql(expr)
    for i, proj in enumerate(projections, 1):
        if isinstance(proj, exp.Star):
            break
        bare = proj.this if isinstance(proj, exp.Alias) else proj
        if sql(bare) == text or (isinstance(expr, exp.Column) and not expr.table
                                 and isinstance(proj, exp.Alias) and proj.alias == expr.name):
            return exp.Literal.number(i)
    raise UnsupportedLineage("ORDER BY of a DISTINCT aggregate not among its outputs")

