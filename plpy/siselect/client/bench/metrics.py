"""Every benchmark figure, defined once: ``siselect bench``'s summary and the scripts under
``bench/`` compute them here, so the same name never means two things."""

import math
import statistics
from collections.abc import Iterable
from typing import Any

SEPARATED = "separated"


def share(count: int, total: int, places: int | None = None) -> float | None:
    """``count / total``, rounded to ``places`` when given; None when ``total`` is 0."""
    if not total:
        return None
    return count / total if places is None else round(count / total, places)


def separation_rate(statuses: Iterable[str | None], places: int | None = None
                    ) -> float | None:
    """Separated pairs over all pairs of representatives (answers differing on D): a pair
    that timed out, failed, was nondeterministic or raised an error counts as not
    separated. None when there are no pairs."""
    statuses = list(statuses)
    return share(sum(s == SEPARATED for s in statuses), len(statuses), places)


def accuracy(hits: Iterable[bool], places: int | None = None) -> float | None:
    """Share of scored tasks a method got right (BIRD's execution accuracy)."""
    hits = list(hits)
    return share(sum(map(bool, hits)), len(hits), places)


def quantile(values: list[float], q: float) -> float | None:
    """The q-quantile by linear interpolation; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def spread(values: list[float], keys: Iterable[str] = ("median", "p95", "max")
           ) -> dict[str, Any]:
    """Median, 95th percentile and maximum (None each when there are no values)."""
    figures = {"median": statistics.median(values) if values else None,
               "p95": quantile(values, 0.95), "max": max(values) if values else None}
    return {k: figures[k] for k in keys}
