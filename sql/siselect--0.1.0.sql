-- siselect 0.1.0: data-aware selection among candidate SQL queries.
-- Every function is a thin call into the Python package installed for this version;
-- `make install` replaces @BOOT@ with the line that finds that package (a folder fixed
-- at build time, never taken from a setting) and imports the dispatcher.
-- Functions that read the caller's tables take `search_path` with a default evaluated in
-- the caller's session, since each function pins its own search_path.

\echo Use "CREATE EXTENSION siselect CASCADE" to load this file. \quit

CREATE FUNCTION siselect.version() RETURNS text
LANGUAGE plpython3u STABLE PARALLEL SAFE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
AS $$
@BOOT@
return call(plpy, "0.1.0", "version")
$$;
COMMENT ON FUNCTION siselect.version() IS
  'Version of the siselect Python package the server runs (must equal the extension version)';

CREATE FUNCTION siselect.transpile(query text, dialect text DEFAULT 'sqlite') RETURNS text
LANGUAGE plpython3u STABLE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
AS $$
@BOOT@
return call(plpy, "0.1.0", "transpile", sql=query, dialect=dialect)
$$;
COMMENT ON FUNCTION siselect.transpile(text, text) IS
  'PostgreSQL text of a query written in another dialect (sqlite), after validation';

CREATE FUNCTION siselect.separate(
    q1 text, q2 text,
    dialect text DEFAULT 'postgres',
    strategy text DEFAULT 'minimal',
    max_rows integer DEFAULT 30,
    seed bigint DEFAULT 0,
    backend text DEFAULT 'auto',
    with_references boolean DEFAULT false,
    search_path text DEFAULT pg_catalog.current_setting('search_path'))
RETURNS jsonb
LANGUAGE plpython3u VOLATILE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
AS $$
@BOOT@
return call(plpy, "0.1.0", "separate", q1=q1, q2=q2, dialect=dialect, strategy=strategy,
            max_rows=max_rows, seed=seed, backend=backend, with_references=with_references,
            search_path=search_path)
$$;
COMMENT ON FUNCTION siselect.separate(text, text, text, text, integer, bigint, text, boolean, text) IS
  'A few real rows on which two queries disagree (a separating instance), verified by running both on them';

CREATE FUNCTION siselect.materialize(
    instance jsonb, schema text DEFAULT NULL,
    search_path text DEFAULT pg_catalog.current_setting('search_path'))
RETURNS text
LANGUAGE plpython3u VOLATILE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
AS $$
@BOOT@
return call(plpy, "0.1.0", "materialize", instance=instance, schema=schema,
            search_path=search_path)
$$;
COMMENT ON FUNCTION siselect.materialize(jsonb, text, text) IS
  'Writes an instance into a schema (a temporary one by default) and returns the schema name';

CREATE FUNCTION siselect.tournament(
    candidates text[], question text,
    evidence text DEFAULT NULL,
    judge text DEFAULT 'llm',
    reference text DEFAULT NULL,
    dialect text DEFAULT 'postgres',
    strategy text DEFAULT 'minimal',
    max_rows integer DEFAULT 30,
    seed bigint DEFAULT 0,
    backend text DEFAULT 'auto',
    with_references boolean DEFAULT true,
    search_path text DEFAULT pg_catalog.current_setting('search_path'))
RETURNS jsonb
LANGUAGE plpython3u VOLATILE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
AS $$
@BOOT@
return call(plpy, "0.1.0", "tournament", candidates=candidates, question=question,
            evidence=evidence, judge=judge, reference=reference, dialect=dialect,
            strategy=strategy, max_rows=max_rows, seed=seed, backend=backend,
            with_references=with_references, search_path=search_path)
$$;
COMMENT ON FUNCTION siselect.tournament(text[], text, text, text, text, text, text, integer, bigint, text, boolean, text) IS
  'Selects one candidate by a round-robin tournament of separating-instance duels; jsonb with winner, groups, scores and every duel';

CREATE FUNCTION siselect.tournament_report(result jsonb) RETURNS text
LANGUAGE plpython3u IMMUTABLE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
AS $$
@BOOT@
return call(plpy, "0.1.0", "tournament_report", result=result)
$$;
COMMENT ON FUNCTION siselect.tournament_report(jsonb) IS
  'Markdown report of a tournament: each duel with the rows of D'', the judge''s votes, both answers and the verdict';

CREATE FUNCTION siselect.set_llm_config(config jsonb) RETURNS text
LANGUAGE plpython3u VOLATILE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
AS $$
@BOOT@
if not plpy.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")[0]["rolsuper"]:
    plpy.error("siselect: only a superuser can change the LLM configuration", sqlstate="42501")
return call(plpy, "0.1.0", "set_llm_config", config=config)
$$;
COMMENT ON FUNCTION siselect.set_llm_config(jsonb) IS
  'Superuser only: stores the LLM endpoint settings (base_url, model, api_key, ...) in a server file no SQL role can read; NULL removes them';

CREATE FUNCTION siselect.llm_config() RETURNS jsonb
LANGUAGE plpython3u STABLE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
AS $$
@BOOT@
if not plpy.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")[0]["rolsuper"]:
    plpy.error("siselect: only a superuser can read the LLM configuration", sqlstate="42501")
return call(plpy, "0.1.0", "llm_config")
$$;
COMMENT ON FUNCTION siselect.llm_config() IS
  'Superuser only: the LLM endpoint settings in effect, with the API key masked';

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
-- The LLM configuration is for administrators only.
REVOKE EXECUTE ON FUNCTION siselect.set_llm_config(jsonb), siselect.llm_config() FROM siselect_user;
