"""Build PostgreSQL expressions from short SQL templates with named holes."""

from functools import lru_cache

from sqlglot import exp


@lru_cache(maxsize=256)
def _parsed(sql: str) -> exp.Expression:
    return exp.maybe_parse(sql, dialect="postgres")


def template(sql: str, **parts: exp.Expression) -> exp.Expression:
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
            column.replace(filled)
    return tree
