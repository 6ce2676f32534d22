"""Which queries the ProvSQL backend serves, and why it declines the others.

ProvSQL rejects some shapes outright (INTERSECT, DISTINCT ON, subqueries outside FROM
written with JOIN or LIMIT, ...), gives others a provenance that is not the witnesses we
need (window functions: each row only its own provenance; aggregation inside a subquery:
why-provenance maps the δ gate to 1, dropping the group's rows), and evaluates comparisons
with aggregates (HAVING gates) by enumerating possible worlds, which runs out of memory on
groups of a few hundred rows. Whole-row references to tracked tables crash the server.
Declining such a query lets lineage serve it, with the reason recorded.
"""

from sqlglot import exp

from siselect.runtime.catalog import Catalog

_WRAPPERS = (exp.Subquery, exp.Paren, exp.SetOperation, exp.Lateral)


def _owner(node: exp.Expr) -> exp.Select | None:
    found = node.find_ancestor(exp.Select)
    return found if isinstance(found, exp.Select) else None


def top_select(tree: exp.Query) -> exp.Select | None:
    """The outermost SELECT block, or None when the query is a set operation."""
    return tree if isinstance(tree, exp.Select) else None


def is_grouped(tree: exp.Query) -> bool:
    """Whether the outermost block aggregates (GROUP BY, HAVING or an aggregate function)."""
    top = top_select(tree)
    if top is None:
        return False
    if top.args.get("group") or top.args.get("having"):
        return True
    return any(_owner(agg) is top for agg in top.find_all(exp.AggFunc))


def _outside_from(select: exp.Select) -> bool:
    """Whether a SELECT block sits in an expression (WHERE, IN, EXISTS, a scalar) rather
    than being a FROM source, a CTE body or a branch of the outermost set operation."""
    node: exp.Expr = select
    while isinstance(node.parent, _WRAPPERS):
        node = node.parent
    parent = node.parent
    return parent is not None and not isinstance(parent, (exp.From, exp.Join, exp.CTE))


def _explicit_join(select: exp.Select) -> bool:
    joins = select.args.get("joins") or []
    return any(j.args.get(k) for j in joins for k in ("on", "using", "kind", "side"))


def _nested_aggregation(tree: exp.Query) -> bool:
    top = top_select(tree)
    for select in tree.find_all(exp.Select):
        if select is top:
            continue
        if select.args.get("group") or select.args.get("having"):
            return True
    return any(_owner(agg) is not top for agg in tree.find_all(exp.AggFunc))


def _whole_row_reference(tree: exp.Query, catalog: Catalog) -> str | None:
    """A reference to a whole row of a table (``t`` or ``t.*`` used as a value)."""
    sources: set[str] = set()
    columns: set[str] = set()
    for table in tree.find_all(exp.Table):
        sources.add((table.alias_or_name or "").lower())
        found = catalog.table(table.name)
        if found is not None:
            columns.update(c.name.lower() for c in found.columns)
    for column in tree.find_all(exp.Column):
        if isinstance(column.this, exp.Star):
            if column.table and not isinstance(column.parent, exp.Select):
                return f"{column.table}.*"
            continue
        name = column.name.lower()
        if not column.table and name in sources and name not in columns:
            return column.name
    return None


def unsupported(tree: exp.Query, catalog: Catalog) -> str | None:
    """Why the ProvSQL backend does not serve ``tree``, or None when it does."""
    with_ = tree.args.get("with_")
    checks: list[tuple[bool, str]] = [
        (bool(with_ and with_.args.get("recursive")), "a recursive CTE"),
        (bool(tree.find(exp.Intersect)), "INTERSECT, which ProvSQL does not support"),
        (
            any(d.args.get("on") for d in tree.find_all(exp.Distinct)),
            "DISTINCT ON, which ProvSQL does not support",
        ),
        (
            bool(tree.find(exp.Window)),
            "a window function: ProvSQL gives each row only its own provenance, not its window's",
        ),
        (
            bool(tree.find(exp.Cube, exp.Rollup, exp.GroupingSets)),
            "GROUPING SETS, CUBE or ROLLUP, which ProvSQL does not support",
        ),
        (
            _nested_aggregation(tree),
            "aggregation inside a subquery (ProvSQL's why-provenance drops the rows under a "
            "nested aggregation, and it evaluates comparisons with an aggregate by "
            "enumerating possible worlds)",
        ),
    ]
    for failed, reason in checks:
        if failed:
            return reason
    for select in tree.find_all(exp.Select):
        if not _outside_from(select):
            continue
        if _explicit_join(select):
            return "a subquery outside FROM written with JOIN, which ProvSQL does not support"
        if select.args.get("limit") or select.args.get("offset"):
            return "a subquery outside FROM with LIMIT or OFFSET, which ProvSQL does not support"
    whole = _whole_row_reference(tree, catalog)
    if whole:
        return f"a whole-row reference ({whole}), which crashes ProvSQL's server process"
    return _untracked(tree, catalog)


def _untracked(tree: exp.Query, catalog: Catalog) -> str | None:
    """A relation whose rows ProvSQL does not track: ``siselect provsql enable`` tracks
    plain tables only (a partitioned or inherited table, a view read as it is, a foreign
    table or a materialised view has no token per row)."""
    for table in tree.find_all(exp.Table):
        found = catalog.table(table.name) if isinstance(table.this, exp.Identifier) else None
        if found is not None and (found.kind != "r" or found.identity != "ctid"):
            return f"{found.name} is not a plain table, and ProvSQL tracks plain tables only"
    return None


def may_be_zero(tree: exp.Query) -> bool:
    """Whether ProvSQL may return rows whose provenance is zero: not answers (negation,
    EXCEPT, outer joins keep them visible with a zero annotation)."""
    if tree.find(exp.Except, exp.All):
        return True
    if any(j.args.get("side") for j in tree.find_all(exp.Join)):
        return True
    return any(n.find(exp.Select, exp.Exists, exp.In) for n in tree.find_all(exp.Not))
