"""ProvSQL backend: the witnesses of a query's answer asked of ProvSQL, as the paper does.

Used when the ProvSQL extension is installed, preloaded, and the loaded database was
prepared by ``siselect provsql enable`` (provenance on its tables, a token-to-row mapping,
see :mod:`.helpers`). It has the lineage backend's contract: :func:`witness_query` gives SQL
returning one ``w bigint[]`` per witness, so the same search, verification and
minimisation consume either. :func:`serve` picks the backend for a pair ("auto": ProvSQL
where it is usable and handles both queries, lineage otherwise, with the reason).
"""

from .choice import BACKENDS, Served, serve
from .helpers import SCHEMA, install_sql, track_sql, untrack_sql
from .shapes import unsupported
from .status import available
from .witness import ProvsqlUnsupported, witness_query

__all__ = [
    "BACKENDS",
    "SCHEMA",
    "ProvsqlUnsupported",
    "Served",
    "available",
    "install_sql",
    "serve",
    "track_sql",
    "unsupported",
    "untrack_sql",
    "witness_query",
]
