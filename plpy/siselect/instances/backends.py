"""Which backend computes a pair's witnesses (see :mod:`siselect.witnesses`).

Both queries of a pair get their witnesses from the same backend, so that the witness
sets compared (W1 - W2, W2 - W1) mean the same thing on both sides.
"""

from dataclasses import dataclass

from sqlglot import exp

from siselect.instances.search import Pool, fetch_lineage_pool, fetch_pool
from siselect.instances.witness_cache import WitnessCache
from siselect.runtime.catalog import Catalog
from siselect.runtime.errors import InvalidInput, QueryFailed
from siselect.runtime.executor import Executor
from siselect.witnesses import (
    BACKENDS,
    PREFERENCE,
    REGISTRY,
    Backend,
    Lineage,
    Unsupported,
    executor_for,
)


@dataclass
class Served:
    """The witnesses of both queries, the backend that computed them, and why that one."""

    backend: str
    reason: str
    lineages: list[Lineage]
    pool: Pool


def _lineage(executor: Executor, trees, catalog: Catalog, seed: int, reason: str,
             cache: WitnessCache | None, defer: bool = False) -> Served:
    lineages = _witness_queries(REGISTRY["lineage"], trees, catalog, cache, strict=True)
    assert not isinstance(lineages, str)
    pool = (cache.pool(executor, lineages, seed, defer) if cache is not None
            else fetch_lineage_pool(executor, lineages, seed))
    return Served("lineage", reason, lineages, pool)


def _witness_queries(backend: Backend, trees, catalog: Catalog, cache: WitnessCache | None,
                     strict: bool = False) -> list[Lineage] | str:
    """Both witness queries, or why ``backend`` cannot serve one of them (``strict``:
    raise that instead)."""
    lineages = []
    for label, tree in zip(("q1", "q2"), trees, strict=True):
        try:
            lineages.append(cache.lineage(backend, tree, catalog) if cache is not None
                            else backend.witness_query(tree, catalog))
        except Unsupported as exc:
            if strict:
                raise
            return f"{label}: {exc.message}"
    return lineages


def serve(
    executor: Executor,
    trees: tuple[exp.Query, exp.Query],
    catalog: Catalog,
    requested: str,
    seed: int,
    cache: WitnessCache | None = None,
    defer: bool = False,
) -> Served:
    """Fetch the witness pool with the ``requested`` backend (a name of the registry, or
    "auto": the first of :data:`PREFERENCE` that can run here and handles both queries).

    A named backend that cannot run on this server at all is an error rather than a silent
    substitute; otherwise lineage serves, and the reason says why. With a ``cache``, each
    query's witnesses are computed once for all the pairs it is in, and ``defer`` leaves
    the lineage pool's completion to its ``finish`` (see :meth:`WitnessCache.pool`).
    """
    if requested not in BACKENDS:
        raise InvalidInput(f"unknown backend {requested!r}; use {', '.join(BACKENDS)}")
    why = "requested"
    for name in PREFERENCE if requested == "auto" else (requested,):
        if name == "lineage":
            break
        backend = REGISTRY[name]
        # Once a tournament: whether a backend can run here does not change within a call,
        # and asking (ProvSQL: the server's extension files) costs as much as a D' test.
        problem = (backend.usable(executor) if cache is None else cache.once(
            f"{name} usable", lambda backend=backend: backend.usable(executor))())
        if problem:
            if requested == name:
                raise InvalidInput(f"backend '{name}' cannot run here: {problem}")
            why = f"{backend.label} not usable: {problem}"
            continue
        lineages = _witness_queries(backend, trees, catalog, cache)
        if isinstance(lineages, str):
            why = f"{backend.label} does not serve {lineages}"
            continue
        try:
            trusting = executor_for(executor, lineages)
            # Completed here, never deferred: a shape the backend refuses at planning
            # time must fail now, where another backend can still serve.
            pool = (cache.pool(trusting, lineages, seed) if cache is not None else
                    fetch_pool(trusting, lineages[0].sql, lineages[1].sql, seed))
        except QueryFailed as exc:
            # Shapes a backend refuses at planning time (ProvSQL: outer joins over several
            # tracked relations, some uncorrelated subqueries, ...) surface here.
            why = f"{backend.label} failed: {exc.message}"
            continue
        return Served(name, f"{backend.label} is enabled here and handles both queries",
                      lineages, pool)
    return _lineage(executor, trees, catalog, seed, why, cache, defer)
