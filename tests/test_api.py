"""siselect.client.api: the README's "From Python" example runs and prints what it shows;
the functions return the typed results and refuse unknown options."""

import contextlib
import io
import re
from pathlib import Path

import pytest

from conftest import schema_valid
from siselect.client import api
from siselect.runtime.errors import InvalidInput
from siselect.runtime.results import SeparationResult, TournamentResult, as_dict

README = Path(__file__).resolve().parent.parent / "README.md"
TALL = "SELECT COUNT(*) FROM superhero WHERE height_cm > 200"


def python_example() -> tuple[str, list[str]]:
    """The code of the README's "From Python" block and the lines it shows (``# =>``)."""
    section = README.read_text().split("## From Python\n", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    return code, [line.split("# =>", 1)[1].strip() for line in code.splitlines()
                  if line.strip().startswith("# =>")]


def test_readme_python_example_prints_what_it_shows(dsn, superhero):
    code, shown = python_example()
    assert len(shown) == 3
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {"dsn": dsn})  # our own README
    assert out.getvalue().splitlines() == shown


def test_separate_returns_the_typed_result(dsn, superhero, conn):
    conn.execute(f"SET search_path TO {superhero}")
    sep = api.separate(conn, TALL, TALL.replace("200", "191"), seed=7)
    assert isinstance(sep, SeparationResult)
    assert sep.answers.q1.rows == [[0]] and sep.answers.q2.rows == [[1]]
    # The same contract, field for field, as the SQL function's jsonb.
    in_sql = conn.execute("SELECT siselect.separate(%s, %s, seed => 7)",
                          (TALL, TALL.replace("200", "191"))).fetchone()[0]
    mine = as_dict(sep)
    assert {k: v for k, v in mine.items() if k != "timings"} == {
        k: v for k, v in in_sql.items() if k != "timings"}
    schema_valid("separation", mine)


def test_tournament_with_a_judge_object(dsn, superhero, conn):
    from siselect.selection.judges import NoJudge

    conn.execute(f"SET search_path TO {superhero}")
    result = api.tournament(conn, [TALL, TALL.replace("200", "190"), TALL], "Taller than 200?",
                            judge=NoJudge())
    assert isinstance(result, TournamentResult)
    assert result.decided_by == "consistency (every duel was a draw)"
    assert result.winner is not None and result.winner.index == 0
    assert [g.members for g in result.groups] == [[0, 2], [1]]
    schema_valid("tournament", as_dict(result))


def test_counts_restore_the_votes_of_deduplicated_candidates(dsn, superhero, conn):
    """A caller who deduplicated its candidates gives how often each was produced: the
    consistency prior sums them (four votes for > 190 beat two for > 200), and the result
    says so; counts that do not fit the candidates are refused (22023)."""
    conn.execute(f"SET search_path TO {superhero}")
    candidates = [TALL, TALL.replace("200", "190"), TALL.replace(">", "> 0 +")]
    plain = api.tournament(conn, candidates, "Taller than 200?", judge="none")
    assert plain.winner is not None and plain.winner.index == 0
    counted = api.tournament(conn, candidates, "Taller than 200?", judge="none",
                             counts=[1, 4, 1])
    assert counted.winner is not None and counted.winner.index == 1
    assert counted.decided_by == "consistency (every duel was a draw)"
    assert counted.counts == [1, 4, 1]
    assert [(g.members, g.size) for g in counted.groups] == [([0, 2], 2), ([1], 4)]
    schema_valid("tournament", as_dict(counted))
    for wrong in ([1, 4], [1, 0, 1], [1, None, 1], [1, True, 1]):
        with pytest.raises(InvalidInput) as refused:
            api.tournament(conn, candidates, "Taller than 200?", judge="none", counts=wrong)
        assert refused.value.sqlstate == "22023"


def test_unknown_option_is_refused(conn):
    with pytest.raises(InvalidInput, match="unknown option max_row") as caught:
        api.separate(conn, TALL, TALL, max_row=3)
    assert caught.value.sqlstate == "22023"


def test_a_session_reading_backslashes_otherwise_is_refused_before_anything_runs(
        conn, superhero):
    """The parser check reads 'a\\' as standard_conforming_strings = on does; a session with
    it off would run other tokens than were checked, so nothing runs there."""
    conn.execute(f"SET search_path TO {superhero}")
    conn.execute("SET standard_conforming_strings = off")
    try:
        with pytest.raises(InvalidInput) as refused:
            api.separate(conn, TALL, TALL.replace("200", "191"))
        assert refused.value.sqlstate == "22023"
        assert "standard_conforming_strings" in refused.value.message
        assert conn.execute("SHOW standard_conforming_strings").fetchone()[0] == "off"
    finally:
        conn.execute("RESET standard_conforming_strings")
    assert api.separate(conn, TALL, TALL.replace("200", "191")).status == "separated"
