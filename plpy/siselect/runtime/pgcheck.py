"""What PostgreSQL will run, read by PostgreSQL's own parser before it runs.

sqlglot and PostgreSQL can read one text differently: sqlglot prints its parameter
``@A$`` as ``$A$``, which PostgreSQL reads as a dollar quote, so code that sqlglot saw
inside a string literal becomes statements for PostgreSQL. siselect therefore checks
the final text, the one it sends, with ``pglast`` (PostgreSQL 15's parser, the one the
server uses): it must be exactly one plain SELECT, and the calls this parse finds are
the ones :mod:`siselect.runtime.callpolicy` checks against the catalog.
"""

import json
import os
import re
import sys
from dataclasses import dataclass, replace
from typing import Any

from siselect.runtime.bounded import keep
from siselect.runtime.errors import NotASelect


def _load_parser() -> Any:
    """pglast's parser, bound to its own copy of PostgreSQL's code.

    Inside a server process, the library's symbols (palloc, memory contexts, the parser's
    globals) would otherwise resolve to the server's own functions of the same names, and
    the backend crashes with a segmentation fault on the next parse (seen with PL/Python).
    """
    if "pglast.parser" in sys.modules or not hasattr(os, "RTLD_DEEPBIND"):
        from pglast import parser as loaded

        return loaded
    flags = sys.getdlopenflags()
    sys.setdlopenflags(os.RTLD_NOW | os.RTLD_DEEPBIND)
    try:
        from pglast import parser as loaded
    finally:
        sys.setdlopenflags(flags)
    return loaded


parser = _load_parser()

Name = tuple[str | None, str]  # (schema or None when unqualified, name)


@dataclass(frozen=True)
class Statement:
    """One SELECT as PostgreSQL reads it, with what it may call."""

    sql: str
    functions: frozenset[Name]  # every function call, aggregate and window function
    fields: frozenset[str]  # last names of column references: ``t.f`` may call ``f(t)``
    operators: frozenset[Name]
    types: frozenset[Name]  # cast targets: casting to a domain runs its CHECK expressions
    # The parse tree with string constants' values and every position blanked: two texts of
    # one shape differ in string constants only (the row ids of a D', say), on which no
    # query's columns depend (names and number come from the tree and the catalog).
    shape: str = ""
    params: int = 0  # the highest parameter number ($1, $2, ...) in the text: 0 for none


#: In pglast's JSON: a string constant's value, and the positions that move with its length.
_STRING_CONSTANT = re.compile(r'"A_Const":\{"sval":\{"sval":"[^"\\]*(?:\\.[^"\\]*)*"\}')
_POSITION = re.compile(r'"(?:location|stmt_location|stmt_len)":-?\d+')


def _shape(parsed: str) -> str:
    """A key, never parsed again: positions are dropped (pglast leaves out a position 0)."""
    blanked = _STRING_CONSTANT.sub('"A_Const":{"sval":{"sval":""}', parsed)
    return _POSITION.sub("", blanked)


#: Statements read, by shape: a tournament reads each query on thousands of row sets, texts
#: of one shape, and walking the tree cost more than running the query on a D'.
_READ: dict[str, Statement] = {}
_READ_KEPT = 512
#: Statements read, by text: a text whose row ids are parameters is one text for all the
#: row sets of its shape, and PostgreSQL's parse of it gives the same tree each time.
_TEXTS: dict[str, Statement] = {}


def read_select(sql: str) -> Statement:
    """Parse ``sql`` as PostgreSQL does; refuse anything but one read-only SELECT.

    Everything this decides and finds is read off the tree at places its shape keeps (node
    kinds and names; never a string constant's value or a position), so a text of a shape
    read before is that statement again: only PostgreSQL's parse is done anew."""
    known = _TEXTS.get(sql)
    if known is not None:
        return known
    return keep(_TEXTS, sql, _read(sql), _READ_KEPT)


def _read(sql: str) -> Statement:
    try:
        parsed = parser.parse_sql_json(sql)
    except parser.ParseError as exc:
        raise NotASelect(f"PostgreSQL's parser: {exc}", "42601") from None
    shape = _shape(parsed)
    known = _READ.get(shape)
    if known is not None:
        return replace(known, sql=sql)
    tree = json.loads(parsed)
    statements = tree.get("stmts", [])
    if len(statements) != 1:
        raise NotASelect(
            f"expected one statement, PostgreSQL reads {len(statements)}", "42601"
        )
    stmt = statements[0].get("stmt", {})
    if "SelectStmt" not in stmt:
        kind = next(iter(stmt), "an empty statement")
        raise NotASelect(f"only SELECT queries are accepted, not {kind}", "25006")
    found = _Found()
    found.visit(stmt)
    statement = Statement(
        sql,
        frozenset(found.functions),
        frozenset(found.fields),
        frozenset(found.operators),
        frozenset(found.types),
        shape,
        found.params,
    )
    return keep(_READ, shape, statement, _READ_KEPT)


def _name(parts: list[dict[str, Any]]) -> Name | None:
    names = [p["String"]["sval"] for p in parts if "String" in p]
    if not names:
        return None
    return (names[-2] if len(names) > 1 else None, names[-1])


class _Found:
    """Walks the parse tree (pglast's JSON form) and collects what the check needs."""

    def __init__(self) -> None:
        self.functions: set[Name] = set()
        self.fields: set[str] = set()
        self.operators: set[Name] = set()
        self.types: set[Name] = set()
        self.params = 0

    def visit(self, node: Any) -> None:
        # An explicit stack: a deeply nested text must not exhaust Python's recursion.
        stack = [node]
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, dict):
                for key, value in item.items():
                    self._note(key, value)
                    if isinstance(value, dict | list):
                        stack.append(value)

    def _note(self, key: str, value: Any) -> None:
        if not isinstance(value, dict):
            return
        if key == "SelectStmt":
            if value.get("intoClause"):
                raise NotASelect("SELECT INTO writes a table; only queries are accepted", "25006")
            if value.get("lockingClause"):
                raise NotASelect("row locks (FOR UPDATE/SHARE) are not accepted", "25006")
        elif key == "CommonTableExpr":
            inner = value.get("ctequery", {})
            if "SelectStmt" not in inner:
                kind = next(iter(inner), "?")
                raise NotASelect(f"a WITH clause may hold queries only, not {kind}", "25006")
        elif key == "ParamRef":
            self.params = max(self.params, int(value.get("number", 0)))
        elif key == "FuncCall":
            name = _name(value.get("funcname", []))
            if name:
                self.functions.add(name)
        elif key == "ColumnRef":
            fields = value.get("fields", [])
            if fields and "String" in fields[-1]:
                self.fields.add(fields[-1]["String"]["sval"])
        elif key == "A_Expr":
            name = _name(value.get("name", []))
            if name:
                self.operators.add(name)
        elif key == "TypeName":
            name = _name(value.get("names", []))
            if name:
                self.types.add(name)
