-- siselect.tournament and siselect.tournament_report, and the LLM settings' privileges.
BEGIN;
SELECT plan(14);

CREATE SCHEMA tap_shop;
CREATE TABLE tap_shop.item (id bigint PRIMARY KEY, name text, price double precision);
INSERT INTO tap_shop.item SELECT i, 'item ' || i, i * 10 FROM generate_series(1, 50) i;
SET LOCAL search_path = tap_shop, public;

CREATE TEMP TABLE result AS
SELECT siselect.tournament(
  ARRAY['SELECT count(*) FROM item WHERE price >= 100',
        'SELECT count(*) FROM item WHERE price > 100',
        'SELECT count(*) FROM item'],
  question => 'How many items cost more than 100?',
  judge => 'reference', reference => 'SELECT count(*) FROM item WHERE price > 100',
  scoring => 'points', schedule => 'round-robin') AS r;

SELECT is((SELECT (r -> 'winner' ->> 'index')::int FROM result), 1,
          'the reference judge makes the matching candidate win');
SELECT is((SELECT jsonb_array_length(r -> 'duels') FROM result), 3, 'three groups play three duels');
SELECT is((SELECT (r -> 'scores' ->> '1')::numeric FROM result), 2.0, 'the winner won both its duels');
SELECT ok((SELECT siselect.tournament_report(r) FROM result) LIKE '%## Scores%',
          'the report has the score table');

SELECT is(siselect.tournament(
  ARRAY['SELECT count(*) FROM item WHERE price >= 100',
        'SELECT count(*) FROM item WHERE price > 100',
        'SELECT count(*) FROM item WHERE price > 100.0'],
  question => 'How many items cost more than 100?', judge => 'none') -> 'winner' ->> 'index',
  '1', 'without a judge the largest group wins');

-- Deduplicated candidates keep their votes: the first was produced five times.
SELECT is(siselect.tournament(
  ARRAY['SELECT count(*) FROM item WHERE price >= 100',
        'SELECT count(*) FROM item WHERE price > 100',
        'SELECT count(*) FROM item WHERE price > 100.0'],
  question => 'How many items cost more than 100?', judge => 'none',
  counts => ARRAY[5, 1, 1]) -> 'winner' ->> 'index',
  '0', 'counts weigh the groups: five votes beat two');
SELECT throws_ok($$SELECT siselect.tournament(ARRAY['SELECT 1', 'SELECT 2'], 'q?',
                                              judge => 'none', counts => ARRAY[1])$$,
                 '22023', NULL, 'counts of another length are refused');
SELECT throws_ok($$SELECT siselect.tournament(ARRAY['SELECT 1', 'SELECT 2'], 'q?',
                                              judge => 'none', counts => ARRAY[1, NULL])$$,
                 '22023', NULL, 'a NULL count is refused');

SELECT is((SELECT siselect.tournament(
  ARRAY['SELECT count(*) FROM item WHERE price >= 100',
        'SELECT count(*) FROM item WHERE price > 100',
        'SELECT count(*) FROM item'],
  question => 'How many items cost more than 100?',
  judge => 'reference', reference => 'SELECT count(*) FROM item WHERE price > 100')
  -> 'rules' ->> 'scoring'), 'evidence', 'by default the verdicts are evidence');
SELECT throws_ok($$SELECT siselect.tournament(ARRAY['SELECT 1'], 'q?', judge => 'none',
                                              scoring => 'votes')$$,
                 '22023', NULL, 'an unknown scoring is refused');

SELECT throws_ok($$SELECT siselect.tournament(ARRAY[]::text[], 'q?', judge => 'none')$$,
                 '22023', NULL, 'an empty candidate list is refused');
SELECT throws_ok($$SELECT siselect.tournament(ARRAY['SELECT 1'], 'q?', judge => 'oracle')$$,
                 '22023', NULL, 'an unknown judge is refused');

SET LOCAL ROLE siselect_user;
SELECT throws_ok($$SELECT siselect.llm_config()$$, '42501', NULL,
                 'an ordinary role cannot read the LLM settings');
SELECT throws_ok($$SELECT siselect.set_llm_config('{"base_url": "http://evil.example/v1"}')$$,
                 '42501', NULL, 'an ordinary role cannot change the LLM settings');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
