"""Scores of the tournament's units (docs/selection.md, "Scoring").

A *unit* is a set of candidates with the same answer on D (one group, or part of one) and
the same answer on every instance D' they were run on: a group whose members answer
differently on a D' is split there, and its parts go on as units of their own. Every
member of a unit has the same record, so the winner is a member chosen by its own record.

``points`` (the paper's round-robin): per pair of units, 1 for a win, 0.5 for a draw, 0
for a loss; with several instances a pair's points are the majority of its instances'.

``evidence``: the log-odds that a unit holds the right answer, from the consistency prior
and every verdict weighted by how sure it is::

    score(u) = PRIOR_WEIGHT * log |group(u)| + sum over instances i that u ran on of
               log(2 r_i)        if u's answer on D'_i matches the judge's
               log(2 (1 - r_i))  if it does not

    r_i = 1/2 + (q - 1/2) * agreement_i * meaning_i

``q`` is the judge's accuracy (an LLM's: :data:`DEFAULT_ACCURACY`; the reference query's:
:data:`REFERENCE_ACCURACY`), ``agreement_i`` how much the judge's votes agree (2 s - 1 for
a majority share s; 1 with one vote), ``meaning_i`` how much D'_i keeps the question's
meaning (:data:`MEANING_WEIGHT`). A judge that abstains gives no evidence.

When the judge's accuracy is only assumed (an LLM's, :data:`DEFAULT_ACCURACY`; the rule
``uncertain_accuracy``, the default), it is held uncertain instead: one of
:data:`ACCURACY_SPREAD`, equally likely, and a unit's evidence is the log of the mean over
them of the likelihood ratio above, with each verdict counted by its weight
``agreement_i * meaning_i`` (:func:`uncertain_evidence`). Verdicts that contradict each
other then say the judge errs, and count less.
"""

import math
from dataclasses import dataclass, field
from typing import Any

DEFAULT_ACCURACY = 0.8  # an LLM answering small instances (issue 15: at most about 83%)
REFERENCE_ACCURACY = 0.99  # the reference query: only the instance's meaning can fail it
#: How strongly group sizes speak before any verdict: a unit of a group of n starts at
#: ``PRIOR_WEIGHT * log n``, so that without verdicts group g is right with odds
#: ``|g| ** PRIOR_WEIGHT``. Fitted by likelihood on which group was right in the
#: yardstick's runs of the paper's candidate sets, a real model's (bench/prior_calibration.py:
#: 1.5 at K=5, 2 at K=24, 1.5 at K=24 on data ten times as large, 1.5 pooled; 1, the
#: weight before, is never the best fit); not on the generated sets, whose right group is
#: the only largest in 189 of 199 tasks (they ask for 4 and more).
PRIOR_WEIGHT = 1.5
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
    evidence: float = 0.0  # log-ratio of its verdicts (module formula)
    matched_weight: float = 0.0  # verdicts its answers matched, each by its weight
    mismatched_weight: float = 0.0
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
        return round(prior(self.size) + self.evidence, SCORE_DIGITS)

    def part(self, uid: int, members: list[int]) -> "Unit":
        """A part of this unit after a split: the same record so far."""
        return Unit(uid, members, self.group, self.size, self.evidence,
                    self.matched_weight, self.mismatched_weight,
                    {m: list(p) for m, p in self.instance_points.items()},
                    self.matched, self.mismatched, self.abstained)


def prior(size: int) -> float:
    """The consistency prior of a unit whose group holds ``size`` candidates, as log-odds."""
    return PRIOR_WEIGHT * math.log(size)


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


def verdict_weight(meaning: str | None, votes: list[dict[str, Any]]) -> float:
    """How far a verdict counts, from 0 to 1: its instance's meaning times the agreement of
    the judge's votes."""
    return MEANING_WEIGHT.get(meaning or "meaningful", 1.0) * agreement(votes)


def believed(accuracy: float, weight: float) -> float:
    """``r`` of a verdict of ``weight`` (:func:`verdict_weight`) from a judge of ``accuracy``."""
    return 0.5 + (accuracy - 0.5) * weight


def reliability(accuracy: float, meaning: str | None, votes: list[dict[str, Any]]) -> float:
    """``r``: the probability that this verdict names the right answer (module formula)."""
    return believed(accuracy, verdict_weight(meaning, votes))


def log_ratio(matched: bool, r: float) -> float:
    return math.log(2 * r) if matched else math.log(2 * (1 - r))


#: The accuracies a judge whose accuracy is only assumed (an LLM's) may have, equally likely
#: a priori: their mean (0.798) is about DEFAULT_ACCURACY, the published figure, and they
#: run from a weak judge to one as sure as the reference query. All above 1/2: a judge that
#: disagrees with a unit is never evidence for it.
ACCURACY_SPREAD = (0.6, 0.7, 0.8, 0.9, 0.99)


def uncertain_evidence(matched: float, mismatched: float,
                       spread: tuple[float, ...] = ACCURACY_SPREAD) -> float:
    """A unit's evidence when the judge's accuracy is one of ``spread``, not known which:
    the log of the mean over ``spread`` of the fixed model's likelihood ratio. ``matched``
    and ``mismatched``: the weights (:func:`verdict_weight`) of the verdicts its answers
    matched and did not. One full verdict gives about what the fixed model gives at the
    mean accuracy; verdicts that contradict each other count less (two against one: 2.6
    to 1 instead of 4), since they say the judge errs, and so do many that agree."""
    logs = [matched * math.log(2 * q) + mismatched * math.log(2 * (1 - q)) for q in spread]
    top = max(logs)
    return top + math.log(sum(math.exp(x - top) for x in logs) / len(logs))


def add_verdict(unit: "Unit", matched: bool, accuracy: float, weight: float,
                spread: tuple[float, ...] | None) -> None:
    """Count one verdict in ``unit``'s evidence (``spread`` None: the accuracy is known)."""
    if matched:
        unit.matched_weight += weight
    else:
        unit.mismatched_weight += weight
    if spread is None:
        unit.evidence += log_ratio(matched, believed(accuracy, weight))
    else:
        unit.evidence = uncertain_evidence(unit.matched_weight, unit.mismatched_weight,
                                           spread)


def reach(unit: "Unit", scoring: str, accuracy: float, spread: tuple[float, ...] | None,
          instances: float) -> tuple[float, float]:
    """The most and the least ``unit``'s score can be after ``instances`` more instances
    (evidence grows with every match and falls with every mismatch, in either model)."""
    now = unit.score(scoring)
    if scoring == "points":
        return now + instances, now
    if spread is None:
        return (now + instances * log_ratio(True, accuracy),
                now + instances * log_ratio(False, accuracy))
    m, n = unit.matched_weight, unit.mismatched_weight
    start = prior(unit.size)
    return (start + uncertain_evidence(m + instances, n, spread),
            start + uncertain_evidence(m, n + instances, spread))


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
