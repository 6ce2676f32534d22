"""The tie-inclusive form of a query: what it may return whichever way ties break."""

from sqlglot import exp


def with_ties(tree: exp.Query) -> exp.Query:
    """``ORDER BY ... LIMIT k`` becomes ``FETCH FIRST k ROWS WITH TIES`` (top level only).

    A top-level LIMIT without ORDER BY is dropped: any k rows of the answer may come back.
    """
    tree = tree.copy()
    limit = tree.args.get("limit")
    if not isinstance(limit, exp.Limit) or not isinstance(tree, exp.Select):
        return tree
    if not tree.args.get("order"):
        tree.set("limit", None)
        return tree
    tree.set(
        "limit",
        exp.Fetch(
            direction="FIRST",
            count=limit.expression.copy(),
            limit_options=exp.LimitOptions(rows=True, with_ties=True),
        ),
    )
    return tree


def tie_sensitive(tree: exp.Query) -> bool:
    """Whether the top level cuts its answer with LIMIT (ties or order may decide rows)."""
    return isinstance(tree, exp.Select) and isinstance(tree.args.get("limit"), exp.Limit)
