"""How witnesses travel through a rewritten query, and the SQL pieces that carry them.

A rewritten block returns its own columns followed by witness columns:

- at most one *single* column, ``tid[]`` of a fixed width: the one witness of the row,
  a slot per base-table occurrence holding that row's ``ctid``;
- any number of *multi* columns, ``tid[][]`` of shape ``(n, width)``: a set of n witnesses
  (what an aggregate or a DISTINCT gathers from the rows it merges).

The witnesses of a row are the product of its columns: one witness from each, concatenated.
A slot that holds no row (the NULL side of an outer join, padding) holds ``(0,0)``, which is
never a row's ctid (line pointers start at 1); a multi column that is NULL (an outer join
again) counts as a single empty witness. Keeping NULLs out of the arrays keeps subscripting
them O(1). Slots remember the table they hold: ctids travel as they are (cheap to collect)
and become row ids (:mod:`siselect.rowids`) only in the final witnesses, where row ids of
different tables compare by table number, so sorting them costs nothing.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import count

import sqlglot
from sqlglot import exp

from ..rowids import OFFSET_BITS

FILLER = 0  # "table number" of a slot that never holds a row
NO_ROW = "'(0,0)'::tid"


def parse_expr(text: str) -> exp.Expression:
    """A PostgreSQL expression snippet as a sqlglot node."""
    return sqlglot.parse_one(f"SELECT {text}", read="postgres").expressions[0]


def sql(node: exp.Expression) -> str:
    return node.sql(dialect="postgres")


@dataclass
class WitnessColumn:
    name: str
    slots: list[int]  # table number held by each slot (FILLER: always 0)
    multi: bool


@dataclass
class Rep:
    """The witness columns a rewritten query appends to its own columns, in order."""

    columns: list[WitnessColumn] = field(default_factory=list)

    @property
    def single(self) -> WitnessColumn | None:
        return next((c for c in self.columns if not c.multi), None)

    @property
    def multis(self) -> list[WitnessColumn]:
        return [c for c in self.columns if c.multi]

    @property
    def width(self) -> int:
        return sum(len(c.slots) for c in self.columns)


class Names:
    """Fresh identifiers for the columns and aliases the rewrite introduces."""

    def __init__(self) -> None:
        self._counter = count(1)

    def fresh(self, stem: str) -> str:
        return f"__{stem}{next(self._counter)}"


def _empty_slots(width: int) -> str:
    return "{" + ",".join(['"(0,0)"'] * width) + "}"


def zeros(width: int) -> str:
    """A single witness of ``width`` empty slots."""
    return f"'{_empty_slots(width)}'::tid[]"


def zeros2d(width: int) -> str:
    """A set holding one witness of ``width`` empty slots."""
    return f"'{{{_empty_slots(width)}}}'::tid[]"


def ctid_slot(alias: exp.Identifier) -> str:
    """The ctid of the current row of ``alias`` (the empty slot when that side is NULL)."""
    return f"COALESCE({sql(alias)}.ctid, {NO_ROW})"


def rowid_of(table_no: int, tid: str) -> str:
    """The row id (see :func:`siselect.rowids.encode`) of a ctid, NULL for the empty slot.

    ``ctid::text::point`` is (block, offset); multiplying that complex number by
    ``(2^16, -1)`` gives ``block * 2^16 + offset`` in its real part, with one text parse.
    """
    point = f"NULLIF({tid}, {NO_ROW})::text::point * point({1 << OFFSET_BITS}, -1)"
    return f"(({table_no}::bigint << 48) + ({point})[0]::bigint)"


@dataclass
class Slot:
    """One element of a witness under construction: SQL text and the table it holds."""

    text: str
    table: int


@dataclass
class Parts:
    """What a block's FROM provides: single slots and multi columns (SQL text of each)."""

    singles: list[Slot] = field(default_factory=list)
    multis: list[tuple[str, list[int]]] = field(default_factory=list)

    def add_source(self, ref: str, rep: Rep) -> None:
        """The witness columns of a rewritten FROM item referenced as ``ref``."""
        for col in rep.columns:
            if col.multi:
                self.multis.append((f"{ref}.{col.name}", col.slots))
            else:
                self.singles.extend(
                    Slot(f"COALESCE({ref}.{col.name}[{j}], {NO_ROW})", t)
                    for j, t in enumerate(col.slots, 1) if t != FILLER
                )


def single_array(slots: Sequence[Slot]) -> str:
    """``ARRAY[...]`` of the slots, never empty (a filler keeps array_agg happy)."""
    if not slots:
        return zeros(1)
    return "ARRAY[" + ", ".join(s.text for s in slots) + "]::tid[]"


def quoted(name: str) -> str:
    return exp.to_identifier(name, quoted=True).sql(dialect="postgres")


def expansion(parts: Parts, names: Names) -> tuple[list[str], list[str], list[Slot]]:
    """FROM-clause LATERALs that enumerate the multi columns, their variables, and the slots.

    Each returned FROM entry walks one witness of a multi column; together with the single
    slots they give one witness of the product per produced row.
    """
    laterals: list[str] = []
    variables: list[str] = []
    slots = list(parts.singles)
    for ref, tables in parts.multis:
        var = names.fresh("i")
        variables.append(var)
        laterals.append(
            f"LATERAL generate_subscripts(COALESCE({ref}, {zeros2d(len(tables))}), 1) AS {var}"
        )
        slots.extend(
            Slot(f"COALESCE({ref}[{var}][{j}], {NO_ROW})", t)
            for j, t in enumerate(tables, 1) if t != FILLER
        )
    return laterals, variables, slots


def normalized(slots: Sequence[Slot]) -> str:
    """A sorted ``bigint[]`` of the distinct row ids held by ``slots`` (empty ones left out)."""
    ordered = sorted((s for s in slots if s.table != FILLER), key=lambda s: s.table)
    if not ordered:
        return "'{}'::bigint[]"
    tables = [s.table for s in ordered]
    inner = "ARRAY[" + ", ".join(rowid_of(s.table, s.text) for s in ordered) + "]::bigint[]"
    if len(set(tables)) == len(tables):
        return f"array_remove({inner}, NULL)"
    # A table held twice (self-join, CTE read twice): sort and deduplicate.
    return f"ARRAY(SELECT DISTINCT x FROM unnest({inner}) AS x WHERE x IS NOT NULL ORDER BY x)"


def repeats_tables(slots: Sequence[Slot]) -> bool:
    """Whether a table has two slots (then different rows can give equal witnesses)."""
    tables = [s.table for s in slots if s.table != FILLER]
    return len(set(tables)) != len(tables) or not tables
