"""Several answers of one query, each on its own row set, from one statement (issue 18).

Minimising tests hundreds of row sets a pair, one statement for each query and set, and on
a D' of a few rows what PostgreSQL does for such a statement (a subtransaction, a round
trip, a parse and a plan) costs more than running it. The restricted texts of one query on
``k`` row sets (:func:`.shadow.restricted_sql`, each what would run alone) are run instead
as the branches of one ``UNION ALL``, each tagged with its place: PostgreSQL plans each
branch as that text alone and appends their rows in order, so each set's rows are the ones
(in the order) its own statement returns.

The tags are string constants and the branches are sorted by the text around their string
constants: the batch's shape (:attr:`siselect.runtime.pgcheck.Statement.shape`, what the
checks and the server's column names are kept by) is then the same for batches of one size
that restrict the same relations, whichever row ids they hold.
"""

from collections.abc import Sequence

from siselect.instances.shadow import QUOTED
from siselect.runtime.errors import QueryFailed
from siselect.runtime.executor import Executor, Rows

#: The tag column (no query's own column: it comes first, its name is ours).
TAG = "__siselect_set"


def _skeleton(text: str) -> str:
    """``text`` with its string constants emptied: texts of one shape, one skeleton."""
    return QUOTED.sub(lambda m: m.group(0) if m.group(0)[0] == '"' else "''", text)


def batch_sql(texts: Sequence[str]) -> str:
    """One statement whose rows are each text's rows, tagged with the text's place."""
    order = sorted(range(len(texts)), key=lambda i: _skeleton(texts[i]))
    # Line breaks: a trailing "--" comment of a text ends before the closing parenthesis.
    return "\nUNION ALL\n".join(
        f"SELECT '{i}' AS {TAG}, * FROM (\n{texts[i]}\n) AS {TAG}_q" for i in order)


def run_together(executor: Executor, texts: Sequence[str], max_rows: int) -> list[Rows] | None:
    """Each text's rows, from one statement; None when it failed (a query failing on one
    set fails them all: each then runs alone, as it would have) or when the rows of all
    together pass ``max_rows``."""
    try:
        got = executor.run(batch_sql(texts), max_rows=max_rows)
    except QueryFailed:
        return None
    if got.truncated:
        return None
    rows: list[list[tuple]] = [[] for _ in texts]
    for row in got.rows:
        rows[int(row[0])].append(tuple(row[1:]))
    return [Rows(list(got.columns[1:]), each) for each in rows]
