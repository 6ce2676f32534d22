"""Judges: who says what the question's answer is on a separating instance D'.

A judge gets a :class:`JudgeContext` and returns a :class:`JudgeAnswer`. ``reference``
runs a trusted query on D'; ``none`` abstains (every duel is a draw); ``llm`` asks an
OpenAI-compatible endpoint (:mod:`siselect.llm`).
"""

from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlglot import exp

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


class ReferenceJudge:
    """The answer of a trusted query (in benchmarks: the gold query) on D'."""

    name = "reference"

    def __init__(self, tree: exp.Query):
        self.tree = tree

    def answer(self, context: JudgeContext) -> JudgeAnswer:
        rows = context.run_on_instance(self.tree)
        return JudgeAnswer([list(r) for r in rows.rows])


JUDGES = ("llm", "reference", "none")


def make_judge(name: str, reference: exp.Query | None, llm_config: Any = None) -> Judge:
    """The judge called ``name``; ``reference`` is required for the reference judge."""
    from .errors import InvalidInput

    if name == "none":
        return NoJudge()
    if name == "reference":
        if reference is None:
            raise InvalidInput("the reference judge needs a reference query")
        return ReferenceJudge(reference)
    if name == "llm":
        from .llm import LLMJudge

        if llm_config is None:
            raise InvalidInput("the llm judge needs an endpoint configuration", "22023")
        return LLMJudge(llm_config)
    raise InvalidInput(f"unknown judge {name!r}; use one of {', '.join(JUDGES)}")
