-- siselect_tap 0.1.0: pgTAP assertions over siselect, for users' pgTAP suites.
-- Each assertion is one TAP result made by pgTAP's own ok(); a failure adds diag() lines
-- with the evidence siselect found: the separating instance as tables with both queries'
-- answers on it, or the tournament duel that went the wrong way.
--
-- Every function pins its search_path to the one CREATE EXTENSION runs with (this schema,
-- then pgtap's and siselect's), so ok() and diag() are pgTAP's wherever pgtap was installed.
-- The caller's tables are still found: functions that run queries take `search_path` with
-- a default evaluated in the caller's session, and hand it to siselect.

\echo Use "CREATE EXTENSION siselect_tap" to load this file. \quit

-- One cell as a reader would type it: strings bare, NULL spelled out, long values cut.
CREATE FUNCTION siselect_tap._cell(value jsonb, width integer DEFAULT 40) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path FROM CURRENT
AS $$
  SELECT CASE WHEN length(t) > width THEN left(t, width - 3) || '...' ELSE t END
  FROM (SELECT replace(replace(CASE jsonb_typeof(value)
                                 WHEN 'null' THEN 'NULL'
                                 WHEN 'string' THEN value #>> '{}'
                                 ELSE value::text END,
                               E'\n', '\n'), E'\r', '\r') AS t) AS s
$$;

CREATE FUNCTION siselect_tap._plural(n integer, noun text) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path FROM CURRENT
AS $$ SELECT n || ' ' || noun || CASE WHEN n = 1 THEN '' ELSE 's' END $$;

-- A {"columns": [...], "rows": [[...], ...]} value (an instance's table, an answer) laid out
-- as psql does: a title line, a header, a rule, one line per row (numbers to the right).
CREATE FUNCTION siselect_tap.format_table(
    title text, tbl jsonb, indent integer DEFAULT 2, max_rows integer DEFAULT 20)
RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path FROM CURRENT
AS $$
DECLARE
  all_rows jsonb := coalesce(tbl -> 'rows', '[]');
  total integer := jsonb_array_length(all_rows);
  cols text[] := ARRAY(SELECT c FROM jsonb_array_elements_text(coalesce(tbl -> 'columns', '[]'))
                       WITH ORDINALITY AS e(c, n) ORDER BY n);
  shown jsonb[] := ARRAY(SELECT r FROM jsonb_array_elements(all_rows) WITH ORDINALITY AS e(r, n)
                         WHERE n <= max_rows ORDER BY n);
  pad text := repeat(' ', indent);
  widths integer[];
  lines text[];
  r jsonb;
  i integer;
BEGIN
  -- A judge's rows come without column names: number them.
  IF cardinality(cols) = 0 AND total > 0 THEN
    cols := ARRAY(SELECT 'column' || g FROM generate_series(1, jsonb_array_length(all_rows -> 0)) g);
  END IF;
  widths := ARRAY(SELECT length(c) FROM unnest(cols) WITH ORDINALITY AS u(c, n) ORDER BY n);
  FOREACH r IN ARRAY shown LOOP
    FOR i IN 1 .. cardinality(cols) LOOP
      widths[i] := greatest(widths[i], length(siselect_tap._cell(r -> (i - 1))));
    END LOOP;
  END LOOP;
  lines := ARRAY[pad || title || ' (' || siselect_tap._plural(total, 'row') || ')'];
  IF cardinality(cols) > 0 THEN
    lines := lines
      || rtrim(pad || ' ' || array_to_string(ARRAY(
           SELECT rpad(cols[k], widths[k]) FROM generate_series(1, cardinality(cols)) k
           ORDER BY k), ' | '))
      || (pad || array_to_string(ARRAY(
           SELECT repeat('-', widths[k] + 2) FROM generate_series(1, cardinality(cols)) k
           ORDER BY k), '+'));
    FOREACH r IN ARRAY shown LOOP
      lines := lines || rtrim(pad || ' ' || array_to_string(ARRAY(
        SELECT CASE WHEN jsonb_typeof(r -> (k - 1)) = 'number'
                    THEN lpad(siselect_tap._cell(r -> (k - 1)), widths[k])
                    ELSE rpad(siselect_tap._cell(r -> (k - 1)), widths[k]) END
        FROM generate_series(1, cardinality(cols)) k ORDER BY k), ' | '));
    END LOOP;
  END IF;
  IF total > max_rows THEN
    lines := lines || (pad || '(' || siselect_tap._plural(total - max_rows, 'more row')
                       || ' not shown)');
  END IF;
  RETURN array_to_string(lines, E'\n');
END
$$;

-- Every table of an instance ({table: {"columns", "rows"}}), in name order.
CREATE FUNCTION siselect_tap.format_instance(instance jsonb, indent integer DEFAULT 2)
RETURNS text
LANGUAGE sql IMMUTABLE SET search_path FROM CURRENT
AS $$
  SELECT coalesce(string_agg(siselect_tap.format_table('table ' || key, value, indent), E'\n'
                             ORDER BY key), repeat(' ', indent) || '(no rows: the empty database)')
  FROM jsonb_each(coalesce(instance, '{}'))
$$;

-- What siselect.separate found, for a reader: the queries, then the instance and both
-- answers on it, or why there is none.
CREATE FUNCTION siselect_tap.format_separation(sep jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path FROM CURRENT
AS $$
DECLARE
  lines text[] := ARRAY['q1: ' || coalesce(sep #>> '{sql,q1}', '?'),
                        'q2: ' || coalesce(sep #>> '{sql,q2}', '?')];
  on_d text := format('(on the whole database q1 returns %s, q2 %s)',
                      siselect_tap._plural((sep #>> '{rows_on_d,q1}')::int, 'row'),
                      siselect_tap._plural((sep #>> '{rows_on_d,q2}')::int, 'row'));
BEGIN
  CASE sep ->> 'status'
  WHEN 'separated' THEN
    lines := lines
      || format('they disagree on this separating instance of %s %s:',
                siselect_tap._plural((sep ->> 'rows')::int, 'row'), on_d)
      || siselect_tap.format_instance(sep -> 'instance')
      || 'their answers on it:'::text
      || siselect_tap.format_table('q1', sep #> '{answers,q1}')
      || siselect_tap.format_table('q2', sep #> '{answers,q2}');
    IF jsonb_array_length(coalesce(sep -> 'notes', '[]')) > 0 THEN
      lines := lines || ('notes: ' || (SELECT string_agg(n, '; ')
                                        FROM jsonb_array_elements_text(sep -> 'notes') n));
    END IF;
  WHEN 'same_answer' THEN
    lines := lines || format('they give the same answer on the whole database (%s)',
                             siselect_tap._plural((sep #>> '{rows_on_d,q1}')::int, 'row'));
  WHEN 'failed' THEN
    lines := lines || format('their answers differ %s, but no separating instance was found: %s',
                             on_d, sep ->> 'reason');
  WHEN 'nondeterministic' THEN
    lines := lines || ('their answers differ only by how ties are broken or by chance, so '
                       || 'neither the same answer nor different ones can be asserted: '
                       || (sep ->> 'reason'));
  WHEN 'timeout' THEN
    lines := lines || ('siselect.separate ran out of time: ' || (sep ->> 'reason'));
  WHEN 'error' THEN
    lines := lines || format('siselect.separate failed with SQLSTATE %s: %s',
                             sep ->> 'sqlstate', sep ->> 'reason');
  ELSE
    lines := lines || ('siselect.separate returned status ' || coalesce(sep ->> 'status', 'NULL'));
  END CASE;
  RETURN array_to_string(lines, E'\n');
END
$$;

-- siselect.separate, with an error (a refused or failing query) turned into a result of
-- status 'error', so that the assertion fails as one TAP result instead of ending the suite.
-- A cancel (statement_timeout, pg_cancel_backend) is not caught: it ends the statement.
CREATE FUNCTION siselect_tap._separate(
    q1 text, q2 text, dialect text, max_rows integer, seed bigint, backend text,
    with_references boolean, search_path text)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT
AS $$
DECLARE
  state text;
  message text;
BEGIN
  RETURN siselect.separate(q1, q2, dialect => dialect, strategy => 'minimal',
                           max_rows => max_rows, seed => seed, backend => backend,
                           with_references => with_references, search_path => search_path);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT;
  RETURN jsonb_build_object('status', 'error', 'sqlstate', state, 'reason', message,
                            'sql', jsonb_build_object('q1', q1, 'q2', q2));
END
$$;

-- One TAP result: ok() with the description, and on failure the evidence as diag() lines.
CREATE FUNCTION siselect_tap._result(passed boolean, description text, evidence text)
RETURNS text
LANGUAGE sql VOLATILE SET search_path FROM CURRENT
AS $$
  SELECT ok(passed, description)
         || CASE WHEN passed THEN '' ELSE E'\n' || diag(evidence) END
$$;

CREATE FUNCTION siselect_tap.same_answer(
    q1 text, q2 text, description text DEFAULT NULL,
    dialect text DEFAULT 'postgres',
    max_rows integer DEFAULT 30,
    seed bigint DEFAULT 0,
    backend text DEFAULT 'auto',
    with_references boolean DEFAULT false,
    search_path text DEFAULT pg_catalog.current_setting('search_path'))
RETURNS text
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT
AS $$
DECLARE
  sep jsonb := siselect_tap._separate(q1, q2, dialect, max_rows, seed, backend,
                                      with_references, search_path);
BEGIN
  RETURN siselect_tap._result(sep ->> 'status' = 'same_answer',
                              coalesce(description, 'q1 and q2 give the same answer'),
                              siselect_tap.format_separation(sep));
END
$$;

CREATE FUNCTION siselect_tap.answers_differ(
    q1 text, q2 text, description text DEFAULT NULL,
    dialect text DEFAULT 'postgres',
    max_rows integer DEFAULT 30,
    seed bigint DEFAULT 0,
    backend text DEFAULT 'auto',
    with_references boolean DEFAULT false,
    search_path text DEFAULT pg_catalog.current_setting('search_path'))
RETURNS text
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT
AS $$
DECLARE
  sep jsonb := siselect_tap._separate(q1, q2, dialect, max_rows, seed, backend,
                                      with_references, search_path);
BEGIN
  -- 'failed' means the answers differ on the database but no small instance shows it:
  -- they differ all the same.
  RETURN siselect_tap._result(sep ->> 'status' IN ('separated', 'failed'),
                              coalesce(description, 'q1 and q2 give different answers'),
                              siselect_tap.format_separation(sep));
END
$$;

-- One duel of a tournament's result, candidates numbered from 1 as in the input array.
CREATE FUNCTION siselect_tap.format_duel(duel jsonb, candidates text[]) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path FROM CURRENT
AS $$
DECLARE
  a integer := (duel ->> 'a')::int + 1;
  b integer := (duel ->> 'b')::int + 1;
  judge_rows jsonb := duel #> '{judge,rows}';
  lines text[];
BEGIN
  lines := ARRAY[
    format('duel: candidate %s (A) against candidate %s (B): %s, %s', a, b,
           CASE duel ->> 'verdict' WHEN 'a' THEN 'A won' WHEN 'b' THEN 'B won' ELSE 'a draw' END,
           duel ->> 'reason'),
    '  A: ' || coalesce(candidates[a], '?'),
    '  B: ' || coalesce(candidates[b], '?')];
  IF duel ->> 'separation' IS DISTINCT FROM 'separated' THEN
    RETURN array_to_string(lines, E'\n');
  END IF;
  lines := lines
    || format('  the separating instance D'' (%s):',
              siselect_tap._plural((duel ->> 'rows')::int, 'row'))
    || siselect_tap.format_instance(duel -> 'instance', 4)
    || '  the answers on D'':'::text
    || siselect_tap.format_table('A', duel #> '{answers,a}', 4)
    || siselect_tap.format_table('B', duel #> '{answers,b}', 4);
  IF judge_rows IS NOT NULL AND jsonb_typeof(judge_rows) = 'array' THEN
    -- The judge answers without column names; A's fit when the widths agree.
    lines := lines || siselect_tap.format_table(
      format('%s judge', duel #>> '{judge,name}'),
      jsonb_build_object('rows', judge_rows, 'columns',
        CASE WHEN jsonb_array_length(coalesce(judge_rows -> 0, '[]'))
                  = jsonb_array_length(coalesce(duel #> '{answers,a,columns}', '[]'))
             THEN duel #> '{answers,a,columns}' ELSE '[]' END), 4);
  ELSE
    lines := lines || format('    the %s judge gave no answer', duel #>> '{judge,name}');
  END IF;
  IF duel #>> '{judge,error}' IS NOT NULL THEN
    lines := lines || ('    the judge''s error: ' || (duel #>> '{judge,error}'));
  END IF;
  IF duel ? 'reference_answer' THEN
    lines := lines || siselect_tap.format_table('the reference query', duel -> 'reference_answer', 4);
  END IF;
  RETURN array_to_string(lines, E'\n');
END
$$;

-- Why a tournament did not pick candidate `expected` (1-based): what it picked, the groups
-- and their scores, and every duel the expected candidate's group did not win.
CREATE FUNCTION siselect_tap.format_tournament(result jsonb, candidates text[], expected integer)
RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path FROM CURRENT
AS $$
DECLARE
  e integer := expected - 1;  -- the result numbers candidates from 0
  dropped jsonb := (SELECT d FROM jsonb_array_elements(result -> 'dropped') d
                    WHERE (d ->> 'index')::int = e);
  mine jsonb := (SELECT g FROM jsonb_array_elements(result -> 'groups') g
                 WHERE g -> 'members' @> to_jsonb(e));
  rep integer := (mine ->> 'representative')::int;
  lines text[] := ARRAY[format('expected candidate %s: %s', expected, candidates[expected])];
  duel jsonb;
BEGIN
  IF result -> 'winner' IS NULL OR jsonb_typeof(result -> 'winner') = 'null' THEN
    lines := lines || ('the tournament picked no candidate: ' || coalesce(result ->> 'reason', '?'));
  ELSE
    lines := lines || format('picked   candidate %s: %s (decided by %s)',
                             (result #>> '{winner,index}')::int + 1, result #>> '{winner,sql}',
                             result ->> 'decided_by');
  END IF;
  IF dropped IS NOT NULL THEN
    lines := lines || format('candidate %s failed on the database, SQLSTATE %s: %s',
                             expected, dropped ->> 'sqlstate', dropped ->> 'message');
  END IF;
  lines := lines || ('groups (same answer on the database) and scores: ' || coalesce((
    SELECT string_agg(format('{%s} %s', (SELECT string_agg(((m::int) + 1)::text, ', ')
                                         FROM jsonb_array_elements_text(g -> 'members') m),
                             g ->> 'score'), '; ')
    FROM jsonb_array_elements(result -> 'groups') g), 'none'));
  IF mine IS NULL THEN
    RETURN array_to_string(lines, E'\n');
  END IF;
  IF rep <> e THEN
    lines := lines || format('candidate %s gives the same answer on the database as candidate %s, '
                             'which played for both', expected, rep + 1);
  END IF;
  FOR duel IN
    SELECT d FROM jsonb_array_elements(result -> 'duels') d
    WHERE ((d ->> 'a')::int = rep AND d ->> 'verdict' <> 'a')
       OR ((d ->> 'b')::int = rep AND d ->> 'verdict' <> 'b')
  LOOP
    lines := lines || siselect_tap.format_duel(duel, candidates);
  END LOOP;
  RETURN array_to_string(lines, E'\n');
END
$$;

CREATE FUNCTION siselect_tap.tournament_picks(
    candidates text[], question text, expected integer, description text DEFAULT NULL,
    evidence text DEFAULT NULL,
    judge text DEFAULT 'llm',
    reference text DEFAULT NULL,
    dialect text DEFAULT 'postgres',
    max_rows integer DEFAULT 30,
    seed bigint DEFAULT 0,
    backend text DEFAULT 'auto',
    with_references boolean DEFAULT true,
    search_path text DEFAULT pg_catalog.current_setting('search_path'))
RETURNS text
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT
AS $$
DECLARE
  result jsonb;
  state text;
  message text;
  what text := coalesce(description,
                        format('the tournament picks candidate %s for "%s"', expected, question));
BEGIN
  IF expected IS NULL OR expected < 1 OR expected > coalesce(cardinality(candidates), 0) THEN
    RETURN siselect_tap._result(false, what, format(
      'expected must be a position in candidates (1 to %s), not %s',
      coalesce(cardinality(candidates), 0), coalesce(expected::text, 'NULL')));
  END IF;
  BEGIN
    result := siselect.tournament(candidates, question, evidence => evidence, judge => judge,
                                  reference => reference, dialect => dialect,
                                  strategy => 'minimal', max_rows => max_rows, seed => seed,
                                  backend => backend, with_references => with_references,
                                  search_path => search_path);
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT;
    RETURN siselect_tap._result(false, what,
      format('siselect.tournament failed with SQLSTATE %s: %s', state, message));
  END;
  -- A candidate in the winner's group gives the winner's answer on the whole database:
  -- no judge can tell them apart, so it is picked too.
  RETURN siselect_tap._result(
    coalesce((SELECT g -> 'members' @> to_jsonb(expected - 1)
              FROM jsonb_array_elements(result -> 'groups') g
              WHERE (g ->> 'representative')::int = (result #>> '{winner,index}')::int), false),
    what, siselect_tap.format_tournament(result, candidates, expected));
END
$$;

-- The expected candidate given by its text, which must be one of the candidates.
CREATE FUNCTION siselect_tap.tournament_picks(
    candidates text[], question text, expected text, description text DEFAULT NULL,
    evidence text DEFAULT NULL,
    judge text DEFAULT 'llm',
    reference text DEFAULT NULL,
    dialect text DEFAULT 'postgres',
    max_rows integer DEFAULT 30,
    seed bigint DEFAULT 0,
    backend text DEFAULT 'auto',
    with_references boolean DEFAULT true,
    search_path text DEFAULT pg_catalog.current_setting('search_path'))
RETURNS text
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT
AS $$
DECLARE
  found_at integer := array_position(candidates, expected);
BEGIN
  IF found_at IS NULL THEN
    RETURN siselect_tap._result(false,
      coalesce(description, format('the tournament picks "%s" for "%s"', expected, question)),
      'the expected query is not one of the candidates: ' || coalesce(expected, 'NULL'));
  END IF;
  RETURN siselect_tap.tournament_picks(candidates, question, found_at, description,
    evidence => evidence, judge => judge, reference => reference, dialect => dialect,
    max_rows => max_rows, seed => seed, backend => backend,
    with_references => with_references, search_path => search_path);
END
$$;

COMMENT ON FUNCTION siselect_tap.same_answer(text, text, text, text, integer, bigint, text, boolean, text) IS
  'pgTAP: passes when q1 and q2 give the same answer on the database; a failure shows the separating instance and both answers';
COMMENT ON FUNCTION siselect_tap.answers_differ(text, text, text, text, integer, bigint, text, boolean, text) IS
  'pgTAP: passes when q1 and q2 give different answers on the database; a failure says they agree';
COMMENT ON FUNCTION siselect_tap.tournament_picks(text[], text, integer, text, text, text, text, text, integer, bigint, text, boolean, text) IS
  'pgTAP: passes when siselect.tournament picks candidates[expected] (or one with its answer on the database); a failure shows the duels it did not win';
COMMENT ON FUNCTION siselect_tap.tournament_picks(text[], text, text, text, text, text, text, text, integer, bigint, text, boolean, text) IS
  'pgTAP: tournament_picks with the expected candidate given by its text';
COMMENT ON FUNCTION siselect_tap.format_table(text, jsonb, integer, integer) IS
  'A {"columns", "rows"} value as a psql-like table (for diag)';
COMMENT ON FUNCTION siselect_tap.format_instance(jsonb, integer) IS
  'Every table of a separating instance as psql-like tables (for diag)';
COMMENT ON FUNCTION siselect_tap.format_separation(jsonb) IS
  'The result of siselect.separate for a reader: both queries, the instance and both answers, or why there is none';
COMMENT ON FUNCTION siselect_tap.format_duel(jsonb, text[]) IS
  'One duel of siselect.tournament: both candidates, D'', both answers and the judge''s';
COMMENT ON FUNCTION siselect_tap.format_tournament(jsonb, text[], integer) IS
  'Why a tournament did not pick candidates[expected]: the winner, groups, scores and the duels the expected one did not win';

-- siselect's functions are for members of siselect_user; so are these, which call them.
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA siselect_tap FROM PUBLIC;
GRANT USAGE ON SCHEMA siselect_tap TO siselect_user;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA siselect_tap TO siselect_user;
