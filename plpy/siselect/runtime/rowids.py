"""Row identifiers: a base row is (table, ctid); in SQL it travels as one bigint.

``(table number << 48) | (block << 16) | offset``: compact, comparable and fast to
sort or EXCEPT on the server. Table numbers come from :meth:`Catalog.number`.
"""

from siselect.runtime.executor import quote_ident

BLOCK_BITS = 32
OFFSET_BITS = 16


def encode(table_no: int, block: int, offset: int) -> int:
    return (table_no << 48) | (block << OFFSET_BITS) | offset


def decode(rowid: int) -> tuple[int, str]:
    """``(table number, ctid text)`` of an encoded row id."""
    table_no = rowid >> 48
    block = (rowid >> OFFSET_BITS) & ((1 << BLOCK_BITS) - 1)
    return table_no, f"({block},{rowid & ((1 << OFFSET_BITS) - 1)})"


def rowid_of_tid(table_no: int, tid: str) -> str:
    """SQL for the row id of the ``tid`` expression ``tid``; NULL stays NULL.

    ``tidsend`` gives the block (4 bytes) and offset (2 bytes) big-endian: read as one
    48-bit number that is ``block << 16 | offset``, without parsing text (about twice as
    fast as going through ``ctid::text::point``, which matters for a million witnesses).
    """
    assert OFFSET_BITS == 16
    return f"(({table_no}::bigint << 48) | ('x' || encode(tidsend({tid}), 'hex'))::bit(48)::bigint)"


def rowid_sql(table_no: int, alias: str) -> str:
    """SQL for the encoded row id of the current row of table alias ``alias``."""
    return rowid_of_tid(table_no, f"{quote_ident(alias)}.ctid")
