"""siselect from Python: separate two queries, or choose among candidates, over a psycopg
connection, and get typed results back (:mod:`siselect.runtime.results`).

    import psycopg
    from siselect.client import api

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET search_path TO superhero")
        sep = api.separate(conn, q1, q2, seed=7)
        sep.status, sep.rows, sep.instance["superhero"].rows

The work runs here, in this process, as ``siselect separate`` and ``siselect tournament``
do: every query alone in a read-only transaction on ``conn``, on the schemas of its
search_path. The results are the ones the SQL functions return, as types.
"""

import dataclasses
from collections.abc import Callable
from typing import Any

import psycopg

from siselect.client.pgexec import PsycopgExecutor
from siselect.instances import separate as separation
from siselect.instances.separate import Options
from siselect.runtime.catalog import load_catalog
from siselect.runtime.errors import InvalidInput
from siselect.runtime.results import SeparationResult, TournamentResult, as_dict, from_dict
from siselect.selection.judges import Judge, make_judge
from siselect.selection.tournament import Progress, check_inputs, run_tournament
from siselect.sqltext.transpile import to_tree

#: What ``**options`` may set, with the defaults (as in the SQL functions).
OPTIONS = tuple(f.name for f in dataclasses.fields(Options))


def options(**given: Any) -> Options:
    """Checked options; an unknown name is an error rather than silently ignored."""
    unknown = sorted(set(given) - set(OPTIONS))
    if unknown:
        raise InvalidInput(f"unknown option {', '.join(unknown)}; use {', '.join(OPTIONS)}")
    return Options(**given).check()


def separate(conn: psycopg.Connection, q1: str, q2: str, *,
             progress: Callable[[int], None] | None = None, **opts: Any) -> SeparationResult:
    """A few real rows on which ``q1`` and ``q2`` disagree, or why there are none.

    ``opts``: dialect ("postgres", "sqlite"), strategy ("minimal", "paper"), max_rows,
    seed, backend ("auto", "lineage", "provsql"), with_references, budget_seconds.
    ``progress``: called with the number of row sets tested so far, after each.
    Invalid queries raise :class:`~siselect.runtime.errors.SiselectError` (with a SQLSTATE).
    """
    result = separation.separate(PsycopgExecutor(conn), q1, q2, options(**opts),
                                 progress=progress)
    return from_dict(SeparationResult, result)


def tournament(
    conn: psycopg.Connection,
    candidates: list[str],
    question: str,
    *,
    judge: str | Judge = "llm",
    reference: str | None = None,
    evidence: str | None = None,
    llm_config: Any = None,
    counts: list[int] | None = None,
    progress: Progress | None = None,
    **opts: Any,
) -> TournamentResult:
    """The candidate a round-robin tournament chooses for ``question``.

    ``judge``: "reference" (needs ``reference``, a trusted query), "none", "llm" (needs
    ``llm_config``, a :class:`siselect.selection.llm.LLMConfig`), or any object with the
    :class:`~siselect.selection.judges.Judge` protocol. ``counts``: how often each candidate
    was produced, when they were deduplicated (the consistency prior sums them).
    ``progress``: called with each event of the tournament's rounds
    (:data:`siselect.selection.tournament.Progress`). ``opts`` as for :func:`separate`.
    """
    check_inputs(list(candidates), question, counts)
    chosen = options(**opts)
    executor = PsycopgExecutor(conn)
    catalog = load_catalog(executor)
    made = isinstance(judge, str)
    if isinstance(judge, str):
        tree = to_tree(reference, chosen.dialect, catalog) if reference else None
        judge = make_judge(judge, tree, llm_config)
    try:
        result = run_tournament(executor, list(candidates), question, evidence, judge, chosen,
                                reference, catalog, counts=counts, progress=progress)
    finally:
        close = getattr(judge, "close", None) if made else None
        if close is not None:
            close()  # the LLM judge's HTTP connections; a caller's own judge stays open
    return from_dict(TournamentResult, result)


__all__ = ["OPTIONS", "SeparationResult", "TournamentResult", "as_dict", "options", "separate",
           "tournament"]
