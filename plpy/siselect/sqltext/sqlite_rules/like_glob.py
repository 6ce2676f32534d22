"""LIKE is case-insensitive in SQLite and has no escape character; GLOB is a shell pattern."""

import re

from sqlglot import exp

from siselect.runtime.catalog import Catalog
from siselect.sqltext.sqlite_rules.walk import walk


def like_glob(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """LIKE becomes ILIKE (NOT kept, no backslash escape); GLOB becomes an anchored regex."""
    for node in walk(tree, exp.Like, exp.Glob):
        if isinstance(node, exp.Like):
            _like(node)
        elif isinstance(node, exp.Glob):
            _glob(node)
    return tree


def _like(node: exp.Like) -> None:
    ilike = exp.ILike(this=node.this, expression=node.expression, negate=node.args.get("negate"))
    pattern = node.expression
    needs_escape_off = not isinstance(node.parent, exp.Escape) and not (
        isinstance(pattern, exp.Literal) and "\\" not in pattern.this)
    if needs_escape_off:
        # PostgreSQL's default escape is backslash; SQLite has none.
        node.replace(exp.Escape(this=ilike, expression=exp.Literal.string("")))
    else:
        node.replace(ilike)


def glob_regex(pattern: str) -> str:
    """An anchored POSIX regular expression matching what the GLOB ``pattern`` matches."""
    out = ["^"]
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        end = _bracket_end(pattern, i) if ch == "[" else -1
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif end > 0:
            body = pattern[i + 1:end]
            negate = body.startswith("^")
            out.append("[" + ("^" if negate else "") + body[negate:].replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(ch if ch.isalnum() else re.escape(ch))
        i += 1
    return "".join(out) + "$"


def _bracket_end(pattern: str, start: int) -> int:
    """Index of the ']' closing the class opened at ``start`` (a leading ']' is literal)."""
    first = start + 1 + (pattern[start + 1:start + 2] == "^")
    return pattern.find("]", first + 1)


def _glob(node: exp.Glob) -> None:
    pattern = node.expression
    if isinstance(pattern, exp.Literal) and pattern.is_string:
        regex: exp.Expr = exp.Literal.string(glob_regex(pattern.this))
        node.replace(exp.RegexpLike(this=node.this, expression=regex))
    else:
        node.replace(exp.RegexpLike(this=node.this, expression=_glob_regex_sql(pattern)))


def _glob_regex_sql(pattern: exp.Expr) -> exp.Expr:
    """A pattern computed at run time: translate * and ? only (brackets pass through)."""
    from siselect.sqltext.sqlite_rules.template import template

    return template(
        "'^' || REPLACE(REPLACE(REGEXP_REPLACE(_p, '([.+(){}|$\\\\])', '\\\\\\1', 'g'), "
        "'*', '.*'), '?', '.') || '$'", _p=pattern)
