"""The answer's own aggregate block: its witnesses without gathering them group by group.

The witnesses of a group in the answer (of GROUP BY, aggregates or DISTINCT) are the rows
it groups. In a derived table or a CTE, each group's witnesses travel with it
(``array_agg``, then ``unnest`` where used, see :mod:`.rep`). The block that makes the
answer can do without that, by :func:`shape`:

- "rows": every group it forms is an answer row (no HAVING, LIMIT/OFFSET, DISTINCT ON,
  grouping sets): its witnesses are all the rows it groups, one witness each;
- "survivors": it drops groups (HAVING, a LIMIT with or without ORDER BY, DISTINCT ON):
  the rows whose group key is the key of a group the query answers, found by running the
  query again with that key as more columns (a DISTINCT without ORDER BY: as it is, its
  outputs are the key) and a semi-join on it (:func:`survivors_filter`; an OFFSET is
  absorbed into the LIMIT first, as for any answer). Which groups a bare LIMIT keeps is up
  to the plan: the query run again keeps those of the answer's own plan, gathering every
  group first (as "groups" would) another's, and holds every group's witnesses at once;
- "groups": otherwise (grouping sets; a DISTINCT over aggregates that drops groups, whose
  key is no per-row value; a DISTINCT ON without ORDER BY, whose row kept of each group is
  up to the plan; keys that cannot be recomputed on each row alone), gathered per group
  like any other block.

On a million rows the first two cost about a join, and a join plus the query, where
gathering costs about twice the query and then spreading out (bench/lineage_speed.py).
"""

from sqlglot import exp

from siselect.runtime.volatile import VOLATILE_FUNCTIONS
from siselect.witnesses.lineage.analysis import (
    Source,
    grouping,
    is_aggregate_call,
    is_aggregated,
    is_query,
    pg_column_name,
    resolves,
)
from siselect.witnesses.lineage.context import Context
from siselect.witnesses.lineage.rep import Names, parse_expr, sql


def shape(select: exp.Select) -> str:
    """How the answer's top SELECT is witnessed: "rows", "survivors" or "groups"."""
    distinct = select.args.get("distinct")
    plain_distinct = distinct is not None and distinct.args.get("on") is None
    aggregated = is_aggregated(select)
    if not (aggregated or plain_distinct) or grouping(select) == "sets":
        return "groups"
    drops = (distinct is not None and not plain_distinct) or any(
        select.args.get(k) for k in ("having", "limit", "offset"))
    if not drops:
        return "rows"
    if plain_distinct and aggregated:
        return "groups"
    if not plain_distinct and distinct is not None and select.args.get("order") is None \
            and not select.args.get("having"):
        # Which row of each group a DISTINCT ON keeps is up to the plan: the pass that
        # gathers them keeps one with its witnesses, a second run's key could name another.
        return "groups"
    return "survivors" if not aggregated or grouping(select) == "keys" else "groups"


def answer_keys(select: exp.Select, sources: list[Source]) -> list[exp.Expr] | None:
    """What tells an original SELECT's groups apart, computed on each row: its GROUP BY
    expressions (positions and output names replaced by what they stand for), or for a
    DISTINCT without grouping its outputs; None when one cannot be computed so."""
    group = select.args.get("group")
    if group is None:
        keys = [p.this if isinstance(p, exp.Alias) else p for p in select.expressions]
        if any(isinstance(k, exp.Star) or (isinstance(k, exp.Column)
                                           and isinstance(k.this, exp.Star)) for k in keys):
            return None
        return [k.copy() for k in keys] if all(_per_row(k) for k in keys) else None
    outputs = {p.alias.lower(): p.this for p in select.expressions if isinstance(p, exp.Alias)}
    keys = []
    for item in group.expressions:
        key = item
        if isinstance(item, exp.Literal) and item.is_int:
            position = int(item.this)
            if any(isinstance(p, exp.Star) for p in select.expressions) \
                    or not 1 <= position <= len(select.expressions):
                return None
            key = select.expressions[position - 1]
            key = key.this if isinstance(key, exp.Alias) else key
        elif isinstance(item, exp.Column) and not item.table \
                and item.name.lower() in outputs and not resolves(item, sources):
            key = outputs[item.name.lower()]  # an output name, PostgreSQL's last resort
        if not _per_row(key):
            return None
        keys.append(key.copy())
    return keys


def _per_row(key: exp.Expr) -> bool:
    for node in key.walk():
        if is_query(node) or is_aggregate_call(node) or isinstance(node, (exp.Window, exp.Rand)):
            return False
        if isinstance(node, exp.Func) and pg_column_name(node) in VOLATILE_FUNCTIONS:
            return False
    return True


def survivors_filter(original: exp.Select, keys: list[exp.Expr], ctx: Context) -> exp.Expr:
    """A condition on a grouped row: its group is among those ``original`` answers.

    The answered keys are one CTE of the witness query. A DISTINCT without ORDER BY (its
    ``keys`` are its outputs) runs as it is: key columns would be more columns to tell rows
    apart by, another plan, other rows under a bare LIMIT than the answer's.
    """
    names = ctx.names
    answered, columns = names.fresh("a"), [names.fresh("k") for _ in keys]
    distinct = original.args.get("distinct")
    if distinct is not None and distinct.args.get("on") is None \
            and original.args.get("order") is None and original.args.get("group") is None:
        body = f"({sql(original)}) AS {answered}({', '.join(columns)})"
    else:
        keyed = original.copy()
        for key, column in zip(keys, columns, strict=True):
            keyed.append("expressions", parse_expr(f"{sql(key)} AS {column}"))
        body = f"({sql(keyed)}) AS {answered}"
    table = names.fresh("survivors")
    # Only the key columns are in scope where rows test them: the row's key expressions,
    # unqualified as the user wrote them, must not meet the answer's own columns.
    listed = ", ".join(f"{answered}.{c}" for c in columns)
    ctx.ctes.append(f"{table} AS MATERIALIZED (SELECT {listed} FROM {body})")
    return key_among([sql(k) for k in keys], table, columns, names)


def key_among(keys: list[str], table: str, columns: list[str], names: Names) -> exp.Expr:
    """A row's key (``keys``, expressions on the row) is among the rows of ``columns`` of the
    CTE ``table``, NULL equal to NULL as grouping finds it.

    Column by column with ``=``, a hashed lookup: a row a record built and compared field by
    field cost three times a scan of millions of rows. A key holding a NULL is compared
    NULL-safe besides: once for a one-column key (whether a NULL key is among them), with
    each of them for a wider one.
    """
    g, h = names.fresh("g"), names.fresh("g")
    keys = [f"({k})" for k in keys]
    found = (f"({', '.join(keys)}) IN (SELECT {', '.join(f'{g}.{c}' for c in columns)} "
             f"FROM {table} AS {g})")
    if len(keys) == 1:
        null = f"{keys[0]} IS NULL AND EXISTS (SELECT 1 FROM {table} AS {h} " \
               f"WHERE {h}.{columns[0]} IS NULL)"
    else:
        safe = " AND ".join(f"{h}.{c} IS NOT DISTINCT FROM {k}"
                            for c, k in zip(columns, keys, strict=True))
        null = (f"({' OR '.join(f'{k} IS NULL' for k in keys)}) AND EXISTS (SELECT 1 FROM "
                f"{table} AS {h} WHERE {safe})")
    return parse_expr(f"({found} OR ({null}))")
