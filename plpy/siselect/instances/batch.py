"""Several answers of one query, each on its own row set, from one statement (issue 18).

Minimising tests hundreds of row sets a pair, one statement for each query and set, and on
a D' of a few rows what PostgreSQL does for such a statement (a subtransaction, a round
trip, a parse and a plan) costs more than running it. The restricted texts of one query on
``k`` row sets (:func:`.shadow.restricted_sql`, each what would run alone) are run instead
as the branches of one ``UNION ALL``, each tagged with its place: PostgreSQL plans each
branch as that text alone and appends their rows in order, so each set's rows are the ones
(in the order) its own statement returns.

Each text's row ids are parameters (:class:`.shadow.Bound`), numbered on across the
branches. The branches are sorted by their text and tagged with their place in that order,
so that batches of one size over row sets of the same shapes are one text, planned once.
"""

from collections.abc import Sequence

from siselect.instances.shadow import Bound
from siselect.runtime.errors import QueryFailed
from siselect.runtime.executor import Executor, Param, Rows

#: The tag column (no query's own column: it comes first, its name is ours).
TAG = "__siselect_set"


def batch_sql(texts: Sequence[Bound]) -> tuple[Bound, list[int]]:
    """One statement whose rows are each text's rows, tagged with the text's place in the
    order returned (the branches' order: tag ``k`` is ``texts[order[k]]``)."""
    order = sorted(range(len(texts)), key=lambda i: texts[i].template)
    branches: list[str] = []
    params: list[Param] = []
    for k, i in enumerate(order):
        # Line breaks: a trailing "--" comment of a text ends before the closing parenthesis.
        branches.append(f"SELECT '{k}' AS {TAG}, * FROM (\n{texts[i].shifted(len(params))}"
                        f"\n) AS {TAG}_q")
        params += texts[i].params
    return Bound("\nUNION ALL\n".join(branches), tuple(params)), order


def run_together(executor: Executor, texts: Sequence[Bound], max_rows: int
                 ) -> list[Rows] | None:
    """Each text's rows, from one statement; None when it failed (a query failing on one
    set fails them all: each then runs alone, as it would have) or when the rows of all
    together pass ``max_rows``."""
    batch, order = batch_sql(texts)
    try:
        got = executor.run(batch.sql, max_rows=max_rows, params=batch.params, small=True)
    except QueryFailed:
        return None
    if got.truncated:
        return None
    rows: list[list[tuple]] = [[] for _ in texts]
    for row in got.rows:
        rows[order[int(row[0])]].append(tuple(row[1:]))
    return [Rows(list(got.columns[1:]), each) for each in rows]
