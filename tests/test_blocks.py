"""The blocks a minimisation removes together (instances/blocks.py): columns grouped by or
counted distinct, and columns ordered under a cut, whose blocks come in the query's order."""

import pytest
import sqlglot

from conftest import loaded_executor, sqlite_file_from
from siselect.instances.blocks import block_columns, cut_columns, witness_blocks
from siselect.instances.minimise import ddmin, ddmin_blocks
from siselect.runtime import rowids
from siselect.runtime.catalog import load_catalog

SCHEMA = "blocks_order"
DATA = ("CREATE TABLE score (id INTEGER PRIMARY KEY, team TEXT, points INTEGER);\n"
        + "".join(f"INSERT INTO score VALUES ({i}, 'team {i % 4}', {(i * 37) % 101});\n"
                  for i in range(1, 61)))


def trees(*sqls: str):
    return [sqlglot.parse_one(s, dialect="postgres") for s in sqls]


def test_cut_columns_are_plain_columns_ordered_under_a_limit():
    assert cut_columns(trees("SELECT a FROM t ORDER BY b DESC, c LIMIT 3")) == \
        {"b": True, "c": False}
    assert cut_columns(trees("SELECT a FROM t ORDER BY b DESC")) == {}  # no cut
    assert cut_columns(trees("SELECT a FROM t GROUP BY a ORDER BY COUNT(*) DESC LIMIT 1")) == {}
    assert cut_columns(trees("SELECT a FROM (SELECT a, b FROM t ORDER BY b LIMIT 5) AS s",
                             "SELECT a FROM t ORDER BY B DESC LIMIT 5")) == {"b": False}
    assert block_columns(trees("SELECT DISTINCT a FROM t",
                               "SELECT a FROM t GROUP BY a ORDER BY d LIMIT 2")) == {"a", "d"}


@pytest.fixture(scope="module")
def scores(dsn: str, tmp_path_factory):
    with loaded_executor(dsn, sqlite_file_from(tmp_path_factory, SCHEMA, DATA), SCHEMA) \
            as executor:
        yield executor


def row_ids(executor, catalog) -> dict[int, tuple[int, int]]:
    """Each row's encoded id -> (id, points)."""
    out = {}
    for key, points, tid in executor.run(
            "SELECT id, points, ctid::text FROM score ORDER BY id").rows:
        block, offset = (int(x) for x in tid.strip("()").split(","))
        out[rowids.encode(catalog.number("score"), block, offset)] = (key, points)
    return out


def test_units_come_in_the_cut_order_and_rows_in_no_witness_are_units_of_their_own(scores):
    catalog = load_catalog(scores)
    ids = row_ids(scores, catalog)
    rows = list(ids)
    witnesses = [[r] for r in rows[:10]]  # the others are in no witness
    units = witness_blocks(scores, catalog, trees(
        "SELECT team FROM score ORDER BY points DESC LIMIT 3"), witnesses, rows)
    assert sorted(r for members, _ in units for r in members) == sorted(rows)
    points = [ids[members[0]][1] for members, _ in units]
    assert points == sorted(points, reverse=True)
    for members, blocks in units:
        assert blocks == {("score", "points", ids[members[0]][1])}
    assert witness_blocks(scores, catalog, trees("SELECT team FROM score"), witnesses,
                          rows) == []  # nothing groups or cuts: no block


def test_the_rows_below_the_cut_go_first(scores):
    catalog = load_catalog(scores)
    ids = row_ids(scores, catalog)
    rows = list(ids)
    top = sorted(rows, key=lambda r: -ids[r][1])[:3]

    def keeps_the_top(subset):  # what a top-3 instance needs: D's top three rows
        tested.append(len(subset))
        return set(top) <= set(subset)

    units = witness_blocks(scores, catalog, trees(
        "SELECT id FROM score ORDER BY points DESC LIMIT 3"), [], rows)
    tested: list[int] = []
    kept = ddmin_blocks(rows, units, keeps_the_top)
    by_blocks = len(tested)
    assert sorted(kept) == sorted(top)  # the bottom halves went, one after the other
    tested = []
    assert sorted(ddmin(rows, keeps_the_top)) == sorted(top)
    # 21 sets against 41 (Zeller's ddmin, chunks tried alone at every round: 24 against 101)
    assert by_blocks < len(tested), (by_blocks, len(tested))
