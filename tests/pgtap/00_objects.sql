-- The extension's objects: schema, functions, their language, security and privileges.
BEGIN;
SELECT plan(20);

SELECT has_extension('siselect');
SELECT has_schema('siselect');
SELECT has_role('siselect_user');
SELECT has_role('siselect_auditor');

SELECT has_function('siselect', 'version', ARRAY[]::name[]);
SELECT has_function('siselect', 'transpile', ARRAY['text', 'text']);
SELECT has_function('siselect', 'separate',
       ARRAY['text', 'text', 'text', 'text', 'integer', 'bigint', 'text', 'boolean', 'text']);
SELECT has_function('siselect', 'materialize', ARRAY['jsonb', 'text', 'text']);

SELECT is(
  (SELECT count(*)::int FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
   WHERE p.pronamespace = 'siselect'::regnamespace AND l.lanname <> 'plpython3u'),
  0, 'every function is PL/Python');
SELECT is(
  (SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'siselect'::regnamespace AND prosecdef),
  0, 'no function is SECURITY DEFINER');
SELECT is(
  (SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'siselect'::regnamespace
   AND NOT coalesce('search_path=pg_catalog, pg_temp' = ANY(proconfig), false)),
  0, 'every function pins its search_path');
SELECT is(
  (SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'siselect'::regnamespace
   AND has_function_privilege('public', oid, 'EXECUTE')),
  0, 'PUBLIC cannot execute any function');
SELECT is(
  (SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'siselect'::regnamespace
   AND NOT has_function_privilege('siselect_user', oid, 'EXECUTE')
   AND proname NOT IN ('set_llm_config', 'llm_config', 'judge_audit_entries')),
  0, 'siselect_user can execute the user functions');
SELECT is(
  (SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'siselect'::regnamespace
   AND obj_description(oid, 'pg_proc') IS NULL),
  0, 'every function has a comment');

SELECT is(siselect.version(),
          (SELECT extversion FROM pg_extension WHERE extname = 'siselect'),
          'the Python package version equals the extension version');
SELECT is(siselect.transpile('SELECT `a b` FROM t', 'sqlite'), 'SELECT "a b" AS "a b" FROM t',
          'transpile quotes SQLite backtick identifiers and names the column as SQLite does');
SELECT throws_ok($$SELECT siselect.transpile('DELETE FROM t', 'sqlite')$$, '25006', NULL,
                 'a write is refused with SQLSTATE 25006');
SELECT throws_ok($$SELECT siselect.transpile('SELECT 1; SELECT 2', 'postgres')$$, '42601', NULL,
                 'two statements are refused with SQLSTATE 42601');
SELECT throws_ok($$SELECT siselect.transpile('SELECT 1', 'oracle')$$, '22023', NULL,
                 'an unknown dialect is refused with SQLSTATE 22023');
SELECT is(
  (SELECT count(*)::int FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
   WHERE e.extname = 'siselect' AND d.deptype = 'e' AND d.classid = 'pg_proc'::regclass),
  (SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'siselect'::regnamespace),
  'every function belongs to the extension');

SELECT * FROM finish();
ROLLBACK;
