"""The selection methods the tournament is compared against (paper section III).

- **consistency** (AlphaSQL's self-consistency): the representative of the largest group
  of candidates that give the same answer on D.
- **naive**: one prompt lists the candidates with a checklist; the LLM picks the first that
  passes. Asked ``runs`` times (three in the paper), the most frequent pick wins.
- **pairwise** (after DeepEye-SQL's confidence-aware selection): when the largest group
  holds at least ``confident_share`` of the candidates it is taken at once; otherwise the
  LLM judges every pair of group representatives, shown with their results on the whole
  database, by a majority of ``votes`` calls; most wins, then the larger group, wins.

The LLM is reached through ``complete(messages, run) -> reply text``, ``run`` counting
the calls with the same prompt from 0 (so a seeded endpoint can get seed + run, as the
LLM judge's votes do); a call that raises :class:`JudgeError` counts as an unreadable
vote. Asking stops once a majority is certain. Nothing here touches a database.
"""

import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from siselect.client.bench.baseline_prompts import (
    naive_messages,
    pairwise_messages,
    parse_better,
    parse_choice,
)
from siselect.runtime.errors import JudgeError
from siselect.runtime.executor import Rows

Complete = Callable[[list[dict[str, str]], int], str]
METHODS = ("consistency", "naive", "pairwise")
LLM_METHODS = ("naive", "pairwise")


@dataclass
class Contender:
    """One group of candidates with the same answer on D, through its representative."""

    index: int  # the representative's position among the input candidates
    sql: str
    answer: Rows  # the representative's answer on D
    size: int  # how many candidates gave this answer


def chat_complete(client: Any) -> Complete:
    """``complete`` over a :class:`siselect.selection.llm.ChatClient`: call n of a prompt sends the
    configured seed + n, as the LLM judge's votes do (no seed when none is configured)."""
    seed = client.config.seed

    def complete(messages: list[dict[str, str]], run: int) -> str:
        return str(client.complete(messages, None if seed is None else seed + run))

    return complete


def consistency(contenders: Sequence[Contender]) -> int:
    """The representative of the largest group; ties go to the earlier candidate."""
    if not contenders:
        raise ValueError("consistency needs at least one contender")
    return max(contenders, key=lambda c: (c.size, -c.index)).index


def _ask(complete: Complete, messages: list[dict[str, str]],
         run: int) -> tuple[str | None, str | None]:
    """The reply text, or None and the reason when the endpoint failed."""
    try:
        return complete(messages, run), None
    except JudgeError as exc:
        return None, exc.message


def _decided(picks: list[Any], runs: int) -> bool:
    """Some pick already holds a majority of all ``runs``: more calls cannot change it."""
    counted = Counter(p for p in picks if p is not None)
    return bool(counted) and max(counted.values()) > runs // 2


def naive_selection(complete: Complete, schema: str, question: str, evidence: str | None,
                    candidates: Sequence[tuple[int, str]], runs: int = 3) -> dict[str, Any]:
    """Pick one of ``candidates`` (``(index, sql)`` pairs) by the naive checklist prompt.

    The most frequent pick over ``runs`` calls wins, ties going to the earlier candidate;
    when no reply names a candidate, the first candidate is taken (``fallback``).
    """
    if not candidates:
        raise ValueError("naive selection needs at least one candidate")
    messages = naive_messages(schema, question, evidence, [sql for _, sql in candidates])
    votes: list[int | None] = []
    errors = []
    for run in range(runs):
        reply, error = _ask(complete, messages, run)
        pick = parse_choice(reply, len(candidates)) if reply is not None else None
        if pick is None:
            errors.append(error or "the reply names no candidate")
        votes.append(pick)
        if _decided(votes, runs):
            break
    counted = Counter(v for v in votes if v is not None)
    if not counted:
        return {"choice": candidates[0][0], "votes": [], "fallback": True,
                "calls": len(votes), "errors": errors}
    best = max(counted.items(), key=lambda item: (item[1], -item[0]))[0]
    return {"choice": candidates[best][0], "fallback": False, "calls": len(votes),
            "errors": errors,
            "votes": [candidates[v][0] if v is not None else None for v in votes]}


def _adjudicate(complete: Complete, schema: str, question: str, evidence: str | None,
                a: Contender, b: Contender, votes: int, max_rows: int) -> dict[str, Any]:
    messages = pairwise_messages(schema, question, evidence, (a.sql, a.answer),
                                 (b.sql, b.answer), max_rows)
    picks: list[str | None] = []
    errors = []
    for run in range(votes):
        reply, error = _ask(complete, messages, run)
        pick = parse_better(reply) if reply is not None else None
        if pick is None:
            errors.append(error or "the reply decides nothing")
        picks.append(pick)
        if _decided(picks, votes):
            break
    wins_a, wins_b = picks.count("a"), picks.count("b")
    verdict = "a" if wins_a > wins_b else "b" if wins_b > wins_a else "draw"
    return {"a": a.index, "b": b.index, "votes": picks, "verdict": verdict, "errors": errors}


def pairwise_selection(complete: Complete, schema: str, question: str, evidence: str | None,
                       contenders: Sequence[Contender], votes: int = 3,
                       confident_share: float | None = None,
                       max_rows: int = 20) -> dict[str, Any]:
    """Pick a representative by LLM judgements of every pair, shown with results on D."""
    if not contenders:
        raise ValueError("pairwise selection needs at least one contender")
    total = sum(c.size for c in contenders)
    largest = max(contenders, key=lambda c: (c.size, -c.index))
    if len(contenders) == 1 or (confident_share is not None
                                and largest.size >= confident_share * total):
        return {"choice": largest.index, "shortcut": True, "duels": [], "calls": 0}
    scores = {c.index: 0.0 for c in contenders}
    duels = []
    for a, b in itertools.combinations(contenders, 2):
        duel = _adjudicate(complete, schema, question, evidence, a, b, votes, max_rows)
        points = {"a": (1.0, 0.0), "b": (0.0, 1.0), "draw": (0.5, 0.5)}[duel["verdict"]]
        scores[a.index] += points[0]
        scores[b.index] += points[1]
        duels.append(duel)
    best = max(contenders, key=lambda c: (scores[c.index], c.size, -c.index))
    return {"choice": best.index, "shortcut": False, "duels": duels, "scores": scores,
            "calls": sum(len(d["votes"]) for d in duels)}
