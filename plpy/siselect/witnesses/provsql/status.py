"""Whether the ProvSQL backend can run here, and if not, what is missing."""

from siselect.runtime.executor import Executor
from siselect.witnesses.provsql import helpers

# ProvSQL's settings exist only where its library is loaded (a mere placeholder, say from
# ALTER DATABASE ... SET provsql.active, is not in pg_settings); unlike
# shared_preload_libraries, pg_settings is readable by every role.
LOADED = "SELECT setting FROM pg_catalog.pg_settings WHERE name = 'provsql.active'"

# One round trip: each column is a fact available() turns into a reason.
_PROBE = f"""
SELECT
  EXISTS (SELECT 1 FROM pg_catalog.pg_available_extensions WHERE name = 'provsql')
      AS installed,
  EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'provsql') AS created,
  pg_catalog.to_regprocedure('{helpers.SCHEMA}.witnesses(text,text,boolean,regclass[],integer)')
      IS NOT NULL AS helpers_in,
  ({LOADED}) AS active,
  ARRAY(
    SELECT c.relname::text FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace s ON s.oid = c.relnamespace
    WHERE s.nspname = ($1::text[])[1] AND c.relkind = 'r'
      AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a WHERE a.attrelid = c.oid
                      AND a.attname = 'provsql' AND NOT a.attisdropped)
    ORDER BY 1) AS untracked
"""


def available(executor: Executor) -> str | None:
    """None when the ProvSQL backend can serve queries on the current schema, else why not."""
    facts = executor.run_internal(_PROBE, [executor.schemas])[0]
    (installed, created, helpers_in, active, untracked) = facts
    if not installed:
        return "the ProvSQL extension is not installed on this server"
    if active is None:
        return "ProvSQL is not loaded (shared_preload_libraries must include 'provsql')"
    if not created or not helpers_in:
        return "ProvSQL is not enabled for this database: run `siselect provsql enable --db NAME`"
    if untracked:
        return (
            f"tables without provenance: {', '.join(untracked)}; "
            "run `siselect provsql enable --db NAME`"
        )
    if active != "off":
        return (
            "provenance tracking is on in this session (provsql.active): ordinary answers "
            "would include ProvSQL's zero-provenance rows; set provsql.active = off"
        )
    return None
