"""Inclusions D keeps through the queries' joins, kept on D' too (docs/instances.md).

An inclusion ``(R, ForeignKey([x], S, [y]))`` (:func:`.integrity.kept_joins`) says that
every non-NULL ``R.x`` of D has a partner in ``S`` (a row with ``y = x``), where ``S.y`` is
no key: every molecule has at least one atom. A D' holding a molecule without any of its
atoms is a database D never is, and on it the question loses its meaning (the share of
molecules without fluorine counts a molecule that has no atom at all). :class:`Closure`
gives each row of ``R`` that D' keeps without any of its partners one partner back: the
one with the smallest row id, so that the same rows always close the same way.
"""

from collections.abc import Iterable, Sequence
from typing import Any

from siselect.instances.integrity import Reference
from siselect.instances.pair import group_rows
from siselect.runtime import rowids
from siselect.runtime.catalog import Catalog
from siselect.runtime.executor import Executor, quote_ident
from siselect.runtime.privileges import readable_columns

InclusionId = tuple[str, tuple[str, ...], str, tuple[str, ...]]
Target = tuple[str, tuple[str, ...]]  # an inclusion's S and its columns y
Facts = tuple[dict[tuple[InclusionId, int], tuple[Any, int | None]],
              dict[tuple[Target, int], Any]]


def new_facts() -> Facts:
    """Empty stores of what rows join on, for :class:`Closure` (one per tournament)."""
    return {}, {}


class Closure:
    """``closure(rows)``: ``rows`` plus, transitively, one partner for each row of an
    inclusion's ``R`` that holds none of its partners. What a row joins on and its smallest
    partner are read from D once per row (one statement per inclusion and row set with rows
    not seen before), so the many row sets a search tests close in Python."""

    def __init__(self, executor: Executor, catalog: Catalog, inclusions: Sequence[Reference],
                 facts: Facts | None = None):
        self.executor, self.catalog = executor, catalog
        self.inclusions = list(inclusions)
        self._ids = [(table, tuple(fk.columns), fk.ref_table, tuple(fk.ref_columns))
                     for table, fk in self.inclusions]
        # What a row of S offers does not depend on R: inclusions into one S.y (tens of
        # tables referencing users.id) read and hold it once.
        self._targets: list[Target] = [(fk.ref_table, tuple(fk.ref_columns))
                                       for _, fk in self.inclusions]
        # Facts of D, not of a pair: a tournament's closures share them (``facts``), as its
        # separations of one pair away from one row and another read the same rows again.
        # (inclusion, row of R) -> (its x, its smallest partner or None);
        # (S and y, row of S) -> its y
        self._needs, self._offers = facts if facts is not None else new_facts()

    @property
    def facts(self) -> Facts:
        """What it read of D, for another closure over the same D."""
        return self._needs, self._offers

    def __bool__(self) -> bool:
        return bool(self.inclusions)

    def __call__(self, rows: Sequence[int]) -> list[int]:
        if not self.inclusions:
            return list(rows)
        closed = set(rows)
        added: list[int] = []
        offered: dict[Target, set[Any]] = {target: set() for target in self._targets}
        unread: dict[Target, list[int]] = {target: [] for target in self._targets}
        # Each row is read once: a row whose partner was added has it from then on, and
        # what is offered only grows, so only the rows added last can still lack one (a
        # set of thousands of rows under tens of declared keys: every row looked at again
        # for each partner added cost seconds a set, codebase_community 604 at scale 10).
        fresh = closed
        while fresh:
            grouped = group_rows(fresh, self.catalog)
            for target, waiting in unread.items():
                waiting.extend(grouped.get(target[0], ()))
            partners: set[int] = set()
            for i, (table, _) in enumerate(self.inclusions):
                if table not in grouped:
                    continue
                target = self._targets[i]
                if unread[target]:  # what S offers, read only where a row of R looks
                    offered[target].update(self._offers[target, r] for r in self._read_offers(
                        target, unread[target]))
                    unread[target] = []
                partners.update(
                    partner for x, partner in (self._needs[self._ids[i], r] for r in
                                               self._read_needs(i, grouped[table]))
                    if x is not None and partner is not None and x not in offered[target])
            fresh = partners - closed
            closed |= fresh
            added += fresh
        return [*rows, *sorted(added)]

    def prefetch(self, rows: Iterable[int]) -> None:
        """Read what ``rows`` join on (and their partners) in one statement per inclusion
        and side, ahead of the row sets drawn from them: the same facts as read one set at
        a time, so every closure stays the same."""
        grouped = group_rows(rows, self.catalog)
        for i, (table, inclusion) in enumerate(self.inclusions):
            if table in grouped:
                self._read_needs(i, grouped[table])
            if inclusion.ref_table in grouped:
                self._read_offers(self._targets[i], grouped[inclusion.ref_table])

    def _read_needs(self, i: int, ids: list[int]) -> list[int]:
        """``ids`` (rows of inclusion ``i``'s R), each read from D once."""
        table, inclusion = self.inclusions[i]
        new = [r for r in ids if (self._ids[i], r) not in self._needs]
        if new:
            ref = inclusion.ref_table
            r_table, s_table = self.catalog.tables[table], self.catalog.tables[ref]
            x, y = quote_ident(inclusion.columns[0]), quote_ident(inclusion.ref_columns[0])
            own = rowids.row_id(r_table, self.catalog.number(table), "k")
            # A table's row ids go as its ctids: the smallest ctid's, not every partner's
            # row id computed to keep the smallest (tens of thousands per row on large D).
            smallest = rowids.rowid_of_tid(self.catalog.number(ref), "min(t.ctid)") \
                if s_table.identity == "ctid" else \
                f"min({rowids.row_id(s_table, self.catalog.number(ref), 't')})"
            # Each row's id computed once, before the join (OFFSET 0 keeps the planner from
            # pulling the subquery up): grouped after it, the id was computed for every
            # partner row joined (superhero x1000: 2.5 million for 17 powers, 2.4 -> 1.8 s).
            number = self.catalog.number(table)
            wanted = (f"SELECT {own} AS row_id, k.{x} AS joined "
                      f"FROM {rowids.source(r_table, readable_columns(self.catalog, table))} "
                      f"AS k WHERE {rowids.matches(r_table, number, 'k', new)} OFFSET 0")
            sql = (f"SELECT k.row_id, k.joined, {smallest} AS partner FROM ({wanted}) AS k "
                   f"LEFT JOIN {rowids.source(s_table, readable_columns(self.catalog, ref))} "
                   f"AS t ON t.{y} = k.joined GROUP BY k.row_id, k.joined")
            for row_id, joined, partner in self.executor.run(sql).rows:
                self._needs[self._ids[i], int(row_id)] = (joined,
                                                         None if partner is None else int(partner))
        return [r for r in ids if (self._ids[i], r) in self._needs]

    def _read_offers(self, target: Target, ids: list[int]) -> list[int]:
        """``ids`` (rows of ``target``'s S), each read from D once."""
        new = [r for r in ids if (target, r) not in self._offers]
        if new:
            ref = target[0]
            s_table = self.catalog.tables[ref]
            y = quote_ident(target[1][0])
            sql = (f"SELECT {rowids.row_id(s_table, self.catalog.number(ref), 't')} AS row_id, "
                   f"t.{y} AS joined "
                   f"FROM {rowids.source(s_table, readable_columns(self.catalog, ref))} AS t "
                   f"WHERE {rowids.matches(s_table, self.catalog.number(ref), 't', new)}")
            for row_id, joined in self.executor.run(sql).rows:
                self._offers[target, int(row_id)] = joined
        return [r for r in ids if (target, r) in self._offers]
