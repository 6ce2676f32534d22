"""Which backend computes a pair's witnesses: lineage, ProvSQL, or ProvSQL where it can.

Both queries of a pair get their witnesses from the same backend, so that the witness
sets compared (W1 - W2, W2 - W1) mean the same thing on both sides.
"""

from dataclasses import dataclass

from sqlglot import exp

from ..catalog import Catalog
from ..errors import InvalidInput, QueryFailed
from ..executor import Executor
from ..lineage import Lineage, executor_for
from ..lineage import witness_query as lineage_witness_query
from ..search import Pool, fetch_lineage_pool, fetch_pool
from .status import available
from .witness import ProvsqlUnsupported
from .witness import witness_query as provsql_witness_query

BACKENDS = ("lineage", "provsql", "auto")


@dataclass
class Served:
    """The witnesses of both queries, the backend that computed them, and why that one."""

    backend: str
    reason: str
    lineages: list[Lineage]
    pool: Pool


def _lineage(executor: Executor, trees, catalog: Catalog, seed: int, reason: str) -> Served:
    lineages = [lineage_witness_query(t, catalog) for t in trees]
    pool = fetch_lineage_pool(executor, lineages, seed)
    return Served("lineage", reason, lineages, pool)


def _provsql_lineages(trees, catalog: Catalog) -> list[Lineage] | str:
    """Both witness queries, or why ProvSQL cannot serve one of them."""
    lineages = []
    for label, tree in zip(("q1", "q2"), trees, strict=True):
        try:
            lineages.append(provsql_witness_query(tree, catalog))
        except ProvsqlUnsupported as exc:
            return f"{label}: {exc.message}"
    return lineages


def serve(
    executor: Executor,
    trees: tuple[exp.Query, exp.Query],
    catalog: Catalog,
    requested: str,
    seed: int,
) -> Served:
    """Fetch the witness pool with the ``requested`` backend ("lineage", "provsql", "auto").

    "provsql" and "auto" use ProvSQL when it is usable here and handles both queries, and
    lineage otherwise, saying why; "provsql" on a server where ProvSQL is not usable at all
    is an error rather than a silent substitute.
    """
    if requested == "lineage":
        return _lineage(executor, trees, catalog, seed, "requested")
    problem = available(executor)
    if problem:
        if requested == "provsql":
            raise InvalidInput(f"backend 'provsql' cannot run here: {problem}")
        return _lineage(executor, trees, catalog, seed, f"ProvSQL not usable: {problem}")
    lineages = _provsql_lineages(trees, catalog)
    if isinstance(lineages, str):
        return _lineage(executor, trees, catalog, seed, f"ProvSQL does not serve {lineages}")
    try:
        pool = fetch_pool(executor_for(executor, lineages), lineages[0].sql, lineages[1].sql, seed)
    except QueryFailed as exc:
        # Shapes ProvSQL refuses at planning time (outer joins over several tracked
        # relations, some uncorrelated subqueries, ...) surface here.
        return _lineage(executor, trees, catalog, seed, f"ProvSQL failed: {exc.message}")
    return Served("provsql", "ProvSQL is enabled here and handles both queries", lineages, pool)
