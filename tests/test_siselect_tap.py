"""siselect_tap as a user's pgTAP suite meets it: pg_prove -v on assertions that fail.

Each failing assertion must print the evidence siselect found, and that evidence must be
siselect's own: the separating instance's rows and both answers on it are compared with
what siselect.separate returns for the same queries, the duel with siselect.selection.tournament's.
(The passing cases are tests/pgtap/30_siselect_tap.sql, which scripts/test.sh runs.)
"""

import contextlib
import json
import re
import subprocess
import urllib.parse
from pathlib import Path

import psycopg
import pytest
from pytest_postgresql.janitor import DatabaseJanitor

from conftest import FIXTURES, SUPERHERO

FAILING = FIXTURES / "tap" / "failing.sql"
TALL = ("SELECT s.superhero_name, p.publisher_name FROM superhero s JOIN publisher p "
        "ON p.id = s.publisher_id WHERE s.height_cm ")
Q1, Q2 = TALL + "> 190", TALL + ">= 185"
CANDIDATES = [
    "SELECT COUNT(*) FROM superhero WHERE height_cm > 190",
    "SELECT COUNT(*) FROM superhero WHERE height_cm >= 190",
    "SELECT COUNT(*) FROM superhero",
]
QUESTION = "How many heroes are taller than 190 cm?"


def _database(cluster_dsn: str, name: str):
    url = urllib.parse.urlparse(cluster_dsn)
    janitor = DatabaseJanitor(user=url.username or "postgres", host=url.hostname or "127.0.0.1",
                              port=url.port or 5432, dbname=name)
    janitor.init()
    return janitor, url._replace(path=f"/{name}").geturl()


def _require_installed(conn: psycopg.Connection) -> None:
    found = conn.execute(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'siselect_tap'").fetchone()
    assert found, "siselect_tap is not installed: the Makefile must include tap.mk"


@pytest.fixture(scope="module")
def tap_dsn(cluster_dsn: str):
    """A database with superhero loaded and pgtap, siselect and siselect_tap created."""
    from siselect.client.loader import load

    janitor, dsn = _database(cluster_dsn, "siselect_tap_pytest")
    with psycopg.connect(dsn, autocommit=True) as conn:
        _require_installed(conn)
        conn.execute("CREATE EXTENSION siselect CASCADE")
        conn.execute("CREATE EXTENSION pgtap")
        conn.execute("CREATE EXTENSION siselect_tap")
        load(conn, SUPERHERO, "superhero")
    yield dsn
    janitor.drop()


def pg_prove(dsn: str, path: Path) -> subprocess.CompletedProcess:
    url = urllib.parse.urlparse(dsn)
    return subprocess.run(
        ["pg_prove", "-v", "-h", url.hostname, "-p", str(url.port), "-U", url.username,
         "-d", url.path.lstrip("/"), str(path)],
        capture_output=True, text=True, timeout=300)


@contextlib.contextmanager
def suite_session(dsn: str):
    """A session as the failing suite has it: its search_path, and the temporary tables
    pgTAP's plan() makes. Both decide which tables siselect sees, so how it numbers them,
    so which instance a seed finds (siselect's result is compared with the suite's)."""
    with psycopg.connect(dsn) as conn:
        conn.execute("SET LOCAL search_path = superhero, public")
        conn.execute("SELECT plan(1)")
        yield conn
        conn.rollback()


def blocks(tap: str) -> dict[int, tuple[str, list[str]]]:
    """Each test's TAP line and the diag lines that follow it (without their '# ')."""
    found: dict[int, tuple[str, list[str]]] = {}
    current: list[str] | None = None
    for line in tap.splitlines():
        m = re.match(r"(?:not )?ok (\d+) - ", line)
        if m:
            current = []
            found[int(m.group(1))] = (line, current)
        elif current is not None and line.startswith("# ") and "Looks like" not in line:
            current.append(line[2:])
    return found


def table(lines: list[str], title: str) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the table printed under the line ``title (N rows)``."""
    at = next(i for i, s in enumerate(lines) if re.fullmatch(
        rf"\s*{re.escape(title)} \((\d+) rows?\)", s))
    count = int(re.search(r"\((\d+) rows?\)$", lines[at]).group(1))
    cells = [[c.strip() for c in s.split("|")] for s in lines[at + 1:at + 3 + count]]
    assert set(lines[at + 2].strip()) <= {"-", "+"}, "a rule under the header"
    return cells[0], [cells[0 + 2 + i] for i in range(count)]


def shown(value) -> str:
    return "NULL" if value is None else value if isinstance(value, str) else json.dumps(value)


def expected(answer: dict) -> tuple[list[str], list[list[str]]]:
    return answer["columns"], [[shown(v) for v in row] for row in answer["rows"]]


@pytest.fixture(scope="module")
def failing(tap_dsn: str):
    text = FAILING.read_text()
    for sql in (Q1, Q2, *CANDIDATES, QUESTION):
        assert sql in text, f"tests/fixtures/tap/failing.sql no longer has {sql!r}"
    run = pg_prove(tap_dsn, FAILING)
    return run, blocks(run.stdout)


def test_every_failing_assertion_is_one_failed_tap_result(failing):
    run, found = failing
    assert run.returncode != 0
    assert sorted(found) == [1, 2, 3, 4, 5]
    assert all(line.startswith("not ok") for line, _ in found.values()), run.stdout
    assert "Failed 5/5 subtests" in run.stdout
    assert "ERROR" not in run.stderr, run.stderr


def test_same_answer_prints_the_separating_instance_and_both_answers(failing, tap_dsn):
    line, diag = failing[1][1]
    assert line == "not ok 1 - the rewrite keeps the tall heroes"
    with suite_session(tap_dsn) as conn:
        sep = conn.execute("SELECT siselect.separate(%s, %s)", (Q1, Q2)).fetchone()[0]
    assert sep["status"] == "separated"
    assert f"separating instance of {sep['rows']} row" in "\n".join(diag)
    for name, rows in sep["instance"].items():
        assert table(diag, f"table {name}") == expected(rows)
    assert table(diag, "q1") == expected(sep["answers"]["q1"])
    assert table(diag, "q2") == expected(sep["answers"]["q2"])
    assert sep["answers"]["q1"]["rows"] != sep["answers"]["q2"]["rows"]


def test_answers_differ_says_the_answers_agree_and_on_how_many_rows(failing, tap_dsn):
    line, diag = failing[1][2]
    assert line == "not ok 2 - counting ids differs from counting rows"
    assert diag[-1] == "they give the same answer on the whole database (1 row)"


def test_a_failing_query_is_a_failed_result_with_its_sqlstate(failing):
    line, diag = failing[1][3]
    assert line.startswith("not ok 3")
    assert any("SQLSTATE 42P01" in s and '"heroes" does not exist' in s for s in diag), diag


def test_tournament_picks_prints_the_winner_and_the_lost_duel(failing, tap_dsn):
    line, diag = failing[1][4]
    assert line == "not ok 4 - the tournament picks counting every hero"
    with suite_session(tap_dsn) as conn:
        result = conn.execute(
            "SELECT siselect.tournament(%s, %s, judge => 'reference', reference => %s)",
            (CANDIDATES, QUESTION, CANDIDATES[0])).fetchone()[0]
    winner = result["winner"]["index"] + 1
    assert f"picked   candidate {winner}: {CANDIDATES[winner - 1]} (decided by tournament)" in diag
    lost = [d for d in result["duels"] if 2 in (d["a"], d["b"])]
    assert len(lost) == 1 and lost[0]["verdict"] == "a"
    duel = lost[0]
    assert f"duel: candidate {duel['a'] + 1} (A) against candidate 3 (B): A won, " \
           f"{duel['reason']}" in diag
    for name, rows in duel["instance"].items():
        assert table(diag, f"table {name}") == expected(rows)
    assert table(diag, "A") == expected(duel["answers"]["a"])
    assert table(diag, "B") == expected(duel["answers"]["b"])
    judge_header, judge_rows = table(diag, "reference judge")
    assert judge_rows == [[shown(v) for v in r] for r in duel["judge"]["rows"]]


def test_tournament_picks_names_an_expected_query_that_is_no_candidate(failing):
    line, diag = failing[1][5]
    assert line == "not ok 5 - a query that is not a candidate"
    assert diag[-1] == "the expected query is not one of the candidates: SELECT COUNT(*) FROM hero"


def test_the_assertions_find_pgtap_in_another_schema_and_the_callers_tables(cluster_dsn, tmp_path):
    """pgTAP in a schema of its own (its functions need it on the search_path), the tables
    in another: the assertions call pgTAP's ok() and run the queries on the caller's path."""
    janitor, dsn = _database(cluster_dsn, "siselect_tap_schema_pytest")
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            _require_installed(conn)
            conn.execute("CREATE SCHEMA tap")
            conn.execute("CREATE EXTENSION pgtap SCHEMA tap")
            conn.execute("CREATE EXTENSION siselect CASCADE")
            conn.execute("CREATE EXTENSION siselect_tap")
            conn.execute("CREATE SCHEMA shop")
            conn.execute("CREATE TABLE shop.item AS SELECT i AS id FROM generate_series(1, 9) i")
        suite = tmp_path / "other_schema.sql"
        suite.write_text(
            "SET search_path = shop, tap;\n"
            "SELECT tap.plan(2);\n"
            "SELECT siselect_tap.same_answer('SELECT max(id) FROM item', "
            "'SELECT id FROM item ORDER BY id DESC LIMIT 1', 'max is the last id');\n"
            "SELECT siselect_tap.answers_differ('SELECT count(*) FROM item', "
            "'SELECT count(*) FROM item WHERE id > 1', 'a filter drops a row');\n"
            "SELECT * FROM tap.finish();\n")
        run = pg_prove(dsn, suite)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "ok 1 - max is the last id" in run.stdout
        assert "ok 2 - a filter drops a row" in run.stdout
    finally:
        janitor.drop()


def test_only_siselect_users_may_run_the_assertions(tap_dsn):
    with psycopg.connect(tap_dsn) as conn:
        denied, allowed = conn.execute(
            "SELECT bool_or(has_function_privilege('public', p.oid, 'EXECUTE')), "
            "bool_and(has_function_privilege('siselect_user', p.oid, 'EXECUTE')) "
            "FROM pg_proc p WHERE p.pronamespace = 'siselect_tap'::regnamespace").fetchone()
    assert (denied, allowed) == (False, True)
