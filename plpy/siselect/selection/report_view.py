"""What a tournament report shows, in the order a reader needs it, for both renderings
(Markdown in :mod:`siselect.selection.report`, HTML in ``client/report_html``).

A report stands alone: the question, the evidence, the reference, every candidate's SQL
with its number and group, the dropped ones with their reasons; first a summary (the
winner and why, who beat whom, the scores), then each duel. The result holds only the
winner's SQL; the other texts come in ``inputs`` (the CLI and the bench have them).
"""

import re
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from siselect.instances.render import tables

VERDICT_WORDS = {"a": "A wins", "b": "B wins", "draw": "draw"}
_QUERY_NAMES = re.compile(r"\bq([12])\b", re.IGNORECASE)


@dataclass
class Inputs:
    """What the call was given that the result does not repeat."""

    candidates: list[str] = field(default_factory=list)
    evidence: str | None = None
    reference: str | None = None
    dialect: str = "postgres"


def judge_failure(result: dict[str, Any]) -> str | None:
    """Why the judge decided nothing, or None: the circuit breaker's ``judge_failure``
    (issue 17), or every duel that reached the judge ending in its error without rows.
    The ``none`` judge abstains by design: nothing failed."""
    winner = result.get("winner")
    fallback = (f"; candidate {winner['index']} was picked by {result.get('decided_by')}, "
                "not by the judge" if winner else "")
    tripped = result.get("judge_failure")
    if tripped:
        return (f"{tripped.get('cause', 'unknown cause')} ({tripped.get('duels', '?')} duels "
                f"without a verdict){fallback}")
    if result.get("judge") == "none":
        return None
    asked = [d for d in result.get("duels", []) if d.get("judge")]
    if asked and all(d["judge"].get("error") and d["judge"].get("rows") is None
                     for d in asked):
        return (f"{asked[0]['judge']['error']} (every one of {len(asked)} duels failed)"
                f"{fallback}")
    return None


def ab_words(text: Any) -> str:
    """Reasons from the separation name the queries q1/q2; the report calls them A/B."""
    return _QUERY_NAMES.sub(lambda m: "AB"[int(m.group(1)) - 1], str(text))


def _outcomes(result: dict[str, Any]) -> dict[tuple[int, int], str]:
    """(row group, column group) -> win, draw or loss, from the row group's side."""
    found: dict[tuple[int, int], str] = {}
    # A duel's sides are units' first members; a split group's part may not be its
    # representative. Several instances of a pair: the last one's verdict is shown.
    home = {m: g["representative"] for g in result.get("groups", []) for m in g["members"]}
    for d in result.get("duels", []):
        a, b, v = home.get(d["a"], d["a"]), home.get(d["b"], d["b"]), d.get("verdict")
        found[(a, b)] = {"a": "win", "b": "loss"}.get(v, "draw")
        found[(b, a)] = {"a": "loss", "b": "win"}.get(v, "draw")
    return found


def _why(result: dict[str, Any], groups: list[dict[str, Any]]) -> str:
    winner = result["winner"]["index"]
    how = str(result.get("decided_by", ""))
    mine = next((g for g in groups if winner in g["members"]), None)
    if how == "single group":
        return "every candidate that ran returned the same answer on the database"
    if mine is None:
        return f"decided by {how}"
    record = f"{mine['wins']} won, {mine['draws']} drawn, {mine['losses']} lost"
    if how == "tournament":
        return f"the highest score, {mine['score']:g} ({record})"
    if how.startswith("consistency"):
        return (f"tied on score ({mine['score']:g}: {record}); its group is the largest "
                f"({mine['size']} candidates)")
    if how == "input order":
        return (f"tied on score ({mine['score']:g}: {record}) and on group size; the "
                "earliest candidate was taken")
    return f"decided by {how}"


def _tables_read(sql: str | None, dialect: str) -> set[str] | None:
    if not sql:
        return None
    import sqlglot

    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:  # a report must not fail on a text the tournament already judged
        return None
    return {t.name.lower() for t in tree.find_all(exp.Table)}


def _answer(label: str, relation: dict[str, Any] | None, kind: str) -> dict[str, Any] | None:
    if not relation:
        return None
    return {"label": label, "kind": kind, "columns": list(relation.get("columns", [])),
            "rows": list(relation.get("rows", []))}


def _judge_answer(d: dict[str, Any]) -> dict[str, Any] | None:
    """The judge's rows as a table, under A's column names when they fit (the judge
    answers the question, not a query, so it gives no names of its own)."""
    rows = (d.get("judge") or {}).get("rows")
    if rows is None:
        return None
    width = max((len(r) for r in rows), default=0)
    a_columns = ((d.get("answers") or {}).get("a") or {}).get("columns") or []
    columns = a_columns if len(a_columns) == width else [f"column {i + 1}" for i in range(width)]
    return {"label": f"Judge ({(d.get('judge') or {}).get('name')})", "kind": "judge",
            "columns": columns, "rows": rows}


def _duel(d: dict[str, Any], sql: dict[int, str], inputs: Inputs) -> dict[str, Any]:
    read = [_tables_read(sql.get(d["a"]), inputs.dialect),
            _tables_read(sql.get(d["b"]), inputs.dialect)]
    known = all(r is not None for r in read)
    both = set.intersection(*read) if known else set()  # type: ignore[arg-type]
    either = set.union(*read) if known else set()  # type: ignore[arg-type]
    shown: list[dict[str, Any]] = []
    for name, columns, rows in tables(d.get("instance") or {}):
        short = name.rsplit(".", 1)[-1].lower()
        # Read by both queries: where they part ways. Read by neither: rows the foreign
        # keys brought along so that the judge sees what the others point to.
        rank = 0 if short in both else 1 if short in either else 2
        shown.append({"name": name, "columns": columns, "rows": rows,
                      "context": known and rank == 2, "rank": rank if known else 0})
    shown.sort(key=lambda t: t["rank"])  # stable: the instance's order within a rank
    judge = d.get("judge") or {}
    answers = [_answer("A on D'", (d.get("answers") or {}).get("a"), "a"),
               _answer("B on D'", (d.get("answers") or {}).get("b"), "b"),
               _judge_answer(d),
               _answer("Reference on D'", d.get("reference_answer"), "reference")]
    verdict = str(d.get("verdict")) if d.get("verdict") in ("a", "b") else "draw"
    return {
        "a": d["a"], "b": d["b"], "sql_a": sql.get(d["a"]), "sql_b": sql.get(d["b"]),
        "verdict": verdict, "verdict_text": VERDICT_WORDS[verdict],
        "reason": ab_words(d.get("reason", "")),
        "separated": bool(d.get("instance")), "rows": d.get("rows"),
        "tables": shown, "answers": [a for a in answers if a is not None],
        "judge_name": judge.get("name"), "judge_error": judge.get("error"),
        "votes": judge.get("votes") or [],
        "evidence_against_reference": bool(d.get("evidence_against_reference")),
        "references_left_out": d.get("references_left_out") or [],
    }


def report_view(result: dict[str, Any], inputs: Inputs | None = None) -> dict[str, Any]:
    """Everything a report shows, as plain values; texts are raw (renderers escape)."""
    inputs = inputs or Inputs()
    sql = dict(enumerate(inputs.candidates))
    winner = result.get("winner")
    if winner:
        sql.setdefault(winner["index"], winner["sql"])
    outcomes = _outcomes(result)
    groups = []
    for g in result.get("groups", []):
        mine = [v for (row, _), v in outcomes.items() if row == g["representative"]]
        groups.append({**g, "wins": mine.count("win"), "draws": mine.count("draw"),
                       "losses": mine.count("loss")})
    reps = [g["representative"] for g in groups]
    matrix = [[outcomes.get((row, col)) if row != col else None for col in reps]
              for row in reps]
    group_of = {m: g["representative"] for g in groups for m in g["members"]}
    dropped = {d["index"]: d for d in result.get("dropped", [])}
    count = max(int(result.get("candidates") or 0), len(inputs.candidates))
    candidates = [{"index": i, "sql": sql.get(i), "group": group_of.get(i),
                   "winner": winner is not None and winner["index"] == i,
                   "dropped": dropped.get(i)}
                  for i in range(count)]
    return {
        "question": str(result.get("question", "")),
        "evidence": inputs.evidence, "reference": inputs.reference,
        "judge": result.get("judge"), "decided_by": result.get("decided_by"),
        "winner": winner, "reason": result.get("reason"),
        "why": _why(result, groups) if winner else None,
        "judge_failure": judge_failure(result),
        "groups": groups, "reps": reps, "matrix": matrix,
        "candidates": candidates, "dropped": list(dropped.values()),
        "duels": [_duel(d, sql, inputs) for d in result.get("duels", [])],
    }
