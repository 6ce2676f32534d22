"""sqlglot's parse errors in the user's words: where in their SQL, and what was expected.

sqlglot words its errors for its own developers ("Required keyword: 'this' missing for
<class 'sqlglot.expressions.query.Where'>"); the position it gives is exact, and the
class names which clause or operator is incomplete.
"""

import re
from typing import Any

# sqlglot's expression classes as the SQL that makes them.
_CLAUSES = {
    "Where": "WHERE", "Having": "HAVING", "Qualify": "QUALIFY", "Join": "JOIN",
    "Order": "ORDER BY", "Group": "GROUP BY", "Limit": "LIMIT", "Offset": "OFFSET",
    "From": "FROM", "EQ": "=", "NEQ": "<>", "GT": ">", "GTE": ">=", "LT": "<", "LTE": "<=",
    "And": "AND", "Or": "OR", "Not": "NOT", "Add": "+", "Sub": "-", "Mul": "*", "Div": "/",
    "Mod": "%", "DPipe": "||", "Like": "LIKE", "ILike": "ILIKE", "In": "IN",
    "Between": "BETWEEN", "Is": "IS", "Case": "CASE", "If": "WHEN", "Cast": "CAST",
    "Alias": "AS", "Union": "UNION", "Intersect": "INTERSECT", "Except": "EXCEPT",
    "Paren": "(", "Exists": "EXISTS",
}
_MISSING = re.compile(r"Required keyword: '(\w+)' missing for <class '[\w.]*?(\w+)'>")
_GOT = re.compile(r" but got <Token token_type: TokenType\.(\w+), text: ([^,]*),.*", re.S)
_CLASS = re.compile(r"<class '[\w.]*?(\w+)'>")


def expected(description: str) -> str:
    """What sqlglot's ``description`` says was expected, without its internals."""
    missing = _MISSING.search(description)
    if missing:
        clause = _CLAUSES.get(missing.group(2), missing.group(2).upper())
        return f"{clause} is incomplete: an expression is missing"
    text = _GOT.sub(lambda m: " but the text ends" if m.group(1) == "SENTINEL"
                    else f" but got {m.group(2)}", description)
    text = re.sub(r"^Expecting ", "expected ", text)
    text = re.sub(r"^Expected ", "expected ", text)
    text = text.replace("Invalid expression / Unexpected token", "unexpected text")
    return _CLASS.sub(lambda m: _CLAUSES.get(m.group(1), m.group(1).upper()), text)


def describe(exc: Any, sql: str) -> str:
    """A one-line message for a sqlglot ParseError or TokenError on ``sql``."""
    errors = getattr(exc, "errors", None) or []
    if not errors:  # the tokenizer says nothing about where: an unclosed quote, usually
        return "syntax error: the text cannot be read (an unclosed quote or comment?)"
    first = errors[0]
    near = " ".join(str(first.get("highlight") or "").split())
    where = f"at line {first.get('line')}, column {first.get('col')}"
    if near:
        where += f" (near {near[:40]!r})"
    return f"syntax error {where}: {expected(str(first.get('description', '')))}"
