"""How witnesses travel through a rewritten query, and the SQL pieces that carry them.

A rewritten block returns its own columns followed by witness columns:

- at most one *single* column, ``bigint[]`` of a fixed width: the one witness of the row,
  a slot per base-table occurrence;
- any number of *multi* columns, ``bigint[][]`` of shape ``(n, width)``: a set of n witnesses
  (what an aggregate or a DISTINCT gathers from the rows it merges).

The witnesses of a row are the product of its columns: one witness from each, concatenated.
A slot that holds no row (the NULL side of an outer join, padding) holds 0, which is never a
row id because table numbers start at 1; a multi column that is NULL (an outer join again)
counts as a single all-zero witness. Keeping NULLs out of the arrays keeps subscripting them
O(1). Slots remember the table they hold, so that the final arrays can be sorted for free:
row ids of different tables compare by table number.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import count

import sqlglot
from sqlglot import exp

from ..rowids import rowid_sql

FILLER = 0  # "table number" of a slot that is always 0


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


def zeros2d(width: int) -> str:
    return "'{{" + ",".join(["0"] * width) + "}}'::bigint[]"


def rowid_expr(table_no: int, alias: exp.Identifier) -> str:
    """The row id of the current row of ``alias`` (0 when that side is NULL)."""
    text = rowid_sql(table_no, "\x00")
    return f"COALESCE({text.replace(chr(34) + chr(0) + chr(34), sql(alias))}, 0)"


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
                    Slot(f"COALESCE({ref}.{col.name}[{j}], 0)", t)
                    for j, t in enumerate(col.slots, 1) if t != FILLER
                )


def single_array(slots: Sequence[Slot]) -> str:
    """``ARRAY[...]`` of the slots, never empty (a filler keeps array_agg happy)."""
    if not slots:
        return "ARRAY[0::bigint]"
    return "ARRAY[" + ", ".join(s.text for s in slots) + "]::bigint[]"


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
            Slot(f"COALESCE({ref}[{var}][{j}], 0)", t)
            for j, t in enumerate(tables, 1) if t != FILLER
        )
    return laterals, variables, slots


def normalized(slots: Sequence[Slot]) -> str:
    """A sorted ``bigint[]`` of the non-zero, distinct row ids held by ``slots``."""
    if not slots:
        return "'{}'::bigint[]"
    ordered = sorted(slots, key=lambda s: s.table)
    tables = [s.table for s in ordered]
    inner = "ARRAY[" + ", ".join(s.text for s in ordered) + "]::bigint[]"
    if len(set(tables)) == len(tables):
        return f"array_remove({inner}, 0::bigint)"
    # A table held twice (self-join, subquery over the same table): sort and deduplicate.
    return f"ARRAY(SELECT DISTINCT x FROM unnest({inner}) AS x WHERE x <> 0 ORDER BY x)"
