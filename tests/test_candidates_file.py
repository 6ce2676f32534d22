"""Issue 19, point 4: candidates from a file or standard input, for tournament and separate."""

import io
import json
import sys

import pglast
import pytest

from siselect.client import exit_codes
from siselect.client.candidates_file import parse_candidates, split_statements
from siselect.client.cli import main
from siselect.sqltext.check import MAX_SQL_CHARS

TALL = "SELECT superhero_name\nFROM superhero\nWHERE height_cm > 210"
TALLER = "SELECT superhero_name\n  FROM superhero -- the tallest; or not\n WHERE height_cm > 220"
PSQL_TEXTS = [
    "SELECT 'a;b', $x$ ; $x$, \"c;d\" FROM t /* ; /* ; */ ; */ ; SELECT 2;",
    "select E'\\';' ; SELECT $$;$$ ; SELECT a$b FROM t; SELECT 1",
    "-- only; comments\nSELECT 1 ; ; \n;SELECT 'it''s; fine' -- end;\n",
]


@pytest.mark.parametrize("text", PSQL_TEXTS)
def test_split_as_postgresqls_own_scanner_splits(text):
    expected = [s.strip() for s in pglast.split(text, with_parser=False) if s.strip()]
    assert split_statements(text) == expected


def test_sqlite_quotes_names_in_backticks_and_brackets():
    text = "SELECT `a;b` FROM [x;y]; SELECT 1"
    assert split_statements(text, "sqlite") == ["SELECT `a;b` FROM [x;y]", "SELECT 1"]
    assert len(split_statements(text)) == 4  # psql knows neither


def test_json_array_and_its_refusals():
    assert parse_candidates('["SELECT 1;", "SELECT 2"]') == ["SELECT 1;", "SELECT 2"]
    with pytest.raises(Exception, match="array of strings"):
        parse_candidates('[1, "SELECT 2"]')


def _stdin(monkeypatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))


def test_tournament_reads_multiline_candidates_from_a_file(dsn, superhero, tmp_path, capsys):
    path = tmp_path / "candidates.sql"
    path.write_text(f"{TALL};\n\n{TALLER};\n")
    code = main(["tournament", "--dsn", dsn, "--db", superhero, "--judge", "reference",
                 "--reference", TALLER, "--question", "over 2.2 m?", "--json",
                 "--candidates-file", str(path)])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == exit_codes.OK
    assert result["candidates"] == 2 and result["winner"]["sql"] == TALLER


def test_separate_reads_standard_input(dsn, superhero, capsys, monkeypatch):
    _stdin(monkeypatch, json.dumps([TALL, TALLER]))
    code = main(["separate", "--dsn", dsn, "--db", superhero, "--json",
                 "--candidates-file", "-"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == exit_codes.OK and result["status"] == "separated" and result["rows"] >= 1
    _stdin(monkeypatch, f"{TALL};")
    assert main(["separate", "--dsn", dsn, "--db", superhero, "--candidates-file", "-"]) == 1
    assert "two queries, got 1" in capsys.readouterr().err


def test_more_than_the_shell_takes_and_the_limit_on_one_candidate_stays(
        dsn, superhero, tmp_path, capsys):
    padded = [f"/* {'x' * (MAX_SQL_CHARS - 200)} */ {TALL}",
              f"/* {'y' * (MAX_SQL_CHARS - 200)} */ {TALLER}",
              f"/* {'z' * (MAX_SQL_CHARS + 10)} */ SELECT 1"]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(padded))
    assert path.stat().st_size > 128 * 1024  # more than one shell argument may hold
    code = main(["tournament", "--dsn", dsn, "--db", superhero, "--judge", "none",
                 "--question", "q", "--json", "--candidates-file", str(path)])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == exit_codes.OK and result["candidates"] == 3
    assert [(d["index"], d["sqlstate"]) for d in result["dropped"]] == [(2, "54000")]
    assert {g["representative"] for g in result["groups"]} == {0, 1}
