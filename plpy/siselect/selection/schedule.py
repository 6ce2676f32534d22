"""Which pairs the tournament plays, in rounds (docs/selection.md, "Schedule").

A round's duels are separated one after another and then judged together (the LLM's
requests go out concurrently), so fewer rounds mean less waiting and fewer duels mean
fewer judge calls.

``round-robin``: every pair of groups in the first round; later rounds only separate
again the pairs that need another instance.

``adaptive``: a pair is played only while it can still change the winner. A unit's score
can move by at most what :func:`siselect.selection.scoring.reach` allows for the
instances still to come; a unit whose best possible score stays below some unit's worst
possible score can no longer win, and a pair of two such units is never played. Each
round plays the remaining pairs of the unit ranked first (so its score is soon final and
the others have a bar to clear), with every pair waiting to be separated again.
"""

from dataclasses import dataclass, field
from typing import Any

from siselect.selection.scoring import Unit, pair_points, ranking_key, reach


@dataclass
class Match:
    """A pair of units judged on one instance or more (separated again, rows excluded)."""

    mid: int
    a: int  # input index of A's representative
    b: int
    duels: list[dict[str, Any]] = field(default_factory=list)  # its duel records, in order
    exclude: set[int] = field(default_factory=set)  # rows of its instances so far
    # Of those, the rows its searches chose (not partners or referenced rows added to them):
    # only leaving out one of these can make a search find another instance.
    chosen: set[int] = field(default_factory=set)
    instances: list[frozenset[int]] = field(default_factory=list)  # each one's rows
    again: str | None = None  # why it needs another instance, while it does
    exhausted: bool = False  # its last search found nothing new: no instance is to come
    room: int | None = None  # instances it may take when fewer than the limit
    both_ways: bool = False  # its verdicts went both ways: it may take widened(limit)

    def cap(self, limit: int) -> int:
        """The most instances it may take under the tournament's ``limit``."""
        cap = widened(limit) if self.both_ways else limit
        return cap if self.room is None else min(cap, self.room)

    def has_room(self, limit: int, after: int = 0) -> bool:
        """Whether it may take another instance (``after`` more duels than it has)."""
        return len(self.duels) + after < self.cap(limit)

    def pending(self, limit: int) -> bool:
        return self.again is not None and self.has_room(limit)


def widened(limit: int) -> int:
    """The instances a pair whose verdicts went both ways may take: up to ``limit`` a
    majority of one may be the judge's error; ``2 limit - 1`` lets a clearer one form
    (docs/selection.md, "More than one instance")."""
    return 2 * limit - 1


def both_ways(u: Unit, v: Unit) -> bool:
    """Whether the instances two units met on went both ways (each won one)."""
    ways = {(a, b) for mid in u.instance_points.keys() & v.instance_points.keys()
            for a, b in zip(u.instance_points[mid], v.instance_points[mid], strict=False)}
    return (1.0, 0.0) in ways and (0.0, 1.0) in ways


def met(u: Unit, v: Unit) -> bool:
    """Whether two units were run on a common instance (a part of a split unit has met
    the other parts and the other side there)."""
    return bool(u.instance_points.keys() & v.instance_points.keys())


def open_pairs(units: list[Unit]) -> list[tuple[Unit, Unit]]:
    """Pairs of units of different groups that never met, in input order."""
    ordered = sorted(units, key=lambda u: u.first)
    return [(u, v) for i, u in enumerate(ordered) for v in ordered[i + 1:]
            if u.group != v.group and not met(u, v)]


def contenders(units: list[Unit], pairs: list[tuple[Unit, Unit]], waiting: list[tuple[Match,
               Unit, Unit]], scoring: str, accuracy: float, limit: int,
               spread: tuple[float, ...] | None = None) -> set[int]:
    """The uids of units that may still win: every instance a unit has left goes its way,
    or against it (a points pair's majority at most moves from what it has to 1 or 0)."""
    left = {u.uid: 0.0 for u in units}
    shift_up = {u.uid: 0.0 for u in units}
    shift_down = {u.uid: 0.0 for u in units}
    for u, v in pairs:
        for w in (u, v):
            left[w.uid] += limit
    for m, u, v in waiting:
        for w in (u, v):
            if scoring == "points":
                now = _pair_points(w, m)
                shift_up[w.uid] += 1.0 - now
                shift_down[w.uid] -= now
            else:
                left[w.uid] += m.cap(limit) - len(m.duels)
    up, down = {}, {}
    for u in units:
        best, worst = reach(u, scoring, accuracy, spread, left[u.uid])
        up[u.uid], down[u.uid] = best + shift_up[u.uid], worst + shift_down[u.uid]
    bar = max(down.values())
    return {uid for uid, best in up.items() if best >= bar - 1e-9}


def _pair_points(unit: Unit, match: Match) -> float:
    return pair_points(unit.instance_points.get(match.mid, []))


def next_round(schedule: str, first: bool, units: list[Unit],
               waiting: list[tuple[Match, Unit, Unit]], scoring: str, accuracy: float,
               limit: int, spread: tuple[float, ...] | None = None
               ) -> tuple[list[tuple[Unit, Unit]], list[tuple[Match, Unit, Unit]]]:
    """The new pairs and the matches to separate again in the next round; both empty when
    the tournament is over."""
    pairs = open_pairs(units)
    if schedule == "round-robin":
        return (pairs if first else []), waiting
    alive = contenders(units, pairs, waiting, scoring, accuracy, limit, spread)
    pairs = [(u, v) for u, v in pairs if u.uid in alive or v.uid in alive]
    waiting = [(m, u, v) for m, u, v in waiting if u.uid in alive or v.uid in alive]
    if not pairs:
        return [], waiting
    involved = {w.uid: w for pair in pairs for w in pair}
    focus = max(involved.values(), key=lambda u: ranking_key(u, scoring))
    return [(u, v) for u, v in pairs if focus is u or focus is v], waiting


def skipped(units: list[Unit]) -> int:
    """Pairs of units of different groups that never met when the tournament ended."""
    return len(open_pairs(units))
