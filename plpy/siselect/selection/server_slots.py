"""A limit on LLM requests in flight across the whole server, whatever the sessions.

Each call's pool is bounded on its own (``pool``), but sessions multiply it; an
administrator caps the total with ``server_max_requests``. The places are PostgreSQL
session advisory locks (:data:`LOCK_CLASS`, n) for n below the limit, taken and released
by siselect's own internal queries (never by candidate SQL) from the call's main thread:
a request goes out only once its call holds a place. Session locks outlive the rolled-back
transactions the client runs its queries in, and go with the session if it dies.
"""

from collections.abc import Callable, Sequence
from typing import Any

# The advisory lock space is shared with the application: one class (the first key) is
# siselect's, spelled "SLLM" in ASCII.
LOCK_CLASS = 0x534C4C4D

# A session takes its own advisory lock again without waiting (they stack), so the places
# it holds already ($3, an int4[] spelled as text) are passed over, and before the lock is
# tried: CASE fixes that order, which the planner may change among AND-ed conditions.
_TAKE = ("SELECT s::int4 FROM pg_catalog.generate_series(0, $1::int4 - 1) AS s "
         "WHERE CASE WHEN s = ANY ($3::text::int4[]) THEN false "
         "ELSE pg_catalog.pg_try_advisory_lock($2::int4, s::int4) END LIMIT 1")
_GIVE = "SELECT pg_catalog.pg_advisory_unlock($1::int4, $2::int4)"


class AdvisorySlots:
    """The server-wide places, as :class:`siselect.selection.judge_pool.Slots` wants."""

    def __init__(self, run_internal: Callable[[str, Sequence[Any]], list[tuple]], limit: int):
        self.run, self.limit = run_internal, limit
        self.held: list[int] = []

    def acquire(self) -> bool:
        held = "{" + ",".join(map(str, self.held)) + "}"
        rows = self.run(_TAKE, [self.limit, LOCK_CLASS, held])
        if not rows:
            return False
        self.held.append(int(rows[0][0]))
        return True

    def release(self) -> None:
        if self.held:
            self.run(_GIVE, [LOCK_CLASS, self.held.pop()])

    def release_all(self) -> None:
        while self.held:
            self.release()
