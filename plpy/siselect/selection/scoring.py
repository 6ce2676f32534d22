"""Scores of the tournament's units (docs/selection.md, "Scoring").

A *unit* is a set of candidates with the same answer on D (one group, or part of one) and
the same answer on every instance D' they were run on: a group whose members answer
differently on a D' is split there, and its parts go on as units of their own. Every
member of a unit has the same record, so the winner is a member chosen by its own record.

``points`` (the paper's round-robin): per pair of units, 1 for a win, 0.5 for a draw, 0
for a loss; with several instances a pair's points are the majority of its instances'.

``evidence``: the log-odds that a unit holds the right answer, from the consistency prior
and every verdict weighted by how sure it is::

    score(u) = log |group(u)| + sum over instances i that u ran on of
               log(2 r_i)        if u's answer on D'_i matches the judge's
               log(2 (1 - r_i))  if it does not

    r_i = 1/2 + (q - 1/2) * agreement_i * meaning_i

``q`` is the judge's accuracy (an LLM's: :data:`DEFAULT_ACCURACY`; the reference query's:
:data:`REFERENCE_ACCURACY`), ``agreement_i`` how much the judge's votes agree (2 s - 1 for
a majority share s; 1 with one vote), ``meaning_i`` how much D'_i keeps the question's
meaning (:data:`MEANING_WEIGHT`). A judge that abstains gives no evidence.
"""

import math
from dataclasses import dataclass, field
from typing import Any

DEFAULT_ACCURACY = 0.8  # an LLM answering small instances (issue 15: at most about 83%)
REFERENCE_ACCURACY = 0.99  # the reference query: only the instance's meaning can fail it
SCORE_DIGITS = 9  # evidence scores equal to this many decimals are a tie
#: How far a verdict on an instance of each rank (docs/instances.md) is believed.
MEANING_WEIGHT = {"meaningful": 1.0, "non-degenerate": 0.75, "degenerate": 0.25,
                  "failed": 0.75}


@dataclass
class Unit:
    """Candidates with one answer on D and on every D' they ran on; one record."""

    uid: int
    members: list[int]  # input indexes, in input order
    group: int  # position of its group (on D) in the tournament's groups
    size: int  # its group's size: the consistency prior
    evidence: float = 0.0  # sum of the log-ratios of its verdicts
    instance_points: dict[int, list[float]] = field(default_factory=dict)  # match -> points
    matched: int = 0  # instances whose judge answer its answer on D' matched
    mismatched: int = 0
    abstained: int = 0  # instances run on which the judge gave no answer

    @property
    def first(self) -> int:
        return self.members[0]

    def points(self) -> float:
        return sum(pair_points(p) for p in self.instance_points.values())

    def score(self, scoring: str) -> float:
        if scoring == "points":
            return self.points()
        # Rounded: two units with the same verdicts summed in another order must tie, so
        # that the tie-breaks (group size, then input order) decide, not the last bit.
        return round(math.log(self.size) + self.evidence, SCORE_DIGITS)

    def part(self, uid: int, members: list[int]) -> "Unit":
        """A part of this unit after a split: the same record so far."""
        return Unit(uid, members, self.group, self.size, self.evidence,
                    {m: list(p) for m, p in self.instance_points.items()},
                    self.matched, self.mismatched, self.abstained)


def pair_points(points: list[float]) -> float:
    """A pair's points from its instances': the majority (1 win, 0.5 draw, 0 loss)."""
    if not points:
        return 0.0
    mean = sum(points) / len(points)
    return 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5


def instance_points(matched: bool | None, any_matched: bool, all_matched: bool) -> float:
    """A unit's points on one instance: ``matched`` None when the judge abstained. A draw
    when every side or no side matches, as the paper's comparator says."""
    if matched is None or all_matched or not any_matched:
        return 0.5
    return 1.0 if matched else 0.0


def agreement(votes: list[dict[str, Any]]) -> float:
    """How much the judge's own votes agree: 2 s - 1 for the majority's share s of the
    votes that took part in the majority (an LLM's samples); 1 without such votes."""
    counted = [v for v in votes if "majority" in v and v.get("rows") is not None]
    if len(counted) < 2:
        return 1.0
    share = sum(1 for v in counted if v["majority"]) / len(counted)
    return max(0.0, 2 * share - 1)


def reliability(accuracy: float, meaning: str | None, votes: list[dict[str, Any]]) -> float:
    """``r``: the probability that this verdict names the right answer (module formula)."""
    weight = MEANING_WEIGHT.get(meaning or "meaningful", 1.0)
    return 0.5 + (accuracy - 0.5) * agreement(votes) * weight


def log_ratio(matched: bool, r: float) -> float:
    return math.log(2 * r) if matched else math.log(2 * (1 - r))


def bounds(scoring: str, accuracy: float) -> tuple[float, float]:
    """The most a unit's score can gain and lose on one more instance of a pair."""
    if scoring == "points":
        return 1.0, 0.0
    return log_ratio(True, accuracy), log_ratio(False, accuracy)


def ranking_key(unit: Unit, scoring: str) -> tuple[float, int, int]:
    """Best first by: score, then group size (consistency), then input order."""
    return (unit.score(scoring), unit.size, -unit.first)


def winner(units: list[Unit], scoring: str) -> tuple[Unit, str]:
    """The best unit, and what decided it."""
    best = max(units, key=lambda u: ranking_key(u, scoring))
    tied = [u for u in units if u.score(scoring) == best.score(scoring)
            and u.group != best.group]
    if not tied:
        return best, "tournament"
    sizes = [u.size for u in [best, *tied]]
    return best, "consistency" if sizes.count(max(sizes)) == 1 else "input order"
