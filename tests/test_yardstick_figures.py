"""The yardstick's figures from bench records: every figure issue 14 lists, transpile
disagreements against SQLite's verdicts, accuracy by mistake type, duels lost by a correct
candidate, and which baseline a run is compared with. Tiny records, no server."""

import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from yardstick.figures import by_mistake, figures, transpile_disagreements  # noqa: E402
from yardstick.retention import retention  # noqa: E402
from yardstick.run import matching_baseline, report_lines, with_baseline, worse  # noqa: E402

FIELDS = {"tasks", "scored", "upper_bound", "consistency", "tournament", "tournament_of_upper",
          "tournament_noisy", "tournament_noisy_ci95", "tournament_near_miss", "pairs",
          "separation_rate", "failed_duel_share", "search_failed_share", "degenerate_share",
          "failed_on_instance_share", "lost_by_correct", "lost_by_correct_share",
          "lost_by_correct_duels", "transpile_disagreements", "transpile_disagreement_list",
          "gold_failed_pg", "seconds_per_task", "judge_calls_per_task",
          "round_robin_calls_per_task", "noise_curves", "by_mistake",
          "lost_by_correct_by_construction", "lost_by_correct_right_matched",
          "gold_nondeterministic", "tournament_of_upper_determined"}


def duel(a: int, b: int, verdict: str, **extra) -> dict:
    return {"a": a, "b": b, "separation": "separated", "rows": 3, "verdict": verdict,
            "seconds": 0.1, **extra}


def record(qid: int, correct: list[int], groups: list[int], duels: list[dict],
           chose: int, consistent: int, dropped: tuple[int, ...] = (), noise=(), **timings):
    return {"question_id": qid, "db_id": "toy", "status": "ok", "candidates": 4,
            "correct": correct, "upper_bound": bool(correct), "groups": groups,
            "dropped": [{"index": i, "stage": "execute", "message": "x", "sqlstate": "42883"}
                        for i in dropped],
            "coverage": {"transpiled": True, "executed": not dropped, "lineage": True},
            "choices": {"tournament": chose, "consistency": consistent},
            "hits": {"tournament": chose in correct, "consistency": consistent in correct},
            "duels": duels, "noise_runs": list(noise), "timings": {"task": 2.0, **timings}}


def noise_runs(model: str, hits: list[bool]) -> list[dict]:
    return [{"model": model, "noise": 0.2, "seed": s, "hit": h, "judged": 1, "choice": 0,
             "replaced": 0, "memo": 1, "new_separations": 0} for s, h in enumerate(hits)]


RECORDS = [
    # Task 1: candidate 0 is right, loses its duel on a degenerate instance.
    record(1, [0], [2, 2], [duel(0, 2, "b", degenerate=True, lost_by_correct=True,
                                 instance={"t": {"columns": ["x"], "rows": []}},
                                 answers={"a": [], "b": []}, judge_rows=[])],
           chose=2, consistent=0, noise=noise_runs("rival", [True, False]),
           noise_replays=1.5),
    # Task 2: three groups, one duel failed to separate, one where a query failed on D'.
    record(2, [1], [1, 1, 2], [duel(0, 1, "b", failed_on_instance=["a"]),
                               {"a": 0, "b": 2, "separation": "timeout", "rows": None,
                                "verdict": "draw", "seconds": 1.0, "reason": "slow"},
                               duel(1, 2, "a")],
           chose=1, consistent=2, dropped=(3,), noise=noise_runs("rival", [True, True])),
    {"question_id": 3, "db_id": "toy", "status": "gold_failed", "candidates": 2,
     "timings": {"task": 0.5}},
]


def test_every_figure_of_the_issue_is_there():
    row = figures(RECORDS, {"1": {"correct": [0], "failed": []}}, {})
    assert set(row) >= FIELDS
    assert row["tasks"] == 3 and row["scored"] == 2 and row["gold_failed_pg"] == 1
    assert row["upper_bound"] == 1.0 and row["tournament"] == 0.5 and row["consistency"] == 0.5
    assert row["tournament_of_upper"] == 0.5
    assert row["pairs"] == 4 and row["separation_rate"] == 0.75
    assert row["failed_duel_share"] == 0.25 and row["degenerate_share"] == 0.25
    assert row["failed_on_instance_share"] == 0.25
    assert row["lost_by_correct"] == 1 and row["lost_by_correct_share"] == 0.25
    [lost] = row["lost_by_correct_duels"]
    assert (lost["question_id"], lost["a"], lost["b"]) == (1, 0, 2)
    assert lost["instance"] == {"t": {"columns": ["x"], "rows": []}}
    assert row["lost_by_correct_right_matched"] == 0  # no other candidate matched there
    assert row["gold_nondeterministic"] == 0 and row["tournament_of_upper_determined"] == 0.5
    tied = [dict(RECORDS[0], gold_nondeterministic="rows tie at the LIMIT cut"), RECORDS[1]]
    assert figures(tied)["tournament_of_upper_determined"] == 1.0  # task 1 left out
    mate = duel(0, 2, "b", lost_by_correct=True, right_matched=[1])
    again = figures([record(5, [0, 1], [2, 2], [mate], chose=1, consistent=0)])
    assert again["lost_by_correct"] == 1 and again["lost_by_correct_right_matched"] == 1
    assert row["judge_calls_per_task"] == 1.5  # 3 duels judged over 2 tasks
    assert row["round_robin_calls_per_task"] == 2.0  # 1 + 3 pairs
    # Seconds per task leave the noise replays out: 0.5 and 2.0 and 2.0 - 1.5.
    assert row["seconds_per_task"]["median"] == 0.5
    assert row["tournament_noisy"] == 0.75 and row["tournament_near_miss"] is None
    assert row["noise_curves"]["rival"]["0.2"]["seeds"] == 2


def test_a_pair_no_instance_can_separate_is_no_failure_of_the_search():
    """Answers that differ on D only by how a tie at a LIMIT cut falls: not separated, yet
    the search did not fail; a pair it found no instance for did."""
    unseparable = {"a": 0, "b": 1, "separation": "nondeterministic", "rows": None,
                   "verdict": "draw", "seconds": 0.2}
    failed = {**unseparable, "a": 0, "b": 2, "separation": "failed"}
    row = figures([record(4, [1], [1, 1, 1], [unseparable, failed, duel(1, 2, "a")],
                          chose=1, consistent=0)])
    assert row["pairs"] == 3
    assert abs(row["failed_duel_share"] - 2 / 3) < 1e-3
    assert abs(row["search_failed_share"] - 1 / 3) < 1e-3


def test_transpile_disagreements_compare_sqlite_with_postgres_verdicts():
    scored = [r for r in RECORDS if r["status"] == "ok"]
    sqlite = {"1": {"correct": [0, 1], "failed": []},  # 1 correct on SQLite only
              "2": {"correct": [1], "failed": []}}  # 3 fails on PostgreSQL only
    found = transpile_disagreements(scored, sqlite)
    assert [(d["question_id"], d["candidate"], d["sqlite"], d["postgres"]) for d in found] == \
        [(1, 1, "correct", "wrong"), (2, 3, "wrong", "failed")]
    assert figures(RECORDS, sqlite)["transpile_disagreements"] == 2
    assert figures(RECORDS)["transpile_disagreements"] is None  # no SQLite verdicts: unknown


def test_accuracy_by_mistake_type():
    scored = [r for r in RECORDS if r["status"] == "ok"]
    provenance = {
        "1": [{"how": ["gold"], "correct": True}, {"how": ["rewrite:aliases"], "correct": True},
              {"how": ["mistake:comparison"], "correct": False},
              {"how": ["mistake:missing_filter", "rewrite:aliases"], "correct": False}],
        "2": [{"how": ["mistake:comparison"], "correct": False},
              {"how": ["gold"], "correct": True},
              {"how": ["mistake:wrong_aggregate"], "correct": False},
              {"how": ["rewrite:join_order"], "correct": True}],
    }
    got = by_mistake(scored, provenance)
    assert got["comparison"] == {"tasks": 2, "tournament": 0.5, "consistency": 0.5,
                                 "tournament_picked": 1}  # task 1 picked candidate 2
    assert got["wrong_aggregate"]["tasks"] == 1 and got["wrong_aggregate"]["tournament"] == 1.0
    assert got["missing_filter"]["tournament_picked"] == 0
    # Task 1's candidate 1 and task 2's candidate 3 are rewrites, not correct on D.
    assert got["rewrites_wrong_on_d"] == 2


def test_retention_records_sqlite_verdicts(tmp_path):
    db = tmp_path / "toy.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (x INTEGER)")
        conn.executemany("INSERT INTO t VALUES (?)", [(1,), (2,), (3,)])
    tasks = [{"question_id": 7, "db_id": "toy", "SQL": "SELECT COUNT(*) FROM t WHERE x > 1"}]
    candidates = {"7": ["SELECT COUNT(*) FROM t WHERE x >= 2", "SELECT COUNT(*) FROM t",
                        "SELECT nope FROM t"]}
    kept = retention(db, tasks, candidates)
    assert kept.kept == ["7"] and kept.sqlite == {"7": {"correct": [0], "failed": [2]}}
    failing = [{**tasks[0], "SQL": "SELECT nope FROM t"}]
    assert retention(db, failing, candidates).sqlite == {}  # dropped: gold fails
    assert retention(db, failing, candidates, keep_all=True).sqlite == \
        {"7": {"correct": [], "failed": [2]}}  # an error never equals an error


def test_a_run_is_compared_with_the_baseline_of_its_limit_and_candidates():
    first = {"run": {"limit": 15, "candidates_sha256": "c"}, "overall": {"tournament": 0.8}}
    full = {"run": {"limit": None, "candidates_sha256": "c"}, "overall": {"tournament": 0.7}}
    both = with_baseline({"first": first}, "full", full)
    assert matching_baseline(both["baselines"], {"limit": None, "candidates_sha256": "c"}) == \
        ("full", full)
    assert matching_baseline(both["baselines"], {"limit": 15, "candidates_sha256": "c"}) == \
        ("first", first)
    assert matching_baseline(both["baselines"], {"limit": 15, "candidates_sha256": "d"}) == \
        ("", None)
    # Other data (the generator's seed, its scale) is not compared with this data's figures.
    assert matching_baseline(both["baselines"], {"limit": None, "candidates_sha256": "c",
                                                 "seed": 0, "scale": 1.0}) == ("full", full)
    assert matching_baseline(both["baselines"], {"limit": None, "candidates_sha256": "c",
                                                 "seed": 1, "scale": 1.0}) == ("", None)
    assert matching_baseline(both["baselines"], {"limit": 15, "candidates_sha256": "c",
                                                 "seed": 0, "scale": 10.0}) == ("", None)
    assert worse({"overall": {"tournament": 0.75, "lost_by_correct_share": 0.01}},
                 {"overall": {"tournament": 0.8, "lost_by_correct_share": 0.0}}) == \
        ["overall: tournament 0.8 -> 0.75", "overall: lost_by_correct_share 0.0 -> 0.01"]


def test_rates_count_each_pair_once_and_repeats_apart():
    """A pair separated again is one pair: its first instance decides the separation rate and
    the degenerate share; the repeats (one failed: nothing new away from the rows used) are
    counted apart, and every duel still counts for duels lost and judge calls."""
    duels = [duel(0, 1, "a", degenerate=False),
             {**duel(0, 1, "draw", separation="failed", rows=None), "attempt": 2},
             {**duel(0, 1, "a", degenerate=True), "attempt": 3},
             duel(0, 2, "draw", separation="nondeterministic", rows=None)]
    got = figures([record(1, [0], [2, 1, 1], duels, 0, 0)])
    assert got["pairs"] == 2
    assert got["separation_rate"] == 0.5
    assert got["degenerate_share"] == 0.0
    assert got["repeat_duels"] == 2
    assert got["judge_calls_per_task"] == 2.0


def test_a_pair_replayed_by_split_parts_is_separated_when_any_duel_was():
    """After a group splits on D', its parts duel again from attempt 1: a failed duel of the
    parts does not make a separated pair count as failed, and the pair is counted once."""
    duels = [{**duel(1, 0, "draw", separation="failed", rows=None), "attempt": 1},
             {**duel(0, 1, "a", degenerate=True), "attempt": 1},
             {**duel(2, 3, "draw", separation="failed", rows=None), "attempt": 1}]
    got = figures([record(1, [0], [2, 1, 1], duels, 0, 0)])
    assert got["pairs"] == 2 and got["repeat_duels"] == 1
    assert got["separation_rate"] == 0.5
    assert got["degenerate_share"] == 0.5


def test_a_lost_duel_says_how_its_loser_was_made():
    """Task 1's candidate 0 is right on D and loses: a defect when it is correct by
    construction, what should happen when it is a mistake right on D by coincidence."""
    def lost_with(made: dict) -> dict:
        filler = {"how": ["gold"], "correct": True}
        return figures(RECORDS, None, {"1": [made, filler, filler, filler]})

    coincidence = lost_with({"how": ["mistake:missing_filter"], "correct": False})
    assert coincidence["lost_by_correct"] == 1
    assert coincidence["lost_by_correct_by_construction"] == 0
    assert coincidence["lost_by_correct_duels"][0]["loser_made"]["how"] == \
        ["mistake:missing_filter"]
    assert lost_with({"how": ["rewrite:aliases"], "correct": True})[
        "lost_by_correct_by_construction"] == 1
    unknown = figures(RECORDS)
    assert unknown["lost_by_correct_by_construction"] is None
    assert unknown["lost_by_correct_duels"][0]["loser_made"] is None


def test_the_report_counts_every_duel_played_and_names_tied_golds():
    tied = [dict(RECORDS[0], gold_nondeterministic="rows tie at the LIMIT cut"), RECORDS[1]]
    row = figures(tied)
    lines = report_lines({"overall": row})
    # The share is over every duel played (4 pairs, no repeats here), as the line says.
    assert "duels lost by a candidate correct on D: 1 of 4 (25.00%; goal <= 0.5%)" in lines
    assert any(line.startswith("tasks whose gold answer on D is one of several (ties): 1;")
               and "100.00% of the upper bound" in line for line in lines)
