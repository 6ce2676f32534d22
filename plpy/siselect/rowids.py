"""Row identifiers: a base row is (table, ctid); in SQL it travels as one bigint.

``(table number << 48) | (block << 16) | offset``: compact, comparable and fast to
sort or EXCEPT on the server. Table numbers come from :meth:`Catalog.number`.
"""

from .executor import quote_ident

BLOCK_BITS = 32
OFFSET_BITS = 16


def encode(table_no: int, block: int, offset: int) -> int:
    return (table_no << 48) | (block << OFFSET_BITS) | offset


def decode(rowid: int) -> tuple[int, str]:
    """``(table number, ctid text)`` of an encoded row id."""
    table_no = rowid >> 48
    block = (rowid >> OFFSET_BITS) & ((1 << BLOCK_BITS) - 1)
    return table_no, f"({block},{rowid & ((1 << OFFSET_BITS) - 1)})"


def rowid_sql(table_no: int, alias: str) -> str:
    """SQL for the encoded row id of the current row of table alias ``alias``."""
    point = f"({quote_ident(alias)}.ctid::text::point)"
    return f"(({table_no}::bigint << 48) | ({point}[0]::bigint << 16) | {point}[1]::bigint)"
