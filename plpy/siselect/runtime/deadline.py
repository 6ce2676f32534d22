"""When Python work must stop: the caller's statement_timeout, a pair's budget, a cancel.

Inside the server PostgreSQL acts on a cancel or on statement_timeout only when Python
calls back into SPI; comparing, minimising or building a prompt can run for long without
doing so. Every long Python loop therefore calls :func:`check` now and then. The deadlines
in force form a stack (the call's, then a pair's within it), held in a context variable so
that pure modules such as :mod:`siselect.runtime.answers` need no extra argument.

:func:`check` raises the exception of the outermost deadline that has passed, so the end
of the whole call wins over the end of one pair; and, at most every
:data:`POLL_SECONDS`, it runs the scope's ``poll`` (in the server a ``SELECT 1``), through
which PostgreSQL raises its own QueryCanceled for a pending cancel or timeout.
"""

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from siselect.runtime.errors import Cancelled, SiselectError

POLL_SECONDS = 0.05  # how late a cancel may be noticed, against the cost of a SELECT 1


@dataclass
class Deadline:
    """One limit: ``expires_at`` in :func:`time.monotonic` seconds (None: no limit)."""

    expires_at: float | None
    exceeded: Callable[[], SiselectError] = field(
        default=lambda: Cancelled("canceling statement due to statement timeout"))
    poll: Callable[[], object] | None = None
    parent: "Deadline | None" = None
    _polled: float = 0.0

    def chain(self) -> list["Deadline"]:
        """This deadline and the ones it is nested in, outermost first."""
        out: list[Deadline] = []
        d: Deadline | None = self
        while d is not None:
            out.append(d)
            d = d.parent
        return out[::-1]

    def check(self) -> None:
        now = time.monotonic()
        for d in self.chain():
            if d.expires_at is not None and now > d.expires_at:
                raise d.exceeded()
            if d.poll is not None and now - d._polled >= POLL_SECONDS:
                d._polled = now
                d.poll()

    def remaining(self) -> float | None:
        """Seconds left before the nearest limit, or None when there is none."""
        ends = [d.expires_at for d in self.chain() if d.expires_at is not None]
        return None if not ends else min(ends) - time.monotonic()


_current: ContextVar[Deadline | None] = ContextVar("siselect_deadline", default=None)


def check() -> None:
    """Raise when a deadline in force has passed (and let the server see a cancel)."""
    d = _current.get()
    if d is not None:
        d.check()


def remaining() -> float | None:
    """Seconds left under the deadlines in force; None when nothing limits the time."""
    d = _current.get()
    return None if d is None else d.remaining()


def bounded(seconds: float) -> float:
    """``seconds``, or less when the deadlines in force leave less (never below zero)."""
    left = remaining()
    return seconds if left is None else max(0.0, min(seconds, left))


@contextmanager
def scope(seconds: float | None = None, *, poll: Callable[[], object] | None = None,
          exceeded: Callable[[], SiselectError] | None = None) -> Iterator[Deadline]:
    """A deadline ``seconds`` from now (None: only ``poll``), nested in the current one."""
    expires = None if seconds is None else time.monotonic() + seconds
    d = Deadline(expires, poll=poll, parent=_current.get())
    if exceeded is not None:
        d.exceeded = exceeded
    token = _current.set(d)
    try:
        yield d
    finally:
        _current.reset(token)


def statement_seconds_left(run_scalar: Callable[[str], object]) -> float | None:
    """What the caller's statement_timeout leaves of the current statement, in seconds
    (None when it is 0, i.e. off); ``run_scalar`` runs SQL and returns its one value.
    statement_timestamp() is when the caller's statement began, which is what the timeout
    counts from."""
    left = run_scalar(
        "SELECT CASE WHEN s.setting::bigint = 0 THEN NULL ELSE s.setting::bigint / 1000.0 "
        "- extract(epoch FROM clock_timestamp() - statement_timestamp()) END::float8 "
        "AS seconds_left "
        "FROM pg_catalog.pg_settings s WHERE s.name = 'statement_timeout'"
    )
    return None if left is None else float(left)  # type: ignore[arg-type]

