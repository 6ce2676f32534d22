"""The answer's top-level cut pushed into the grouped FROM items it reads.

A derived table or a CTE that groups hands every group's witnesses to the block reading it
(``array_agg``, see :mod:`.rep`). When that block is the answer's own and cuts its rows
(``ORDER BY ... LIMIT k``, or a bare ``LIMIT k``), only the groups read by the k rows kept
reach a witness, yet every group's witnesses would be gathered first: on ten million rows,
arrays of every row id of D held at once for one row kept.

So the groups are narrowed before they gather: the original query runs once more with the
key of each such item's group as one more column (its cut, OFFSET absorbed into the LIMIT
as :func:`.rows.absorb_offset` does for the witnesses, kept as it is), and each item keeps
only the rows whose group key is among those (:func:`.groups.key_among`, before it groups). A kept
group keeps all its rows, so its aggregates and witnesses are those it had; the answer's
block then cuts again over the groups left. They hold every row that made the first cut,
so an ``ORDER BY`` keeps the same rows, up to rows that tie at the cut (which of them is
kept was up to the plan before too); a bare LIMIT keeps any k rows, as before.

Narrowed: uncorrelated derived tables and CTEs read by a non-aggregated, non-DISTINCT
block with a cut (and no window or outer join, :func:`cuts`), whose body groups by
per-row keys (GROUP BY, or a DISTINCT without aggregates) and cuts nothing itself (no
LIMIT, OFFSET, window). Other items gather every group, as before.
"""

from dataclasses import dataclass

from sqlglot import exp

from siselect.witnesses.lineage.analysis import (
    Source,
    alias_ident,
    cte_key_of,
    from_items,
    grouping,
    has_window,
    is_aggregated,
    outer_references,
    output_names,
    sources_of,
)
from siselect.witnesses.lineage.context import Env
from siselect.witnesses.lineage.groups import answer_keys, key_among
from siselect.witnesses.lineage.rep import parse_expr, sql
from siselect.witnesses.lineage.rows import absorb_offset


@dataclass
class Narrowed:
    """A FROM item the cut narrows: its body (the original query) and the condition that
    keeps the rows of the groups the cut reads (its columns as the body writes them)."""

    body: exp.Select
    keep: exp.Expr


def cuts(select: exp.Select) -> bool:
    """Whether the block keeps only its first rows, row for row (no grouping, no DISTINCT),
    and keeps them of any subset of its rows that holds them: no window (its values would
    be computed over the subset), no outer join (a row whose partner is left out would come
    back NULL-extended, a row the block never had)."""
    return (select.args.get("limit") is not None and select.args.get("distinct") is None
            and not is_aggregated(select) and not has_window(select)
            and not any(j.args.get("side") for j in select.find_all(exp.Join)
                        if j.find_ancestor(exp.Select) is select))


def narrow(select: exp.Select, sources: list[Source], env: Env) -> dict[int, Narrowed]:
    """The FROM items (by position among ``sources``) that the cut of ``select`` (the
    answer's block, not yet rewritten, :func:`cuts`) narrows, with their conditions.

    Adds one CTE to the witness query: the keys of the groups the cut reads."""
    if not cuts(select):
        return {}
    keyed = select.copy()
    keyed_items = from_items(keyed)
    names = env.ctx.names
    outputs: list[str] = []
    found: dict[int, tuple[exp.Select, list[str], list[str]]] = {}
    for i, source in enumerate(sources):
        body = _body(source, env)
        keys = _keys(body, env) if body is not None else None
        if body is None or keys is None:
            continue
        columns = [f"{names.fresh('key')}" for _ in keys]
        if not _add_key(keyed_items[i], body, keys, columns, env):
            continue
        alias = alias_ident(source.item)
        assert alias is not None
        out = [names.fresh("a") for _ in keys]
        for column, name in zip(columns, out, strict=True):
            keyed.append("expressions", parse_expr(f"{sql(alias)}.{column} AS {name}"))
        outputs.extend(out)
        found[i] = (body, keys, out)
    if not found:
        return {}
    absorb_offset(keyed, env.ctx)
    cut, read = names.fresh("cut"), names.fresh("c")
    listed = ", ".join(f"{read}.{o}" for o in outputs)
    # Only the key columns are in scope where the items test them: the keys, unqualified as
    # the user wrote them, must not meet the answer's own columns.
    env.ctx.ctes.append(f"{cut} AS MATERIALIZED (SELECT {listed} FROM ({sql(keyed)}) AS {read})")
    return {i: Narrowed(body, key_among(keys, cut, out, names))
            for i, (body, keys, out) in found.items()}


def _body(source: Source, env: Env) -> exp.Select | None:
    """The original query of a derived table or of the CTE an item names, when it can be
    narrowed: uncorrelated, grouping by keys, cutting nothing of its own."""
    item = source.item
    cte = cte_key_of(item, env)
    if cte is not None:
        body = env.ctes[cte].body
    elif isinstance(item, exp.Subquery) and source.alias is not None:
        body = item.this
        if outer_references(body, env.ctx.catalog, env):
            return None
    else:
        return None  # a table, a LATERAL (correlated by nature), a function
    if not isinstance(body, exp.Select) or body.args.get("with_") is not None:
        return None
    if any(body.args.get(k) is not None for k in ("limit", "offset")) or has_window(body):
        return None
    distinct = body.args.get("distinct")
    if distinct is not None and (distinct.args.get("on") is not None or is_aggregated(body)):
        return None
    if distinct is None and not (is_aggregated(body) and grouping(body) == "keys"):
        return None
    return body


def _keys(body: exp.Select, env: Env) -> list[str] | None:
    keys = answer_keys(body, sources_of(body, env.ctx.catalog, env))
    return None if not keys else [sql(k) for k in keys]


def _add_key(item: exp.Expr, body: exp.Select, keys: list[str], columns: list[str],
             env: Env) -> bool:
    """Make the copy's FROM item ``item`` show its group key as ``columns``: a derived
    table's body gets the columns, a CTE's reference becomes a derived table of its body."""
    alias = item.args.get("alias")
    renamed = list(alias.columns) if isinstance(alias, exp.TableAlias) else []
    cte = cte_key_of(item, env)
    if cte is not None:
        renamed = renamed or [exp.to_identifier(c, quoted=True)
                              for c in env.ctes[cte].renamed or []]
    if renamed and len(renamed) != len(output_names(body, env.ctx.catalog, env) or []):
        return False  # a partial column list: the key's would not come last
    keyed_body = body.copy()
    for key, column in zip(keys, columns, strict=True):
        keyed_body.append("expressions", parse_expr(f"{key} AS {column}"))
    ident = alias_ident(item)
    assert ident is not None
    listed = [*renamed, *map(exp.to_identifier, columns)] if renamed else []
    item.replace(exp.Subquery(this=keyed_body, alias=exp.TableAlias(this=ident.copy(),
                                                                   columns=listed)))
    return True
