"""A one-line progress bar on stderr: done/total, running accuracy, time left.

On a terminal the line redraws itself (``\\r``); otherwise (a log file, CI) each update
is a plain line, at most one every few seconds, plus the last.
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
