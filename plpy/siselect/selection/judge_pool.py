"""Sending a call's judge requests concurrently: a bounded pool, a circuit breaker, a cache.

Worker threads only do HTTP (through :class:`siselect.selection.llm.ChatClient`); the
main thread hands them requests, takes the replies back, and is the only one that touches
PostgreSQL: it waits in short slices and calls :func:`siselect.runtime.deadline.check`
between them, which in the server runs a ``SELECT 1`` through SPI so that a cancel or
statement_timeout ends the call while replies are awaited. Outcomes are placed by
request, never by arrival, so the order in which replies come back changes nothing.

The circuit breaker is siselect's one definition of a judge failure: after ``limit``
consecutive failures of the endpoint (connection refused, no reply within the timeout,
5xx) it opens, and the requests of the call not yet sent are not sent.
"""

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from siselect.runtime import deadline as call_deadline

WAIT_SLICE = 0.1  # seconds the main thread waits on the workers between interrupt checks
# What a request cut short by the open breaker records: the cause is stated once, by the
# tournament's judge_failure, not in every vote.
UNAVAILABLE = "judge unavailable"
NOT_SENT = "judge unavailable (not sent)"


class Breaker:
    """Counts consecutive endpoint failures across the worker threads; opens at ``limit``."""

    def __init__(self, limit: int):
        self.limit = limit
        self.cause: str | None = None
        self.opened = threading.Event()
        self._failures = 0
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        return self.opened.is_set()

    def failure(self, why: str, endpoint: str) -> None:
        with self._lock:
            self._failures += 1
            if self._failures >= self.limit and self.cause is None:
                self.cause = (f"the LLM endpoint {endpoint} failed {self._failures} times in "
                              f"a row; last: {why}")
                self.opened.set()

    def success(self) -> None:
        with self._lock:
            if self.cause is None:
                self._failures = 0


@dataclass
class Outcome:
    """What became of one request. Exactly one of ``completion``, ``error`` (the endpoint
    answered, unusably) and ``unavailable`` (no answer: the endpoint failed, or the
    breaker was open) is set."""

    completion: Any = None  # a siselect.selection.llm.Completion
    error: str | None = None
    unavailable: str | None = None
    cached: bool = False
    sent: bool = True  # False: the breaker was open before it went out


@dataclass
class Request:
    """One completion to obtain: ``key`` identifies identical prompts (see cache_key)."""

    key: str
    messages: list[dict[str, str]]
    seed: int | None
    vote: int = 0
    about: dict[str, Any] = field(default_factory=dict)  # what the prompt shows (the audit)


#: Work the main thread may do while replies are awaited: one piece a call, True while
#: more is left. It runs between the pool's own steps, so it may use PostgreSQL.
Idle = Callable[[], bool]


class Slots(Protocol):
    """Places in a limit on requests in flight beyond this call (e.g. server-wide)."""

    def acquire(self) -> bool: ...  # a place, without waiting; False when none is free

    def release(self) -> None: ...

    def release_all(self) -> None: ...


class Unlimited:
    def acquire(self) -> bool:
        return True

    def release(self) -> None:
        pass

    def release_all(self) -> None:
        pass


class Cache(Protocol):
    def get(self, key: str) -> Any: ...

    def put(self, key: str, completion: Any) -> None: ...


@dataclass
class Counts:
    """Completions of a call: sent to the endpoint, and answered from a cache."""

    sent: int = 0
    cached: int = 0


@dataclass
class Pool:
    """Sends requests through ``send`` (run in worker threads) at most ``size`` at a time."""

    send: Callable[[Request], Outcome]
    size: int
    breaker: Breaker
    caches: Sequence[Cache] = ()
    slots: Slots = field(default_factory=Unlimited)
    counts: Counts = field(default_factory=Counts)

    def run(self, requests: Sequence[Request], idle: Idle | None = None) -> list[Outcome]:
        """An outcome for every request, in the requests' order. ``idle``: work for the
        main thread while it has nothing to hand the workers (see :data:`Idle`)."""
        outcomes: list[Outcome | None] = [None] * len(requests)
        to_send: dict[str, list[int]] = {}  # identical requests are sent once
        for i, request in enumerate(requests):
            hit = self._cached(request.key)
            if hit is not None:
                outcomes[i] = Outcome(completion=hit, cached=True)
                self.counts.cached += 1
            elif request.key in to_send:
                to_send[request.key].append(i)
                self.counts.cached += 1
            else:
                to_send[request.key] = [i]
        sent = self._send([requests[ix[0]] for ix in to_send.values()], idle)
        for indexes, outcome in zip(to_send.values(), sent, strict=True):
            if outcome.completion is not None:
                for cache in self.caches:
                    cache.put(requests[indexes[0]].key, outcome.completion)
            outcomes[indexes[0]] = outcome
            for i in indexes[1:]:
                outcomes[i] = Outcome(outcome.completion, outcome.error, outcome.unavailable,
                                      cached=outcome.completion is not None, sent=False)
        return [o for o in outcomes if o is not None]

    def _cached(self, key: str) -> Any:
        for cache in self.caches:
            hit = cache.get(key)
            if hit is not None:
                return hit
        return None

    def _send(self, requests: list[Request], idle: Idle | None) -> list[Outcome]:
        outcomes: list[Outcome | None] = [None] * len(requests)
        if not requests:
            return []
        jobs: queue.Queue[tuple[int, Request] | None] = queue.Queue()
        done: queue.Queue[tuple[int, Outcome]] = queue.Queue()
        started: set[int] = set()  # requests a worker began to send (set.add is atomic)
        workers = [threading.Thread(target=_work,
                                    args=(self.send, jobs, done, self.breaker, started),
                                    daemon=True, name=f"siselect-judge-{n}")
                   for n in range(min(self.size, len(requests)))]
        for w in workers:
            w.start()
        # The workers bound the requests in flight to the pool's size, so every request can
        # be queued at once and the main thread is free for idle work from the start;
        # places in a limit beyond the call are taken by the main thread (through
        # PostgreSQL), one request at a time, as they free up.
        limited = not isinstance(self.slots, Unlimited)
        waiting = list(range(len(requests)))
        waiting.reverse()  # popped from the end: sent in order
        in_flight: set[int] = set()
        more = idle is not None
        quiet_since = time.monotonic()
        try:
            while waiting or in_flight:
                while (waiting and (not limited or len(in_flight) < self.size)
                       and not self.breaker.is_open and self.slots.acquire()):
                    i = waiting.pop()
                    in_flight.add(i)
                    jobs.put((i, requests[i]))
                if self.breaker.is_open:
                    # Requests not sent stay unsent; those in flight are left to their
                    # timeouts (their threads end on their own), not waited for.
                    for i in waiting:
                        outcomes[i] = Outcome(unavailable=NOT_SENT, sent=False)
                    for i in in_flight:
                        outcomes[i] = (Outcome(unavailable=UNAVAILABLE) if i in started
                                       else Outcome(unavailable=NOT_SENT, sent=False))
                    waiting, in_flight = [], set()
                    break
                # Idle work only once every request it could hand out is out (or no slot is
                # free across the server), so it never holds a request back, and only after
                # a slice without replies, so a quick endpoint is not kept waiting for it.
                free = (more and (not waiting or not in_flight)
                        and time.monotonic() - quiet_since >= WAIT_SLICE)
                try:
                    i, outcome = done.get_nowait() if free else done.get(timeout=WAIT_SLICE)
                except queue.Empty:
                    call_deadline.check()  # a cancel, statement_timeout
                    if free and idle is not None:
                        more = idle()
                    elif waiting and not in_flight:
                        time.sleep(WAIT_SLICE)  # no slot free across the server: wait
                    continue
                quiet_since = time.monotonic()
                if i in in_flight:
                    in_flight.discard(i)
                    self.slots.release()
                    outcomes[i] = outcome
                call_deadline.check()
        finally:
            for _ in workers:
                jobs.put(None)
            self.slots.release_all()
            self.counts.sent += len(started)
        return [o if o is not None else Outcome(unavailable=UNAVAILABLE) for o in outcomes]


def _work(send: Callable[[Request], Outcome], jobs: "queue.Queue[tuple[int, Request] | None]",
          done: "queue.Queue[tuple[int, Outcome]]", breaker: Breaker, started: set[int]
          ) -> None:
    while (job := jobs.get()) is not None:
        i, request = job
        if breaker.is_open:  # queued before it opened: never sent
            done.put((i, Outcome(unavailable=NOT_SENT, sent=False)))
            continue
        started.add(i)
        try:
            outcome = send(request)
        except Exception as exc:  # a bug must not leave the main thread waiting forever
            outcome = Outcome(error=f"{type(exc).__name__}: {exc}")
        done.put((i, outcome))
