"""Judges: who says what the question's answer is on a separating instance D'.

A judge gets a :class:`JudgeContext` and returns a :class:`JudgeAnswer`. ``reference``
runs a trusted query on D'; ``none`` abstains (every duel is a draw); ``llm`` asks an
OpenAI-compatible endpoint (:mod:`siselect.llm`).
"""

from dataclasses import dataclass, field
from typing import Any, Protocol

from .catalog import Catalog


@dataclass
class JudgeContext:
    """Everything a judge may look at for one duel."""

    question: str
    evidence: str | None
    instance: dict[str, dict[str, Any]]  # {table: {"columns": [...], "rows": [[...], ...]}}
    catalog: Catalog
    # For the reference judge: runs SQL (PostgreSQL text) on D' and returns its rows.
    run_on_instance: Any = None


@dataclass
class JudgeAnswer:
    """The judge's answer rows; ``rows`` is None when it abstains or failed (see ``error``)."""

    rows: list[list[Any]] | None
    votes: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    calls: int = 0


class Judge(Protocol):
    name: str

    def answer(self, context: JudgeContext) -> JudgeAnswer: ...


class NoJudge:
    """Abstains: duels become draws, the report still shows D' and both answers."""

    name = "none"

    def answer(self, context: JudgeContext) -> JudgeAnswer:
        return JudgeAnswer(None, error="no judge")
