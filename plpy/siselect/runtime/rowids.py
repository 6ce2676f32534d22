"""Row identifiers: which row of which relation, as one bigint in SQL.

``(table number << 48) | (48 bits that name the row in that relation)``: compact,
comparable and fast to sort or EXCEPT on the server. Table numbers come from
:meth:`Catalog.number`. The low 48 bits depend on the relation's identity (see
:mod:`siselect.runtime.relations` and docs/instances.md, "Row identity"):

- ``ctid``: ``(block << 16) | offset`` of the row's ctid;
- ``leaf``: the same, under the table number of the member relation that holds the row
  (a relation of ``leaf`` identity takes one number per member, in ``Table.members`` order);
- ``content``: the row's place among the relation's rows ordered by their text
  (:data:`ORDINAL`), equal rows being interchangeable.
"""

from collections.abc import Sequence
from functools import lru_cache

from siselect.runtime.catalog import Table
from siselect.runtime.executor import quote_ident, quote_literal

BLOCK_BITS = 32
OFFSET_BITS = 16
LOW_BITS = 48
#: The column by which a relation of ``content`` identity numbers its rows.
ORDINAL = "__siselect_n"


def encode(table_no: int, block: int, offset: int) -> int:
    return (table_no << LOW_BITS) | (block << OFFSET_BITS) | offset


def table_number(rowid: int) -> int:
    return rowid >> LOW_BITS


def low(rowid: int) -> int:
    return rowid & ((1 << LOW_BITS) - 1)


def decode(rowid: int) -> tuple[int, str]:
    """``(table number, ctid text)`` of an encoded row id (of a ``ctid`` or ``leaf`` row)."""
    table_no = rowid >> LOW_BITS
    block = (rowid >> OFFSET_BITS) & ((1 << BLOCK_BITS) - 1)
    return table_no, f"({block},{rowid & ((1 << OFFSET_BITS) - 1)})"


@lru_cache(maxsize=1 << 16)
def _ctid(rowid: int) -> str:
    """``decode(rowid)[1]``, kept: each row set tested names its rows again."""
    return decode(rowid)[1]


def _tid_bits(tid: str) -> str:
    """``tidsend`` gives the block (4 bytes) and offset (2 bytes) big-endian: read as one
    48-bit number that is ``block << 16 | offset``, without parsing text (about twice as
    fast as going through ``ctid::text::point``, which matters for a million witnesses)."""
    assert OFFSET_BITS == 16
    return f"('x' || encode(tidsend({tid}), 'hex'))::bit(48)::bigint"


def rowid_of_tid(table_no: int, tid: str) -> str:
    """SQL for the row id of the ``tid`` expression ``tid``; NULL stays NULL."""
    return f"(({table_no}::bigint << 48) | {_tid_bits(tid)})"


def rowid_sql(table_no: int, alias: str) -> str:
    """SQL for the encoded row id of the current row of table alias ``alias`` (``ctid``)."""
    return rowid_of_tid(table_no, f"{quote_ident(alias)}.ctid")


def tid_array(ctids: Sequence[str]) -> str:
    return quote_literal("{" + ",".join(f'"{c}"' for c in ctids) + "}") + "::tid[]"


def _bigint_array(values: Sequence[int]) -> str:
    return "'{" + ",".join(str(int(v)) for v in values) + "}'::bigint[]"


def row_id(table: Table, number: int, ref: str, ordinal: str = ORDINAL) -> str:
    """SQL (bigint) for the row id of the current row of FROM item ``ref`` (SQL text), read
    from :func:`source`; ``ordinal`` names its numbering column (``content``)."""
    if table.identity == "leaf":
        oids = _bigint_array(table.members)  # sqlglot reads no oid[] literal
        member = f"({number} + pg_catalog.array_position({oids}, {ref}.tableoid::bigint) - 1)"
        return f"(({member}::bigint << 48) | {_tid_bits(f'{ref}.ctid')})"
    if table.identity == "content":
        return f"(({number}::bigint << 48) | {ref}.{ordinal})"
    return rowid_of_tid(number, f"{ref}.ctid")


def relation(table: Table) -> str:
    return f"{quote_ident(table.schema)}.{quote_ident(table.name)}"


#: Column types whose default ordering :func:`source` uses before the rows' text.
ORDERED_TYPES = ("smallint", "integer", "bigint", "numeric", "real", "double precision",
                 "boolean", "date", "text", "character varying", "character", "uuid")


def source(table: Table, columns: Sequence[str], ordinal: str = ORDINAL) -> str:
    """A FROM item reading ``table`` with what :func:`row_id` needs: the relation itself
    (its ``ctid`` and ``tableoid``), or for ``content`` a subquery of ``columns`` that
    numbers the rows by their values (the columns of ordinary types, in order, as a table's
    rows usually lie: the search and minimisation then meet them as they meet a table's)
    and then by their text (``C`` collation), which tells any two different rows apart."""
    if table.identity != "content":
        return relation(table)
    listed = ", ".join(quote_ident(c) for c in columns)
    types = {c.name: c.type.split("(")[0] for c in table.columns}
    keys = [f"{quote_ident(c)} NULLS LAST" for c in columns if types.get(c) in ORDERED_TYPES]
    keys.append(f"(ROW({listed}))::text COLLATE \"C\"")
    return (f"(SELECT {listed}, pg_catalog.row_number() OVER (ORDER BY {', '.join(keys)}) "
            f"AS {ordinal} FROM {relation(table)})")


def matches(table: Table, number: int, ref: str, ids: Sequence[int | str],
            empty_array: bool = False) -> str:
    """A condition on FROM item ``ref`` (from :func:`source`) that holds for the rows
    ``ids`` of ``table``: encoded row ids, or for a ``ctid`` table also ctid texts.
    ``empty_array``: no ids as an empty array, as any other set of a table read by its
    ``ctid`` is written (one text for both, its arrays bound as parameters)."""
    if not ids and (table.identity == "content" or not empty_array):
        return "false"  # read nothing: no scan, no numbering
    if table.identity == "content":
        return f"{ref}.{ORDINAL} = ANY({_bigint_array([low(int(i)) for i in ids])})"
    ctids = [i if isinstance(i, str) else _ctid(i) for i in ids]
    by_ctid = f"{ref}.ctid = ANY({tid_array(sorted(set(ctids)))})"
    if table.identity != "leaf":
        return by_ctid
    # The ctids find the rows (a TID scan in each member); the ids tell the members apart.
    return (f"{by_ctid} AND {row_id(table, number, ref)} = "
            f"ANY({_bigint_array([int(i) for i in ids])})")


def order(table: Table, ref: str) -> str:
    """An ORDER BY expression that lists the rows of ``ref`` in a stable order."""
    if table.identity == "content":
        return f"{ref}.{ORDINAL}"
    if table.identity == "leaf":
        return f"{ref}.tableoid, {ref}.ctid"
    return f"{ref}.ctid"
