"""Targeted proposals: rows that concentrate where random samples of witnesses spread.

On a large D the witness pool is a random sample of each class, so a proposal drawn from it
spreads over as many groups as it has witnesses: sixteen heroes of sixteen names never meet
a ``GROUP BY full_name HAVING COUNT(*) > 15``, whose smallest crossing is two heroes of one
name with eight powers each; a ``COUNT(DISTINCT hero_id)`` never sees a hero twice. What
such witnesses share is a *value*: the group's key, the repeated hero. So:

1. the values of the pool's rows are read (a handful of rows, by ``ctid``);
2. a value that two or more pool witnesses share in one column, in a column where they do not
   all share one (a lookup row every witness holds is no group), marks a group; the values
   shared by the most witnesses first;
3. per value, the witnesses of that difference (W1-W2 or W2-W1, by an anti-join on keys)
   that hold a row with it, in witness order (a hero's rows together), at most
   ``per_value`` of them: one statement per value, carrying the value only, never a list
   of row ids of D. Columns the queries group by or count distinct come first.

:func:`value_proposals` yields each value's witnesses' rows; the caller tests and minimises.
"""

from collections import Counter, defaultdict
from collections.abc import Collection, Iterator, Sequence
from functools import partial
from typing import Any

from sqlglot import exp

from siselect.instances.pair import group_rows
from siselect.instances.search import Pool, keyed_stream
from siselect.instances.witness_cache import WitnessCache
from siselect.runtime import rowids
from siselect.runtime.catalog import Catalog
from siselect.runtime.errors import QueryFailed
from siselect.runtime.executor import Executor, quote_ident, quote_literal
from siselect.runtime.privileges import readable_columns
from siselect.witnesses.interface import Deferred, Lineage

VALUES = 6  # shared values proposed


def _from(catalog: Catalog, table: str) -> tuple[str, str]:
    """The FROM item reading ``table`` as ``t``, and the SQL of its rows' ids."""
    found = catalog.tables[table]
    source = rowids.source(found, readable_columns(catalog, table))
    return f"{source} AS t", rowids.row_id(found, catalog.number(table), "t")


def row_values(executor: Executor, catalog: Catalog, rows: set[int]
                ) -> dict[int, tuple[str, dict[str, Any]]]:
    """``rowid -> (table, {column: value})`` for the (few) ``rows``."""
    found: dict[int, tuple[str, dict[str, Any]]] = {}
    for table, ids in group_rows(rows, catalog).items():
        columns = readable_columns(catalog, table)
        if not columns:
            continue
        source, row_id = _from(catalog, table)
        listed = ", ".join(f"t.{quote_ident(c)} AS {quote_ident('c_' + c)}" for c in columns)
        where = rowids.matches(catalog.tables[table], catalog.number(table), "t", ids)
        result = executor.run(f"SELECT {row_id} AS __r, {listed} FROM {source} WHERE {where}")
        for row in result.rows:
            found[int(row[0])] = (table, dict(zip(columns, row[1:], strict=True)))
    return found


def key_columns(trees: Sequence[exp.Query]) -> set[str]:
    """Names of the columns the queries group by or count distinct: the groups and keys
    a difference is about (a ``HAVING`` threshold's group, a repeated key)."""
    names: set[str] = set()
    for tree in trees:
        for node in tree.find_all(exp.Group, exp.Distinct):
            names.update(c.name.lower() for c in node.find_all(exp.Column))
    return names


def shared_values(witnesses: Sequence[Sequence[int]],
                  values: dict[int, tuple[str, dict[str, Any]]],
                  keys: Collection[str] = ()) -> list[tuple[str, str, Any]]:
    """``(table, column, value)`` shared by two or more ``witnesses``, in columns where the
    witnesses hold more than one value: key columns first, then by how many share it."""
    holders: Counter = Counter()
    seen: dict[tuple[str, str], set] = defaultdict(set)
    for w in witnesses:
        mine = set()
        for r in w:
            if r not in values:
                continue
            table, row = values[r]
            for column, value in row.items():
                if value is not None and isinstance(value, int | str):
                    mine.add((table, column, value))
                    seen[(table, column)].add(value)
        holders.update(mine)
    shared = [(n, key) for key, n in holders.items() if n >= 2 and len(seen[key[:2]]) > 1]
    return [key for _, key in sorted(
        shared, key=lambda x: (x[1][1].lower() not in keys, -x[0], repr(x[1])))]


def value_sql(own: str, other: str | None, catalog: Catalog, table: str, column: str,
              value: Any, limit: int, deferred: Deferred | None = None) -> str:
    """The witnesses of ``own`` (keyed witness SQL) that hold a row with ``column = value``
    and are none of ``other``'s, in witness order. ``deferred``: ``own``'s witnesses not
    built yet (:class:`~siselect.witnesses.interface.Deferred`): those are then built for
    the witnesses that hold such a row only, tested by their row ids one by one."""
    literal = str(value) if isinstance(value, int) else quote_literal(value)
    source, row_id = _from(catalog, table)
    holding = f"SELECT {row_id} FROM {source} WHERE t.{quote_ident(column)} = {literal}"
    unlike = ("" if other is None else
              f" AND NOT EXISTS (SELECT FROM ({other}) AS __b WHERE __b.k = __a.k)")
    if deferred is not None:
        number = catalog.number(table)
        # Row ids of another relation never equal the ones held: only this one's are tested.
        ids = [sql for relation, encoded, sql in deferred.ids if encoded or relation == number]
        held = " OR ".join(f"{sql} IN ({holding})" for sql in ids) or "false"
        return (f"SELECT DISTINCT w FROM (SELECT {deferred.w} AS w FROM ({deferred.sql}) "
                f"AS __a WHERE ({held}){unlike}) AS __v ORDER BY w LIMIT {int(limit)}")
    # The witnesses' rows joined to the rows holding the value (one hash of those rows),
    # not ``w && ARRAY(...)``: an overlap compares every element with every element, per
    # witness (12,500 heroes named '-' against 580,000 witnesses: 20 s a statement).
    return (f"SELECT DISTINCT w FROM ({own}) AS __a, unnest(__a.w) AS __x(r) "
            f"WHERE __x.r IN ({holding}){unlike} ORDER BY w LIMIT {int(limit)}")


def _keyed(lineage: Lineage) -> str:
    return lineage.keyed_sql or keyed_stream(lineage.sql, False)


def value_proposals(executor: Executor, catalog: Catalog, trees: Sequence[exp.Query],
                    lineages: Sequence[Lineage], pool: Pool, per_value: int,
                    exclude: frozenset[int] = frozenset(), cache: WitnessCache | None = None
                    ) -> Iterator[list[int]]:
    """The rows of the witnesses holding each shared value of the pool (see the module);
    a value's witnesses fetched once per tournament with ``cache``."""
    run = (lambda sql: executor.run(sql).rows) if cache is None else partial(
        cache.rows_of, executor)
    first, second = (_keyed(lin) for lin in lineages)
    # The witnesses not built yet, when both are keyed by the lineage's own key (the
    # anti-join reads the other's by that key).
    keyed = all(lin.keyed_sql for lin in lineages)
    deferred = [lin.deferred if keyed else None for lin in lineages]
    # The difference's groups when there is one, fetched from that difference (a group
    # both answers have grows both sides alike).
    sides: list[tuple[list[list[int]], str, str | None, Deferred | None]] = [
        (seeds, own, other, form)
        for seeds, own, other, form in ((pool.only1, first, second, deferred[0]),
                                        (pool.only2, second, first, deferred[1]))
        if seeds] or [(pool.both, first, None, deferred[0])]
    keys = key_columns(trees)
    for seeds, own, other, form in sides:
        rows = {r for w in seeds for r in w} - exclude
        values = row_values(executor, catalog, rows)
        for table, column, value in shared_values(seeds, values, keys)[:VALUES]:
            try:
                fetched = run(value_sql(own, other if own != other else None, catalog, table,
                                        column, value, per_value, form))
            except QueryFailed as exc:
                if exc.sqlstate[:2] in ("21", "22", "42"):  # a value this column cannot take
                    continue
                raise
            found = {int(r) for (w,) in fetched if exclude.isdisjoint(int(x) for x in w)
                     for r in w}
            if found:
                yield sorted(found)


#: Conditions of conditional aggregates turned into variants, at most, per query.
COUNTED = 2


def _counted_conditions(tree: exp.Query) -> list[tuple[exp.Select, exp.Expr]]:
    """``(SELECT, condition)`` of each condition an aggregate of ``tree`` counts under
    (``CASE WHEN c``, ``IIF(c, ...)``, ``FILTER (WHERE c)``), with the SELECT it is in."""
    found: list[tuple[exp.Select, exp.Expr]] = []
    for agg in tree.find_all(exp.AggFunc):
        select = agg.find_ancestor(exp.Select)
        if select is None:
            continue
        # Not a sort key's: ``ARRAY_AGG(v ORDER BY CASE WHEN c ...)`` orders by c, it
        # aggregates every row (SQLite's MIN over a text column is such a pick).
        conditions = [node.this for node in agg.find_all(exp.If)
                      if not isinstance(node.find_ancestor(exp.Ordered, exp.AggFunc),
                                        exp.Ordered)]
        parent = agg.parent
        if isinstance(parent, exp.Filter) and isinstance(parent.expression, exp.Where):
            conditions.append(parent.expression.this)
        found.extend((select, c) for c in conditions if c is not None)
    return found


def counted_variants(tree: exp.Query) -> list[exp.Query]:
    """``tree`` with one counted condition (:func:`_counted_conditions`) added to the WHERE
    of its aggregate's SELECT, per condition: its witnesses are rows the condition holds
    for."""
    variants = []
    for i in range(min(COUNTED, len(_counted_conditions(tree)))):
        variant = tree.copy()
        select, condition = _counted_conditions(variant)[i]
        select.where(condition.copy(), copy=False)
        variants.append(variant)
    return variants
