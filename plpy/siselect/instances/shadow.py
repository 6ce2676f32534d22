"""Evaluate a query on a sub-instance D' of D without writing anything.

Every reference to a relation is replaced by a subquery over the same relation that keeps
only D''s rows, under the reference's own alias, so the query text runs unchanged in a
read-only transaction and on a hot standby. Which rows those are follows the relation's
row identity (docs/instances.md, "Row identity"): a TID scan for tables, ``tableoid``
with ``ctid`` for partitioned and inherited ones, the rows' place among the relation's
rows for views read as they are and foreign tables. Views read through their definition
are expanded first (:mod:`siselect.runtime.views`), so D' reaches the rows they read.
"""

import re
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlglot import exp

from siselect.runtime import privileges, rowids, views
from siselect.runtime.bounded import keep
from siselect.runtime.catalog import Catalog
from siselect.runtime.errors import QueryFailed
from siselect.runtime.executor import PARAM_TYPES, Param, quote_ident, quote_literal
from siselect.runtime.named_schemas import relation_of
from siselect.runtime.privileges import readable_columns, whole
from siselect.runtime.views import relation_reads
from siselect.witnesses.lineage.analysis import from_items

E = TypeVar("E", bound=exp.Expr)
#: D' by relation: encoded row ids (or, for a table of ``ctid`` identity, ctid texts).
RowsByTable = Mapping[str, Sequence[int | str]]
tid_array = rowids.tid_array


R = TypeVar("R")
# Facts of a tree read from it once, by the tree's id (the tree kept, so that its id names
# no other meanwhile): a search asks them of the pair's two trees for every row set it tests
# and every join it weighs, and each asks walks the whole tree.
_BASE_TABLES: dict[int, tuple[exp.Expr, Catalog, list[str]]] = {}
_ALIASES: dict[int, tuple[exp.Expr, Catalog, dict[str, str]]] = {}


def of_tree(cache: dict[int, tuple[exp.Expr, Catalog, R]], tree: exp.Expr, catalog: Catalog,
            compute: Callable[[Any, Catalog], R]) -> R:
    """``compute(tree, catalog)``, kept in ``cache`` for these tree and catalog objects.
    Trees are not changed in place once read (restricting copies them). The value kept is
    returned itself: a caller that must not change it copies it."""
    found = cache.get(id(tree))
    if found is None or found[0] is not tree or found[1] is not catalog:
        found = keep(cache, id(tree), (tree, catalog, compute(tree, catalog)), _KEPT)
    return found[2]


def base_tables(tree: exp.Expr, catalog: Catalog) -> list[str]:
    """Names (as in the catalog) of the relations whose rows a query reads, in first-seen
    order: views read through their definition are replaced by what they read."""
    found: list[str] = of_tree(_BASE_TABLES, tree, catalog, _base_tables)
    return list(found)


def _base_tables(tree: exp.Expr, catalog: Catalog) -> list[str]:
    if isinstance(tree, exp.Query):
        tree = views.expand(tree, catalog)
    return list(dict.fromkeys(name for _, name in relation_reads(tree, catalog)))


def table_aliases(tree: exp.Query, catalog: Catalog) -> dict[str, str]:
    """``{alias or name: table}`` of the tables ``tree`` reads (catalog names); an alias
    naming two tables (in two scopes) is left out, as is a CTE named like a table."""
    found: dict[str, str] = of_tree(_ALIASES, tree, catalog, _table_aliases)
    return dict(found)


def _table_aliases(tree: exp.Query, catalog: Catalog) -> dict[str, str]:
    tables = set(base_tables(tree, catalog))
    named: dict[str, set[str]] = {}
    for table in tree.find_all(exp.Table):
        found = relation_of(catalog, table)
        if found is not None and found.name in tables:
            named.setdefault(table.alias_or_name, set()).add(found.name)
    return {alias: names.pop() for alias, names in named.items() if len(names) == 1}


def column_owner(column: exp.Column, named: Mapping[str, str], catalog: Catalog
                 ) -> tuple[str, str, str] | None:
    """``(alias, table, column)`` (catalog names) of the table of ``named`` (see
    :func:`table_aliases`) whose column ``column`` reads, as SQL resolves it: by its
    qualifier; unqualified, in the nearest SELECT around it that reads it, from its own FROM
    outwards (a correlated reference). None where that is no table of ``named``, where two
    of one FROM hold the column, or where a FROM item that is no table of ``named`` (a
    derived table, a CTE) may be what it reads."""
    if column.table:
        table = named.get(column.table)
        return _owned(column.table, table, column.name, catalog) if table else None
    select = column.find_ancestor(exp.Select)
    while select is not None:
        items = from_items(select)
        owners = [found for item in items if isinstance(item, exp.Table)
                  and item.alias_or_name in named
                  and (found := _owned(item.alias_or_name, named[item.alias_or_name],
                                       column.name, catalog))]
        if owners or any(not (isinstance(i, exp.Table) and i.alias_or_name in named)
                         for i in items):
            return owners[0] if len(owners) == 1 else None
        select = select.find_ancestor(exp.Select)
    return None


def _owned(alias: str, table: str, name: str, catalog: Catalog) -> tuple[str, str, str] | None:
    found = catalog.tables[table].column(name)
    return None if found is None else (alias, table, found.name)


def rows_sql(catalog: Catalog, name: str, ids: Sequence[int | str], ordered: bool = False
             ) -> str:
    """``SELECT`` of the rows ``ids`` of relation ``name``, the columns the caller may read
    (all of them as ``*`` where the caller may read the whole relation)."""
    table = catalog.tables[name]
    columns = readable_columns(catalog, name)
    listed = ("*" if whole(catalog, name) and table.identity != "content"
              else ", ".join(f"t.{quote_ident(c)}" for c in columns))
    sql = (f"SELECT {listed} FROM {rowids.source(table, columns)} AS t "
           f"WHERE {rowids.matches(table, catalog.number(name), 't', ids, empty_array=True)}")
    return sql + f" ORDER BY {rowids.order(table, 't')}" if ordered else sql


#: SQL text's double-quoted identifiers (left as they are) and string literals (masked).
#: Runs of characters, not one character per step: a D' of a thousand rows is a literal of
#: 20,000 characters, matched at every row set tested.
QUOTED = re.compile(r'"[^"]*(?:""[^"]*)*"|\'[^\']*(?:\'\'[^\']*)*\'')
#: A mark no query text can hold by chance: a candidate's own literals are never taken for it.
_MARK = f"__siselect_{secrets.token_hex(6)}_"
_MARKED = re.compile(f"'{_MARK}(\\d+_\\d+)'")
_SLOT = re.compile(f"'{_MARK}p(\\d+)'")  # a Bound's parameter k, before it is $k+1
_KEPT = 512  # templates kept of each kind (a tournament needs a few per candidate)
_TEMPLATES: dict[str, exp.Expr] = {}
_TEXTS: dict[tuple[int, tuple[tuple[str, str], ...]], tuple[exp.Expr, str | None]] = {}


def _mask(sql: str, prefix: str = "") -> tuple[str, list[str]]:
    """``sql`` with its string literals replaced by marks, and the literals' values."""
    literals: list[str] = []

    def mask(match: re.Match) -> str:
        text = match.group(0)
        if text[0] == '"':
            return text
        literals.append(text[1:-1].replace("''", "'"))
        return f"'{_MARK}{prefix}{len(literals) - 1}'"

    return QUOTED.sub(mask, sql), literals


def _template(masked: str) -> exp.Expr:
    """A copy of the tree of ``masked``, parsed once."""
    template = _TEMPLATES.get(masked)
    if template is None:
        template = keep(_TEMPLATES, masked, exp.maybe_parse(masked, dialect="postgres"), _KEPT)
    return template.copy()


def parse_restriction(sql: str) -> exp.Expr:
    """sqlglot's tree of ``sql`` (a restricted relation's subquery), parsed once per shape.

    Every test of a row set restricts each relation read anew, and parsing that text cost
    more than running the restricted queries on D (2 ms a relation, thousands of tests a
    pair): its string literals (the row ids) are masked, the masked text parsed once, and a
    copy of that tree gets this text's literals back."""
    masked, literals = _mask(sql)
    tree = _template(masked)
    marked = [node for node in tree.find_all(exp.Literal)
              if node.is_string and node.this.startswith(_MARK)]
    if len(marked) != len(literals):  # a literal sqlglot did not keep as one: parse as is
        return exp.maybe_parse(sql, dialect="postgres")
    for node in marked:
        node.set("this", literals[int(node.this[len(_MARK):])])
    return tree


def restrict(tree: E, catalog: Catalog, rows: RowsByTable) -> E:
    """A copy of ``tree`` reading only the rows ``{relation: [row id, ...]}`` of each
    relation it reads. Relations absent from ``rows`` read as empty."""
    return _restricted(tree, catalog, lambda name: parse_restriction(
        f"({rows_sql(catalog, name, rows.get(name, []))})"))


_ROW_SETS = 64  # restrictions kept: a row set tested is restricted for each query run on it
_RESTRICTIONS: dict[tuple[str, int, tuple[int | str, ...]], tuple[Catalog, str, list[str]]] = {}


def _masked_rows(catalog: Catalog, name: str, ids: Sequence[int | str], i: int
                 ) -> tuple[str, list[str]]:
    """``_mask`` of relation ``name``'s restriction to ``ids`` (marks numbered ``i_``),
    made once for both queries of a pair and their variants on one row set (a D' of a
    thousand rows is a literal of 20,000 characters, written and masked each time)."""
    key = (name, i, tuple(ids))
    found = _RESTRICTIONS.get(key)
    if found is None or found[0] is not catalog:
        found = keep(_RESTRICTIONS, key, (
            catalog, *_mask(f"({rows_sql(catalog, name, ids)})", f"{i}_")), _ROW_SETS)
    return found[1], found[2]


@dataclass(frozen=True)
class Bound:
    """A statement whose row ids are parameters, not literals in its text: the row sets of
    one shape are one text, read, checked and planned once (parsing and planning a query
    on a D' of a few rows cost several times running it). ``template`` holds parameter
    ``k`` as a mark (never a candidate's text: the mark is random), :attr:`sql` as ``$k+1``;
    ``params`` are the values, each with the type its literal was cast to: a parameter of
    that type (not text cast in the query, which a plan made once for all values would
    cast again at every row it filters)."""

    template: str
    params: tuple[Param, ...] = ()

    @property
    def sql(self) -> str:
        found = _POSITIONAL.get(self.template)
        if found is None:
            found = keep(_POSITIONAL, self.template, _SLOT.sub(
                lambda m: f"${int(m.group(1)) + 1}", self.template), _KEPT)
        return found

    def shifted(self, by: int) -> str:
        """The template with parameter ``k`` as ``k + by`` (for a statement of several)."""
        return _SLOT.sub(lambda m: f"'{_MARK}p{int(m.group(1)) + by}'", self.template)


#: Rows of a D' bound as parameters, at most. A plan made once for all values takes each
#: array for a few rows (PostgreSQL's guess for an array it does not see), and a server
#: keeps it once it costs no more than the first plans made with their values: sets of
#: thousands of rows (the union of the witnesses, a start set) would then be joined as a
#: few, by nested loops. Larger sets are written in, planned with their values. (At 64,
#: superhero x1 took 5.5 s against 4.7 s unbounded: sets of hundreds are tested often.)
BOUND_MOST = 1024
_POSITIONAL: dict[str, str] = {}
#: A text of marks i_j -> its template of slots, the marks' keys and types in slot order.
_SLOTS: dict[str, tuple[str, list[str], list[str]] | None] = {}
_CAST_SLOT = re.compile(
    f"CAST\\('{_MARK}p(\\d+)' AS ({'|'.join(map(re.escape, PARAM_TYPES))})\\)", re.I)


def _slotted(text: str) -> tuple[str, list[str], list[str]] | None:
    """``text``'s marks ``i_j`` as slots ``p0``, ``p1``, ... in first-seen order (a relation
    read twice has its marks twice: one slot each), the marks' keys and their types in slot
    order; None when a mark is not cast to one of :data:`PARAM_TYPES`."""
    if text in _SLOTS:
        return _SLOTS[text]
    keys: dict[str, int] = {}

    def slot(match: re.Match) -> str:
        return f"'{_MARK}p{keys.setdefault(match.group(1), len(keys))}'"

    template = _MARKED.sub(slot, text)
    cast = _CAST_SLOT.findall(template)
    types = {int(k): t.lower() for k, t in cast}
    if len(_SLOT.findall(template)) != len(cast) or sorted(types) != list(range(len(keys))):
        return keep(_SLOTS, text, None, _KEPT)
    return keep(_SLOTS, text, (template, list(keys), [types[i] for i in range(len(keys))]), _KEPT)


def restricted_sql(tree: exp.Query, catalog: Catalog, rows: RowsByTable) -> Bound:
    """``restrict(tree, catalog, rows)`` as a :class:`Bound` (PostgreSQL's dialect).

    Minimising tests thousands of row sets of one pair, and copying the query's tree,
    restricting it and writing its text each time cost several times the statement itself:
    the text is written once per query and shape of its restrictions (the row ids masked),
    and each row set's ids are bound to it."""
    masked: dict[str, str] = {}
    values: dict[str, str] = {}
    read = of_tree(_BASE_TABLES, tree, catalog, _base_tables)
    for i, name in enumerate(read):
        masked[name], literals = _masked_rows(catalog, name, rows.get(name, []), i)
        values.update({f"{i}_{j}": value for j, value in enumerate(literals)})
    key = (id(tree), tuple(masked.items()))
    entry = _TEXTS.get(key)
    if entry is None or entry[0] is not tree:
        try:
            # copy=False: the restricted tree is a copy of its own, written once and dropped
            # (sqlglot copies a tree it writes, which cost as much as the writing).
            text: str | None = _restricted(tree, catalog, lambda name: _template(
                masked[name])).sql("postgres", copy=False)
        except KeyError:  # a relation base_tables does not list: no template
            text = None
        if text is not None and set(_MARKED.findall(text)) != set(values):
            text = None  # a mark sqlglot did not write back as it was (a relation read
            # twice has its marks twice)
        entry = keep(_TEXTS, key, (tree, text), _KEPT)
    if entry[1] is None:
        return Bound(restrict(tree, catalog, rows).sql("postgres", copy=False))
    slotted = _slotted(entry[1])
    if slotted is None or sum(len(rows.get(name, ())) for name in read) > BOUND_MOST:
        # The row ids written in as literals: the planner sees how many rows each holds.
        return Bound(_MARKED.sub(lambda m: quote_literal(values[m.group(1)]), entry[1]))
    template, keys, types = slotted
    return Bound(template, tuple(Param(t, values[k]) for k, t in zip(keys, types, strict=True)))


def _restricted(tree: E, catalog: Catalog, subquery: Callable[[str], exp.Expr]) -> E:
    """A copy of ``tree`` where each relation read is ``subquery(its name)``."""
    if isinstance(tree, exp.Query):
        expanded = views.expand(tree, catalog)
        tree = expanded if expanded is not tree else tree.copy()  # type: ignore[assignment]
    else:
        tree = tree.copy()
    for table, name in list(relation_reads(tree, catalog)):
        alias_node = table.args.get("alias")
        ident = (
            alias_node.this.copy()
            if alias_node is not None and alias_node.this
            else table.this.copy()
        )
        columns = [c.copy() for c in alias_node.columns] if alias_node is not None else []
        sub = subquery(name)
        # Keep the reference's own identifier (quoted or not) so that column references resolve.
        table.replace(exp.Subquery(this=sub.unnest(),
                                   alias=exp.TableAlias(this=ident, columns=columns)))
    return tree


#: The system columns each identity reads: the caller needs SELECT on them.
SYSTEM_COLUMNS = {"ctid": ("ctid",), "leaf": ("ctid", "tableoid")}


def require_row_ids(trees: tuple[exp.Query, ...], catalog: Catalog) -> None:
    """Refuse (42501, naming it) a table whose ``ctid`` (or ``tableoid``) the caller may not
    read: rows are found, kept and shown by it, so no instance can be built from that
    table."""
    for tree in trees:
        for table in base_tables(tree, catalog):
            identity = catalog.tables[table].identity
            for column in SYSTEM_COLUMNS.get(identity, ()):
                if column in (catalog.denied or {}).get(table, ()):
                    raise QueryFailed(
                        f"you may not read column {table}.{column}, by which siselect "
                        f"identifies rows: a separating instance needs SELECT on it (GRANT "
                        f"SELECT ({column}, ...) ON {table})",
                        privileges.INSUFFICIENT_PRIVILEGE,
                    )
