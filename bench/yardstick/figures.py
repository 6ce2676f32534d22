"""The yardstick's figures, from ``siselect bench``'s per-task records.

Figures shared with ``siselect bench``'s own summary (what a lost duel is, a round-robin's
pairs, the noise curves and their intervals) come from ``siselect.client.bench.metrics``,
so one name never means two things; the yardstick adds what needs its own inputs: SQLite's
verdicts (transpile disagreements) and the generated candidates' provenance (accuracy by
mistake type).
"""

from collections import Counter
from typing import Any

from siselect.client.bench import metrics

#: The issue's "tournament with --judge-noise 0.2": the rival model at 0.2, mean over seeds.
NOISY = ("rival", "0.2")


def _share(count: int, total: int) -> float | None:
    return metrics.share(count, total, 4)


def _hits(records: list[dict], method: str) -> float | None:
    return _share(sum(bool(r["hits"].get(method)) for r in records), len(records))


def _of_upper(records: list[dict]) -> float | None:
    upper = sum(bool(r["upper_bound"]) for r in records)
    return round(sum(bool(r["hits"].get("tournament")) for r in records) / upper, 4) \
        if upper else None


def _seconds(record: dict) -> float | None:
    """The task's seconds without its noise replays (measured apart)."""
    timings = record.get("timings", {})
    if "task" not in timings:
        return None
    return timings["task"] - timings.get("noise_replays", 0.0)


def transpile_disagreements(scored: list[dict], sqlite: dict[str, dict]) -> list[dict]:
    """Candidates that SQLite and PostgreSQL judge differently on the same data: correct
    (the gold's answer by BIRD's rule) on one and not the other, or failing on one only."""
    out = []
    for r in scored:
        verdicts = sqlite.get(str(r["question_id"]))
        if verdicts is None:
            continue
        pg_correct, pg_failed = set(r["correct"]), {d["index"] for d in r["dropped"]}
        sq_correct, sq_failed = set(verdicts["correct"]), set(verdicts["failed"])
        for i in range(r["candidates"]):
            if (i in pg_correct) != (i in sq_correct) or (i in pg_failed) != (i in sq_failed):
                out.append({"question_id": r["question_id"], "candidate": i,
                            "sqlite": "failed" if i in sq_failed else
                            "correct" if i in sq_correct else "wrong",
                            "postgres": "failed" if i in pg_failed else
                            "correct" if i in pg_correct else "wrong"})
    return out


def by_mistake(scored: list[dict], provenance: dict[str, list[dict]]) -> dict[str, Any]:
    """Per mistake type of the generated candidates: the tasks where a candidate made with
    it is wrong on D, each method's accuracy on them, and how often the tournament picked
    such a candidate; plus rewrites (correct by construction) that were wrong after all."""
    tasks: dict[str, list[dict]] = {}
    picked: Counter[str] = Counter()
    rewrites_wrong = 0
    for r in scored:
        made = provenance.get(str(r["question_id"]))
        if not made or len(made) != r["candidates"]:
            continue
        right = set(r["correct"])
        kinds = {h.split(":", 1)[1] for i, c in enumerate(made) if i not in right
                 for h in c["how"] if h.startswith("mistake:")}
        for kind in kinds:
            tasks.setdefault(kind, []).append(r)
        chosen = r["choices"].get("tournament")
        if chosen is not None and chosen not in right:
            picked.update(h.split(":", 1)[1] for h in made[chosen]["how"]
                          if h.startswith("mistake:"))
        rewrites_wrong += sum(c["correct"] and i not in right for i, c in enumerate(made))
    out: dict[str, Any] = {kind: {"tasks": len(rs), "tournament": _hits(rs, "tournament"),
                                  "consistency": _hits(rs, "consistency"),
                                  "tournament_picked": picked[kind]}
                           for kind, rs in sorted(tasks.items())}
    out["rewrites_wrong_on_d"] = rewrites_wrong
    return out


#: Pairs the search did not fail: separated, or that no instance can separate.
NOT_FAILED = ("separated", "nondeterministic", "same_answer")


def _made(provenance: dict[str, list[dict]] | None, record: dict, index: int) -> dict | None:
    """How the generated candidate ``index`` of ``record``'s task was made, if known."""
    made = (provenance or {}).get(str(record["question_id"]))
    return made[index] if made and len(made) == record["candidates"] else None


def figures(records: list[dict], sqlite: dict[str, dict] | None = None,
            provenance: dict[str, list[dict]] | None = None) -> dict[str, Any]:
    scored = [r for r in records if r["status"] == "ok"]
    n = len(scored)
    every_duel = [(r, d) for r in scored for d in r["duels"]]
    # Rates per pair of candidates: separated again or replayed by split parts, one pair.
    duels = metrics.per_pair(scored)
    separated = sum(d["separation"] == "separated" for _, d in duels)
    times = [t for t in map(_seconds, records) if t is not None]
    curves = metrics.noise_curves(scored)
    lost = [{"db_id": r["db_id"], "question_id": r["question_id"], "a": d["a"], "b": d["b"],
             "verdict": d["verdict"], "rows": d.get("rows"), "instance": d.get("instance"),
             "answers": d.get("answers"), "judge_rows": d.get("judge_rows"),
             "right_matched": d.get("right_matched"),
             "loser_made": _made(provenance, r, d["a"] if d["verdict"] == "b" else d["b"])}
            for r, d in every_duel if metrics.duel_lost_by_correct(d, r["correct"])]
    judged = sum(d["separation"] == "separated" for _, d in every_duel)
    round_robin = sum(metrics.round_robin_pairs(len(r["groups"])) for r in scored)
    upper = _share(sum(bool(r["upper_bound"]) for r in scored), n)
    tournament = _hits(scored, "tournament")
    disagreements = transpile_disagreements(scored, sqlite) if sqlite is not None else None
    noisy = curves.get(NOISY[0], {}).get(NOISY[1], {})
    near_miss = curves.get("near-miss", {}).get(NOISY[1], {})
    spread = metrics.spread(times, ("median", "p95"))
    return {
        "tasks": len(records), "scored": n,
        "upper_bound": upper, "consistency": _hits(scored, "consistency"),
        "tournament": tournament,
        "tournament_of_upper": round(tournament / upper, 4) if upper and tournament is not None
        else None,
        # Where the gold's answer on D is one of several (ties at a LIMIT cut), which
        # candidates are "correct on D" is the engine's pick: the share without those tasks.
        "gold_nondeterministic": sum(bool(r.get("gold_nondeterministic")) for r in scored),
        "tournament_of_upper_determined": _of_upper([r for r in scored
                                                     if not r.get("gold_nondeterministic")]),
        "tournament_noisy": noisy.get("accuracy"), "tournament_noisy_ci95": noisy.get("ci95"),
        "tournament_near_miss": near_miss.get("accuracy"),
        "pairs": len(duels), "separation_rate": _share(separated, len(duels)),
        "failed_duel_share": _share(len(duels) - separated, len(duels)),
        # What no instance can separate (answers that differ on D only by how a tie at a
        # LIMIT cut falls, or only within the tolerance) is no failure of the search.
        "search_failed_share": _share(sum(d["separation"] not in NOT_FAILED
                                          for _, d in duels), len(duels)),
        "separation_status": dict(sorted(Counter(str(d["separation"])
                                                 for _, d in duels).items())),
        "degenerate_share": _share(sum(bool(d.get("degenerate")) for _, d in duels),
                                   len(duels)),
        "failed_on_instance_share": _share(sum(bool(d.get("failed_on_instance"))
                                               for _, d in duels), len(duels)),
        "repeat_duels": len(every_duel) - len(duels),
        "lost_by_correct": len(lost),
        "lost_by_correct_share": _share(len(lost), len(every_duel)),
        "lost_by_correct_duels": lost,
        # Another candidate right on D answered as the judge on that D': the instance kept
        # the question's meaning, and the loser reads the question otherwise.
        "lost_by_correct_right_matched": sum(bool(d["right_matched"]) for d in lost),
        # A generated candidate right on D by coincidence (a filter that changes nothing on
        # D) should lose; one correct by construction losing is the defect to look at.
        "lost_by_correct_by_construction": sum(bool(d["loser_made"] and
                                                    d["loser_made"]["correct"]) for d in lost)
        if provenance is not None else None,
        "transpile_disagreements": len(disagreements) if disagreements is not None else None,
        "transpile_disagreement_list": disagreements,
        "transpile_failures": sum(not r["coverage"]["transpiled"] for r in scored),
        "gold_failed_pg": sum(r["status"] == "gold_failed" for r in records),
        "tournament_errors": sum(bool(r.get("tournament_error")) for r in scored),
        "seconds_per_task": {k: None if v is None else round(v, 3) for k, v in spread.items()},
        "judge_calls_per_task": _share(judged, n),
        "round_robin_calls_per_task": _share(round_robin, n),
        "noise_curves": curves,
        "by_mistake": by_mistake(scored, provenance) if provenance else None,
    }
