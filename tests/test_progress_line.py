"""``siselect tournament`` and ``separate`` show where they are on a terminal, and nothing
elsewhere.

A tournament with an LLM judge waits seconds a round for its replies, and a search can
test thousands of row sets; on a terminal one line on stderr says which round, which pair
is being separated, how many instances the judge was asked about, or how many row sets a
search has tested, and is cleared at the end. A script reading stdout and stderr sees
none of it. The terminal here is a real pseudo-terminal (``os.openpty``).
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import psycopg

from siselect.client import api
from siselect.runtime.results import as_dict

ROOT = Path(__file__).resolve().parent.parent
CANDIDATES = ["SELECT superhero_name FROM superhero WHERE height_cm > 210",
              "SELECT superhero_name FROM superhero WHERE height_cm > 220",
              "SELECT superhero_name FROM superhero WHERE weight_kg > 500"]
QUESTION = "Which heroes are taller than 2.1 m?"


def _command(dsn: str, db: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "siselect", "tournament", "--dsn", dsn, "--db", db,
            "--judge", "reference", "--reference", CANDIDATES[0], "--question", QUESTION,
            *extra, *CANDIDATES]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "plpy"), *sys.path])}


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the terminal's other end is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _on_a_terminal(command: list[str]) -> tuple[int, dict, str]:
    """Run ``command`` (ending in --json) with stderr on a pseudo-terminal: its exit
    code, the result on stdout, and what the terminal was shown."""
    master, slave = os.openpty()
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=slave, env=_env())
        os.close(slave)
        out, _ = process.communicate(timeout=300)
        err = _read_all(master).decode()
    finally:
        os.close(master)
    return process.returncode, json.loads(out.decode().strip().splitlines()[-1]), err


def test_a_terminal_sees_the_rounds_go_and_the_line_cleared(dsn, superhero):
    code, result, err = _on_a_terminal(_command(dsn, superhero, "--json"))
    assert code == 0, err
    rounds = result["schedule"]["rounds"]
    assert rounds >= 1
    assert "round 1: separating pair 1 of " in err
    assert f"round {rounds}: scored; {len(result['duels'])} duels so far" in err
    assert "asking the judge about " in err
    assert err.endswith("\r\033[K"), repr(err[-40:])  # the last line cleared


def test_a_pipe_sees_no_progress(dsn, superhero):
    process = subprocess.run(_command(dsn, superhero), capture_output=True, env=_env(),
                             timeout=300)
    assert process.returncode == 0, process.stderr
    assert b"round 1" not in process.stderr and b"\r" not in process.stderr
    assert b"round 1" not in process.stdout
    process = subprocess.run(
        [sys.executable, "-m", "siselect", "separate", "--dsn", dsn, "--db", superhero,
         CANDIDATES[0], CANDIDATES[2]], capture_output=True, env=_env(), timeout=300)
    assert process.returncode == 0, process.stderr
    assert b"searching" not in process.stderr and b"\r" not in process.stderr


def test_the_events_follow_the_rounds(dsn, superhero):
    events: list[dict] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {superhero}")
        result = as_dict(api.tournament(conn, CANDIDATES, QUESTION, judge="reference",
                                        reference=CANDIDATES[0], progress=events.append))
    played = [e for e in events if e["stage"] == "played"]
    assert [e["round"] for e in played] == list(range(1, result["schedule"]["rounds"] + 1))
    assert played[-1]["duels"] == len(result["duels"])
    separating = [e for e in events if e["stage"] == "separating"]
    # One event before each pair a round separates, counted within its round.
    assert len(separating) == sum(e["of"] for e in played)
    assert all(0 <= e["done"] < e["of"] for e in separating)
    judging = [e for e in events if e["stage"] == "judging"]
    assert sum(e["of"] for e in judging) == result["schedule"]["judged"]


def test_a_terminal_sees_a_search_count_its_row_sets(dsn, superhero):
    code, result, err = _on_a_terminal(
        [sys.executable, "-m", "siselect", "separate", "--dsn", dsn, "--db", superhero,
         "--json", CANDIDATES[0], CANDIDATES[2]])
    assert code == 0 and result["status"] == "separated", err
    shown = [int(n) for n in re.findall(r"searching: (\d+) row sets? tested", err)]
    assert shown and shown[0] == 1, err  # the first test is drawn at once
    assert shown == sorted(shown) and shown[-1] <= result["tries"], (shown, result["tries"])
    assert err.endswith("\r\033[K"), repr(err[-40:])
