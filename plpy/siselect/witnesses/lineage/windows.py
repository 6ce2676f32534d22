"""Window functions: a row's value hangs on the rows of its window partition.

As each input row of a group witnesses an aggregate's group, each row of a window's
partition, together with the row itself, witnesses the row's window value: the row's own
witness times one multi group per partition spec, gathered where the window is computed
(``array_agg(...) OVER (PARTITION BY <the window's keys>)``). ``OVER ()`` is one partition,
the block's whole input. Two queries that split the same rows into other partitions
(``PARTITION BY c`` against ``OVER ()``) then differ by witnesses of two rows that one
query's window combines and the other's does not.

Frames, ranking and offset functions (``ROWS 1 PRECEDING``, ``ROW_NUMBER``, ``LAG``) hang on
fewer rows than the partition: an over-approximation, noted. A window over groups (in a block
that aggregates) keeps the group's own witnesses.

A row pairs with every row of its partition, so a block of n rows whose partitions hold p
rows each has n * p witnesses: a row whose partition size times n exceeds ``PAIR_LIMIT``
keeps its own witness alone (its multi group is NULL, one empty witness), so a block adds
at most ``PAIR_LIMIT`` witnesses, whatever the size of D.
"""

from sqlglot import exp

from siselect.witnesses.lineage.analysis import clause_roots, is_aggregate_call, own_nodes
from siselect.witnesses.lineage.context import Context
from siselect.witnesses.lineage.rep import Multi, Parts, sql

PAIR_LIMIT = 100_000  # about a second of witness work on a small server
NOTE = "window function (witness: the row with each row of its partition)"
OVER_GROUPS_NOTE = "window function over groups (witness: the group itself)"


def _named(select: exp.Select, name: str) -> exp.Window | None:
    for window in select.args.get("windows") or []:
        if isinstance(window, exp.Window) and isinstance(window.this, exp.Identifier) \
                and window.this.name == name:
            return window
    return None


def partition_keys(window: exp.Window, select: exp.Select) -> list[exp.Expr]:
    """The expressions ``window`` partitions by; none (the whole input, a superset of any
    partition) when they cannot be read safely: a named window not found, a key holding a
    subquery, an aggregate or another window."""
    keys = list(window.args.get("partition_by") or [])
    seen: set[str] = set()
    ref = window.args.get("alias")
    while not keys and ref is not None:  # OVER w, OVER (w ORDER BY ...)
        name = ref.name if isinstance(ref, exp.Identifier) else str(ref)
        named = _named(select, name)
        if named is None or name in seen:
            return []
        seen.add(name)
        keys = list(named.args.get("partition_by") or [])
        ref = named.args.get("alias")
    for key in keys:
        if any(isinstance(n, (exp.Query, exp.Window)) or is_aggregate_call(n)
               for n in key.walk()):
            return []
    return keys


def own_windows(select: exp.Select) -> list[exp.Window]:
    """The windows ``select`` computes itself (not those of its nested queries)."""
    return [n for _, root in clause_roots(select) for n in own_nodes(root)
            if isinstance(n, exp.Window)]


def partition_specs(select: exp.Select) -> list[str]:
    """The distinct ``OVER (...)`` clauses (partitions only) of the block's own windows."""
    specs: list[str] = []
    for window in own_windows(select):
        keys = partition_keys(window, select)
        spec = f"OVER (PARTITION BY {', '.join(sql(k) for k in keys)})" if keys else "OVER ()"
        if spec not in specs:
            specs.append(spec)
    return specs


def add_partitions(select: exp.Select, parts: Parts, ctx: Context) -> None:
    """Add to ``parts`` one multi group per partition spec of the block's windows: the
    single slots of every row of the row's partition (see the module's doc)."""
    ctx.approximate(NOTE)
    if not parts.singles:
        return  # the block reads no base rows of its own (only gathered sets)
    tables = [s.table for s in parts.singles]
    for over in partition_specs(select):
        fits = f"count(*) {over} * count(*) OVER () <= {PAIR_LIMIT}"
        refs = [f"CASE WHEN {fits} THEN array_agg({s.text}) {over} END" for s in parts.singles]
        parts.multis.append(Multi(refs, tables))
