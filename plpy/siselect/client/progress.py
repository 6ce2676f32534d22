"""One progress line on stderr: a bench's bar (done/total, running accuracy, time left),
and where one tournament or one search is (:class:`StatusLine`).

On a terminal the line redraws itself (``\\r``); otherwise (a log file, CI) a bench's
updates are plain lines, at most one every few seconds, plus the last, and a
tournament's or a search's are not shown.
"""

import sys
import time
from typing import TextIO

BAR_WIDTH = 24
PLAIN_EVERY_SECONDS = 5.0


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Progress:
    def __init__(self, total: int, done: int = 0, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.total, self.done, self.start_done = total, done, done
        self.hits = self.scored = 0
        self.started = time.monotonic()
        self.tty = self.stream.isatty()
        self._last_plain = 0.0

    def count(self, scored: bool, hit: bool) -> None:
        """Count a task already finished before this run (resumed): accuracy only."""
        self.scored += scored
        self.hits += hit

    def line(self) -> str:
        fraction = self.done / self.total if self.total else 1.0
        filled = int(BAR_WIDTH * fraction)
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        accuracy = f"{self.hits / self.scored:.1%} ({self.hits}/{self.scored})" \
            if self.scored else "-"
        new = self.done - self.start_done
        elapsed = time.monotonic() - self.started
        left = self.total - self.done
        eta = _duration(elapsed / new * left) if new and left else ("0s" if not left else "?")
        return (f"[{bar}] {self.done}/{self.total} tasks, tournament accuracy {accuracy}, "
                f"elapsed {_duration(elapsed)}, left {eta}")

    def update(self, scored: bool, hit: bool) -> None:
        """One more task finished in this run."""
        self.done += 1
        self.count(scored, hit)
        if self.tty:
            self.stream.write("\r" + self.line())
            self.stream.flush()
            return
        now = time.monotonic()
        if now - self._last_plain >= PLAIN_EVERY_SECONDS or self.done == self.total:
            self._last_plain = now
            print(self.line(), file=self.stream, flush=True)

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


#: A status line is drawn again at most this often (a search tests hundreds of sets a second).
REDRAW_SECONDS = 0.1


class StatusLine:
    """One line on stderr saying where a long command is, redrawn at most every
    :data:`REDRAW_SECONDS` and cleared at the end; only on a terminal: the result of a
    ``separate`` or a ``tournament`` is often read by a script, and most take a few seconds
    (a bench, which runs many, prints its own progress everywhere)."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.started = time.monotonic()
        self._drawn_at: float | None = None

    def show(self, text: str, now: bool = False) -> None:
        """Draw ``text`` with the time elapsed (``now``: even right after another)."""
        if not self.tty:
            return
        at = time.monotonic()
        if not now and self._drawn_at is not None and at - self._drawn_at < REDRAW_SECONDS:
            return
        self._drawn_at = at
        self.stream.write(f"\r\033[K{text}, elapsed {_duration(at - self.started)}")
        self.stream.flush()

    def close(self) -> None:
        """Clear the line, so that what follows starts on a clean one."""
        if self._drawn_at is not None:
            self.stream.write("\r\033[K")
            self.stream.flush()


class RoundProgress(StatusLine):
    """Where a tournament is (:data:`siselect.selection.tournament.Progress` events)."""

    def __call__(self, event: dict) -> None:
        stage = event["stage"]
        if stage == "separating":
            doing = f"separating pair {event['done'] + 1} of {event['of']}"
        elif stage == "judging":
            doing = f"asking the judge about {event['of']} instance" + \
                ("s" if event["of"] != 1 else "")
        else:
            doing = "scored"
        # Each event is a step worth seeing: none is skipped for being soon after another.
        self.show(f"round {event['round']}: {doing}; {event['duels']} duels so far", now=True)


class SearchProgress(StatusLine):
    """How far one search for a separating instance is: the row sets it has tested."""

    def __call__(self, tests: int) -> None:
        self.show(f"searching: {tests} row set{'s' if tests != 1 else ''} tested")
