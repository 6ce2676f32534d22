"""How the tournament groups, scores and schedules (docs/selection.md): the options.

Each option left unset takes the default of the separation strategy: the paper's
(``strategy paper``) reproduces the paper's tournament (its normalised grouping, one
representative a group, one instance a pair, round-robin points); ours (``minimal``) uses
the rules of issue 15.
"""

from dataclasses import dataclass, replace
from typing import Any

from siselect.runtime.errors import InvalidInput

GROUPINGS = ("exact", "paper")
SCORINGS = ("evidence", "points")
SCHEDULES = ("adaptive", "round-robin")
MEMBERS = ("all", "representative")
SCOPES = ("all", "pair")
#: Instances a pair may be separated on at most (issue 15: 3); more costs judge calls.
MAX_INSTANCES = 9

PAPER: dict[str, Any] = {"grouping": "paper", "scoring": "points", "schedule": "round-robin",
                         "instances": 1, "members": "representative", "scope": "pair",
                         "uncertain_accuracy": False}
OURS: dict[str, Any] = {"grouping": "exact", "scoring": "evidence", "schedule": "adaptive",
                        "instances": 3, "members": "all", "scope": "all",
                        "uncertain_accuracy": True}


@dataclass(frozen=True)
class Rules:
    """``None``: the strategy's default (see :func:`resolved`)."""

    grouping: str | None = None
    scoring: str | None = None
    schedule: str | None = None
    instances: int | None = None  # most instances (separations) a pair is judged on
    members: str | None = None  # all: every member of both groups runs on D'
    # all: every unit runs on each D' and the verdict is evidence for or against each
    # (evidence scoring); pair: only the duel's two units
    scope: str | None = None
    judge_accuracy: float | None = None  # None: the judge's own, else DEFAULT_ACCURACY
    # Whether an assumed accuracy (an LLM's, not set by judge_accuracy) is one of
    # scoring.ACCURACY_SPREAD rather than known (scoring.uncertain_evidence)
    uncertain_accuracy: bool | None = None

    def resolved(self, strategy: str) -> "Rules":
        defaults = PAPER if strategy == "paper" else OURS
        filled = replace(self, **{k: v for k, v in defaults.items()
                                  if getattr(self, k) is None})
        return filled.check()

    def check(self) -> "Rules":
        for name, allowed in (("grouping", GROUPINGS), ("scoring", SCORINGS),
                              ("schedule", SCHEDULES), ("members", MEMBERS),
                              ("scope", SCOPES)):
            value = getattr(self, name)
            if value is not None and value not in allowed:
                raise InvalidInput(f"unknown {name} {value!r}; use {', '.join(allowed)}")
        if self.instances is not None and not 1 <= self.instances <= MAX_INSTANCES:
            raise InvalidInput(f"instances must be between 1 and {MAX_INSTANCES}, "
                               f"got {self.instances}")
        if self.judge_accuracy is not None and not 0.5 < self.judge_accuracy < 1.0:
            raise InvalidInput("judge_accuracy must be above 0.5 and below 1")
        return self


def rules_from(**kwargs: object) -> Rules:
    """Rules from keyword arguments (SQL's, the CLI's), None meaning the default."""
    known = {k: v for k, v in kwargs.items() if k in Rules.__dataclass_fields__}
    return Rules(**known).check()  # type: ignore[arg-type]
