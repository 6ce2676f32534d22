-- siselect_tap's assertions where they pass, and the tables their failures print.
-- (Failing assertions and their diagnostics: tests/test_siselect_tap.py runs pg_prove on
-- tests/fixtures/tap/failing.sql.)
BEGIN;
CREATE EXTENSION siselect_tap;
SELECT plan(14);

CREATE SCHEMA tap_shop;
CREATE TABLE tap_shop.item (id bigint PRIMARY KEY, name text, price double precision);
INSERT INTO tap_shop.item SELECT i, 'item ' || i, i * 10 FROM generate_series(1, 50) i;
SET LOCAL search_path = tap_shop, public;

SELECT has_function('siselect_tap', 'same_answer',
       ARRAY['text', 'text', 'text', 'text', 'integer', 'bigint', 'text', 'boolean', 'text']);

-- The assertions themselves (each is one TAP line here).
SELECT siselect_tap.same_answer('SELECT name FROM item WHERE price > 100',
                                'SELECT name FROM item WHERE NOT price <= 100 ORDER BY id',
                                'a rewritten filter keeps the answer');
SELECT siselect_tap.answers_differ('SELECT count(*) FROM item WHERE price > 100',
                                   'SELECT count(*) FROM item WHERE price >= 100',
                                   'a boundary changes the count');
SELECT siselect_tap.tournament_picks(
  ARRAY['SELECT count(*) FROM item WHERE price >= 100',
        'SELECT count(*) FROM item WHERE price > 100',
        'SELECT count(*) FROM item'],
  'How many items cost more than 100?', 2, 'the reference judge picks the strict filter',
  judge => 'reference', reference => 'SELECT count(*) FROM item WHERE price > 100');
SELECT siselect_tap.tournament_picks(
  ARRAY['SELECT count(*) FROM item WHERE price >= 100',
        'SELECT count(*) FROM item WHERE price > 100',
        'SELECT count(*) FROM item WHERE price > 100.0'],
  'How many items cost more than 100?', 'SELECT count(*) FROM item WHERE price > 100.0',
  'a candidate with the winner''s answer on the database is picked too',
  judge => 'reference', reference => 'SELECT count(*) FROM item WHERE price > 100');

-- The search_path argument is the caller's: siselect_tap's own path does not hide tables.
SELECT is(siselect_tap._separate('SELECT count(*) FROM item', 'SELECT count(id) FROM item',
                                 'postgres', 30, 0, 'auto', false, 'tap_shop') ->> 'status',
          'same_answer', 'the caller''s search_path reaches siselect');
SELECT is(siselect_tap._separate('SELECT count(*) FROM nowhere', 'SELECT 1',
                                 'postgres', 30, 0, 'auto', false, 'tap_shop') ->> 'sqlstate',
          '42P01', 'a failing query is a result with its SQLSTATE, not an error');

-- The tables failures print.
SELECT is(siselect_tap.format_table('t', '{"columns": ["id", "name"], "rows": [[7, "a b"], [12, null]]}'),
          E'  t (2 rows)\n   id | name\n  ----+------\n    7 | a b\n   12 | NULL',
          'a table: header, rule, numbers to the right, NULL spelled out');
SELECT is(siselect_tap.format_table('t', '{"columns": ["n"], "rows": [[1], [2], [3]]}', 0, 2),
          E't (3 rows)\n n\n---\n 1\n 2\n(1 more row not shown)',
          'rows past max_rows are counted, not shown');
SELECT is(siselect_tap.format_table('t', '{"rows": [["x", 1]]}', 0),
          E't (1 row)\n column1 | column2\n---------+---------\n x       |       1',
          'rows without column names (a judge''s) get numbered columns');
SELECT is(siselect_tap._cell(to_jsonb(repeat('x', 50)), 10), 'xxxxxxx...',
          'a long value is cut');
SELECT is(siselect_tap._cell(to_jsonb(E'two\nlines'::text)), 'two\nlines',
          'a newline stays on one diag line');
SELECT is(siselect_tap.format_instance('{}'), '  (no rows: the empty database)',
          'the empty instance is named');
SELECT alike(siselect_tap.format_separation(siselect.separate(
              'SELECT count(*) FROM item WHERE price > 100',
              'SELECT count(*) FROM item WHERE price >= 100')),
            E'%separating instance of 2 rows%table item (2 rows)%10 | item 10 | 100.0%',
            'a separation shows its instance''s row');

SELECT * FROM finish();
ROLLBACK;
