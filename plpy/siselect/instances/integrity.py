"""References that D keeps although the schema does not declare them, found in the joins.

Many schemas declare few foreign keys (BIRD's SQLite files often none), yet D holds them:
every ``Team_Attributes.team_api_id`` is some ``Team``'s. A D' holding an attribute row
without its team is a database D never is, and on it an average over the join and an
average over the attribute table alone differ although they agree on D: a judge's query
that joins rejects a candidate that is right on D.

So an equi-join ``a.x = b.y`` between two tables in either query (``ON`` or ``WHERE``,
columns named with their table or alias) is taken as a reference from ``a.x`` to ``b.y``
when D keeps it: every non-NULL ``a.x`` is some ``b.y``, and ``b.y`` is unique (a key).
``separate`` adds the rows such references reach to an instance as it adds those of
declared foreign keys (``with_references``, :func:`.references.referenced_closure`).

The same join with ``b.y`` not unique is an *inclusion* when D keeps it: every non-NULL
``a.x`` has at least one partner ``b.y`` (every molecule has an atom). A D' holding a
molecule without any of its atoms is again a database D never is; :mod:`.inclusions`
gives such a row one partner back.
"""

from collections.abc import Callable, Sequence
from functools import partial

from sqlglot import exp

from siselect.instances.shadow import base_tables
from siselect.runtime import privileges, rowids
from siselect.runtime.catalog import Catalog, ForeignKey
from siselect.runtime.errors import QueryFailed
from siselect.runtime.executor import Executor, quote_ident
from siselect.runtime.privileges import readable_columns

Reference = tuple[str, ForeignKey]  # (referencing table, its reference)
FIRST_ROWS = 10_000  # rows of b in which a join column that is no key shows it first


def joined_columns(tree: exp.Query, catalog: Catalog) -> set[tuple[str, str, str, str]]:
    """``(table, column, table, column)`` of each equi-join between two columns of two
    different tables of ``tree``, both ways round; an alias naming two tables (in two
    scopes) is left out, as is a column without its table."""
    tables = set(base_tables(tree, catalog))
    named: dict[str, set[str]] = {}
    for table in tree.find_all(exp.Table):
        found = catalog.table(table.name)
        if found is not None and found.name in tables:
            named.setdefault(table.alias_or_name, set()).add(found.name)
    aliases = {alias: names.pop() for alias, names in named.items() if len(names) == 1}
    pairs = set()
    for eq in tree.find_all(exp.EQ):
        left, right = eq.this, eq.expression
        if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
            continue
        a, b = aliases.get(left.table), aliases.get(right.table)
        if a is None or b is None or a == b:
            continue
        x, y = _column(catalog, a, left.name), _column(catalog, b, right.name)
        if x is not None and y is not None:
            pairs |= {(a, x, b, y), (b, y, a, x)}
    return pairs


def _column(catalog: Catalog, table: str, name: str) -> str | None:
    found = catalog.tables[table]
    return next((c.name for c in found.columns if c.name == name), None)


def kept_references(executor: Executor, catalog: Catalog, tree: exp.Query
                    ) -> list[Reference]:
    """The joins of ``tree`` that D keeps as references (see the module's doc)."""
    return kept_joins(executor, catalog, tree)[0]


Holds = Callable[[str, str, str, str], tuple[bool, bool]]


def kept_joins(executor: Executor, catalog: Catalog, tree: exp.Query,
               holds: Holds | None = None) -> tuple[list[Reference], list[Reference]]:
    """The joins of ``tree`` that D keeps: as references (``b.y`` unique) and as inclusions
    (``b.y`` not unique), each as ``(a, ForeignKey([x], b, [y]))``; one statement per join,
    by ``holds`` when given (a tournament's, that asks D once for all its candidates: two
    of them often join the same tables on the same columns, and each such statement reads
    both tables whole)."""
    references: list[Reference] = []
    inclusions: list[Reference] = []
    for a, x, b, y in sorted(joined_columns(tree, catalog)):
        if not (privileges.can_read(catalog, a, [x]) and privileges.can_read(catalog, b, [y])):
            continue
        if ForeignKey([x], b, [y]) in catalog.tables[a].foreign_keys:
            # Declared: followed as it is (references.referenced_closure), and onto a key,
            # so never an inclusion; asking D would read both tables whole for nothing.
            continue
        covered, unique = (holds or partial(join_holds, executor, catalog))(a, x, b, y)
        if covered:
            (references if unique else inclusions).append((a, ForeignKey([x], b, [y])))
    return references, inclusions


def join_holds(executor: Executor, catalog: Catalog, a: str, x: str, b: str, y: str
               ) -> tuple[bool, bool]:
    """Whether every non-NULL ``a.x`` is some ``b.y``, and whether no two rows of ``b``
    share a ``y`` (asked of D only when the first holds: it decides nothing otherwise)."""
    source_a = rowids.source(catalog.tables[a], readable_columns(catalog, a))
    source_b = rowids.source(catalog.tables[b], readable_columns(catalog, b))
    qx, qy = quote_ident(x), quote_ident(y)
    counted = f"count(t.{qy}) = count(DISTINCT t.{qy})"
    # A one-column primary key is unique by PostgreSQL's word; a column that is not shows
    # it in its first rows, as a rule: only else is it counted over all of b (seconds on
    # millions of rows). CASE runs a subquery only when its branch is taken.
    unique = "true" if catalog.tables[b].primary_key == [y] else (
        f"CASE WHEN NOT (SELECT {counted} FROM (SELECT t.{qy} FROM {source_b} AS t "
        f"LIMIT {FIRST_ROWS}) AS t) THEN false ELSE (SELECT {counted} FROM {source_b} AS t) "
        "END")
    missing = (f"FROM {source_a} AS k WHERE k.{qx} IS NOT NULL AND NOT EXISTS "
               f"(SELECT 1 FROM {source_b} AS t WHERE t.{qy} = k.{qx})")
    # Onto b's key, EXISTS may stop at the first row of a missing (one index probe a row).
    # Elsewhere EXISTS is planned to stop early too, as a nested loop that rescans b for
    # each row of a: quadratic where the inclusion holds (superhero x100, every hero with
    # a power against hero_power.hero_id: over 60 s, cancelled), so the rows missing are
    # counted instead, by one hash or merge anti-join (0.16 s there).
    kept = (f"NOT EXISTS (SELECT 1 {missing})" if catalog.tables[b].primary_key == [y]
            else f"(SELECT count(*) = 0 {missing})")
    sql = (f"SELECT kept_inclusion, CASE WHEN kept_inclusion THEN {unique} ELSE false END "
           f"AS unique_target FROM (SELECT {kept} AS kept_inclusion OFFSET 0) AS __kept")
    try:
        covered, unique_target = executor.run(sql).rows[0]
    except QueryFailed:  # columns of types that do not compare: neither
        return False, False
    return bool(covered), bool(unique_target)


def union(references: Sequence[Sequence[Reference]]) -> list[Reference]:
    """The references of several queries, each once."""
    seen: list[Reference] = []
    for refs in references:
        seen += [r for r in refs if r not in seen]
    return seen
