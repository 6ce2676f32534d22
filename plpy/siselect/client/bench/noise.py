"""Noise curves: the tournament replayed with a noisy judge on the noiseless run's instances.

``siselect bench --judge-noise 0.1,0.2,0.3 --noise-seeds 5 --noise-model rival,near-miss``
runs each task's tournament once with the plain judge, keeping every duel's separation in a
memo, then replays it for every model, level and seed with a
:class:`~siselect.selection.judges.NoisyJudge`: the replays reuse the memo's instances
and only the judge runs again, so curves stay cheap. ``new_separations`` in the record
counts the separations a replay computed itself: none at level 0; at other levels only the
duels its own verdicts led to (a pair separated again after a draw, see
:mod:`siselect.selection.memo`).

A single level without ``--noise-seeds`` keeps the older meaning: the tournament itself is
judged with that noise (``judge_noise`` in the summary) and nothing is replayed.
"""

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from siselect.runtime.errors import InvalidInput, QueryFailed
from siselect.runtime.executor import Executor, Rows
from siselect.selection.judges import NOISE_MODELS, Judge, NoisyJudge


@dataclass(frozen=True)
class NoisePlan:
    """The replays of a run: every model at every level, ``seeds`` seeds each."""

    levels: tuple[float, ...] = ()
    seeds: int = 0
    models: tuple[str, ...] = ("rival",)

    def cells(self) -> list[tuple[str, float, int]]:
        return [(m, p, s) for m in self.models for p in self.levels for s in range(self.seeds)]

    def fingerprint(self) -> dict[str, Any]:
        """Empty when nothing is replayed, so that older runs resume unchanged."""
        if not self.levels:
            return {}
        return {"noise_levels": list(self.levels), "noise_seeds": self.seeds,
                "noise_models": list(self.models)}


def parse_levels(text: str) -> tuple[float, ...]:
    """``0.1,0.2,0.3`` as levels, each between 0 and 1, in the order given, once each."""
    try:
        levels = tuple(dict.fromkeys(float(x) for x in str(text).split(",") if x.strip()))
    except ValueError:
        raise InvalidInput(f"--judge-noise: not a comma-separated list of numbers: {text!r}") \
            from None
    if not levels or any(not 0.0 <= p <= 1.0 for p in levels):
        raise InvalidInput("--judge-noise must be between 0 and 1 (each level of the list)")
    return levels


def parse_models(text: str) -> tuple[str, ...]:
    models = tuple(dict.fromkeys(m.strip() for m in str(text).split(",") if m.strip()))
    unknown = [m for m in models if m not in NOISE_MODELS]
    if not models or unknown:
        raise InvalidInput(f"--noise-model: use {' or '.join(NOISE_MODELS)} (comma-separated "
                           f"for several), got {text!r}")
    return models


def plan(levels: tuple[float, ...], seeds: int | None, models: tuple[str, ...]
         ) -> tuple[float, NoisePlan]:
    """``(noise of the tournament itself, replays)`` from the command line's values."""
    if seeds is not None and seeds < 1:
        raise InvalidInput("--noise-seeds must be at least 1")
    if seeds is None and len(levels) == 1:
        if len(models) > 1:
            raise InvalidInput("several noise models need --noise-seeds (replayed curves)")
        return levels[0], NoisePlan(models=models)
    return 0.0, NoisePlan(levels, seeds or 1, models)


@dataclass
class ReplayExecutor:
    """The task's executor for replays: a query text run before in this task's session (on
    D, or on an instance D') is answered from memory, its failure raised again. Replays run
    the same candidates on the same data over and over; only ``queries`` reach the server.
    The noiseless tournament does not use it, so what it measures is untouched."""

    inner: Executor
    queries: int = 0
    _seen: dict[Any, Rows | QueryFailed] = field(default_factory=dict)

    @property
    def schemas(self) -> list[str]:
        return self.inner.schemas

    def run(self, sql: str, max_rows: int | None = None, **trusted: Any) -> Rows:
        key = (sql, max_rows, tuple(sorted(trusted.get("allow", ()))),
               tuple(trusted.get("inner", ())), tuple(trusted.get("params", ())))
        if key not in self._seen:
            self.queries += 1
            try:
                self._seen[key] = self.inner.run(sql, max_rows, **trusted)
            except QueryFailed as exc:
                self._seen[key] = exc
        found = self._seen[key]
        if isinstance(found, QueryFailed):
            raise found
        return found

    def run_internal(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        return self.inner.run_internal(sql, params)


def noisy(inner: Judge, level: float, rng_key: str, rivals: list[exp.Query],
          model: str) -> NoisyJudge:
    """A noisy judge whose draws depend only on ``rng_key`` (same on any worker)."""
    return NoisyJudge(inner, level, random.Random(rng_key), rivals, model)


def replay(tournament: Callable[[Judge, Executor], dict[str, Any]],
           make_inner: Callable[[], Judge], executor: Executor, noise: NoisePlan, key: str,
           seed: int, rivals: list[exp.Query], correct: list[int],
           memo_size: Callable[[], int]) -> list[dict[str, Any]]:
    """One record per replay: model, level, seed, the winner, whether it is correct, the
    duels judged, the separations the memo held before it and those the replay had to
    compute itself, and the queries that reached the server."""
    runs = []
    replaying = ReplayExecutor(executor)
    for model, level, s in noise.cells():
        judge = noisy(make_inner(), level, f"{seed}:{key}:{model}:{level:g}:{s}", rivals, model)
        before, sent = memo_size(), replaying.queries
        try:
            result: dict[str, Any] | None = tournament(judge, replaying)
            error = None
        except Exception as exc:  # noqa: BLE001 - a failed replay is a miss, not a crash
            result, error = None, f"{type(exc).__name__}: {exc}"
        choice = ((result or {}).get("winner") or {}).get("index")
        duels = (result or {}).get("duels", [])
        runs.append({"model": model, "noise": level, "seed": s, "choice": choice,
                     "hit": choice is not None and choice in correct,
                     "judged": sum(d.get("separation") == "separated" for d in duels),
                     "replaced": judge.replaced, "memo": before,
                     "new_separations": memo_size() - before,
                     "queries": replaying.queries - sent,
                     **({"error": error} if error else {})})
    return runs
