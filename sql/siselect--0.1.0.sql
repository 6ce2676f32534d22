-- siselect 0.1.0: data-aware selection among candidate SQL queries.
-- Every function is a thin call into the Python package installed for this version
-- (its folder is fixed by `make install`: @PYTHON_DIR@).

\echo Use "CREATE EXTENSION siselect CASCADE" to load this file. \quit

CREATE FUNCTION siselect.version() RETURNS text
LANGUAGE plpython3u STABLE PARALLEL SAFE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
AS $$
import sys
if "@PYTHON_DIR@" not in sys.path: sys.path.insert(0, "@PYTHON_DIR@")
from siselect.server import call
return call(plpy, "0.1.0", "version")
$$;
COMMENT ON FUNCTION siselect.version() IS
  'Version of the siselect Python package the server runs (must equal the extension version)';

CREATE FUNCTION siselect.transpile(query text, dialect text DEFAULT 'sqlite') RETURNS text
LANGUAGE plpython3u STABLE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
AS $$
import sys
if "@PYTHON_DIR@" not in sys.path: sys.path.insert(0, "@PYTHON_DIR@")
from siselect.server import call
return call(plpy, "0.1.0", "transpile", sql=query, dialect=dialect)
$$;
COMMENT ON FUNCTION siselect.transpile(text, text) IS
  'PostgreSQL text of a query written in another dialect (sqlite), after validation';

-- Only members of siselect_user (and superusers) may call the functions.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'siselect_user') THEN
    CREATE ROLE siselect_user NOLOGIN;
  END IF;
END
$$;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA siselect FROM PUBLIC;
GRANT USAGE ON SCHEMA siselect TO siselect_user;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA siselect TO siselect_user;
