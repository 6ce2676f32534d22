"""Judges: who says what the question's answer is on a separating instance D'.

A judge gets a :class:`JudgeContext` and returns a :class:`JudgeAnswer`. ``reference``
runs a trusted query on D'; ``none`` abstains (every duel is a draw); ``llm`` asks an
OpenAI-compatible endpoint (:mod:`siselect.selection.llm`).
"""

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from sqlglot import exp

from siselect.runtime.answers import JUDGE_TOLERANCE, REFERENCE_TOLERANCE, Tolerance
from siselect.runtime.errors import QueryFailed
from siselect.selection.member_ties import tie_reason
from siselect.selection.verdict import Judge, JudgeAnswer, JudgeContext

T = TypeVar("T")

__all__ = ["Judge", "JudgeAnswer", "JudgeContext", "NoJudge", "ReferenceJudge", "make_judge"]


class NoJudge:
    """Abstains: duels become draws, the report still shows D' and both answers."""

    name = "none"

    def answer(self, context: JudgeContext) -> JudgeAnswer:
        return JudgeAnswer(None, error="no judge")


class ReferenceJudge:
    """The answer of a trusted query (in benchmarks: the gold query) on D'. Its answer is
    SQL's, so a row of NULLs in it is a row (BIRD's rule), not a way of writing "nothing".

    Where that answer hangs on ties on D' (the gold's ``ORDER BY rating DESC LIMIT 1`` on
    two players of one rating) but not on D, the small instance, not the query, left the
    engine a choice: matching its pick or not says nothing of a candidate (yardstick
    european_football_2 1034, seed 3: the candidate right on D listed both tied players
    and lost to one that named the engine's). The judge then abstains on that D', as a
    tied candidate's answer gets no evidence (:mod:`.member_ties`), and the duel asks
    again on another instance. A query whose answer on D is itself one of several (a
    card's DISTINCT name ordered by any one of its ruling dates) is answered as it is on
    D': its plan's choice is what made a candidate right on D."""

    name = "reference"
    tolerance = REFERENCE_TOLERANCE

    def __init__(self, tree: exp.Query):
        self.tree = tree
        self._facts: dict[str, Any] = {}  # its tie probes, made once; its ties on D

    def answer(self, context: JudgeContext) -> JudgeAnswer:
        rows = context.run_on_instance(self.tree)
        reason = tie_reason(self.tree, rows, context.run_on_instance, self._remember)
        if reason is not None and not self._ties_on_d(context):
            return JudgeAnswer(None, error=f"the reference's answer on D' is one of several: "
                                           f"{reason}", ambiguous=reason)
        return JudgeAnswer([list(r) for r in rows.rows])

    def _ties_on_d(self, context: JudgeContext) -> bool:
        """Whether the reference's answer on D hangs on ties (not known: no)."""
        return self._remember("on D", self.tree, lambda: self._reason_on_d(context) is not None)

    def _reason_on_d(self, context: JudgeContext) -> str | None:
        if context.run_on_d is None:
            return None
        try:
            return tie_reason(self.tree, context.run_on_d(self.tree), context.run_on_d,
                              self._remember)
        except QueryFailed:  # an answer too large to compare, a time limit: not known
            return None

    def _remember(self, kind: str, tree: exp.Query, compute: Callable[[], T]) -> T:
        if kind not in self._facts:
            self._facts[kind] = compute()
        return self._facts[kind]


JUDGES = ("llm", "reference", "none")


def make_judge(name: str, reference: exp.Query | None, llm_config: Any = None) -> Judge:
    """The judge called ``name``; ``reference`` is required for the reference judge."""
    from siselect.runtime.errors import InvalidInput

    if name == "none":
        return NoJudge()
    if name == "reference":
        if reference is None:
            raise InvalidInput("the reference judge needs a reference query")
        return ReferenceJudge(reference)
    if name == "llm":
        from siselect.selection.llm import LLMJudge

        if llm_config is None:
            raise InvalidInput("the llm judge needs an endpoint configuration", "22023")
        return LLMJudge(llm_config)
    raise InvalidInput(f"unknown judge {name!r}; use one of {', '.join(JUDGES)}")


#: How a noisy judge's wrong answer is made: a rival candidate's answer on D', or a near
#: miss of the right one (never used for tuning).
NOISE_MODELS = ("rival", "near-miss")


class NoisyJudge:
    """Another judge made unreliable on purpose, to measure how selection degrades.

    With probability ``noise`` (drawn from ``rng``, so a seeded run repeats itself) the
    inner judge's answer is replaced by a wrong one: the answer on D' of one of ``rivals``
    (queries that compete for the question, e.g. the candidates) that differs from the
    inner answer, as an LLM that shares a candidate's misreading would reply; when every
    rival agrees with the inner answer, an answer no candidate gives. With ``model``
    ``near-miss`` the wrong answer is almost right instead (:mod:`.near_miss`).
    """

    def __init__(self, inner: Judge, noise: float, rng: Any, rivals: list[exp.Query],
                 model: str = "rival"):
        from siselect.runtime.errors import InvalidInput

        if not 0.0 <= noise <= 1.0:
            raise InvalidInput(f"the judge noise must be between 0 and 1, got {noise}")
        if model not in NOISE_MODELS:
            raise InvalidInput(f"unknown noise model {model!r}; use {', '.join(NOISE_MODELS)}")
        self.inner, self.noise, self.rng, self.rivals = inner, noise, rng, rivals
        self.model = model
        self.name = f"{inner.name}, noise {noise:g}" + (f" ({model})" if model != "rival"
                                                        else "")
        self.replaced = 0

    @property
    def tolerance(self) -> Tolerance:
        """The inner judge's: noise changes what it answers, not how answers compare."""
        return getattr(self.inner, "tolerance", JUDGE_TOLERANCE)

    def answer(self, context: JudgeContext) -> JudgeAnswer:
        return self._noisy(context, self.inner.answer(context))

    def answer_all(self, contexts: list[JudgeContext], idle: Any = None) -> list[JudgeAnswer]:
        """The inner judge's answers for all duels at once where it can; the noise is drawn
        afterwards in the duels' order, so it does not depend on how they were obtained."""
        many = getattr(self.inner, "answer_all", None)
        answers = many(contexts, idle) if many is not None else [self.inner.answer(c)
                                                                 for c in contexts]
        return [self._noisy(c, a) for c, a in zip(contexts, answers, strict=True)]

    def _noisy(self, context: JudgeContext, answer: JudgeAnswer) -> JudgeAnswer:
        # Draw on every call, so whether call n is replaced does not depend on earlier draws.
        if self.rng.random() >= self.noise or answer.rows is None:
            return answer
        if self.model == "near-miss":
            from siselect.selection.near_miss import near_miss

            wrong = near_miss(answer.rows, self.rng)[1]
        else:
            wrong = self._wrong_rows(context, answer.rows)
        self.replaced += 1
        votes = [*answer.votes, {"rows": wrong, "replaced": answer.rows}]
        return dataclasses.replace(answer, rows=wrong, votes=votes)

    def _wrong_rows(self, context: JudgeContext, truth: list[list[Any]]) -> list[list[Any]]:
        from siselect.runtime.answers import answer_key, matches_judge
        from siselect.runtime.errors import Cancelled, SiselectError

        seen, choices = set(), []
        for tree in self.rivals:
            try:
                rows = [list(r) for r in context.run_on_instance(tree).rows]
            except Cancelled:
                raise
            except SiselectError:
                continue  # a rival that fails on D' proposes no answer
            key = answer_key(rows)
            if key not in seen and not matches_judge(truth, rows):
                seen.add(key)
                choices.append(rows)
        if choices:
            return choices[self.rng.randrange(len(choices))]
        return [] if truth else [["(an answer no candidate gives)"]]
