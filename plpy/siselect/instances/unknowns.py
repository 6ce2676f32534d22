"""Rows of an instance whose values the queries' conditions test are NULL.

Two formulations that agree on D often part on a NULL alone: ``SUM(a2 = 'Decin')`` is NULL
over districts whose name is unknown, ``COUNT(CASE WHEN a2 = 'Decin' THEN 1 END)`` is 0. On D
such rows are a few among many; in an instance of two rows they decide both answers, and a
judge asked about an account of a district of unknown name answers for that NULL, not for
the question (the yardstick's financial 126 at scale 10: the candidate right on D lost on
such a D'). :func:`siselect.instances.separate.separate_pair` chooses an instance away from
them where one as good exists.

A column is *tested* where a comparison of a query reads it (``=``, ``<``, ``LIKE``,
``IN``, ``BETWEEN`` ..., in ``WHERE``, ``ON``, ``HAVING`` or a ``CASE``); ``IS [NOT] NULL``
and ``IS [NOT] DISTINCT FROM`` ask about NULLs, and do not count.
"""

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from siselect.instances.pair import group_rows
from siselect.instances.references import rowids_where
from siselect.instances.shadow import column_owner, table_aliases
from siselect.runtime import privileges
from siselect.runtime.catalog import Catalog
from siselect.runtime.executor import Executor, quote_ident

#: Rows of one table whose tested values are NULL, read at most (a table of millions may
#: hold more: the rest stay, and an instance may still hold one).
NULL_ROWS_MOST = 10_000

_ABOUT_NULLS = (exp.Is, exp.NullSafeEQ, exp.NullSafeNEQ)


def tested_columns(trees: Sequence[exp.Query], catalog: Catalog) -> dict[str, set[str]]:
    """``{table: columns}`` that a comparison of one of ``trees`` reads, by the catalog's
    names (a column whose table is not told by its qualifier or its name is left out)."""
    tested: dict[str, set[str]] = {}
    for tree in trees:
        named = table_aliases(tree, catalog)
        for comparison in tree.find_all(exp.Predicate):
            if isinstance(comparison, _ABOUT_NULLS):
                continue
            for column in comparison.find_all(exp.Column):
                owner = column_owner(column, named, catalog)
                if owner is not None:
                    tested.setdefault(owner[1], set()).add(owner[2])
    return tested


def unknown_rows(instance: dict[str, Any], row_ids: Sequence[int],
                 tested: dict[str, set[str]], catalog: Catalog) -> list[int]:
    """The ids of ``instance``'s rows (as :func:`.references.fetch_instance` gives them for
    ``row_ids``: each table's rows in the order of their ids) holding NULL in a tested
    column."""
    unknown = []
    for table, ids in group_rows(row_ids, catalog).items():
        shown, columns = instance.get(table), tested.get(table)
        # (a relation without row addresses lists its rows by content, not in id order)
        if not shown or not columns or len(shown["rows"]) != len(ids) \
                or catalog.tables[table].identity == "content":
            continue
        at = [i for i, name in enumerate(shown["columns"]) if name in columns]
        unknown += [rid for rid, row in zip(ids, shown["rows"], strict=True)
                    if any(row[i] is None for i in at)]
    return unknown


def null_rows(executor: Executor, catalog: Catalog, tested: dict[str, set[str]]) -> list[int]:
    """The ids of D's rows holding NULL in a tested column (that the caller may read), at
    most :data:`NULL_ROWS_MOST` a table."""
    found: list[int] = []
    for table, columns in sorted(tested.items()):
        readable = sorted(c for c in columns if privileges.can_read(catalog, table, [c]))
        if readable:
            where = " OR ".join(f"t.{quote_ident(c)} IS NULL" for c in readable)
            found += rowids_where(executor, catalog, table, where, NULL_ROWS_MOST)
    return found
