"""Load a SQLite database into a PostgreSQL schema, faithfully and atomically.

The whole load is one transaction: a failure leaves the previous state untouched. A
loaded schema carries a comment naming its source's SHA-256, so reloading an unchanged
file does nothing and a schema we did not create is never overwritten.

A table without an INTEGER PRIMARY KEY gets one more column, holding SQLite's implicit
rowid under the first of its names (``rowid``, ``_rowid_``, ``oid``) the table leaves
free; the mark names it, the catalog knows it as the table's rowid, and the transpiler
reads ``rowid`` from it and leaves it out of ``*`` (docs/identifiers.md, "rowid").
"""

import csv
import hashlib
import io
import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from siselect.client.load_mark import MARK
from siselect.client.runner_role import grant_loaded
from siselect.runtime.errors import InvalidInput, SiselectError
from siselect.runtime.executor import quote_ident, quote_literal
from siselect.runtime.values import canonical
from siselect.sqltext.sqlite_types import affinity, pg_type

Say = Callable[[str], None]

#: What a load holds, recorded in the mark: a schema loaded under an earlier layout is
#: loaded again even from an unchanged file (2: tables keep SQLite's implicit rowid).
LAYOUT = 2


@dataclass
class SqliteColumn:
    name: str
    declared: str
    pg_type: str = "text"


@dataclass
class SqliteTable:
    name: str
    columns: list[SqliteColumn] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    foreign_keys: list[tuple[list[str], str, list[str]]] = field(default_factory=list)
    # The loaded column that keeps SQLite's implicit rowid (see implicit_rowid), or None
    rowid: str | None = None

    def loaded_columns(self) -> list[tuple[str, str]]:
        """``(name, PostgreSQL type)`` of the loaded table's columns, the rowid's last."""
        own = [(c.name, c.pg_type) for c in self.columns]
        return own + ([(self.rowid, "bigint")] if self.rowid else [])


#: SQLite's names for a table's implicit rowid, in the order the loader picks from.
ROWID_NAMES = ("rowid", "_rowid_", "oid")


def implicit_rowid(db: sqlite3.Connection, table: SqliteTable) -> str | None:
    """The name under which the loaded table keeps SQLite's implicit rowid, which numbers
    a table's rows (storage order, gaps where rows were deleted) and which queries may read
    (``l.rowid = e.rowid``): the first of :data:`ROWID_NAMES` no column of the table takes.
    None where there is nothing to keep: an INTEGER PRIMARY KEY is the rowid itself, a
    WITHOUT ROWID table has none, and one with columns of all three names hides it."""
    if len(table.primary_key) == 1 and next(
            c.declared for c in table.columns if c.name == table.primary_key[0]
    ).strip().upper() == "INTEGER":
        return None
    return free_rowid_name(db, table.name, {c.name.lower() for c in table.columns})


def free_rowid_name(db: sqlite3.Connection, table: str, taken: set[str]) -> str | None:
    """The first of :data:`ROWID_NAMES` not in ``taken`` (lower case), under which SQLite
    reads ``table``'s rowid; None when all are taken or the table has none (WITHOUT
    ROWID)."""
    name = next((n for n in ROWID_NAMES if n not in taken), None)
    if name is None:
        return None
    try:
        db.execute(f"SELECT {name} FROM {quote_ident(table)} LIMIT 0")
    except sqlite3.OperationalError:
        return None  # WITHOUT ROWID
    return name


@dataclass
class LoadReport:
    name: str
    status: str  # "loaded", "unchanged"
    tables: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # outside objects --cascade dropped
    seconds: float = 0.0


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def open_sqlite(path: Path) -> sqlite3.Connection:
    """Open read-only after checking it is a sound SQLite file; clear errors otherwise."""
    if not path.exists():
        raise InvalidInput(f"{path}: no such file", "58P01")
    if not path.is_file():
        raise InvalidInput(f"{path}: not a file", "22023")
    if path.stat().st_size == 0:
        raise InvalidInput(f"{path}: the file is empty", "22023")
    with path.open("rb") as f:
        if f.read(16) != b"SQLite format 3\x00":
            raise InvalidInput(f"{path}: not a SQLite database", "22023")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
        check = db.execute("PRAGMA quick_check").fetchone()
    except sqlite3.DatabaseError as exc:
        raise InvalidInput(f"{path}: corrupt SQLite database ({exc})", "XX001") from None
    if check is None or check[0] != "ok":
        raise InvalidInput(f"{path}: corrupt SQLite database ({check and check[0]})", "XX001")
    db.text_factory = lambda b: b.decode("utf-8", errors="replace")
    return db


def read_schema(db: sqlite3.Connection) -> list[SqliteTable]:
    names = [
        r[0]
        for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        )
    ]
    if not names:
        raise InvalidInput("the SQLite database has no tables", "22023")
    tables = []
    for name in names:
        table = SqliteTable(name)
        info = db.execute(f"PRAGMA table_info({quote_ident(name)})").fetchall()
        pk = sorted((r[5], r[1]) for r in info if r[5])
        table.primary_key = [c for _, c in pk]
        for r in info:
            stored = {
                t
                for (t,) in db.execute(
                    f"SELECT DISTINCT typeof({quote_ident(r[1])}) FROM {quote_ident(name)}"
                )
            }
            table.columns.append(SqliteColumn(r[1], r[2] or "", pg_type(r[2] or "", stored)))
        fks: dict[int, tuple[list[str], str, list[str]]] = {}
        for r in db.execute(f"PRAGMA foreign_key_list({quote_ident(name)})"):
            entry = fks.setdefault(r[0], ([], r[2], []))
            entry[0].append(r[3])
            entry[2].append(r[4])
        table.foreign_keys = list(fks.values())
        table.rowid = implicit_rowid(db, table)
        tables.append(table)
    return tables


def sqlite_rows(db: sqlite3.Connection, table: SqliteTable) -> Iterator[tuple]:
    """The rows of ``table``, its loaded columns (the implicit rowid's too) in order."""
    # The rowid's name is one no column takes: SQLite reads it as the rowid.
    cols = ", ".join(quote_ident(name) for name, _ in table.loaded_columns())
    yield from db.execute(f"SELECT {cols} FROM {quote_ident(table.name)}")


def _coerce(value, pg: str):
    """A SQLite value as the loaded column stores it (text columns take text of numbers)."""
    if value is None:
        return None
    if pg == "text" and not isinstance(value, str):
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    if pg == "double precision" and isinstance(value, int):
        return float(value)
    return value


def row_checksum(rows: Iterator[tuple]) -> tuple[int, str]:
    """Row count and an order-independent digest of canonical row values."""
    total = 0
    count = 0
    for row in rows:
        text = json.dumps([canonical(v) for v in row], default=str, ensure_ascii=False)
        total = (total + int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")) % 2**64
        count += 1
    return count, f"{total:016x}"


def read_descriptions(sqlite_path: Path) -> dict[str, dict[str, str]]:
    """BIRD's ``database_description/<table>.csv`` as ``{table: {column: comment}}``."""
    folder = sqlite_path.parent / "database_description"
    result: dict[str, dict[str, str]] = {}
    if not folder.is_dir():
        return result
    for csv_path in sorted(folder.glob("*.csv")):
        raw = csv_path.read_bytes()
        for encoding in ("utf-8-sig", "cp1252", "latin-1"):
            try:
                text = raw.decode(encoding)
                break
            except UnicodeDecodeError:
                continue
        columns: dict[str, str] = {}
        for rec in csv.DictReader(io.StringIO(text)):
            rec = {(k or "").strip().lower(): (v or "").strip() for k, v in rec.items()}
            name = rec.get("original_column_name", "")
            if not name:
                continue
            parts = [rec.get("column_description", ""), rec.get("value_description", "")]
            if rec.get("column_name") and rec["column_name"].lower() != name.lower():
                parts.insert(0, f"({rec['column_name']})")
            comment = " ".join(p for p in parts if p and p.lower() != "nan")
            if comment:
                columns[name.lower()] = comment
        result[csv_path.stem.strip().lower()] = columns
    return result


def _schema_mark(conn: psycopg.Connection, name: str) -> dict | None | bool:
    """The load mark on schema ``name``: dict when ours, False when foreign, None when absent."""
    row = conn.execute(
        "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = %s",
        (name,),
    ).fetchone()
    if row is None:
        return None
    try:
        mark = json.loads(row[0] or "")
    except ValueError:
        return False
    return mark if isinstance(mark, dict) and mark.get("mark") == MARK else False


_EXTERNAL_DEPENDENTS_SQL = """
WITH target AS (
  SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = %(schema)s
), inside(classid, objid) AS (
  SELECT 'pg_catalog.pg_namespace'::pg_catalog.regclass, oid FROM target
  UNION ALL SELECT 'pg_catalog.pg_class'::pg_catalog.regclass, c.oid
    FROM pg_catalog.pg_class c JOIN target ON c.relnamespace = target.oid
  UNION ALL SELECT 'pg_catalog.pg_type'::pg_catalog.regclass, t.oid
    FROM pg_catalog.pg_type t JOIN target ON t.typnamespace = target.oid
  UNION ALL SELECT 'pg_catalog.pg_proc'::pg_catalog.regclass, p.oid
    FROM pg_catalog.pg_proc p JOIN target ON p.pronamespace = target.oid
  UNION ALL SELECT 'pg_catalog.pg_constraint'::pg_catalog.regclass, k.oid
    FROM pg_catalog.pg_constraint k JOIN target ON k.connamespace = target.oid
), dependent AS (
  -- An internal dependency is a part of the object it depends on (a toast table);
  -- a view's rule, a trigger, a policy or a default stands for its relation.
  SELECT CASE WHEN d.classid IN ('pg_catalog.pg_rewrite'::pg_catalog.regclass,
                                 'pg_catalog.pg_trigger'::pg_catalog.regclass,
                                 'pg_catalog.pg_policy'::pg_catalog.regclass,
                                 'pg_catalog.pg_attrdef'::pg_catalog.regclass)
              THEN 'pg_catalog.pg_class'::pg_catalog.regclass ELSE d.classid END AS classid,
         CASE d.classid
           WHEN 'pg_catalog.pg_rewrite'::pg_catalog.regclass
             THEN (SELECT ev_class FROM pg_catalog.pg_rewrite WHERE oid = d.objid)
           WHEN 'pg_catalog.pg_trigger'::pg_catalog.regclass
             THEN (SELECT tgrelid FROM pg_catalog.pg_trigger WHERE oid = d.objid)
           WHEN 'pg_catalog.pg_policy'::pg_catalog.regclass
             THEN (SELECT polrelid FROM pg_catalog.pg_policy WHERE oid = d.objid)
           WHEN 'pg_catalog.pg_attrdef'::pg_catalog.regclass
             THEN (SELECT adrelid FROM pg_catalog.pg_attrdef WHERE oid = d.objid)
           ELSE d.objid END AS objid
  FROM pg_catalog.pg_depend d
  JOIN inside i ON d.refclassid = i.classid AND d.refobjid = i.objid
  WHERE d.deptype <> 'i'
)
SELECT DISTINCT pg_catalog.pg_describe_object(d.classid, d.objid, 0) AS what
FROM dependent d
WHERE NOT EXISTS (SELECT 1 FROM inside i WHERE i.classid = d.classid AND i.objid = d.objid)
ORDER BY what
"""

_GRANTS_SQL = """
WITH target AS (
  SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = %(schema)s
), acl AS (
  SELECT c.relname, NULL::name AS attname, c.relowner, a.grantee, a.privilege_type,
         a.is_grantable
  FROM pg_catalog.pg_class c JOIN target ON c.relnamespace = target.oid,
       pg_catalog.aclexplode(c.relacl) a
  WHERE c.relkind IN ('r', 'p')
  UNION ALL
  SELECT c.relname, t.attname, c.relowner, a.grantee, a.privilege_type, a.is_grantable
  FROM pg_catalog.pg_class c JOIN target ON c.relnamespace = target.oid
  JOIN pg_catalog.pg_attribute t ON t.attrelid = c.oid AND t.attnum > 0
       AND NOT t.attisdropped,
       pg_catalog.aclexplode(t.attacl) a
  WHERE c.relkind IN ('r', 'p')
)
SELECT relname, attname, privilege_type,
       CASE WHEN grantee = 0 THEN 'PUBLIC'
            ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(grantee)) END,
       is_grantable
FROM acl WHERE grantee <> relowner
ORDER BY 1, 2 NULLS FIRST, 4, 3
"""


@dataclass
class Grant:
    """A privilege some role holds on a loaded table (or one of its columns)."""

    table: str
    column: str | None
    privilege: str
    grantee: str  # already quoted, or PUBLIC
    grantable: bool

    def sql(self, schema: str) -> str:
        columns = f" ({quote_ident(self.column)})" if self.column is not None else ""
        option = " WITH GRANT OPTION" if self.grantable else ""
        return (
            f"GRANT {self.privilege}{columns} ON TABLE {quote_ident(schema)}."
            f"{quote_ident(self.table)} TO {self.grantee}{option}"
        )

    def describe(self) -> str:
        target = self.table if self.column is None else f"{self.table}.{self.column}"
        return f"{self.privilege} on {target} to {self.grantee}"


def external_dependents(conn: psycopg.Connection, name: str) -> list[str]:
    """Objects outside schema ``name`` that dropping its contents would drop too."""
    rows = conn.execute(_EXTERNAL_DEPENDENTS_SQL, {"schema": name}).fetchall()
    return [r[0] for r in rows]


def table_grants(conn: psycopg.Connection, name: str) -> list[Grant]:
    """Privileges on the schema's tables held by roles other than their owner."""
    return [Grant(*r) for r in conn.execute(_GRANTS_SQL, {"schema": name}).fetchall()]


def recreate_schema(
    conn: psycopg.Connection, name: str, existed: bool, cascade: bool = False
) -> list[str]:
    """In the caller's transaction: schema ``name``, emptied of its tables (ours only).

    The schema itself is kept (its owner, privileges and the objects in it that are not
    tables stay). Objects outside it that depend on its tables are dropped only with
    ``cascade``; otherwise they make this fail (2BP01) and are listed. Returns the
    outside objects dropped.
    """
    if not existed:
        conn.execute(f"CREATE SCHEMA {quote_ident(name)}")
        return []
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT pg_catalog.quote_ident(n.nspname) || '.' || pg_catalog.quote_ident(c.relname) "
            "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind IN ('r', 'p') "
            "ORDER BY c.relname",
            (name,),
        ).fetchall()
    ]
    if not tables:
        return []
    # Locked first, so no view can start to depend on them between the check and the drop.
    conn.execute(f"LOCK TABLE {', '.join(tables)} IN ACCESS EXCLUSIVE MODE")
    outside = external_dependents(conn, name)
    if outside and not cascade:
        raise SiselectError(
            f"cannot replace schema {name!r}: {len(outside)} object(s) outside it depend on "
            f"it: {'; '.join(outside)}. Drop them first, or reload with --cascade to drop "
            "them too",
            "2BP01",
            detail="\n".join(outside),
        )
    # One statement for all tables, so keys between them are no obstacle to RESTRICT.
    try:
        conn.execute(f"DROP TABLE {', '.join(tables)} {'CASCADE' if cascade else 'RESTRICT'}")
    except psycopg.errors.DependentObjectsStillExist as exc:
        detail = exc.diag.message_detail or ""
        raise SiselectError(
            f"cannot replace schema {name!r}: other objects depend on its tables: "
            f"{' '.join(detail.split())}",
            "2BP01",
            detail=detail,
        ) from None
    return outside


def validate_name(name: str) -> str:
    if not name or len(name) > 63 or name.startswith("pg_") or "\x00" in name:
        raise InvalidInput(f"invalid database name {name!r}", "42602")
    if name.lower() in {"public", "siselect", "information_schema"}:
        raise InvalidInput(f"the name {name!r} is reserved", "42939")
    return name


def load(
    conn: psycopg.Connection,
    path: Path,
    name: str | None = None,
    say: Say = lambda _: None,
    force: bool = False,
    cascade: bool = False,
) -> LoadReport:
    """Load ``path`` into schema ``name`` (default: the file's stem).

    ``force`` reloads an unchanged file. Replacing a schema loaded from another file, or
    one that objects outside it depend on (views, keys, functions of other users), needs
    ``cascade``, which drops those objects too and lists them in the report.
    """
    import time

    started = time.perf_counter()
    path = Path(path)
    name = validate_name(name or path.stem)
    db = open_sqlite(path)
    digest = file_digest(path)
    source = str(path.resolve())
    with conn.transaction(), _notices_to(conn, say):
        # Loads of one name take turns: the second reads the first's mark once it is
        # committed (an unchanged file is then left as it is), instead of both creating
        # the schema.
        conn.execute("SELECT pg_catalog.pg_advisory_xact_lock("
                     "pg_catalog.hashtextextended(%s, 0))", (f"siselect load {name}",))
        mark = _schema_mark(conn, name)
        if mark is False:
            raise SiselectError(
                f"the name {name!r} is taken by a schema siselect did not create", "42P06"
            )
        if isinstance(mark, dict) and mark.get("sha256") == digest and \
                mark.get("layout") == LAYOUT and not force:
            report = LoadReport(name, "unchanged", mark.get("tables", {}))
            report.seconds = time.perf_counter() - started
            return report
        if isinstance(mark, dict) and mark.get("source") != source and not cascade:
            raise SiselectError(
                f"schema {name!r} holds a database loaded from {mark.get('source')!r}; "
                f"replacing it with {source!r} needs --cascade",
                "42P06",
            )
        tables = read_schema(db)
        descriptions = read_descriptions(path)
        report = LoadReport(name, "loaded")
        grants = table_grants(conn, name) if mark is not None else []
        report.dropped = recreate_schema(conn, name, mark is not None, cascade)
        for table in tables:
            _create_and_copy(conn, db, name, table, say)
        for table in tables:
            _add_primary_key(conn, name, table, report)
        for table in tables:
            _add_foreign_keys(conn, name, table, report)
        _comment_columns(conn, name, tables, descriptions)
        _restore_grants(conn, name, grants, report)
        for table in tables:
            report.tables[table.name] = _verify(conn, db, name, table)
            say(f"{table.name}: {report.tables[table.name]} rows, checksum matches")
        conn.execute(f"ANALYZE")  # noqa: F541 - statistics for the planner
        mark_text = json.dumps(
            {"mark": MARK, "layout": LAYOUT, "source": source, "sha256": digest,
             "tables": report.tables,
             "affinity": _text_affinities(tables),
             "rowid": {t.name: t.rowid for t in tables if t.rowid}}
        )
        conn.execute(
            f"COMMENT ON SCHEMA {quote_ident(name)} IS {quote_literal(mark_text)}"
        )
        grant_loaded(conn, name)  # the embedded cluster's runner role reads what is loaded
    report.seconds = time.perf_counter() - started
    return report


@contextmanager
def _notices_to(conn: psycopg.Connection, say: Say) -> Iterator[None]:
    """Pass the server's notices (what a drop cascaded to, say) on to ``say``."""

    def handler(diag: psycopg.errors.Diagnostic) -> None:
        say(" ".join(filter(None, [diag.message_primary, diag.message_detail])))

    conn.add_notice_handler(handler)
    try:
        yield
    finally:
        conn.remove_notice_handler(handler)


def _restore_grants(conn, schema: str, grants: list[Grant], report: LoadReport) -> None:
    """Grant again what roles held on the replaced tables, where the new tables allow it."""
    for grant in grants:
        _try(conn, grant.sql(schema), report, f"privilege not kept: {grant.describe()}")


def _create_and_copy(conn, db, schema: str, table: SqliteTable, say: Say) -> None:
    qualified = f"{quote_ident(schema)}.{quote_ident(table.name)}"
    loaded = table.loaded_columns()
    cols = ", ".join(f"{quote_ident(name)} {pg}" for name, pg in loaded)
    conn.execute(f"CREATE TABLE {qualified} ({cols})")
    names = ", ".join(quote_ident(name) for name, _ in loaded)
    types = [pg for _, pg in loaded]
    try:
        with conn.cursor().copy(f"COPY {qualified} ({names}) FROM STDIN") as copy:
            for row in sqlite_rows(db, table):
                copy.write_row([_coerce(v, t) for v, t in zip(row, types, strict=True)])
    except psycopg.DataError as exc:
        if exc.sqlstate:
            raise
        # The driver refused a value before sending it (a NUL in a text, which SQLite
        # allows and PostgreSQL cannot store): say where.
        raise InvalidInput(f"table {table.name!r}: {exc}", "22021") from None


def _add_primary_key(conn, schema: str, table: SqliteTable, report: LoadReport) -> None:
    if table.primary_key:
        qualified = f"{quote_ident(schema)}.{quote_ident(table.name)}"
        cols = ", ".join(quote_ident(c) for c in table.primary_key)
        _try(
            conn,
            f"ALTER TABLE {qualified} ADD PRIMARY KEY ({cols})",
            report,
            f"{table.name}: primary key ({cols}) not kept: the data violates it",
        )


def _add_foreign_keys(conn, schema: str, table: SqliteTable, report: LoadReport) -> None:
    qualified = f"{quote_ident(schema)}.{quote_ident(table.name)}"
    for cols, ref, ref_cols in table.foreign_keys:
        if not all(ref_cols):
            continue  # SQLite's implicit reference to the primary key: resolved below
        local = ", ".join(quote_ident(c) for c in cols)
        remote = ", ".join(quote_ident(c) for c in ref_cols)
        sql = (
            f"ALTER TABLE {qualified} ADD FOREIGN KEY ({local}) "
            f"REFERENCES {quote_ident(schema)}.{quote_ident(ref)} ({remote})"
        )
        # BIRD's data often violate its declared keys; keep them as metadata then.
        if not _try(conn, sql, None, ""):
            _try(
                conn,
                sql + " NOT VALID",
                report,
                f"{table.name}: foreign key ({local}) -> {ref} not kept",
            )


def _try(conn, sql: str, report: LoadReport | None, warning: str) -> bool:
    try:
        with conn.transaction():
            conn.execute(sql)
        return True
    except psycopg.Error:
        if report is not None:
            report.warnings.append(warning)
        return False


def _text_affinities(tables: list[SqliteTable]) -> dict[str, dict[str, str]]:
    """Columns declared numeric in SQLite but loaded as text (they hold some text): their
    affinity, which the text type does not tell and SQLite's comparisons depend on."""
    out: dict[str, dict[str, str]] = {}
    for table in tables:
        for col in table.columns:
            declared = affinity(col.declared)
            if col.pg_type == "text" and declared in ("INTEGER", "REAL", "NUMERIC"):
                out.setdefault(table.name, {})[col.name] = declared
    return out


#: What the rowid column is, for those who read the schema (a judge's prompt shows it).
ROWID_COMMENT = ("SQLite's rowid: the number SQLite gave the row in this table "
                 "(not a column of the SQLite table)")


def _comment_columns(conn, schema: str, tables: list[SqliteTable], descriptions) -> None:
    for table in tables:
        notes = descriptions.get(table.name.lower(), {})
        comments = [(col.name, notes.get(col.name.strip().lower())) for col in table.columns]
        if table.rowid:
            comments.append((table.rowid, ROWID_COMMENT))
        for name, comment in comments:
            if comment:
                conn.execute(
                    f"COMMENT ON COLUMN {quote_ident(schema)}.{quote_ident(table.name)}."
                    f"{quote_ident(name)} IS {quote_literal(comment)}"
                )


def _verify(conn, db, schema: str, table: SqliteTable) -> int:
    """Compare row count and content checksum with the SQLite source; raise on mismatch."""
    columns = table.loaded_columns()
    types = [pg for _, pg in columns]
    source = row_checksum(
        tuple(_coerce(v, t) for v, t in zip(row, types, strict=True))
        for row in sqlite_rows(db, table)
    )
    cols = ", ".join(quote_ident(name) for name, _ in columns)
    with conn.cursor() as cur:
        cur.execute(f"SELECT {cols} FROM {quote_ident(schema)}.{quote_ident(table.name)}")
        loaded = row_checksum(iter(cur))
    if source != loaded:
        raise SiselectError(
            f"{table.name}: loaded rows do not match the source "
            f"({loaded[0]} rows, checksum {loaded[1]}; source {source[0]}, {source[1]})",
            "XX001",
        )
    return loaded[0]
