"""Reading a query tree: FROM items, the columns they provide, aggregates, outer references."""

import re
from collections.abc import Iterator
from dataclasses import dataclass

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.runtime.named_schemas import relation_of
from siselect.witnesses.lineage.context import Env, ident_key
from siselect.witnesses.lineage.rep import sql

# PostgreSQL aggregates that sqlglot may leave as anonymous functions.
_AGGREGATE_NAMES = {
    "array_agg", "avg", "bit_and", "bit_or", "bool_and", "bool_or", "count", "every", "json_agg",
    "jsonb_agg", "json_object_agg", "jsonb_object_agg", "max", "min", "string_agg", "sum",
    "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp", "corr",
    "covar_pop", "covar_samp", "mode", "percentile_cont", "percentile_disc", "xmlagg",
    "regr_avgx", "regr_avgy", "regr_count", "regr_intercept", "regr_r2", "regr_slope",
    "regr_sxx", "regr_sxy", "regr_syy", "group_concat", "total",
}

# Set-returning functions: they repeat rows without adding base rows to them.
_SET_RETURNING = {
    "unnest", "generate_series", "generate_subscripts", "regexp_matches", "regexp_split_to_table",
    "string_to_table", "json_array_elements", "jsonb_array_elements", "json_array_elements_text",
    "jsonb_array_elements_text", "json_each", "jsonb_each", "json_each_text", "jsonb_each_text",
    "json_object_keys", "jsonb_object_keys", "json_to_recordset", "jsonb_to_recordset",
}

# Clauses of a SELECT evaluated once per row of its FROM (before any grouping).
ROW_CLAUSES = ("where", "join_on")


def unwrap(query: exp.Expr) -> exp.Expr:
    """The query inside redundant parentheses."""
    while isinstance(query, exp.Subquery) and isinstance(query.this, exp.Query) \
            and not query.args.get("alias"):
        query = query.this
    return query


def is_query(node: exp.Expr) -> bool:
    return isinstance(node, exp.Query)


def own_nodes(root: exp.Expr) -> Iterator[exp.Expr]:
    """``root`` and its descendants, not entering nested queries (which are yielded)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if is_query(node) and node is not root:
            continue
        stack.extend(reversed(list(node.iter_expressions())))


def clause_roots(select: exp.Select) -> Iterator[tuple[str, exp.Expr]]:
    """Every expression a SELECT evaluates itself, with the clause it sits in."""
    for proj in select.expressions:
        yield "select", proj
    for key, clause in (("where", "where"), ("group", "group"), ("having", "having"),
                        ("order", "order"), ("limit", "limit"), ("offset", "limit")):
        node = select.args.get(key)
        if node is not None:
            yield clause, node
    distinct = select.args.get("distinct")
    if distinct is not None and distinct.args.get("on") is not None:
        yield "distinct_on", distinct.args["on"]
    for item in from_items(select):
        for join in item.args.get("joins") or []:
            if join.args.get("on") is not None:
                yield "join_on", join.args["on"]
    for join in select.args.get("joins") or []:
        if join.args.get("on") is not None:
            yield "join_on", join.args["on"]


def conjuncts(node: exp.Expr | None) -> list[exp.Expr]:
    """The terms of a conjunction (a WHERE, an ON), parentheses and nested ANDs opened."""
    if node is None:
        return []
    if isinstance(node, exp.Where):
        node = node.this
    if isinstance(node, exp.Paren):
        return conjuncts(node.this)
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    return [node]


def from_items(select: exp.Expr) -> list[exp.Expr]:
    """The FROM items of a SELECT in order, looking inside parenthesized joins."""
    items: list[exp.Expr] = []

    def visit(node: exp.Expr) -> None:
        if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Table) \
                and node.this.args.get("joins"):
            visit(node.this)
            return
        items.append(node)
        for join in node.args.get("joins") or []:
            visit(join.this)

    from_ = select.args.get("from_")
    if from_ is not None:
        visit(from_.this)
    for join in select.args.get("joins") or []:
        visit(join.this)
    return items


def window_function(node: exp.Expr) -> bool:
    """``node`` is the function of an OVER clause (not an aggregate of its block)."""
    parent = node.parent
    while isinstance(parent, (exp.Filter, exp.WithinGroup)) and parent.this is node:
        node, parent = parent, parent.parent
    return isinstance(parent, exp.Window) and parent.this is node


def repeats_rows(tree: exp.Expr) -> bool:
    """Whether rows may be repeated with no base row to tell them apart (VALUES, a
    set-returning function), so that two rows can have the same witness."""
    for node in tree.walk():
        if isinstance(node, (exp.Values, exp.Unnest, exp.Explode, exp.GenerateSeries,
                             exp.ExplodingGenerateSeries)):
            return True
        if isinstance(node, exp.Func) and pg_column_name(node) in _SET_RETURNING:
            return True
    return False


def is_aggregate_call(node: exp.Expr) -> bool:
    if isinstance(node, exp.AggFunc):
        return not window_function(node)
    if isinstance(node, exp.Anonymous) and str(node.this).lower() in _AGGREGATE_NAMES:
        return not window_function(node)
    return False


def own_aggregates(select: exp.Select) -> list[exp.Expr]:
    """Aggregate calls computed by this SELECT's own grouping."""
    found: list[exp.Expr] = []
    for clause, root in clause_roots(select):
        if clause not in ("select", "having", "order"):
            continue
        found.extend(n for n in own_nodes(root) if is_aggregate_call(n))
    return found


def is_aggregated(select: exp.Select) -> bool:
    return bool(select.args.get("group") or select.args.get("having") or own_aggregates(select))


def grouping(select: exp.Select) -> str:
    """How a SELECT groups: "none" (no GROUP BY: one group, even of no rows), "keys" (one
    group per distinct key) or "sets" (ROLLUP, CUBE, GROUPING SETS: a row in several)."""
    group = select.args.get("group")
    if group is None:
        return "none"
    if any(group.args.get(k) for k in ("grouping_sets", "cube", "rollup", "totals")) or any(
            isinstance(n, (exp.GroupingSets, exp.Cube, exp.Rollup))
            for e in group.expressions for n in e.walk()):
        return "sets"
    if all(isinstance(e, exp.Tuple) and not e.expressions for e in group.expressions):
        return "none"  # GROUP BY ()
    return "keys"


def has_window(select: exp.Select) -> bool:
    return any(isinstance(n, exp.Window) for _, root in clause_roots(select)
               for n in own_nodes(root))


def alias_ident(item: exp.Expr) -> exp.Identifier | None:
    """The identifier a FROM item is referenced by."""
    alias = item.args.get("alias")
    if isinstance(alias, exp.TableAlias) and alias.this is not None:
        return alias.this
    if isinstance(alias, exp.Identifier):
        return alias
    if isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier):
        return item.this
    if isinstance(item, exp.Table) and isinstance(item.this, exp.Func):
        # PostgreSQL names an unaliased function in FROM (and its one column) after it.
        return exp.to_identifier(pg_column_name(item.this))
    return None


def alias_columns(item: exp.Expr) -> list[str] | None:
    alias = item.args.get("alias")
    if isinstance(alias, exp.TableAlias) and alias.columns:
        return [c.name for c in alias.columns]
    return None


def pg_column_name(expr: exp.Expr) -> str:
    """The name PostgreSQL gives an output column (FigureColname, approximately)."""
    if isinstance(expr, exp.Alias):
        return expr.alias
    if isinstance(expr, exp.Column) and not isinstance(expr.this, exp.Star):
        return expr.name
    if isinstance(expr, (exp.Cast, exp.TryCast)):
        inner = pg_column_name(expr.this)
        return inner if inner != "?column?" else sql(expr.to).split("(")[0].lower()
    if isinstance(expr, exp.Paren):
        return pg_column_name(expr.this)
    if isinstance(expr, exp.Case):
        return "case"
    if isinstance(expr, exp.Func):
        match = re.match(r"\s*([A-Za-z_][A-Za-z_0-9]*)\s*\(", sql(expr))
        if match:
            return match.group(1).lower()
    return "?column?"


@dataclass
class Source:
    item: exp.Expr
    alias: exp.Identifier | None
    columns: list[str] | None  # None: unknown
    table_no: int | None = None  # base tables only

    @property
    def key(self) -> str | None:
        return ident_key(self.alias) if self.alias is not None else None


def cte_key_of(item: exp.Expr, env: Env) -> str | None:
    """The CTE a FROM item names, if it names one in scope."""
    if isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier) and not item.db:
        key = ident_key(item.this)
        if key in env.ctes:
            return key
    return None


def source_of(item: exp.Expr, catalog: Catalog, env: Env,
              local_ctes: dict[str, list[str] | None] | None = None) -> Source:
    """What a FROM item of an original (not yet rewritten) query provides."""
    alias = alias_ident(item)
    renamed = alias_columns(item)
    if isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier):
        key = ident_key(item.this)
        if local_ctes is not None and not item.db and key in local_ctes:
            return Source(item, alias, renamed or local_ctes[key])
        if not item.db and key in env.ctes:
            return Source(item, alias, renamed or env.ctes[key].columns)
        table = relation_of(catalog, item)
        if table is None:
            return Source(item, alias, renamed)
        return Source(item, alias, renamed or [c.name for c in table.columns],
                      catalog.number(table.name))
    query = item.this if isinstance(item, (exp.Subquery, exp.Lateral)) else None
    if isinstance(query, exp.Subquery):
        query = query.this
    if isinstance(query, exp.Query):
        return Source(item, alias, renamed or output_names(query, catalog, env))
    if renamed is None and isinstance(item, exp.Table) and alias is not None:
        return Source(item, alias, [alias.name])  # a set-returning function: one column
    return Source(item, alias, renamed)


def sources_of(select: exp.Select, catalog: Catalog, env: Env,
               local_ctes: dict[str, list[str] | None] | None = None) -> list[Source]:
    return [source_of(item, catalog, env, local_ctes) for item in from_items(select)]


def output_names(query: exp.Expr, catalog: Catalog, env: Env,
                 local_ctes: dict[str, list[str] | None] | None = None) -> list[str] | None:
    """The output column names of an original query; None when a star cannot be resolved."""
    query = unwrap(query)
    if isinstance(query, exp.Subquery):
        return alias_columns(query) or output_names(query.this, catalog, env, local_ctes)
    if isinstance(query, exp.SetOperation):
        return output_names(query.this, catalog, env, local_ctes)
    if not isinstance(query, exp.Select):
        return None
    local = dict(local_ctes or {})
    with_ = query.args.get("with_")
    if with_ is not None:
        for cte in with_.expressions:
            local[ident_key(cte.alias_or_name)] = (
                alias_columns(cte) or output_names(cte.this, catalog, env, local))
    sources = sources_of(query, catalog, env, local)
    names: list[str] = []
    for proj in query.expressions:
        if isinstance(proj, exp.Star):
            for src in sources:
                if src.columns is None:
                    return None
                names.extend(src.columns)
        elif isinstance(proj, exp.Column) and isinstance(proj.this, exp.Star):
            found = find_source(sources, proj.table)
            if found is None or found.columns is None:
                return None
            names.extend(found.columns)
        else:
            names.append(pg_column_name(proj))
    return names


def find_source(sources: list[Source], qualifier: str) -> Source | None:
    key = qualifier.lower()
    exact = [s for s in sources if s.alias is not None and s.alias.name == qualifier]
    if exact:
        return exact[0]
    return next((s for s in sources if s.key is not None and s.key.lower() == key), None)


def resolves(column: exp.Column, sources: list[Source],
             outputs: frozenset[str] | set[str] = frozenset()) -> bool:
    """Whether ``column`` can refer to one of ``sources`` (unknown columns count as yes)."""
    if column.table:
        return find_source(sources, column.table) is not None
    name = column.name.lower()
    if name in outputs:
        return True
    return any(s.columns is None or name in {c.lower() for c in s.columns} for s in sources)


def outer_references(query: exp.Expr, catalog: Catalog, env: Env) -> list[exp.Column]:
    """Columns inside ``query`` that refer to tables outside it (correlation)."""
    found: list[exp.Column] = []

    def visit(node: exp.Expr, scopes: list[list[Source]],
              local: dict[str, list[str] | None]) -> None:
        node = unwrap(node)
        if isinstance(node, exp.Subquery):
            visit(node.this, scopes, local)
            return
        if isinstance(node, exp.SetOperation):
            visit(node.this, scopes, local)
            visit(node.expression, scopes, local)
            return
        if not isinstance(node, exp.Select):
            return
        local = dict(local)
        with_ = node.args.get("with_")
        if with_ is not None:
            for cte in with_.expressions:
                visit(cte.this, scopes, local)
                local[ident_key(cte.alias_or_name)] = (
                    alias_columns(cte) or output_names(cte.this, catalog, env, local))
        sources = sources_of(node, catalog, env, local)
        inner = scopes + [sources]
        for src in sources:
            derived = src.item.this if isinstance(src.item, (exp.Subquery, exp.Lateral)) else None
            if isinstance(derived, exp.Expr) and is_query(derived):
                visit(derived, inner if isinstance(src.item, exp.Lateral) else scopes, local)
            elif isinstance(src.item, (exp.Table, exp.Unnest)) and not isinstance(
                    src.item.this, exp.Identifier):
                _check_columns(src.item, inner, set(), found, visit, local)
        outputs = {pg_column_name(p).lower() for p in node.expressions}
        for _, root in clause_roots(node):
            _check_columns(root, inner, outputs, found, visit, local)

    visit(query, [], {})
    return found


def _check_columns(root, scopes, outputs, found, visit, local) -> None:
    """Record the columns under ``root`` that no scope resolves; visit nested queries."""
    innermost = len(scopes) - 1
    for n in own_nodes(root):
        if n is not root and is_query(n):
            visit(n, scopes, local)
        elif isinstance(n, exp.Column) and not isinstance(n.this, exp.Star) and not any(
                resolves(n, level, outputs if i == innermost else set())
                for i, level in enumerate(scopes)):
            found.append(n)
