"""Identifiers in any case: SQLite resolves names case-insensitively, PostgreSQL does not.

Table and column names are replaced by their exact loaded spelling (quoted); aliases and
CTE names take the spelling of their definition; a double-quoted word that names nothing
is a string literal, as SQLite reads it. Then sqlglot qualifies every column with its
source and expands references to output aliases in WHERE, GROUP BY and HAVING (SQLite
allows them there, PostgreSQL does not).
"""

from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from siselect.runtime.catalog import Catalog, Table
from siselect.runtime.errors import SiselectError
from siselect.sqltext.sqlite_rules.sqlite_type import _cte, _sources


def resolve_identifiers(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """Exact, quoted names for tables and columns; qualified columns where resolvable."""
    cte_names = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    known = _known_columns(catalog)
    if catalog is not None:
        for table in tree.find_all(exp.Table):
            _resolve_table(table, catalog, cte_names)
    _name_derived_tables(tree)
    aliases = _alias_spellings(tree)
    for column in list(tree.find_all(exp.Column)):
        _resolve_column(column, catalog, aliases, known)
    for _ in range(_MAX_DERIVED_DEPTH):
        if not _respell_derived(tree):
            break
    for ident in tree.find_all(exp.Identifier):
        spelling = aliases.get(ident.name.lower())
        if spelling is not None and not ident.meta.get("catalog") and _is_alias_use(ident):
            ident.set("this", spelling)
            ident.set("quoted", True)
    if catalog is None:
        return tree
    mapping: dict[str, object] = dict(catalog.types())
    schema = MappingSchema(mapping, dialect="postgres", normalize=False)
    try:
        qualified = qualify(tree.copy(), schema=schema, dialect="postgres", expand_stars=False,
                            validate_qualify_columns=False, quote_identifiers=True)
    except (OptimizeError, KeyError, ValueError, IndexError, AttributeError):
        return tree  # PostgreSQL resolves the unqualified names itself
    return _drop_invented_aliases(qualified, aliases)


def _drop_invented_aliases(tree: exp.Expr, defined: dict[str, str]) -> exp.Expr:
    """Remove the ``_col_N`` names qualify gives unnamed outputs (PostgreSQL names them)."""
    for alias in list(tree.find_all(exp.Alias)):
        name = alias.alias
        if name.startswith("_col_") and name.lower() not in defined and isinstance(
                alias.parent, exp.Select) and alias.arg_key == "expressions":
            alias.replace(alias.this)
    return tree


_MAX_DERIVED_DEPTH = 8


def _name_derived_tables(tree: exp.Expr) -> None:
    """SQLite lets a subquery in FROM go unnamed; PostgreSQL 15 does not."""
    for number, sub in enumerate(tree.find_all(exp.Subquery)):
        if isinstance(sub.parent, (exp.From, exp.Join)) and sub.args.get("alias") is None:
            sub.set("alias", exp.TableAlias(this=exp.to_identifier(f"_subquery{number}")))


def _respell_derived(tree: exp.Expr) -> bool:
    """Columns of subqueries and CTEs take the spelling of the output they name."""
    changed = False
    for column in tree.find_all(exp.Column):
        if column.is_star or column.this.meta.get("catalog"):
            continue
        spelling = _derived_spelling(column)
        if spelling is not None and spelling != column.name:
            column.set("this", _catalog_identifier(spelling))
            changed = True
    return changed


def _derived_spelling(column: exp.Column) -> str | None:
    select = column.find_ancestor(exp.Select)
    while select is not None:
        sources = _sources(select)
        if column.table:
            candidates = [sources[column.table.lower()]] if column.table.lower() in sources else []
        else:
            candidates = list(sources.values())
        for source in candidates:
            if isinstance(source, (exp.Subquery, exp.CTE)):
                found = _output_spelling(source, column.name)
                if found is not None:
                    return found
        if column.table and candidates:
            return None
        select = select.find_ancestor(exp.Select)
    return None


def _output_spelling(source: exp.Subquery | exp.CTE, name: str) -> str | None:
    alias = source.args.get("alias")
    names = [c.name for c in alias.columns] if isinstance(alias, exp.TableAlias) else []
    query = source.this
    while isinstance(query, (exp.Subquery, exp.SetOperation)):
        query = query.this if isinstance(query, exp.Subquery) else query.left
    if not names and isinstance(query, exp.Select):
        names = [p.alias_or_name for p in query.expressions]
    lowered = name.lower()
    return next((n for n in names if n.lower() == lowered), None)


def _alias_spellings(tree: exp.Expr) -> dict[str, str]:
    """lower name -> the spelling where a table alias, CTE or output alias is defined."""
    found: dict[str, str] = {}
    for node in tree.find_all(exp.TableAlias, exp.Alias):
        ident = node.args.get("this") if isinstance(node, exp.TableAlias) else node.args.get(
            "alias")
        if isinstance(ident, exp.Identifier):
            found.setdefault(ident.name.lower(), ident.name)
    return found


def _is_alias_use(ident: exp.Identifier) -> bool:
    parent = ident.parent
    if isinstance(parent, (exp.TableAlias, exp.Alias)):
        return True
    if isinstance(parent, exp.Column):
        return parent.args.get("table") is ident or parent.args.get("this") is ident
    if isinstance(parent, exp.Table):
        return parent.args.get("this") is ident and not ident.quoted
    return False


def _catalog_identifier(name: str) -> exp.Identifier:
    ident = exp.to_identifier(name, quoted=True)
    ident.meta["catalog"] = True  # an exact catalog name: never respelled as an alias
    return ident


def _known_columns(catalog: Catalog | None) -> set[str]:
    if catalog is None:
        return set()
    return {c.name.lower() for t in catalog.tables.values() for c in t.columns}


def _resolve_table(table: exp.Table, catalog: Catalog, cte_names: set[str]) -> None:
    if not table.db and table.name.lower() in cte_names:
        return
    found = catalog.table(table.name)
    if found is not None:
        if table.args.get("alias") is None:
            # Name the reference as SQLite does (any case matches it); qualify would
            # otherwise invent a lower-case alias that exact-case qualifiers miss.
            table.set("alias", exp.TableAlias(this=_catalog_identifier(found.name)))
        table.set("this", _catalog_identifier(found.name))
        table.set("db", None)
        table.set("catalog", None)


def _resolve_column(column: exp.Column, catalog: Catalog | None, aliases: dict[str, str],
                    known: set[str]) -> None:
    if column.is_star:
        return
    spelling = _catalog_spelling(column, catalog) if catalog is not None else None
    if spelling is not None:
        column.set("this", _catalog_identifier(spelling))
        return
    ident = column.this
    name = column.name.lower()
    if (catalog is not None and not column.table and isinstance(ident, exp.Identifier)
            and ident.quoted and name not in known and name not in aliases):
        column.replace(exp.Literal.string(column.name))


def _catalog_spelling(column: exp.Column, catalog: Catalog) -> str | None:
    """The exact name of the catalog column this reference means, if it is one."""
    select = column.find_ancestor(exp.Select)
    while select is not None:
        sources = _sources(select)
        if column.table:
            source = sources.get(column.table.lower())
            if source is not None:
                return _spelling_in(source, column.name, catalog)
        else:
            for source in sources.values():
                found = _spelling_in(source, column.name, catalog)
                if found is not None:
                    return found
        select = select.find_ancestor(exp.Select)
    return None


def _spelling_in(source: exp.Expr, name: str, catalog: Catalog) -> str | None:
    if not isinstance(source, exp.Table) or _cte(source, source.name) is not None:
        return None
    table = catalog.table(source.name)
    if table is None:
        return None
    col = table.column(name)
    if col is not None:
        return col.name
    return _rowid_alias(table, name)


def _rowid_alias(table: Table, name: str) -> str | None:
    """SQLite's rowid is the INTEGER PRIMARY KEY column when the table has one."""
    if name.lower() not in ("rowid", "oid", "_rowid_"):
        return None
    key = table.column(table.primary_key[0]) if len(table.primary_key) == 1 else None
    if key is None or key.type != "bigint":
        # Otherwise it numbers the rows in storage order: nothing in the loaded table holds it.
        raise SiselectError(f"{name} of table {table.name!r} (which has no INTEGER PRIMARY KEY) "
                            "has no PostgreSQL counterpart", "0A000")
    return key.name
