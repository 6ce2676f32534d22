"""How witnesses travel through a rewritten query, and the SQL pieces that carry them.

A rewritten block returns its own columns followed by witness columns, in groups:

- at most one *single* group: one ``tid`` column per base-table occurrence (a *slot*),
  holding the ``ctid`` of the row that occurrence contributed: the row's one witness;
- any number of *multi* groups: one ``tid[]`` column per slot, the arrays parallel, so that
  ``unnest(a1, a2, ...)`` yields a set of witnesses (what an aggregate or a DISTINCT
  gathered from the rows it merged).

The witnesses of a row are the product of its groups: one witness from each, concatenated.
A slot that holds no row (the NULL side of an outer join, another side of a UNION) is NULL,
and so is a multi group that holds no set (an outer join again): it counts as one empty
witness. Slots remember the table they hold (:class:`Held`): ctids travel as they are
(cheap to collect) and become row ids (:mod:`siselect.runtime.rowids`) only in the final
witnesses, where row ids of different tables compare by table number, so ordering them
costs nothing. Relations whose rows a ctid does not identify (partitioned and inherited
tables, views read as they are, foreign tables) travel as row ids (``bigint``) from the
start. Each final witness also gets a key computed from the slots directly
(:func:`witness_key`).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import count

import sqlglot
from sqlglot import exp

from siselect.runtime.rowids import rowid_of_tid


def parse_expr(text: str) -> exp.Expr:
    """A PostgreSQL expression snippet as a sqlglot node."""
    return sqlglot.parse_one(f"SELECT {text}", read="postgres").expressions[0]


def sql(node: exp.Expr) -> str:
    return node.sql(dialect="postgres")


def quoted(name: str) -> str:
    return exp.to_identifier(name, quoted=True).sql(dialect="postgres")


@dataclass(frozen=True)
class Held:
    """What a slot holds: rows of the relation numbered ``number`` (for ``encoded`` slots
    its first number: the row ids of its rows lie in the relation's range), as ctids
    (``tid``) or, ``encoded``, as row ids (``bigint``)."""

    number: int
    encoded: bool = False

    @property
    def sql_type(self) -> str:
        return "bigint" if self.encoded else "tid"

    def rowid(self, text: str) -> str:
        return text if self.encoded else rowid_of_tid(self.number, text)

    def hashed(self, text: str) -> str:
        if self.encoded:
            return f"hashint8extended({text}, 0)"
        return f"hashtidextended({text}, {self.number})"


@dataclass
class WitnessGroup:
    """One witness (single) or a set of witnesses (multi): a column per slot."""

    columns: list[str]
    tables: list[Held]  # what each slot holds
    multi: bool
    alternatives: bool = False  # a multi of which any one witness does (see Multi)


@dataclass
class Rep:
    """The witness groups a rewritten query appends to its own columns, in order."""

    groups: list[WitnessGroup] = field(default_factory=list)

    @property
    def single(self) -> WitnessGroup | None:
        return next((g for g in self.groups if not g.multi), None)

    @property
    def multis(self) -> list[WitnessGroup]:
        return [g for g in self.groups if g.multi]

    @property
    def column_count(self) -> int:
        return sum(len(g.columns) for g in self.groups)


class Names:
    """Fresh identifiers for the columns and aliases the rewrite introduces."""

    def __init__(self) -> None:
        self._counter = count(1)

    def fresh(self, stem: str) -> str:
        return f"__{stem}{next(self._counter)}"


@dataclass
class Slot:
    """One element of a witness under construction: SQL of a ``tid`` and its table."""

    text: str
    table: Held


@dataclass
class Multi:
    """A set of witnesses under construction: SQL of the parallel ``tid[]`` columns."""

    refs: list[str]
    tables: list[Held]
    # Any one of its witnesses does what all do (the rows reaching a MIN/MAX subquery's
    # extreme), unlike one witness per row merged (an aggregate's, a window's partition).
    alternatives: bool = False


@dataclass
class Parts:
    """What a block's FROM provides: single slots and multi groups."""

    singles: list[Slot] = field(default_factory=list)
    multis: list[Multi] = field(default_factory=list)

    def add_source(self, ref: str, rep: Rep) -> None:
        """The witness groups of a rewritten FROM item referenced as ``ref``."""
        for group in rep.groups:
            refs = [f"{ref}.{c}" for c in group.columns]
            if group.multi:
                self.multis.append(Multi(refs, group.tables, group.alternatives))
            else:
                self.singles.extend(Slot(r, t) for r, t in zip(refs, group.tables, strict=True))


def ctid_slot(alias: exp.Identifier) -> str:
    """The ctid of the current row of FROM item ``alias`` (NULL when that side is NULL)."""
    return f"{sql(alias)}.ctid"


def emit(slots: Sequence[Slot], names: Names, aggregate: bool = False,
         only: str | None = None, ordered: bool = False) -> tuple[list[str], WitnessGroup]:
    """SELECT-list entries carrying ``slots``, and the group they form.

    With ``aggregate``, each slot is gathered with ``array_agg`` (of the rows passing the
    condition ``only``, if given): the group then holds the witnesses of the merged rows;
    ``ordered``, sorted by their slots (every array in the same order).
    """
    base = names.fresh("m" if aggregate else "s")
    columns = [f"{base}_{j}" for j in range(1, len(slots) + 1)]
    where = f" FILTER (WHERE {only})" if only else ""
    order = f" ORDER BY {', '.join(s.text for s in slots)}" if ordered and slots else ""
    entries = [f"array_agg({s.text}{order}){where} AS {c}" if aggregate else f"{s.text} AS {c}"
               for s, c in zip(slots, columns, strict=True)]
    return entries, WitnessGroup(columns, [s.table for s in slots], aggregate)


def pass_through(multi: Multi, names: Names) -> tuple[list[str], WitnessGroup]:
    """SELECT-list entries handing a FROM item's multi group on, unchanged."""
    base = names.fresh("m")
    columns = [f"{base}_{j}" for j in range(1, len(multi.refs) + 1)]
    entries = [f"{r} AS {c}" for r, c in zip(multi.refs, columns, strict=True)]
    return entries, WitnessGroup(columns, list(multi.tables), True, multi.alternatives)


def expansion(parts: Parts, names: Names) -> tuple[list[str], list[str], list[Slot]]:
    """LATERALs that enumerate the multi groups, their first-copy tests, and the slots.

    Each LATERAL walks the witnesses of one multi group (an empty witness when the group
    is NULL); with the single slots they give one witness of the product per row produced.
    A group of alternative one-row witnesses holding a row the row's slots already hold
    walks that row alone (:func:`absorbed`).
    """
    laterals: list[str] = []
    firsts: list[str] = []
    slots = list(parts.singles)
    for multi in parts.multis:
        alias = names.fresh("u")
        width = len(multi.tables)
        refs = [absorbed(multi.refs[0], multi.tables[0], slots)] \
            if multi.alternatives and width == 1 else multi.refs
        arrays = ", ".join(f"COALESCE({r}, '{{NULL}}'::{h.sql_type}[])"
                           for r, h in zip(refs, multi.tables, strict=True))
        # Column names unique in the whole query: unqualified user columns must not meet them.
        columns = ", ".join([*(f"{alias}_{j}" for j in range(1, width + 1)), f"{alias}_n"])
        laterals.append(f"LATERAL unnest({arrays}) WITH ORDINALITY AS {alias}({columns})")
        firsts.append(f"{alias}.{alias}_n = 1")
        slots.extend(Slot(f"{alias}.{alias}_{j}", t) for j, t in enumerate(multi.tables, 1))
    return laterals, firsts, slots


def absorbed(ref: str, table: Held, slots: Sequence[Slot]) -> str:
    """A sorted array ``ref`` of alternative one-row witnesses reduced to the row a slot of
    ``slots`` holds, when it holds one of those rows; else ``ref`` as it is.

    Every other choice would give a witness holding that one and more rows, none needed:
    ``WHERE b.x = (SELECT MIN(x) FROM b)`` has each of its rows witnessed by the row itself,
    not by that row with each of the thousands of rows tied at the minimum (issue 18: the
    product made a witness query over 2 million witnesses, a search of 150 s). The array
    keeps an element, so the first-copy test of an aggregate (``_n = 1``) still holds once.
    """
    same = [s.text for s in slots if s.table == table]
    if not same:
        return ref
    # ``ref`` is sorted (collect's ``ordered``): width_bucket finds a row by binary search,
    # where ``= ANY`` reads the whole array for every row (student_club x100: 15,111 rows
    # each against 14,819 budgets tied at the minimum, 6 s of a 7 s statement).
    cases = " ".join(f"WHEN ({ref})[width_bucket({s}, {ref})] = {s} THEN ARRAY[{s}]"
                     for s in same)
    return f"CASE {cases} ELSE {ref} END"


def normalized(slots: Sequence[Slot]) -> str:
    """A sorted ``bigint[]`` of the distinct row ids held by ``slots`` (empty ones left out)."""
    ordered = sorted(slots, key=lambda s: s.table.number)
    if not ordered:
        return "'{}'::bigint[]"
    inner = "ARRAY[" + ", ".join(s.table.rowid(s.text) for s in ordered) + "]::bigint[]"
    if not repeats_tables(ordered):
        return f"array_remove({inner}, NULL)"
    # A table held twice (self-join, CTE read twice): sort and deduplicate.
    return f"ARRAY(SELECT DISTINCT x FROM unnest({inner}) AS x WHERE x IS NOT NULL ORDER BY x)"


def witness_key(slots: Sequence[Slot]) -> str:
    """A ``bigint`` equal for equal witnesses: the XOR of a hash of each distinct row.

    Computed from the ctids, without the row ids (whose text-based encoding costs several
    times more), so that comparing and sampling witness sets by key reads each witness
    cheaply and builds the ``bigint[]`` only for the few witnesses kept. The table number
    seeds the hash of its rows; XOR makes the key independent of the order of the slots.
    """
    terms = []
    for j, slot in enumerate(slots):
        term = f"COALESCE({slot.table.hashed(slot.text)}, 0)"
        # A row held by two slots (a self-join) counts once, as in the witness.
        earlier = [s.text for s in slots[:j] if s.table == slot.table]
        if earlier:
            fresh = " AND ".join(f"{slot.text} IS DISTINCT FROM {e}" for e in earlier)
            term = f"CASE WHEN {fresh} THEN {term} ELSE 0 END"
        terms.append(term)
    return "(" + " # ".join(terms) + ")" if terms else "0::bigint"


def repeats_tables(slots: Sequence[Slot]) -> bool:
    """Whether a table has two slots (then different rows can give equal witnesses)."""
    tables = [s.table.number for s in slots]
    return len(set(tables)) != len(tables)
