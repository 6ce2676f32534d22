"""Rename every table and column of a SQLite database, and the queries over it to match.

A variant is a copy of the database whose names follow one naming style (CamelCase, UPPER,
spaces and punctuation, reserved words, or names that collide modulo case with the aliases
the queries use), with the same rows stored under the same SQLite types. Queries are
renamed on their sqlglot tree: every identifier in the column namespace (column
references, output aliases, CTE column lists) through one map, every identifier in the
table namespace (tables, CTE names, qualifiers) through another. Each map is one-to-one
modulo case, so SQLite resolves the renamed query exactly as the original one, except
where a style makes a new name collide with a name the query already uses (the point of
the ``collide`` style): :func:`renaming_changed` tells those apart by SQLite's answers.
"""

import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot import exp

from siselect.client.loader import free_rowid_name
from siselect.runtime.errors import InvalidInput

RESERVED = (
    "select", "from", "where", "group", "order", "by", "having", "limit", "table", "column",
    "user", "join", "on", "using", "natural", "union", "all", "distinct", "case", "when", "then",
    "else", "end", "and", "or", "not", "null", "is", "in", "as", "primary", "key", "default",
    "check", "constraint", "references", "foreign", "create", "index", "values", "insert",
    "update", "delete", "into", "set", "between", "like", "cast", "collate", "desc", "asc",
    "offset", "exists", "window", "over", "partition", "analyse", "analyze", "array", "both",
    "leading", "trailing", "only", "some", "any", "symmetric", "unique", "variadic", "current_date",
)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _camel(name: str) -> str:
    parts = [p for p in name.replace(" ", "_").replace("-", "_").split("_") if p]
    return "".join(p[:1].upper() + p[1:] for p in parts) or name


def _spaced(name: str, index: int) -> str:
    return f"{name.replace('_', ' ')} ({index}%-/.'s)"


def _reserved(index: int) -> str:
    word = RESERVED[index % len(RESERVED)]
    return word if index < len(RESERVED) else f"{word} {index // len(RESERVED)}"


# PostgreSQL truncates longer names (NAMEDATALEN - 1 bytes): keep clear of it.
_MAX_BYTES = 60


def _unique(names: list[str], proposed: Callable[[str, int], str]) -> dict[str, str]:
    """lower name -> new name, new names distinct modulo case (SQLite's rule)."""
    mapping: dict[str, str] = {}
    taken: set[str] = set()
    for index, name in enumerate(sorted({n.lower() for n in names})):
        new = proposed(name, index)
        while len(new.encode()) > _MAX_BYTES - 4:
            new = new[1:]
        while new.lower() in taken:
            new += "_"
        taken.add(new.lower())
        mapping[name] = new
    return mapping


def _colliding(used: list[str]) -> Callable[[str, int], str]:
    """Names equal modulo case to aliases the queries use (swapped case), then the original."""
    pool = [u.swapcase() for u in sorted(set(used), key=str.lower)]

    def propose(name: str, index: int) -> str:
        return pool[index] if index < len(pool) else name.upper()

    return propose


STYLES = ("camel", "upper", "spaces", "reserved", "collide")


@dataclass
class Renaming:
    style: str
    tables: dict[str, str]  # lower original -> new
    columns: dict[str, str]

    def query(self, sql: str) -> str:
        """``sql`` (SQLite) with every table and column renamed."""
        tree = sqlglot.parse_one(sql, read="sqlite")
        for node in list(tree.walk()):
            if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
                self._rename(node.this, self.tables)
            elif isinstance(node, exp.TableAlias):
                if isinstance(node.this, exp.Identifier):
                    self._rename(node.this, self.tables)
                for ident in node.columns:
                    self._rename(ident, self.columns)
            elif isinstance(node, exp.Column):
                if isinstance(node.this, exp.Identifier):
                    self._rename(node.this, self.columns)
                if isinstance(node.args.get("table"), exp.Identifier):
                    self._rename(node.args["table"], self.tables)
            elif isinstance(node, exp.Alias) and isinstance(node.args.get("alias"), exp.Identifier):
                self._rename(node.args["alias"], self.columns)
            elif isinstance(node, exp.Join):
                for ident in node.args.get("using") or []:
                    self._rename(ident, self.columns)
        return tree.sql(dialect="sqlite")

    @staticmethod
    def _rename(ident: exp.Identifier, mapping: dict[str, str]) -> None:
        new = mapping.get(ident.name.lower())
        if new is not None:
            ident.set("this", new)
            ident.set("quoted", True)


def aliases_used(queries: Iterable[str]) -> list[str]:
    """Table and output aliases the queries define (as spelled), for the ``collide`` style."""
    found: set[str] = set()
    for sql in queries:
        try:
            tree = sqlglot.parse_one(sql, read="sqlite")
        except sqlglot.errors.ParseError:
            continue
        for node in tree.find_all(exp.TableAlias, exp.Alias):
            ident = node.args.get("this") if isinstance(node, exp.TableAlias) else node.args.get(
                "alias")
            if isinstance(ident, exp.Identifier) and ident.name:
                found.add(ident.name)
    return sorted(found)


def renaming(db: sqlite3.Connection, style: str, used: list[str]) -> Renaming:
    tables = _table_names(db)
    columns = [c for t in tables for c in _columns(db, t)]
    propose: Callable[[str, int], str]
    if style == "camel":
        propose = lambda name, _: _camel(name)  # noqa: E731 - one line per style
    elif style == "upper":
        propose = lambda name, _: name.upper()  # noqa: E731
    elif style == "spaces":
        propose = _spaced
    elif style == "reserved":
        propose = lambda _, index: _reserved(index)  # noqa: E731
    elif style == "collide":
        propose = _colliding(used)
    else:
        raise InvalidInput(f"unknown naming style {style!r}; expected one of {', '.join(STYLES)}")
    return Renaming(style, _unique(tables, propose), _unique(columns, propose))


def write_variant(source: Path, target: Path, names: Renaming) -> None:
    """Copy ``source`` to ``target`` under the new names: same declared types, keys and rows
    (each value under its original storage class, rows in rowid order, under their rowids:
    queries may read them)."""
    target.unlink(missing_ok=True)
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    out = sqlite3.connect(target)
    try:
        out.execute("ATTACH DATABASE ? AS old", (f"file:{source}?mode=ro",))
        for table in _table_names(src):
            out.execute(_create(src, table, names))
            new = _quote(names.tables[table.lower()])
            rowid = _rowid_name(src, table, names)
            if rowid is None:
                out.execute(f"INSERT INTO main.{new} SELECT * FROM old.{_quote(table)}")
            else:
                columns = ", ".join(_quote(names.columns[c.lower()]) for c in _columns(src, table))
                out.execute(f"INSERT INTO main.{new} ({rowid}, {columns}) "
                            f"SELECT {rowid}, * FROM old.{_quote(table)}")
        out.commit()
    finally:
        src.close()
        out.close()


def _rowid_name(db: sqlite3.Connection, table: str, names: Renaming) -> str | None:
    """A name of SQLite's rowid that no column takes, before or after renaming; None when
    there is none or the table has no rowid (WITHOUT ROWID)."""
    taken = {c.lower() for c in _columns(db, table)} | {
        names.columns[c.lower()].lower() for c in _columns(db, table)}
    return free_rowid_name(db, table, taken)


def _table_names(db: sqlite3.Connection) -> list[str]:
    return [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                     "AND name NOT LIKE 'sqlite_%' ORDER BY name")]


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in db.execute(f"PRAGMA table_info({_quote(table)})")]


def _create(db: sqlite3.Connection, table: str, names: Renaming) -> str:
    info = db.execute(f"PRAGMA table_info({_quote(table)})").fetchall()
    key = [r[1] for r in sorted(info, key=lambda r: r[5]) if r[5]]
    column = names.columns

    def col(name: str) -> str:
        return _quote(column[name.lower()])

    # A lone INTEGER PRIMARY KEY must stay inline: it is the rowid, which queries may read.
    rowid_key = len(key) == 1 and next(r[2] for r in info if r[1] == key[0]).upper() == "INTEGER"
    parts = [f"{col(r[1])} {r[2]}" + (" PRIMARY KEY" if rowid_key and r[1] == key[0] else "")
             for r in info]
    if key and not rowid_key:
        parts.append(f"PRIMARY KEY ({', '.join(col(k) for k in key)})")
    fks: dict[int, list[tuple]] = {}
    for r in db.execute(f"PRAGMA foreign_key_list({_quote(table)})"):
        fks.setdefault(r[0], []).append(r)
    for rows in fks.values():
        ref = rows[0][2]
        if ref.lower() not in names.tables or any(r[4] is None for r in rows):
            continue
        parts.append(f"FOREIGN KEY ({', '.join(col(r[3]) for r in rows)}) REFERENCES "
                     f"{_quote(names.tables[ref.lower()])} "
                     f"({', '.join(col(r[4]) for r in rows)})")
    return f"CREATE TABLE {_quote(names.tables[table.lower()])} ({', '.join(parts)})"
