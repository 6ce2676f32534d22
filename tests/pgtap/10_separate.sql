-- siselect.separate and siselect.materialize on a small table made inside the test.
BEGIN;
SELECT plan(10);

CREATE SCHEMA tap_shop;
CREATE TABLE tap_shop.item (id bigint PRIMARY KEY, name text, price double precision);
INSERT INTO tap_shop.item SELECT i, 'item ' || i, i * 10 FROM generate_series(1, 50) i;
SET LOCAL search_path = tap_shop, public;

SELECT is(siselect.separate('SELECT count(*) FROM item WHERE price > 100',
                            'SELECT count(*) FROM item WHERE price >= 100') ->> 'status',
          'separated', 'two counts that differ by one boundary row are separated');
SELECT is((siselect.separate('SELECT count(*) FROM item WHERE price > 100',
                             'SELECT count(*) FROM item WHERE price >= 100') ->> 'rows')::int,
          2, 'the instance is the boundary row and one above it (on the boundary row '
             'alone the strict count counts none of its rows: degenerate)');
SELECT ok(siselect.separate('SELECT count(*) FROM item WHERE price > 100',
                            'SELECT count(*) FROM item WHERE price >= 100')
            -> 'instance' -> 'item' -> 'rows' @> '[[10, "item 10", 100]]'::jsonb,
          'the instance holds the real boundary row');
SELECT is(siselect.separate('SELECT name FROM item WHERE id < 5',
                            'SELECT name FROM item WHERE id < 5 ORDER BY id') ->> 'status',
          'same_answer', 'same rows in another order are the same answer');
SELECT is(siselect.separate('SELECT count(*) FROM item WHERE price > 100',
                            'SELECT count(*) FROM item WHERE price >= 100', seed => 3)
            -> 'instance',
          siselect.separate('SELECT count(*) FROM item WHERE price > 100',
                            'SELECT count(*) FROM item WHERE price >= 100', seed => 3)
            -> 'instance', 'the same seed gives the same instance');
SELECT throws_ok($$SELECT siselect.separate('DELETE FROM item', 'SELECT 1')$$, '25006', NULL,
                 'a write is refused');
SELECT throws_ok($$SELECT siselect.separate('SELECT * FROM nowhere', 'SELECT 1')$$, '42P01',
                 NULL, 'an unknown table is an error with its SQLSTATE');
SELECT throws_ok($$SELECT siselect.separate('SELECT 1/0', 'SELECT 1')$$, '22012', NULL,
                 'a run-time error on D is an error with its SQLSTATE');
SELECT is((SELECT count(*)::int FROM tap_shop.item), 50, 'nothing was modified');

SELECT is(siselect.materialize(siselect.separate('SELECT count(*) FROM item WHERE price > 100',
                              'SELECT count(*) FROM item WHERE price >= 100') -> 'instance',
                              'tap_instance'), 'tap_instance', 'materialize names the schema');

SELECT * FROM finish();
ROLLBACK;
