"""The SQL objects ``siselect provsql enable`` installs next to ProvSQL, in one schema.

- ``token_row``: each base row's ProvSQL input token and a label naming the row
  (``relid:block:offset``); it is the provenance mapping ``sr_why`` reads, so the simple
  terms come back as sets of row labels.
- ``witnesses(...)``: runs a query with provenance tracking on (only inside the function:
  the database default is off, because tracking changes ordinary answers, see below),
  keeps the answer rows, and returns one ``bigint[]`` of encoded row ids per simple term.
- ``track(schema)`` / ``untrack(schema)``: provenance on (off) every table of a loaded
  database, and its rows in ``token_row``.

Why tracking is off by default once enabled: with ProvSQL active, a query over tracked
tables also returns rows whose provenance is zero (failed HAVING groups, rows removed by
EXCEPT or NOT EXISTS) and runs much slower; siselect's answers and verifications must be
plain SQL, so ``enable`` sets ``provsql.active = off`` for the database and the witness
function turns it on for itself.
"""

from siselect.runtime.executor import quote_literal

SCHEMA = "siselect_provsql"
MAPPING = f"{SCHEMA}.token_row"

_OBJECTS = f"""
CREATE SCHEMA IF NOT EXISTS {SCHEMA};
COMMENT ON SCHEMA {SCHEMA} IS 'siselect: ProvSQL backend helpers (siselect provsql enable)';

CREATE TABLE IF NOT EXISTS {SCHEMA}.token_row (
    provenance uuid PRIMARY KEY,
    value text NOT NULL,
    relid oid NOT NULL
);
CREATE INDEX IF NOT EXISTS token_row_relid ON {SCHEMA}.token_row (relid);

CREATE TABLE IF NOT EXISTS {SCHEMA}.created_extension (name name PRIMARY KEY);

CREATE OR REPLACE FUNCTION {SCHEMA}.track(target name) RETURNS integer
LANGUAGE plpgsql SET provsql.active = off AS $fn$
DECLARE
  rel regclass;
  n integer := 0;
BEGIN
  FOR rel IN
    SELECT c.oid::regclass FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace s ON s.oid = c.relnamespace
    WHERE s.nspname = target AND c.relkind = 'r' ORDER BY c.relname
  LOOP
    PERFORM provsql.add_provenance(rel);
    DELETE FROM {SCHEMA}.token_row WHERE relid = rel;
    -- The token column is visible only while tracking is on; INSERT ... SELECT from a
    -- tracked table is refused by ProvSQL, so the pairs go through a temporary table.
    PERFORM pg_catalog.set_config('provsql.active', 'on', true);
    EXECUTE format('CREATE TEMP TABLE siselect_tokens ON COMMIT DROP AS '
                   'SELECT t.provsql AS token, t.ctid AS place FROM %s AS t', rel);
    PERFORM pg_catalog.set_config('provsql.active', 'off', true);
    INSERT INTO {SCHEMA}.token_row
      SELECT token, rel::oid || ':' || (place::text::point)[0]::bigint || ':'
                    || (place::text::point)[1]::bigint, rel::oid
      FROM siselect_tokens;
    DROP TABLE siselect_tokens;
    n := n + 1;
  END LOOP;
  RETURN n;
END
$fn$;

CREATE OR REPLACE FUNCTION {SCHEMA}.untrack(target name) RETURNS integer
LANGUAGE plpgsql SET provsql.active = off AS $fn$
DECLARE
  rel regclass;
  n integer := 0;
BEGIN
  FOR rel IN
    SELECT DISTINCT c.oid::regclass FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace s ON s.oid = c.relnamespace
    JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid
    WHERE s.nspname = target AND c.relkind = 'r'
      AND a.attname = 'provsql' AND NOT a.attisdropped
  LOOP
    DELETE FROM {SCHEMA}.token_row WHERE relid = rel;
    PERFORM provsql.remove_provenance(rel);
    n := n + 1;
  END LOOP;
  RETURN n;
END
$fn$;

-- tracked: SQL returning (token uuid, key text), run with tracking on.
-- kept_keys: NULL, or SQL returning the keys of the groups that are answers, run plain.
-- filter_zero: whether rows may carry zero provenance (then only present() rows count).
-- numbering: the tables, in the order of siselect's table numbers (rowids.encode).
-- max_rows: more tracked rows than this is an error (54000) rather than minutes of work
-- that ProvSQL's evaluation, deaf to statement_timeout, would not let anyone cancel.
CREATE OR REPLACE FUNCTION {SCHEMA}.witnesses(
    tracked text, kept_keys text, filter_zero boolean, numbering regclass[], max_rows integer)
RETURNS TABLE (w bigint[])
LANGUAGE plpgsql SET provsql.active = on AS $fn$
DECLARE
  token uuid;
  key text;
  kept jsonb;
  roots uuid[] := '{{}}';
  seen integer := 0;
BEGIN
  IF kept_keys IS NOT NULL THEN
    PERFORM pg_catalog.set_config('provsql.active', 'off', true);
    EXECUTE 'SELECT pg_catalog.jsonb_object_agg(k, true) FROM (' || kept_keys || ') AS s(k)'
      INTO kept;
    PERFORM pg_catalog.set_config('provsql.active', 'on', true);
    IF kept IS NULL THEN
      RETURN;
    END IF;
  END IF;
  FOR token, key IN EXECUTE tracked LOOP
    seen := seen + 1;
    IF seen > max_rows THEN
      RAISE EXCEPTION 'more than % rows to trace with ProvSQL', max_rows
        USING ERRCODE = 'program_limit_exceeded';
    END IF;
    CONTINUE WHEN token IS NULL;
    CONTINUE WHEN kept IS NOT NULL AND NOT coalesce(kept ? key, false);
    CONTINUE WHEN filter_zero AND NOT provsql.present(token);
    roots := roots || token;
  END LOOP;
  IF pg_catalog.cardinality(roots) = 0 THEN
    RETURN;
  END IF;
  RETURN QUERY
    SELECT DISTINCT t.ids FROM (
      SELECT ARRAY(
        SELECT DISTINCT (p.pos::bigint << 48)
               | (pg_catalog.split_part(l, ':', 2)::bigint << 16)
               | pg_catalog.split_part(l, ':', 3)::bigint
        FROM pg_catalog.unnest(pg_catalog.string_to_array(m.term[1], ',')) AS l,
             LATERAL (SELECT pg_catalog.array_position(
                        numbering, pg_catalog.split_part(l, ':', 1)::oid::regclass)) AS p(pos)
        WHERE p.pos IS NOT NULL
        ORDER BY 1) AS ids
      FROM pg_catalog.regexp_matches(
             provsql.sr_why(provsql.provenance_plus(roots), '{MAPPING}'::regclass),
             '\\{{([^{{}}]+)\\}}', 'g') AS m(term)
    ) AS t
    WHERE pg_catalog.cardinality(t.ids) > 0;
END
$fn$;
"""


def install_sql() -> str:
    """Statements creating (or replacing) the helper schema's objects; idempotent."""
    return _OBJECTS


def track_sql(schema: str) -> str:
    return f"SELECT {SCHEMA}.track({quote_literal(schema)})"


def untrack_sql(schema: str) -> str:
    return f"SELECT {SCHEMA}.untrack({quote_literal(schema)})"
