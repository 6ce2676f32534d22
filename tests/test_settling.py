"""The worst level's minimisation settles within SETTLING_TRIES sets tested while no set
fits max_rows (instances/separate.py).

The league with the fewest games, picked as SQLite picks a bare column beside MIN
(``(ARRAY_AGG(league_id ORDER BY cnt))[1]``), against the league with the most games joined
on another column. Thirty leagues tie at one game, so most subsets of the whole lineage
leave the pick to a tie (no verdict there) or to a league whose row is gone: halving stops
shrinking it, and ddmin sheds rows one at a time, thousands of tests (the yardstick's
european_football_2 1032: 8,794 tests, 88 s, to a 1-minimal 1,408 rows, the pair failed).
"""

import pytest

from conftest import readable_schema, separated_on
from siselect.instances import separate as separate_module
from siselect.instances.separate import Options

FEWEST = ("SELECT l.name, t.c FROM league AS l JOIN (SELECT (ARRAY_AGG(s.league_id ORDER BY "
          "s.cnt))[1] AS league_id, MIN(s.cnt) AS c FROM (SELECT league_id, COUNT(id) AS cnt "
          "FROM game GROUP BY league_id) AS s) AS t ON t.league_id = l.id")
MOST = ("SELECT l.name, t.c FROM league AS l JOIN (SELECT (ARRAY_AGG(s.league_id ORDER BY "
        "s.cnt DESC))[1] AS league_id, MAX(s.cnt) AS c FROM (SELECT league_id, COUNT(id) AS "
        "cnt FROM game GROUP BY league_id) AS s) AS t ON t.league_id = l.country_id")


@pytest.fixture(scope="module")
def leagues(dsn: str) -> str:
    # League i plays 1 + 7i mod 10 games: thirty leagues tie at one; no league's
    # country_id is a league's id, so the second query answers nothing on D.
    return readable_schema(
        dsn, "settling",
        "CREATE TABLE settling.league (id int PRIMARY KEY, country_id int, name text)",
        "CREATE TABLE settling.game (id int PRIMARY KEY, league_id int "
        "REFERENCES settling.league)",
        "INSERT INTO settling.league SELECT i, 1000 + i, 'league ' || i "
        "FROM generate_series(1, 300) AS i",
        "INSERT INTO settling.game SELECT row_number() OVER (), i FROM generate_series(1, 300) "
        "AS i, generate_series(1, 10) AS g WHERE g <= 1 + (i * 7) % 10")


def test_the_settling_minimisation_stops_at_its_limit(dsn, leagues, monkeypatch):
    monkeypatch.setattr(separate_module, "SETTLING_TRIES", 10**9)  # as before the limit
    unlimited = separated_on(dsn, leagues, FEWEST, MOST)
    monkeypatch.setattr(separate_module, "SETTLING_TRIES", 200)
    limited = separated_on(dsn, leagues, FEWEST, MOST)
    max_rows = Options().max_rows
    for result in (unlimited, limited):
        assert result["status"] == "failed", result
        assert result["reason"] == ("the smallest separating instance found has "
                                    f"{result['rows']} rows, more than max_rows = {max_rows}")
    # Unlimited, ddmin ends 1-minimal after about 2,200 sets; limited to 200 while no set
    # fits, the search tests about 350 in all and stops with a set as far from fitting.
    assert unlimited["rows"] > max_rows
    assert limited["rows"] >= unlimited["rows"]
    assert limited["tries"] * 4 < unlimited["tries"], (limited["tries"], unlimited["tries"])
