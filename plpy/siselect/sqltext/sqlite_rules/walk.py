"""Visit a tree children first, and put new nodes in place with the parentheses they need."""

from collections.abc import Iterator

from sqlglot import exp

# sqlglot prints a tree as it is: an operator node placed under another operator needs
# explicit parentheses or PostgreSQL would re-associate it by precedence.
_OPERATORS = (exp.Binary, exp.Unary, exp.Predicate)


def walk(tree: exp.Expr, *types: type) -> Iterator[exp.Expr]:
    """Nodes of ``tree`` (of the given types, if any), every node after its descendants.

    Nodes that a rule generated from a template are skipped: they are final.
    """
    for node in reversed(list(tree.walk(bfs=False))):
        if (not types or isinstance(node, types)) and not node.meta.get("siselect_generated"):
            yield node


def parenthesized(new: exp.Expr, parent: exp.Expr | None) -> exp.Expr:
    """``new`` wrapped in parentheses when it is an operator going under an operator."""
    if isinstance(new, _OPERATORS) and not isinstance(new, exp.Paren) and isinstance(
            parent, _OPERATORS) and not isinstance(parent, exp.Paren):
        return exp.Paren(this=new)
    return new


def replace(node: exp.Expr, new: exp.Expr, tree: exp.Expr) -> exp.Expr:
    """Put ``new`` where ``node`` is; returns the tree (``new`` itself if ``node`` was the root)."""
    if node is tree:
        return new
    node.replace(parenthesized(new, node.parent))
    return tree
