"""Issue 7, point 7: several hundred malformed and hostile inputs, from the corpus in
tests/fixtures/hostile and generated with hypothesis, fed to separate, tournament and
tournament_report (in the server), to the loader and to the `sql` command. Every input
gets a result or a clear error; afterwards every table has its checksum of before and no
object was left in any schema. (Derandomized, so a run is reproducible.)"""

import contextlib
import io
import json
import os
import sqlite3
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from siselect.client.cli import main as cli
from siselect.client.loader import load
from siselect.runtime.errors import NotASelect, SiselectError
from siselect.runtime.executor import quote_ident
from siselect.sqltext.check import parse_select

# The shared fixtures (admin, chat, hostile, probe, ...) load as a plugin, once;
# their module must be marked for assertion rewriting before it is imported.
pytest.register_assert_rewrite("safety_fixtures")
pytest_plugins = ["safety_fixtures"]

from safety_fixtures import (  # noqa: E402
    assert_clean,
    corpus,
    db_state,
    is_clear_error,
)

CORPUS = (corpus("writes.sql") + corpus("side_effects.sql") + corpus("malformed.sql")
          + corpus("write_functions.sql"))
VALID = [
    "SELECT count(*) FROM superhero WHERE height_cm > 200",
    "SELECT superhero_name FROM superhero WHERE height_cm >= 198 ORDER BY id",
    "SELECT colour, count(*) FROM superhero JOIN colour ON colour.id = eye_colour_id "
    "GROUP BY colour",
    "SELECT id FROM colour WHERE colour LIKE '%e%'",
]
# Text that keeps a query valid (or almost) while hiding something.
DISGUISES = [" /* ; DELETE FROM colour */ ", " -- ; DROP TABLE colour\n", "\u200b", "\u202e",
             "ﾟ", "🦸", " ; ", ";", "'", '"', "$$", "\\", "(", ")", " UNION SELECT 1 ",
             " FOR UPDATE ", " INTO evil ", "\n", "\t", " e\u0301 ", "%s", "{0}"]
STATUSES = {"separated", "same_answer", "nondeterministic", "failed", "timeout"}
# Text PostgreSQL can carry: no NUL, no lone surrogates (the driver cannot encode them).
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
               max_size=300)
FUZZ = settings(max_examples=120, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.data_too_large])


class Sql(str):
    """A generated query whose repr stays short when hypothesis reports it."""

    def __repr__(self) -> str:
        text = str.__repr__(self)
        return text if len(text) <= 300 else f"{text[:200]}...<{len(self)} characters>"


def generated_queries() -> st.SearchStrategy[str]:
    inserted = st.builds(lambda q, d, at: q[: at % (len(q) + 1)] + d + q[at % (len(q) + 1):],
                         st.sampled_from(VALID), st.sampled_from(DISGUISES + CORPUS),
                         st.integers(0, 400))
    return st.one_of(
        st.sampled_from(CORPUS), inserted, TEXT,
        st.builds(lambda q, t: q.replace("200", repr(t)), st.sampled_from(VALID[:1]), TEXT),
        st.builds(lambda n: "SELECT " + "(" * n + "1" + ")" * n, st.integers(1, 400)),
        st.builds(lambda n: "SELECT 1 WHERE 1 IN (" + ",".join(map(str, range(n))) + ")",
                  st.integers(1, 300)),
    ).map(Sql)


# Inputs too big to draw many times: each once.
HUGE = {
    "deeply nested": "SELECT " + "(" * 5000 + "1" + ")" * 5000,
    "nested subqueries": "SELECT * FROM " + "(SELECT * FROM " * 300 + "colour" + ") s" * 300,
    "a long IN list": "SELECT id FROM colour WHERE id IN (" + ",".join(map(str, range(5000)))
                      + ")",
    "many UNIONs": " UNION ALL ".join(["SELECT 1"] * 2000),
    "many ANDs": "SELECT id FROM colour WHERE " + " AND ".join(["id > 0"] * 3000),
    "a long literal": "SELECT '" + "x" * 250_000 + "'",
    "10 MB of text": "SELECT 1 /*" + "y" * 10_000_000 + "*/",
    "many columns": "SELECT " + ", ".join(f"id AS c{i}" for i in range(1600)) + " FROM colour",
}


@pytest.fixture
def fuzz_session(admin):
    """The admin connection with a bound on every generated call, and the state before."""
    admin.execute("SET statement_timeout = '15s'")
    before = db_state(admin)
    yield admin, before
    admin.execute("RESET statement_timeout")
    assert_clean(admin, before)


def call_ok(conn: psycopg.Connection, sql: str, args: tuple):
    """The result of a server call, or None after a clear error (anything else fails)."""
    try:
        return conn.execute(sql, args).fetchone()[0]
    except psycopg.Error as exc:
        assert is_clear_error(exc), f"unclear error {exc.sqlstate}: {exc} for {args!r:.300}"
        return None


def test_corpus_through_separate(fuzz_session, superhero):
    conn, _ = fuzz_session
    answered = 0
    for sql in CORPUS:
        for q1, q2 in ((sql, VALID[0]), (VALID[0], sql)):
            result = call_ok(conn, "SELECT siselect.separate(%s, %s, search_path => %s)",
                             (q1, q2, superhero))
            if result is not None:
                assert result["status"] in STATUSES
                answered += 1
    assert answered > 0, "some corpus entries are valid queries and get a result"


@pytest.mark.parametrize("kind", list(HUGE))
def test_huge_and_deep_queries(fuzz_session, superhero, kind):
    conn, _ = fuzz_session
    for q1, q2 in ((HUGE[kind], VALID[0]), (VALID[0], HUGE[kind])):
        result = call_ok(conn, "SELECT siselect.separate(%s, %s, search_path => %s)",
                         (q1, q2, superhero))
        assert result is None or result["status"] in STATUSES
    result = call_ok(conn, "SELECT siselect.tournament(%s, 'q', judge => 'none', "
                     "search_path => %s)", ([HUGE[kind], VALID[0], VALID[1]], superhero))
    assert result is None or "winner" in result


@FUZZ
@given(q1=generated_queries(), dialect=st.sampled_from(["postgres", "sqlite"]))
def test_generated_queries_through_separate(fuzz_session, superhero, q1, dialect):
    conn, _ = fuzz_session
    result = call_ok(conn, "SELECT siselect.separate(%s, %s, %s, search_path => %s)",
                     (q1, VALID[1], dialect, superhero))
    assert result is None or result["status"] in STATUSES


# Values of the wrong type: the driver sends them typed, PostgreSQL finds no function.
WRONG = st.sampled_from(["abc", "1", 1.5, -0.0, [1, 2], True, 2**70])
ARGUMENTS = st.fixed_dictionaries({
    "dialect": st.one_of(st.none(), st.sampled_from(["postgres", "sqlite", "mysql", ""]), TEXT),
    "strategy": st.one_of(st.none(), st.sampled_from(["minimal", "paper", "MINIMAL"]), TEXT),
    "max_rows": st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1), WRONG),
    "seed": st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1), WRONG),
    "backend": st.one_of(st.none(), st.sampled_from(["lineage", "provsql"]), TEXT),
    "with_references": st.one_of(st.none(), st.booleans(), WRONG),
    "search_path": st.one_of(st.none(), st.sampled_from(
        ["superhero", "", "superhero, public", '"superhero"; DROP TABLE colour; --',
         "pg_catalog", "'", "nonexistent"]), TEXT),
})


@FUZZ
@given(args=ARGUMENTS)
def test_odd_arguments_to_separate(fuzz_session, superhero, args):
    conn, _ = fuzz_session
    names = ", ".join(f"{k} => %s" for k in args)
    result = call_ok(conn, f"SELECT siselect.separate(%s, %s, {names})",
                     (VALID[0], VALID[1], *args.values()))
    assert result is None or result["status"] in STATUSES


CANDIDATE_ARRAYS = st.one_of(
    st.none(), st.just([]), st.just([None]), st.just([None, VALID[0]]), st.just([""] * 3),
    st.just(["SELECT 1"] * 10_000), st.lists(generated_queries(), min_size=1, max_size=4),
    st.lists(st.sampled_from(VALID + CORPUS), min_size=2, max_size=5),
)


@FUZZ
@given(candidates=CANDIDATE_ARRAYS,
       question=st.one_of(st.none(), st.just(""), st.just("How many?"), TEXT,
                          st.just("?" * 100_000)),
       judge=st.sampled_from(["none", "reference", "bogus", None]),
       reference=st.one_of(st.none(), st.sampled_from(VALID + CORPUS)))
def test_hostile_tournaments(fuzz_session, superhero, candidates, question, judge, reference):
    conn, _ = fuzz_session
    result = call_ok(
        conn, "SELECT siselect.tournament(%s, %s, judge => %s, reference => %s, "
        "search_path => %s)", (candidates, question, judge, reference, superhero))
    if result is not None:
        assert "winner" in result and "duels" in result


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                          allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=30,
)
REPORT_KEYS = ["duels", "groups", "winner", "scores", "question", "dropped", "candidates",
               "a", "b", "verdict", "reason", "instance", "answers", "judge", "rows"]


@FUZZ
@given(result=st.one_of(JSON, st.dictionaries(st.sampled_from(REPORT_KEYS), JSON, max_size=8)))
def test_hostile_reports(fuzz_session, result):
    conn, _ = fuzz_session
    text = call_ok(conn, "SELECT siselect.tournament_report(%s::jsonb)", (json.dumps(result),))
    assert text is None or isinstance(text, str)


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli(list(args))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def debug_cli(monkeypatch):
    """Unexpected exceptions in the CLI raise instead of becoming one line of text."""
    monkeypatch.setenv("SISELECT_DEBUG", "1")


def check_sql_command(dsn: str, schema: str, query: str, dialect: str) -> None:
    code, out, err = run_cli("sql", "--dsn", dsn, "--db", schema, "--dialect", dialect,
                             "--json", "--statement-timeout", "15000", "--", query)
    if code == 0:
        shown = json.loads(out.strip().splitlines()[-1])
        assert isinstance(shown["columns"], list) and isinstance(shown["rows"], list)
    else:
        # The last line is the error (sqlglot may log a warning before it).
        last = err.strip().splitlines()[-1]
        assert code == 1 and last.startswith("siselect: error:") and "Traceback" not in err


def test_corpus_through_the_sql_command(fuzz_session, debug_cli, dsn, superhero):
    for query in CORPUS:
        check_sql_command(dsn, superhero, query, "postgres")


@FUZZ
@given(query=generated_queries(), dialect=st.sampled_from(["postgres", "sqlite"]))
def test_generated_queries_through_the_sql_command(fuzz_session, debug_cli, dsn, superhero,
                                                   query, dialect):
    check_sql_command(dsn, superhero, query, dialect)


@given(text=st.text(max_size=500))
@settings(max_examples=300, deadline=None, derandomize=True, database=None)
def test_the_check_takes_any_text(text):
    """Any string (NULs and lone surrogates included) parses or gets NotASelect."""
    try:
        parse_select(text, "postgres")
    except NotASelect as exc:
        assert exc.sqlstate and not exc.sqlstate.startswith("XX")


# ---- the loader -----------------------------------------------------------------------


def sqlite_file(path: Path, statements: list[str], rows: list[tuple] = ()) -> Path:
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        for sql in statements:
            db.execute(sql)
        for row in rows:
            db.execute(f"INSERT INTO t VALUES ({', '.join('?' * len(row))})", row)
    return path


def hostile_sqlite_files(folder: Path) -> dict[str, Path]:
    """Broken files and valid files with hostile content, by what they are."""
    good = sqlite_file(folder / "good.sqlite", ["CREATE TABLE t (a INTEGER, b TEXT)"],
                       [(1, "x"), (2, "y")])
    raw = good.read_bytes()
    files = {
        "empty": b"",
        "random bytes": os.urandom(4096),
        "header only": b"SQLite format 3\x00",
        "header and garbage": b"SQLite format 3\x00" + os.urandom(8192),
        "truncated": raw[: len(raw) // 2],
        "corrupt page": raw[:100] + bytes(b ^ 0xFF for b in raw[100:600]) + raw[600:],
        "text file": b"CREATE TABLE t (a int); DROP TABLE students;",
    }
    made = {name: folder / f"{i}.sqlite" for i, name in enumerate(files)}
    for name, content in files.items():
        made[name].write_bytes(content)
    made["folder"] = folder
    made["missing"] = folder / "missing.sqlite"
    cases = {
        "no tables": ([], []),
        "hostile names": (['CREATE TABLE "t" ("x""; DROP TABLE t; --" TEXT, '
                           '"Robert\'); DROP TABLE students;--" INTEGER, "ünï ✓ 🦸" REAL)'],
                          [("'; DELETE FROM t; --", 1, 1.5)]),
        "system column names": (["CREATE TABLE t (ctid INTEGER, xmin TEXT, oid INTEGER)"],
                                [(1, "a", 2)]),
        "a name over 63 bytes": ([f'CREATE TABLE t ("{"é" * 40}" TEXT, "{"é" * 41}" TEXT)'],
                                 [("a", "b")]),
        "NUL in text": (["CREATE TABLE t (a TEXT)"], [("a\x00b",)]),
        "invalid UTF-8": (["CREATE TABLE t (a TEXT)",
                           "INSERT INTO t VALUES (CAST(x'ff00fe' AS TEXT))"], []),
        "blobs and infinities": (["CREATE TABLE t (a BLOB, b REAL, c INTEGER)"],
                                 [(b"\x00\xff", float("inf"), -(2**63)),
                                  (b"", float("-inf"), 2**63 - 1)]),
        "mixed types": (["CREATE TABLE t (a INTEGER, b)"],
                        [("text in an integer column", 1), (3.5, b"blob"), (None, "x")]),
        "views, triggers, indexes": (["CREATE TABLE t (a INTEGER)",
                                      "CREATE VIEW v AS SELECT a FROM t",
                                      "CREATE INDEX i ON t (a)",
                                      "CREATE TRIGGER g AFTER INSERT ON t "
                                      "BEGIN DELETE FROM t; END"], []),
        "a broken key": (["CREATE TABLE t (a INTEGER PRIMARY KEY, "
                          "b INTEGER REFERENCES nowhere(x))"], [(1, 5)]),
        "duplicate keys": (["CREATE TABLE t (a TEXT PRIMARY KEY, b INTEGER)"],
                           [("x", 1), ("X", 2)]),
    }
    for i, (name, (statements, rows)) in enumerate(cases.items()):
        made[name] = sqlite_file(folder / f"case{i}.sqlite", statements, rows)
    return made


# Names to load under; safety_probe exists and was not made by the loader.
NAMES = ["public", "siselect", "information_schema", "pg_evil", "", "   ", "x" * 64,
         "x\x00y", "Robert'); DROP TABLE students;--", "ünï ✓", "safety_probe"]


def attempt_load(conn: psycopg.Connection, path: Path, name: str | None) -> str | None:
    """Load, then drop what was loaded; the schema made, or None after a clear error."""
    try:
        report = load(conn, path, name)
    except SiselectError:  # the loader's own errors, each with its SQLSTATE
        return None
    except psycopg.Error as exc:
        assert is_clear_error(exc), exc
        return None
    assert report.status in {"loaded", "unchanged"}
    return report.name


def test_hostile_sqlite_files_and_names(admin, probe, tmp_path, superhero):
    before = db_state(admin)
    files = hostile_sqlite_files(tmp_path)
    made = []
    for case, path in files.items():
        name = attempt_load(admin, path, f"fuzz_{abs(hash(case)) % 10**6}")
        if name is not None:
            made.append(name)
    good = files["hostile names"]
    for name in NAMES:
        loaded = attempt_load(admin, good, name)
        if loaded is not None:
            made.append(loaded)
    assert made, "some of the hostile files load"
    assert "safety_probe" not in made
    for name in made:
        admin.execute(f"DROP SCHEMA {quote_ident(name)} CASCADE")
    assert_clean(admin, before)
