"""Which row identity each kind of relation gets (docs/instances.md, "Row identity").

- a plain table (``r``) without inheritance children, a materialised view (``m``): ``ctid``;
- a partitioned table (``p``), a table with inheritance children: ``leaf``, ``tableoid``
  with ``ctid`` (a ctid repeats across the relations that hold the rows);
- a foreign table (``f``), or a parent with a foreign member: ``content``, the row's values
  and its occurrence among equal rows (a remote ctid identifies nothing here);
- a view (``v``): ``inline`` where the caller may read what it reads (lineage through its
  definition), else ``content`` (the view read as it is, its barrier and the row-level
  security behind it kept).
"""

import sqlglot
from sqlglot import exp

# One row per relation of the catalog: its kind, the relations holding its rows (itself and
# its inheritance or partition descendants that have storage), whether one is foreign, and
# for a view its definition and options.
RELATIONS_SQL = """
SELECT c.relname::text AS name, c.oid::bigint AS relid, c.relkind::text AS kind,
       m.members, m.has_foreign,
       CASE WHEN c.relkind = 'v' THEN pg_catalog.pg_get_viewdef(c.oid) END AS definition,
       EXISTS (SELECT 1 FROM pg_catalog.pg_options_to_table(c.reloptions) o
               WHERE o.option_name = 'security_barrier' AND o.option_value::boolean) AS barrier,
       EXISTS (SELECT 1 FROM pg_catalog.pg_options_to_table(c.reloptions) o
               WHERE o.option_name = 'security_invoker' AND o.option_value::boolean) AS invoker
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace,
LATERAL (
    WITH RECURSIVE tree(member) AS (
        SELECT c.oid
        UNION
        SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN tree ON i.inhparent = tree.member)
    SELECT ARRAY(SELECT t.member::bigint FROM tree t
                 JOIN pg_catalog.pg_class k ON k.oid = t.member
                 WHERE k.relkind IN ('r', 'm') ORDER BY t.member) AS members,
           EXISTS (SELECT 1 FROM tree t JOIN pg_catalog.pg_class k ON k.oid = t.member
                   WHERE k.relkind = 'f') AS has_foreign) AS m
WHERE (n.nspname, c.relname) IN (
    SELECT * FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[])))
"""

# The relations each view's rule reads, whether the caller may read each (SELECT on the
# whole relation) and whether row-level security is enabled on it.
DEPENDENCIES_SQL = """
SELECT DISTINCT r.ev_class::bigint AS view_id, d.refobjid::bigint AS dependency,
       pg_catalog.has_table_privilege(d.refobjid, 'SELECT') AS readable,
       k.relrowsecurity AS rls
FROM pg_catalog.pg_rewrite r
JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
     AND d.objid = r.oid AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
     AND d.refobjid <> r.ev_class
JOIN pg_catalog.pg_class k ON k.oid = d.refobjid
WHERE r.ev_class = ANY ($1::oid[])
"""


def identity(kind: str, members: int, has_foreign: bool) -> str:
    """The identity of a relation of ``kind`` whose rows ``members`` relations hold."""
    if kind == "v":
        return "inline"  # decided later, see opaque_reason
    if kind == "f" or has_foreign:
        return "content"
    if kind == "p" or members > 1:
        return "leaf"
    return "ctid"


def opaque_reason(dependencies: list[tuple[object | None, bool, bool]],
                  invoker: bool) -> str | None:
    """Why a view must be read as it is rather than through its definition, or None.

    ``dependencies``: per relation the view reads, the catalog's entry for it (None when
    it is not on the search_path), whether the caller may read it, whether it has
    row-level security. Read through its definition, the view's relations are read with
    the caller's privileges and the caller's policies instead of the view owner's."""
    for table, readable, rls in dependencies:
        if table is None:
            return "it reads a relation that is not on the search_path"
        if not readable:
            return "you may not read every relation it reads"
        if rls and not invoker:
            return "a relation it reads has row-level security"
    return None


def qualified(definition: str, known: set[tuple[str, str]]) -> str | None:
    """The view's definition with every relation it reads named with its schema, or None
    when sqlglot cannot read it or it names a relation not in ``known`` (schema, name)."""
    try:
        tree = sqlglot.parse_one(definition.strip().rstrip(";"), read="postgres")
    except sqlglot.errors.SqlglotError:
        return None
    if not isinstance(tree, exp.Query):
        return None
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue  # a function in FROM
        if table.db:
            if (table.db, table.name) not in known:
                return None
            continue
        if table.name in ctes:
            continue
        schemas = [s for s, n in known if n == table.name]
        if len(schemas) != 1:
            return None
        table.set("db", exp.to_identifier(schemas[0], quoted=True))
    return tree.sql(dialect="postgres")
