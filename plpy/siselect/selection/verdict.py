"""What a judge is given for one duel and what it says (shared by every judge)."""

from dataclasses import dataclass, field
from typing import Any, Protocol

from siselect.runtime.catalog import Catalog


@dataclass
class JudgeContext:
    """Everything a judge may look at for one duel."""

    question: str
    evidence: str | None
    instance: dict[str, dict[str, Any]]  # {table: {"columns": [...], "rows": [[...], ...]}}
    catalog: Catalog
    # For the reference judge: runs SQL (PostgreSQL text) on D' and returns its rows.
    run_on_instance: Any = None
    # For a judge whose prompt has a size limit: smaller views of the instance that still
    # separate the queries, smallest last (siselect.instances.shrink.smaller_instances).
    smaller: Any = None
    # For the reference judge: runs a query on D (whether its answer there hangs on ties).
    run_on_d: Any = None


@dataclass
class JudgeAnswer:
    """The judge's answer rows; ``rows`` is None when it abstains or failed (see ``error``)."""

    rows: list[list[Any]] | None
    votes: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    calls: int = 0  # completions sent to an endpoint (not those answered from a cache)
    # Set when the judge could not be reached and its circuit breaker opened: the cause.
    unavailable: str | None = None
    cached: int = 0  # completions answered from a cache
    tokens: dict[str, int] | None = None  # {"prompt": n, "completion": m} of those sent
    # The smaller view of the instance the judge was shown (siselect.instances.shrink.Shrunk)
    # when the whole one did not fit its prompt: the verdict compares with answers on it.
    shown: Any = None
    # Why the judge's answer on this D' is one of several (a reference query whose answer
    # hangs on a tie there): it gives no verdict, and another instance may get one.
    ambiguous: str | None = None


class Judge(Protocol):
    name: str

    def answer(self, context: JudgeContext) -> JudgeAnswer: ...
