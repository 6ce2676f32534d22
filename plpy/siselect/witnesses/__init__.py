"""Witnesses of a query's answer: which rows of D produce it (see :mod:`.interface`).

Two backends implement the interface: the built-in ``lineage`` rewrite and ``provsql``.
``auto`` consults :data:`PREFERENCE` in order and takes the first that can run here and
handles both queries of a pair, falling back to lineage with the reason.
"""

from siselect.witnesses.interface import Backend, Lineage, Unsupported, executor_for
from siselect.witnesses.lineage import LineageBackend
from siselect.witnesses.provsql import ProvsqlBackend

REGISTRY: dict[str, Backend] = {"lineage": LineageBackend(), "provsql": ProvsqlBackend()}
PREFERENCE = ("provsql", "lineage")  # for "auto": the paper's backend where it can serve
BACKENDS = (*REGISTRY, "auto")

__all__ = ["BACKENDS", "PREFERENCE", "REGISTRY", "Backend", "Lineage", "Unsupported",
           "executor_for"]
