"""Issue 18: each statement is read once by PostgreSQL's parser, and what runs is built from
it by executor.wrap (SECURITY.md, "one reading"); what the reading finds is kept per shape
(pgcheck.Statement.shape), the server's column probe too, and a tournament's answers on D's
are shared by its duels (pair.OnRows). No database for the first tests: pglast is
PostgreSQL 15's parser."""

import json

import pytest

import hostile_corpus as hc
from conftest import SHARED, CountingExecutor
from siselect.instances.pair import OnRows, Pair
from siselect.runtime import pgcheck, rowids
from siselect.runtime.catalog import load_catalog
from siselect.runtime.errors import NotASelect
from siselect.runtime.executor import wrap
from siselect.sqltext.transpile import to_tree

CANDIDATES = SHARED / "siselection" / "candidates" / "24" / "stage1.json"
CONTEXT = hc.Context(victim_pid=4242, lock_key=77, touched="touched", secret="secret")
# Texts whose last or first token meets the wrapper: comments, quotes of every kind, the
# tokens PostgreSQL reads with a lookahead (NULLS, Unicode identifiers and strings).
SEAMS = [
    "SELECT 1 -- a trailing comment",
    "SELECT 1 -- a comment ) AS x; SELECT 2",
    "/* leading */ SELECT 1 /* trailing */",
    "/* nested /* twice */ */ SELECT 1",
    "SELECT 'it''s'",
    "SELECT E'back\\\\'",
    "SELECT $$dollar$$",
    "SELECT $q$)$q$",
    'SELECT 1 AS U&"d\\0061t\\+000061"',
    "SELECT U&'d\\0061t' AS x",
    "SELECT x FROM (VALUES (1), (NULL)) AS t(x) ORDER BY x NULLS FIRST",
    "WITH t AS (SELECT 1 AS a) SELECT a FROM t",
    "(SELECT 1) UNION (SELECT 2)",
    "VALUES (1), (2)",
    "SELECT 1\n",
    "SELECT 1 AS \"x\"\"y\"",
]
POSITIONS = {"location", "stmt_location", "stmt_len"}


def _unplaced(node):
    if isinstance(node, dict):
        return {k: _unplaced(v) for k, v in node.items() if k not in POSITIONS}
    if isinstance(node, list):
        return [_unplaced(v) for v in node]
    return node


def _tree(sql: str) -> dict:
    """PostgreSQL's parse tree of ``sql`` without positions (which the wrapper moves)."""
    return _unplaced(json.loads(pgcheck.parser.parse_sql_json(sql)))


def _texts() -> list[str]:
    shared = {s for sqls in json.loads(CANDIDATES.read_text()).values() for s in sqls}
    return SEAMS + sorted(shared) + [c.sql for c in hc.cases(CONTEXT)]


def test_the_wrapped_text_reads_as_the_checked_statement_inside_the_wrapper():
    """For every text the check accepts, PostgreSQL's parser reads wrap(text) as exactly
    that statement (the same tree) as the subquery of SELECT * FROM, with the same calls;
    a text the check refuses is not needed here (it never runs)."""
    accepted = 0
    for sql in _texts():
        try:
            statement = pgcheck.read_select(sql)
        except NotASelect:
            continue
        inner = _tree(sql)["stmts"][0]["stmt"]
        for aliases in ([], ["c0", "c1"]):
            text = wrap(sql, aliases)
            try:
                wrapped = pgcheck.read_select(text)
            except NotASelect:
                # Only a trailing ';' may make the wrapper a syntax error (an error, no run).
                assert sql.rstrip().endswith(";"), sql
                continue
            outer = _tree(text)["stmts"][0]["stmt"]["SelectStmt"]
            (item,) = outer["fromClause"]
            assert item["RangeSubselect"]["subquery"] == inner, sql
            assert (wrapped.functions, wrapped.fields, wrapped.operators, wrapped.types) == \
                (statement.functions, statement.fields, statement.operators, statement.types)
        accepted += 1
    assert accepted > 500  # the corpus was read, not skipped


def test_wrap_takes_siselect_identifiers_only():
    with pytest.raises(AssertionError):
        wrap("SELECT 1", ["c0) AS x; DROP TABLE t; --"])


def test_one_walk_per_shape_and_each_text_still_refused_on_its_own(monkeypatch):
    walks = []
    visit = pgcheck._Found.visit
    monkeypatch.setattr(pgcheck._Found, "visit", lambda self, node: (walks.append(1),
                                                                       visit(self, node)))
    pgcheck._READ.clear()
    first = pgcheck.read_select("SELECT id FROM t WHERE ctid = ANY('{\"(0,1)\"}'::tid[])")
    again = pgcheck.read_select("SELECT id FROM t WHERE ctid = ANY('{\"(9,9)\",\"(1,2)\"}'::tid[])")
    assert len(walks) == 1 and again.sql != first.sql and again.functions == first.functions
    # The same letters as a call rather than a string constant: another shape, refused.
    pgcheck.read_select("SELECT 'pg_sleep(1)' FROM t")
    called = pgcheck.read_select("SELECT pg_sleep(1) FROM t")
    assert ("pg_sleep" in {n for _, n in called.functions}) and len(walks) == 3
    for refused in ("SELECT 1; SELECT 2", "SELECT 'x' FROM t FOR UPDATE",
                    "SELECT 'x' INTO y FROM t"):
        with pytest.raises(NotASelect):
            pgcheck.read_select(refused)


def test_duels_share_answers_on_the_same_rows(executor, superhero):
    """A second pair of the same queries (a pair separated again, or the other way round)
    asks PostgreSQL nothing for a row set the first one ran."""
    catalog = load_catalog(executor)
    counting = CountingExecutor(executor)
    trees = tuple(to_tree(q, "postgres", catalog) for q in (
        "SELECT superhero_name FROM superhero WHERE height_cm > 180",
        "SELECT superhero_name FROM superhero WHERE height_cm >= 180"))
    table = catalog.table("superhero")
    ids = [r[0] for r in executor.run(
        f"SELECT {rowids.row_id(table, catalog.number(table.name), 't')} FROM superhero AS t "
        "WHERE t.height_cm BETWEEN 170 AND 190 ORDER BY t.id LIMIT 6").rows]
    shared = OnRows()
    first = Pair(counting, catalog, trees, on_rows=shared)
    before = counting.statements
    answers = first.answers_on(ids)
    ran = counting.statements - before
    assert ran == 2
    other_way = Pair(counting, catalog, (trees[1], trees[0]), on_rows=shared)
    assert other_way.answers_on(ids) == (answers[1], answers[0])
    assert counting.statements - before == ran
    alone = Pair(counting, catalog, trees)
    assert alone.answers_on(ids) == answers and counting.statements - before == 2 * ran


SERVER_PROBE = """DO $do$
{boot}
import json
from siselect.runtime import pgcheck
from siselect.runtime.plpython import PlpyExecutor


class Counting:
    # plpy, counting the column probes prepared (the executor's only plans that end so)
    def __init__(self, inner):
        self.inner, self.probes = inner, 0

    def prepare(self, sql, *args):
        self.probes += sql.endswith(") AS _q LIMIT 0")
        return self.inner.prepare(sql, *args)

    def __getattr__(self, name):
        return getattr(self.inner, name)


counting = Counting(plpy)
executor = PlpyExecutor(counting, {path!r})
query = "SELECT id, id AS id FROM superhero WHERE superhero_name >= '{{}}' ORDER BY id LIMIT 2"
got = {{}}
got["a"] = executor.run(query.format("A")).rows
got["b"] = executor.run(query.format("B")).rows
got["probes"] = counting.probes
shape = pgcheck.read_select(query.format("C")).shape
executor._columns[shape] = ["id"]  # fewer names than columns (one added meanwhile)
got["fewer"] = [executor.run(query.format("C")).rows, counting.probes]
executor._columns[shape] = ["id", "id", "gone"]  # more names than columns
got["more"] = [executor.run(query.format("C")).rows, counting.probes]
got["direct"] = executor.run("SELECT id, id FROM superhero WHERE superhero_name >= 'C' "
                             "ORDER BY id LIMIT 2").rows
plpy.notice(json.dumps(got))
$do$ LANGUAGE plpython3u"""


def test_server_probes_a_querys_columns_once_per_shape(dsn, superhero):
    from safety_fixtures import server_notice

    got = server_notice(dsn, lambda boot: SERVER_PROBE.format(boot=boot, path=superhero))
    assert got["probes"] == 1  # two texts of one shape: one probe
    assert len(got["a"]) == 2 and all(len(r) == 2 and r[0] == r[1] for r in got["a"])
    assert got["a"] != got["b"]
    # Names kept that no longer fit the query: found out, probed again, the right rows.
    assert got["fewer"] == [got["direct"], 2]
    assert got["more"] == [got["direct"], 3]
