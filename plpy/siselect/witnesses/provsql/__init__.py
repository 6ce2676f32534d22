"""ProvSQL backend: the witnesses of a query's answer asked of ProvSQL, as the paper does.

Used when the ProvSQL extension is installed, preloaded, and the loaded database was
prepared by ``siselect provsql enable`` (provenance on its tables, a token-to-row mapping,
see :mod:`.helpers`). It has the lineage backend's contract: :func:`witness_query` gives SQL
returning one ``w bigint[]`` per witness, so the same search, verification and
minimisation consume either.
"""

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.runtime.executor import Executor
from siselect.witnesses.interface import Lineage
from siselect.witnesses.provsql.helpers import SCHEMA, install_sql, track_sql, untrack_sql
from siselect.witnesses.provsql.shapes import unsupported
from siselect.witnesses.provsql.status import available
from siselect.witnesses.provsql.witness import ProvsqlUnsupported, witness_query


class ProvsqlBackend:
    """Witnesses from ProvSQL's why-provenance, where ProvSQL is preloaded and enabled."""

    name = "provsql"
    label = "ProvSQL"

    def usable(self, executor: Executor) -> str | None:
        return available(executor)

    def witness_query(self, tree: exp.Query, catalog: Catalog) -> Lineage:
        return witness_query(tree, catalog)


__all__ = [
    "SCHEMA",
    "ProvsqlBackend",
    "ProvsqlUnsupported",
    "available",
    "install_sql",
    "track_sql",
    "unsupported",
    "untrack_sql",
    "witness_query",
]
