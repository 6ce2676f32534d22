"""Witnesses of a query the rewriting cannot follow: every row of every relation it reads.

A recursive CTE (or another construct :mod:`.block` refuses) leaves no exact witnesses,
but the search needs proposals, not exactness: each proposal is verified by running both
queries on it. So such a query's witnesses are every row of the relations it reads, each
row a witness of its own (an over-approximation, named in the notes); the other query's
witnesses, exact or not, still lead the search. Before this, the whole pair was a failed
separation and a draw (the yardstick's K=5 codebase_community 630: a recursive tag
splitter against ``SELECT DISTINCT tags``, separated by one user and one post).
"""

from sqlglot import exp

from siselect.runtime import rowids
from siselect.runtime.catalog import Catalog
from siselect.runtime.privileges import readable_columns
from siselect.runtime.views import relation_reads
from siselect.witnesses.interface import Lineage


def every_row(tree: exp.Query, catalog: Catalog, why: str) -> Lineage:
    """Each row of each relation ``tree`` reads as a witness; ``why``: what the rewriting
    could not follow."""
    parts = []
    for name in dict.fromkeys(read for _, read in relation_reads(tree, catalog)):
        table = catalog.tables[name]
        source = rowids.source(table, readable_columns(catalog, name))
        parts.append(f"SELECT {rowids.row_id(table, catalog.number(name), '__r')} AS r "
                     f"FROM {source} AS __r")
    rows = " UNION ALL ".join(parts) or "SELECT NULL::bigint AS r WHERE false"
    keyed = f"SELECT ARRAY[r]::bigint[] AS w, r AS k FROM ({rows}) AS __e"
    note = f"{why}: every row of the relations read is a witness (over-approximated)"
    return Lineage(f"SELECT w FROM ({keyed}) AS __w", False, [note], keyed_sql=keyed)
