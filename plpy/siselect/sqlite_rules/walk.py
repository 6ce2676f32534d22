"""Visit a tree children first, so a rule sees already rewritten operands."""

from collections.abc import Iterator

from sqlglot import exp


def walk(tree: exp.Expression, *types: type) -> Iterator[exp.Expression]:
    """Nodes of ``tree`` (of the given types, if any), every node after its descendants."""
    for node in reversed(list(tree.walk(bfs=False))):
        if not types or isinstance(node, types):
            yield node


def replace(node: exp.Expression, new: exp.Expression, tree: exp.Expression) -> exp.Expression:
    """Put ``new`` where ``node`` is; returns the tree (``new`` itself if ``node`` was the root)."""
    if node is tree:
        return new
    node.replace(new)
    return tree
