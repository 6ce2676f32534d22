-- pg_regress: the extension installs with its objects, comments and version.
CREATE EXTENSION siselect CASCADE;
SELECT siselect.version() = extversion AS versions_agree
FROM pg_extension WHERE extname = 'siselect';
SELECT p.oid::regprocedure AS function, obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented,
       p.prosecdef AS security_definer,
       'search_path=pg_catalog, pg_temp' = ANY (p.proconfig) AS pinned_path
FROM pg_proc p WHERE p.pronamespace = 'siselect'::regnamespace
ORDER BY p.proname;
SELECT has_function_privilege('siselect_user', 'siselect.separate(text,text,text,text,integer,bigint,text,boolean,text)', 'EXECUTE') AS user_may_separate,
       has_function_privilege('siselect_user', 'siselect.llm_config()', 'EXECUTE') AS user_may_read_llm_config;
