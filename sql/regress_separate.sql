-- pg_regress: a separation and a tournament on a table of four rows.
CREATE SCHEMA regress_heroes;
CREATE TABLE regress_heroes.hero (id int PRIMARY KEY, name text, height int);
INSERT INTO regress_heroes.hero VALUES (1, 'Ant', 150), (2, 'Bee', 190), (3, 'Cat', 200), (4, 'Dog', 210);
SET search_path = regress_heroes;
SELECT r->>'status' AS status, r->'rows' AS rows, r->'instance'->'hero'->'rows' AS instance,
       r->'answers' AS answers
FROM siselect.separate('SELECT count(*) FROM hero WHERE height > 190',
                       'SELECT count(*) FROM hero WHERE height >= 190') AS r;
SELECT r->>'status' AS status, r->>'reason' AS reason
FROM siselect.separate('SELECT name FROM hero WHERE height > 195',
                       'SELECT name FROM hero WHERE height >= 200') AS r;
SELECT r->'winner'->>'index' AS winner, r->>'decided_by' AS decided_by
FROM siselect.tournament(ARRAY['SELECT count(*) FROM hero WHERE height > 190',
                               'SELECT count(*) FROM hero WHERE height >= 190'],
                         'How many heroes are taller than 190?', judge => 'reference',
                         reference => 'SELECT count(*) FROM hero WHERE height > 190') AS r;
-- A second statement, a placeholder, a volatile function: refused with their SQLSTATEs.
\set VERBOSITY sqlstate
SELECT siselect.separate('SELECT 1; DELETE FROM hero', 'SELECT 1');
SELECT siselect.separate('SELECT @a$ AS x', 'SELECT 1', dialect => 'sqlite');
SELECT siselect.separate('SELECT pg_advisory_lock(1)', 'SELECT 1');
SELECT siselect.separate('SELECT random()', 'SELECT 1');
\set VERBOSITY default
SELECT count(*) AS heroes_left FROM hero;
RESET search_path;
DROP SCHEMA regress_heroes CASCADE;
