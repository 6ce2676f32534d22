"""Relations a query names with their schema, outside the caller's search_path.

The catalog is read for the search_path (:func:`.catalog.load_catalog`), and siselect knows
a relation by its name. PostgreSQL SQL often names the schema, ``sales.orders``, whether or
not ``sales`` is on the search_path. :func:`cover` reads the schemas a query names as
well, after the search_path's (a name in an earlier schema still hides later ones), and
refuses a query whose schema-named relation another relation of the same name hides: on
D' siselect would read the other one.
"""

from sqlglot import exp

from siselect.runtime.catalog import Catalog, Table, load_catalog
from siselect.runtime.errors import SiselectError
from siselect.runtime.executor import Executor, quote_ident

FEATURE_NOT_SUPPORTED = "0A000"
#: PostgreSQL's own schemas: their relations are no data to separate on (and pg_catalog
#: alone holds hundreds).
SYSTEM = frozenset({"pg_catalog", "information_schema", "pg_toast"})


def _folded(ident: exp.Identifier) -> str:
    """A name as PostgreSQL reads it: an unquoted one folded to lower case."""
    return ident.name if ident.quoted else ident.name.lower()


def schema_named(table: exp.Table) -> str | None:
    """The schema a relation reference names, as PostgreSQL reads it, or None when it
    names none."""
    ident = table.args.get("db")
    if not isinstance(ident, exp.Identifier) or not ident.name:
        return None
    return _folded(ident)


def relation_of(catalog: Catalog, table: exp.Table) -> Table | None:
    """The catalog's relation a query's reference reads (:meth:`.Catalog.relation`: the
    one of that name, and of the schema the reference names, if it names one)."""
    return catalog.relation(table.name, schema_named(table))


def _named(tree: exp.Expr) -> list[tuple[str, str, exp.Table]]:
    """``(schema, relation, reference)`` of every schema-named relation ``tree`` reads."""
    found = []
    for table in tree.find_all(exp.Table):
        schema = schema_named(table)
        if schema is not None and isinstance(table.this, exp.Identifier):
            found.append((schema, _folded(table.this), table))
    return found


def cover(executor: Executor, catalog: Catalog, tree: exp.Expr) -> None:
    """Add to ``catalog`` the schemas ``tree`` names that it does not hold yet, or refuse
    ``tree`` (SQLSTATE 0A000) where a relation it names with its schema is hidden by one of
    the same name that comes first on the search_path: siselect would read that one on D'.
    In place, for every holder of the catalog, and before any witness is numbered: a
    relation added renumbers the others."""
    named = _named(tree)
    missing = [schema for schema, _, _ in named
               if schema not in catalog.schemas and schema not in SYSTEM]
    if missing:
        known = catalog.schemas or executor.schemas
        wider = load_catalog(executor, [*known[len(executor.schemas):], *missing])
        catalog.tables, catalog.schemas, catalog.denied = wider.tables, wider.schemas, None
        catalog.forget_numbers()
    for schema, name, table in named:
        found = catalog.table(name)
        if found is not None and found.schema != schema and found.name == name and \
                _exists(executor, schema, name):
            raise SiselectError(
                f"{table.sql(dialect='postgres')} is named like "
                f"{quote_ident(found.schema)}.{quote_ident(found.name)}, which comes first: "
                "siselect tells relations apart by their names (read it through a view of "
                "another name, or put its schema first on the search_path)",
                FEATURE_NOT_SUPPORTED)


_EXISTS_SQL = """
SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2
"""


def _exists(executor: Executor, schema: str, name: str) -> bool:
    return bool(executor.run_internal(_EXISTS_SQL, [schema, name]))
