"""Issue 19, point 3: failures are loud, and each has its documented exit code."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from siselect.client import exit_codes
from siselect.client.cli import build_parser, main
from siselect.runtime.errors import NotASelect
from siselect.selection.report_view import judge_failure
from siselect.sqltext.check import parse_select

ROOT = Path(__file__).resolve().parent.parent
TALL = "SELECT superhero_name FROM superhero WHERE height_cm > 210"
TALLER = "SELECT superhero_name FROM superhero WHERE height_cm > 220"


def _last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def _closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unknown_db_lists_the_loaded_ones_and_picks_no_winner(dsn, superhero, capsys):
    code = main(["tournament", "--dsn", dsn, "--db", "nosuchdb", "--judge", "none",
                 "--question", "q", "SELECT 1", TALL])
    out, err = capsys.readouterr()
    assert code == exit_codes.ERROR
    assert "winner" not in out
    assert "no database 'nosuchdb'" in err and "superhero" in err and "3F000" in err


def test_unreachable_judge_exits_with_its_own_code_first_line_first(dsn, superhero, tmp_path,
                                                                     capsys, monkeypatch):
    monkeypatch.delenv("SISELECT_LLM_URL", raising=False)
    config = tmp_path / "llm.json"
    config.write_text(json.dumps({"base_url": f"http://127.0.0.1:{_closed_port()}/v1",
                                  "retries": 0, "votes": 1, "deadline": 10.0, "backoff": 0.0}))
    args = ["tournament", "--dsn", dsn, "--db", superhero, "--judge", "llm", "--llm-config",
            str(config), "--question", "Heroes over 2.1 m?", TALL, TALLER]
    assert main(args) == exit_codes.JUDGE_FAILED
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("siselect: the judge could not answer:")
    assert "picked by" in out[0] and "not by the judge" in out[0]
    assert main([*args, "--json"]) == exit_codes.JUDGE_FAILED
    out, err = capsys.readouterr()
    assert err.startswith("siselect: the judge could not answer:")
    result = _last_json(out)  # the JSON keeps the whole result
    assert result["winner"] is not None
    assert all(d["judge"]["error"] and d["judge"]["rows"] is None for d in result["duels"])


def test_the_circuit_breakers_field_decides_too():
    tripped = {"winner": {"index": 1, "sql": "SELECT 1"}, "decided_by": "input order",
               "judge_failure": {"cause": "endpoint refused 5 calls in a row", "duels": 3},
               "duels": []}
    assert "endpoint refused 5 calls in a row (3 duels" in judge_failure(tripped)
    judged = {"winner": None, "duels": [{"judge": {"error": None, "rows": [[1]]}},
                                        {"judge": {"error": "timeout", "rows": None}}]}
    assert judge_failure(judged) is None  # one duel was judged: not a failed judge
    abstained = {"judge": "none", "winner": None,
                 "duels": [{"judge": {"name": "none", "error": "no judge", "rows": None}}]}
    assert judge_failure(abstained) is None


def test_every_candidate_failing_lists_every_reason(dsn, superhero, tmp_path, capsys):
    report = tmp_path / "r.md"
    code = main(["tournament", "--dsn", dsn, "--db", superhero, "--judge", "none",
                 "--question", "q", "--report", str(report),
                 "SELECT nope FROM superhero", "SELECT 1 FROM nowhere", "SELECT * FROM"])
    out = capsys.readouterr().out
    assert code == exit_codes.NO_RESULT
    assert "no winner" in out
    for index, words in enumerate(["nope", "nowhere", "syntax error"]):
        assert f"dropped candidate {index}:" in out and words in out
        assert words in report.read_text()


def test_counts_weigh_the_groups_and_are_checked(dsn, superhero, capsys):
    """--counts gives deduplicated candidates their votes back (the second, produced three
    times, outweighs the first); counts that are no numbers are a usage error (2), and
    counts of another length are refused (22023) before any connection."""
    args = ["tournament", "--dsn", dsn, "--db", superhero, "--judge", "none", "--json",
            "--question", "Heroes over 2.1 m?", TALL, TALLER]
    assert main([*args, "--counts", "1,3"]) == exit_codes.OK
    result = _last_json(capsys.readouterr().out)
    assert result["winner"]["index"] == 1 and result["counts"] == [1, 3]
    with pytest.raises(SystemExit) as usage:
        main([*args, "--counts", "1,x"])
    assert usage.value.code == 2
    assert "whole numbers separated by commas" in capsys.readouterr().err
    assert main([*args[:2], "postgresql://nobody@127.0.0.1:1/none", *args[3:],
                 "--counts", "1"]) == exit_codes.ERROR
    assert "22023" in capsys.readouterr().err


def test_report_path_is_checked_before_any_connection(tmp_path, capsys):
    missing = tmp_path / "no" / "such" / "folder" / "r.html"
    # The DSN leads nowhere: had the work started, the error would be the connection's.
    dsn = f"postgresql://nobody@127.0.0.1:{_closed_port()}/x?connect_timeout=2"
    code = main(["tournament", "--dsn", dsn, "--db", "superhero", "--judge", "none",
                 "--question", "q", "--report", str(missing), "SELECT 1"])
    err = capsys.readouterr().err
    assert code == exit_codes.ERROR
    assert "folder" in err and str(missing.parent) in err and not missing.parent.exists()
    assert main(["tournament", "--dsn", dsn, "--db", "x", "--question", "q", "--report",
                 str(tmp_path / "r.pdf"), "SELECT 1"]) == exit_codes.ERROR
    assert ".md or .html" in capsys.readouterr().err


@pytest.mark.parametrize("sql, where, what", [
    ("SELECT * FROM t WHERE", "line 1, column 21", "WHERE is incomplete"),
    ("SELECT a FROM t\nWHERE b = 1 AND\nORDER BY a", "line 3, column 8", "AND is incomplete"),
    ("SELECT (a FROM t", "line 1, column 14", "expected )"),
    ("SELECT * FROM", "line 1, column 13", "expected table name but the text ends"),
])
def test_syntax_errors_name_the_users_position_not_sqlglots_classes(sql, where, what):
    with pytest.raises(NotASelect) as caught:
        parse_select(sql)
    message = caught.value.message
    assert where in message and what in message, message
    assert "<class" not in message and "sqlglot" not in message and "Token" not in message


def test_a_nondeterministic_pair_is_no_usage_error(dsn, superhero, capsys):
    # Ties at the cut: which hero of 188 cm comes first is up to the plan.
    q1 = "SELECT superhero_name FROM superhero WHERE height_cm = 188 ORDER BY height_cm LIMIT 1"
    q2 = ("SELECT superhero_name FROM superhero WHERE height_cm = 188 "
          "ORDER BY height_cm, superhero_name DESC LIMIT 1")
    code = main(["separate", "--dsn", dsn, "--db", superhero, "--json", q1, q2])
    status = _last_json(capsys.readouterr().out)["status"]
    assert (status, code) in [("nondeterministic", exit_codes.NO_RESULT),
                              ("same_answer", exit_codes.OK)]
    assert code != exit_codes.USAGE


def test_broken_pipe_ends_quietly(dsn, superhero):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "plpy"), *sys.path])}
    process = subprocess.Popen(
        # 10,000 rows as one JSON line, far more than a pipe buffers.
        [sys.executable, "-m", "siselect", "sql", "--dsn", dsn, "--db", superhero, "--json",
         "SELECT s.superhero_name, p.power_name FROM superhero s CROSS JOIN superpower p"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.read(100)  # as `| head -c 100` reads
    process.stdout.close()
    err = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait(timeout=120) == exit_codes.BROKEN_PIPE, err
    assert first.startswith(b'{"columns"') and err == ""


def test_help_and_readme_list_every_exit_code():
    text = build_parser().format_help()
    readme = (ROOT / "README.md").read_text()
    for code, meaning in exit_codes.CODES.items():
        assert f"{code:>3}  {meaning}" in text
        assert f"| {code} |" in readme, f"README lacks exit code {code}"
    sub = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert f"{exit_codes.JUDGE_FAILED:>3}  " in sub["tournament"].format_help()
    assert f"{exit_codes.NO_RESULT:>3}  " in sub["separate"].format_help()
