"""Build PostgreSQL expressions from short SQL templates with named holes."""

from functools import lru_cache

from sqlglot import exp

from siselect.sqltext.sqlite_rules.walk import parenthesized

GENERATED = "siselect_generated"


@lru_cache(maxsize=256)
def _parsed(sql: str) -> exp.Expr:
    tree: exp.Expr = exp.maybe_parse(sql, dialect="postgres")
    for node in tree.walk():
        # Already PostgreSQL with SQLite's meaning: later rules must not rewrite it again
        # (the operands put into its holes are the query's own and stay visible to them).
        node.meta[GENERATED] = True
    return tree


def template(sql: str, **parts: exp.Expr) -> exp.Expr:
    """``sql`` (PostgreSQL) with each bare column named like a key replaced by that part.

    Holes are plain identifiers such as ``_x``; each part is copied on every use, so a
    hole may appear several times.
    """
    tree = _parsed(sql).copy()
    for column in list(tree.find_all(exp.Column)):
        if not column.table and column.name in parts:
            filled = parts[column.name].copy()
            if column is tree:
                return filled
            column.replace(parenthesized(filled, column.parent))
    return tree
