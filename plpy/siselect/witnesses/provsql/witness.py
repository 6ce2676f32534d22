"""Witness SQL for the ProvSQL backend: the same contract as the lineage backend's.

The text returns one column ``w bigint[]``, one row per witness, by calling the helper
function of :mod:`.helpers` with two queries:

- *tracked*, run with ProvSQL on, yields ``(token, key)``: for a query without aggregation
  the provenance of each answer row (``SELECT provenance() FROM (Q) AS q``: wrapping keeps
  DISTINCT and LIMIT from seeing the token); for an aggregating query, the provenance of
  each input row of each group, with the group's key. Those are the terms under the
  aggregation gate of the group; they are read through the group key because ProvSQL's
  aggregate value (an ``agg_token``) is not reachable outside the query that makes it.
- *kept keys* (aggregating queries only), run plain, yields the keys of the groups that are
  answers: HAVING, ORDER BY ... LIMIT and DISTINCT decide that in ordinary SQL. ProvSQL
  would keep failed HAVING groups with a comparison gate whose evaluation enumerates
  possible worlds (out of memory on a 224-row group of superhero), and refuses ORDER BY on
  an aggregate.

Rows whose provenance is zero (negation, EXCEPT, outer joins) are dropped by evaluating the
provenance with every input true (``provsql.present``). Each answer's why-provenance
(``sr_why`` over the token-to-row mapping) gives its simple terms: the witnesses.
"""

from sqlglot import exp

from siselect.runtime import views
from siselect.runtime.catalog import Catalog
from siselect.runtime.executor import quote_ident, quote_literal
from siselect.witnesses.interface import Lineage, Unsupported
from siselect.witnesses.provsql import helpers
from siselect.witnesses.provsql.shapes import is_grouped, may_be_zero, unsupported

KEY = "__siselect_key"
MAX_ROWS = 100_000  # rows traced per query; about 0.2 ms each measured on superhero


class ProvsqlUnsupported(Unsupported):
    """ProvSQL cannot serve this query (the reason says why); lineage can."""


def _source_columns(tree: exp.Query, catalog: Catalog) -> set[str]:
    """Names of the columns the query's sources offer (a GROUP BY name means these first)."""
    names: set[str] = set()
    for table in tree.find_all(exp.Table):
        found = catalog.table(table.name)
        if found is not None:
            names.update(c.name.lower() for c in found.columns)
    for query in tree.find_all(exp.Subquery, exp.CTE):
        body = query.this
        if isinstance(body, exp.Query):
            names.update(n.lower() for n in body.named_selects)
    return names


def _group_keys(top: exp.Select, catalog: Catalog) -> list[exp.Expr]:
    """The GROUP BY expressions, with output ordinals and output aliases resolved."""
    group = top.args.get("group")
    if group is None:
        return []
    projections = {p.alias.lower(): p.unalias() for p in top.expressions if p.alias}
    inputs = _source_columns(top, catalog)
    keys: list[exp.Expr] = []
    for item in group.expressions:
        if isinstance(item, exp.Tuple) and not item.expressions:
            continue  # GROUP BY (): one group
        if isinstance(item, exp.Literal) and not item.is_string:
            keys.append(top.expressions[int(item.this) - 1].unalias().copy())
        elif (isinstance(item, exp.Column) and not item.table
              and item.name.lower() in projections and item.name.lower() not in inputs):
            keys.append(projections[item.name.lower()].copy())
        else:
            keys.append(item.copy())
    return keys


def _key(keys: list[exp.Expr]) -> exp.Expr:
    return exp.cast(exp.Anonymous(this="json_build_array", expressions=keys), "text")


def _grouped(top: exp.Select, catalog: Catalog) -> tuple[str, str]:
    """(tracked, kept keys) for an aggregating outermost block."""
    key = _key(_group_keys(top, catalog))
    rows = top.copy()
    for arg in ("group", "having", "order", "limit", "offset", "distinct"):
        rows.set(arg, None)
    rows.set("expressions", [exp.alias_(key.copy(), "k")])
    tracked = f"SELECT provsql.provenance(), q.k FROM ({rows.sql('postgres')}) AS q"
    answers = top.copy().select(exp.alias_(key, KEY), append=True)
    kept = f"SELECT q.{KEY} FROM ({answers.sql('postgres')}) AS q"
    return tracked, kept


def numbering_sql(catalog: Catalog) -> str:
    """The catalog's tables as ``regclass[]``, at the positions of their table numbers
    (NULL at the further numbers of a relation that takes several, which ProvSQL does not
    track)."""
    items = []
    for name in sorted(catalog.tables):
        table = catalog.tables[name]
        items.append(quote_literal(f"{quote_ident(table.schema)}.{quote_ident(name)}")
                     + "::regclass")
        items += ["NULL"] * (table.span - 1)
    return f"ARRAY[{', '.join(items)}]::regclass[]"


# The calls this backend adds around a candidate: its helper, and ProvSQL's token.
ALLOW = frozenset({(helpers.SCHEMA, "witnesses"), ("provsql", "provenance")})


def witness_query(tree: exp.Query, catalog: Catalog) -> Lineage:
    """SQL returning the witnesses ProvSQL gives ``tree``'s answer (column ``w bigint[]``).

    Raises :class:`ProvsqlUnsupported` for the shapes of :func:`.shapes.unsupported`.
    """
    tree = views.expand(tree, catalog)  # a view read through its definition: its tables
    reason = unsupported(tree, catalog)
    if reason:
        raise ProvsqlUnsupported(reason)
    notes: list[str] = []
    if is_grouped(tree):
        assert isinstance(tree, exp.Select)
        tracked, kept = _grouped(tree, catalog)
        kept_sql = quote_literal(kept)
        inner: tuple[str, ...] = (tracked, kept)
    else:
        tracked = f"SELECT provsql.provenance(), NULL::text FROM ({tree.sql('postgres')}) AS q"
        kept_sql = "NULL"
        inner = (tracked,)
        if tree.args.get("limit"):
            notes.append("LIMIT: only the rows kept are witnessed, not those they beat")
    zero = "true" if may_be_zero(tree) else "false"
    sql = (
        f"SELECT w FROM {helpers.SCHEMA}.witnesses({quote_literal(tracked)}, {kept_sql}, "
        f"{zero}, {numbering_sql(catalog)}, {MAX_ROWS})"
    )
    return Lineage(sql, exact=not notes, notes=notes, allow=ALLOW, inner=inner)
