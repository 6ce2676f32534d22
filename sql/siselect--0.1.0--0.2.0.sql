-- siselect 0.1.0 -> 0.2.0: candidate SQL runs only as the one SELECT that was checked.
-- The read-only transaction and standard-conforming literals are now properties of the
-- functions (PostgreSQL restores both when they return) instead of text sent in front of
-- each query, and administrators can trust more functions than pg_catalog's non-volatile
-- ones in siselect.allowed_names. The full 0.2.0 script is 0.1.0's followed by this one.

\echo Use "ALTER EXTENSION siselect UPDATE TO '0.2.0'" to load this file. \quit

-- Names (functions, operators, types) a candidate query may use beyond pg_catalog's
-- non-volatile functions; siselect's own functions stay out of reach whatever it holds.
CREATE TABLE siselect.allowed_names (
    schema_name name NOT NULL,
    name name NOT NULL,
    note text,
    PRIMARY KEY (schema_name, name)
);
COMMENT ON TABLE siselect.allowed_names IS
  'Functions, operators and types (schema, name) that candidate queries may use although they are volatile or outside pg_catalog; written by administrators';
SELECT pg_catalog.pg_extension_config_dump('siselect.allowed_names', '');
REVOKE ALL ON siselect.allowed_names FROM PUBLIC;
GRANT SELECT ON siselect.allowed_names TO siselect_user;

CREATE OR REPLACE FUNCTION siselect.version() RETURNS text
LANGUAGE plpython3u STABLE PARALLEL SAFE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
AS $$
@BOOT@
return call(plpy, "0.2.0", "version")
$$;

CREATE OR REPLACE FUNCTION siselect.transpile(query text, dialect text DEFAULT 'sqlite')
RETURNS text
LANGUAGE plpython3u STABLE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
SET standard_conforming_strings TO on
AS $$
@BOOT@
return call(plpy, "0.2.0", "transpile", sql=query, dialect=dialect)
$$;

CREATE OR REPLACE FUNCTION siselect.separate(
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
SET transaction_read_only TO on
SET standard_conforming_strings TO on
AS $$
@BOOT@
return call(plpy, "0.2.0", "separate", q1=q1, q2=q2, dialect=dialect, strategy=strategy,
            max_rows=max_rows, seed=seed, backend=backend, with_references=with_references,
            search_path=search_path)
$$;

CREATE OR REPLACE FUNCTION siselect.materialize(
    instance jsonb, schema text DEFAULT NULL,
    search_path text DEFAULT pg_catalog.current_setting('search_path'))
RETURNS text
LANGUAGE plpython3u VOLATILE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
SET standard_conforming_strings TO on
AS $$
@BOOT@
return call(plpy, "0.2.0", "materialize", instance=instance, schema=schema,
            search_path=search_path)
$$;
COMMENT ON FUNCTION siselect.materialize(jsonb, text, text) IS
  'Writes an instance into a new schema (siselect_instance_<hex> unless one is named, which must not exist) and returns its name; the caller drops it';

-- The tournament's rules (issue 15): groups (the grouping: exact or paper; GROUPING is a
-- keyword), scoring, schedule and instances a pair, each NULL for the strategy's default;
-- counts, how often each candidate was produced (a deduplicated list's votes; NULL: one
-- each). A new argument list: the old one goes, so that no overload is left.
DROP FUNCTION siselect.tournament(text[], text, text, text, text, text, text, integer, bigint,
                                  text, boolean, text);
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
    groups text DEFAULT NULL,
    scoring text DEFAULT NULL,
    schedule text DEFAULT NULL,
    instances integer DEFAULT NULL,
    counts integer[] DEFAULT NULL,
    search_path text DEFAULT pg_catalog.current_setting('search_path'))
RETURNS jsonb
LANGUAGE plpython3u VOLATILE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
SET transaction_read_only TO on
SET standard_conforming_strings TO on
AS $$
@BOOT@
return call(plpy, "0.2.0", "tournament", candidates=candidates, question=question,
            evidence=evidence, judge=judge, reference=reference, dialect=dialect,
            strategy=strategy, max_rows=max_rows, seed=seed, backend=backend,
            with_references=with_references, grouping=groups, scoring=scoring,
            schedule=schedule, instances=instances, counts=counts, search_path=search_path)
$$;
COMMENT ON FUNCTION siselect.tournament(text[], text, text, text, text, text, text, integer,
                                        bigint, text, boolean, text, text, text, integer,
                                        integer[], text) IS
  'Selects one candidate by a tournament of separating-instance duels (groups exact|paper, scoring evidence|points, schedule adaptive|round-robin, instances a pair; NULL: the strategy''s default; counts: how often each candidate was produced); jsonb with winner, groups, members, scores and every duel';
REVOKE ALL ON FUNCTION siselect.tournament(text[], text, text, text, text, text, text, integer,
                                           bigint, text, boolean, text, text, text, integer,
                                           integer[], text)
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION siselect.tournament(text[], text, text, text, text, text, text,
                                              integer, bigint, text, boolean, text, text, text,
                                              integer, integer[], text) TO siselect_user;

CREATE OR REPLACE FUNCTION siselect.tournament_report(result jsonb) RETURNS text
LANGUAGE plpython3u IMMUTABLE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
AS $$
@BOOT@
return call(plpy, "0.2.0", "tournament_report", result=result)
$$;

CREATE OR REPLACE FUNCTION siselect.set_llm_config(config jsonb) RETURNS text
LANGUAGE plpython3u VOLATILE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
AS $$
@BOOT@
if not plpy.execute("SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user")[0]["rolsuper"]:
    plpy.error("siselect: only a superuser can change the LLM configuration", sqlstate="42501")
return call(plpy, "0.2.0", "set_llm_config", config=config)
$$;

CREATE OR REPLACE FUNCTION siselect.llm_config() RETURNS jsonb
LANGUAGE plpython3u STABLE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
AS $$
@BOOT@
if not plpy.execute("SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user")[0]["rolsuper"]:
    plpy.error("siselect: only a superuser can read the LLM configuration", sqlstate="42501")
return call(plpy, "0.2.0", "llm_config")
$$;

-- The LLM judge's audit: what left the server (endpoint, model, prompt hash and size, the
-- tables and columns shown; the messages when the audit is 'full'), one record per
-- completion sent, when an administrator sets "audit" in siselect.set_llm_config. The
-- server process appends the records to siselect/judge_audit.jsonl in the data directory:
-- a table cannot serve, since tournament runs in a read-only transaction and a caller's
-- rollback would take the records with it. Members of siselect_auditor read them here.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'siselect_auditor') THEN
    CREATE ROLE siselect_auditor NOLOGIN;
  END IF;
END
$$;
CREATE FUNCTION siselect.judge_audit_entries() RETURNS SETOF jsonb
LANGUAGE plpython3u VOLATILE
SECURITY INVOKER SET search_path TO pg_catalog, pg_temp
AS $$
@BOOT@
if not plpy.execute("SELECT pg_catalog.pg_has_role('siselect_auditor', 'MEMBER') AS auditor")[0]["auditor"]:
    plpy.error("siselect: only members of siselect_auditor can read the judge audit", sqlstate="42501")
return call(plpy, "0.2.0", "judge_audit")
$$;
COMMENT ON FUNCTION siselect.judge_audit_entries() IS
  'Members of siselect_auditor: the LLM judge audit records (one jsonb per completion sent), oldest first; see the view siselect.judge_audit';
REVOKE ALL ON FUNCTION siselect.judge_audit_entries() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION siselect.judge_audit_entries() TO siselect_auditor;
CREATE VIEW siselect.judge_audit AS
SELECT (e->>'sent_at')::timestamptz AS sent_at,
       (e->>'pid')::integer AS pid,
       e->>'call_id' AS call_id,
       e->>'database_name' AS database_name,
       e->>'session_role' AS session_role,
       e->>'calling_role' AS calling_role,
       e->>'endpoint' AS endpoint,
       e->>'model' AS model,
       (e->>'vote')::integer AS vote,
       (e->>'seed')::bigint AS seed,
       e->>'prompt_sha256' AS prompt_sha256,
       (e->>'prompt_bytes')::integer AS prompt_bytes,
       (e->>'prompt_tokens_estimated')::integer AS prompt_tokens_estimated,
       ARRAY(SELECT pg_catalog.jsonb_array_elements_text(e->'tables')) AS tables,
       ARRAY(SELECT pg_catalog.jsonb_array_elements_text(e->'columns')) AS columns,
       ARRAY(SELECT pg_catalog.jsonb_array_elements_text(e->'masked_columns')) AS masked_columns,
       e->>'left_out' AS left_out,
       NULLIF(e->'messages', 'null'::jsonb) AS messages
FROM siselect.judge_audit_entries() AS e;
COMMENT ON VIEW siselect.judge_audit IS
  'What the LLM judge sent out of the server, one row per completion (audit on); messages only when the audit is full';
REVOKE ALL ON siselect.judge_audit FROM PUBLIC;
GRANT USAGE ON SCHEMA siselect TO siselect_auditor;
GRANT SELECT ON siselect.judge_audit TO siselect_auditor;
