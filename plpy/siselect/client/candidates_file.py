"""Candidates read from a file or standard input (``--candidates-file``), for texts the
shell cannot pass as arguments (one argument stops at 128 KiB) or that span lines.

Two forms: a JSON array of strings, or SQL statements separated by semicolons as psql
reads them: a semicolon inside a string, a quoted identifier, a dollar quote or a
comment does not end a statement, and empty statements are skipped. The size limits on
one candidate are the checks' own (``MAX_SQL_CHARS``); the file is bounded so that no
more can be read than that many candidates could hold.
"""

import json
import re
import sys
from pathlib import Path

from siselect.runtime.errors import InvalidInput
from siselect.selection.tournament import MAX_CANDIDATES
from siselect.sqltext.check import MAX_SQL_CHARS

# Every candidate at its largest, in UTF-8 at worst, plus separators and JSON escapes.
MAX_FILE_BYTES = MAX_CANDIDATES * MAX_SQL_CHARS * 6 + 65_536

_DOLLAR_TAG = re.compile(r"\$(?:[A-Za-z_\x80-\uffff][\w\x80-\uffff]*)?\$")
_CLOSING = {"'": "'", '"': '"', "`": "`", "[": "]"}


def _quotes(dialect: str) -> str:
    """What opens a quoted text: psql knows ' and "; other dialects quote names in
    backticks, and SQLite in [brackets] too."""
    if dialect == "postgres":
        return "'\""
    return "'\"`[" if dialect == "sqlite" else "'\"`"


def read_text(name: str) -> str:
    """The file's text (``-``: standard input), refused past :data:`MAX_FILE_BYTES`."""
    try:
        if name == "-":
            data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        else:
            with Path(name).open("rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise InvalidInput(f"cannot read the candidates file {name}: {exc.strerror}",
                           "58030") from None
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInput(
            f"the candidates file {name} is larger than {MAX_FILE_BYTES} bytes "
            f"({MAX_CANDIDATES} candidates of {MAX_SQL_CHARS} characters at most)", "54000")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"the candidates file {name} is not UTF-8 (byte {exc.start})",
                           "22021") from None


def parse_candidates(text: str, dialect: str = "postgres") -> list[str]:
    """The candidates of a file's text: a JSON array of strings, else psql-style statements."""
    if text.lstrip().startswith("["):
        try:
            value = json.loads(text)
        except ValueError:
            value = None  # not JSON after all: `[` opens a SQLite identifier too
        if value is not None:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise InvalidInput("a JSON candidates file must hold an array of strings")
            return value
    return split_statements(text, dialect)


def split_statements(text: str, dialect: str = "postgres") -> list[str]:
    """``text`` cut at the semicolons that end statements, each statement stripped;
    statements holding nothing but blanks and comments are skipped, as psql does."""
    statements: list[str] = []
    start = i = 0
    substantial = False  # has the current statement more than blanks and comments?
    quotes = _quotes(dialect)
    nested = dialect == "postgres"  # PostgreSQL's block comments nest, SQLite's do not
    while i < len(text):
        ch = text[i]
        if text.startswith("--", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end + 1
            continue
        if text.startswith("/*", i):
            i = _block_comment_end(text, i, nested)
            continue
        if ch == ";":
            if substantial:
                statements.append(text[start:i].strip())
            start, substantial = i + 1, False
            i += 1
            continue
        if not ch.isspace():
            substantial = True
        if ch == "$" and dialect == "postgres" and not _inside_word(text, i):
            tag = _DOLLAR_TAG.match(text, i)
            if tag:
                end = text.find(tag.group(), tag.end())
                i = len(text) if end < 0 else end + len(tag.group())
                continue
        if ch in quotes:
            backslashes = ch == "'" and dialect == "postgres" and _escape_string(text, i)
            i = _quote_end(text, i + 1, _CLOSING[ch], backslashes)
            continue
        i += 1
    if substantial:
        statements.append(text[start:].strip())
    return statements


def _inside_word(text: str, i: int) -> bool:
    """``$`` after a letter, digit or ``_`` continues an identifier (``a$b``) or is a
    parameter's tail, never a dollar quote's start."""
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_$")


def _escape_string(text: str, i: int) -> bool:
    """An ``E'...'`` string: backslash escapes a quote in it."""
    return i > 0 and text[i - 1] in "eE" and not (i > 1 and (text[i - 2].isalnum()
                                                            or text[i - 2] == "_"))


def _quote_end(text: str, i: int, close: str, backslashes: bool) -> int:
    """The index after the quote that closes one opened before ``i`` (a doubled quote
    stands for itself); the end of the text when none does."""
    while i < len(text):
        ch = text[i]
        if backslashes and ch == "\\":
            i += 2
            continue
        if ch == close:
            if close != "]" and text.startswith(close * 2, i):
                i += 2
                continue
            return i + 1
        i += 1
    return len(text)


def _block_comment_end(text: str, i: int, nested: bool) -> int:
    """After a ``/* ... */`` comment starting at ``i``."""
    depth, i = 1, i + 2
    while i < len(text) and depth:
        if nested and text.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif text.startswith("*/", i):
            depth, i = depth - 1, i + 2
        else:
            i += 1
    return i
