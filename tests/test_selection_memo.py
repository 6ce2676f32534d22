"""The separation memo: a tournament replayed with another judge separates nothing again."""

from siselect.instances.separate import Options
from siselect.runtime.catalog import load_catalog
from siselect.selection.judges import ReferenceJudge
from siselect.selection.memo import SeparationMemo
from siselect.selection.tournament import run_tournament
from siselect.sqltext.transpile import to_tree

QUESTION = "How many superheroes are taller than 200 cm?"
RIGHT = "SELECT COUNT(*) FROM superhero WHERE height_cm > 200"
CANDIDATES = ["SELECT COUNT(*) FROM superhero WHERE height_cm >= 198", RIGHT,
              "SELECT COUNT(*) FROM superhero"]


def test_a_replay_with_another_judge_reuses_every_separation(executor):
    catalog = load_catalog(executor)
    judge = ReferenceJudge(to_tree(RIGHT, "postgres", catalog))
    memo = SeparationMemo()
    first = run_tournament(executor, CANDIDATES, QUESTION, None, judge, Options(),
                           catalog=catalog, separations=memo)
    kept = len(memo)
    assert kept >= 2 and first["winner"]["index"] == 1
    # The memo's instances are what the replay judges: tamper with nothing, count queries.
    ran: list[str] = []
    real_run = executor.run

    def counting(sql, *args, **kwargs):
        ran.append(sql)
        return real_run(sql, *args, **kwargs)

    executor.run = counting
    again = run_tournament(executor, CANDIDATES, QUESTION, None, judge, Options(),
                           catalog=catalog, separations=memo)
    assert len(memo) == kept, "the replay separated a pair again"
    assert not any("hash_array_extended" in sql or "hashint8extended" in sql for sql in ran), \
        "the replay fetched witnesses"
    assert [d.get("instance") for d in again["duels"]] == \
        [d.get("instance") for d in first["duels"]]
    # Another judge may play other duels (a draw is separated again), never the same anew.
    nobody = ReferenceJudge(to_tree("SELECT COUNT(*) + 100 FROM superhero", "postgres", catalog))
    drawn = run_tournament(executor, CANDIDATES, QUESTION, None, nobody, Options(),
                           catalog=catalog, separations=memo)
    firsts = {(d["a"], d["b"]): d.get("instance") for d in first["duels"] if d["attempt"] == 1}
    for d in drawn["duels"]:
        if (d["a"], d["b"]) in firsts and d["attempt"] == 1:
            assert d.get("instance") == firsts[d["a"], d["b"]]
    assert drawn["separated_again"]["drawn"] > 0
