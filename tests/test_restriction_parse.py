"""Issue 18: a restricted relation's subquery is parsed once per shape, and the tree given
back for each text is the one sqlglot parses from that text (literals in their place); a
restricted query's text is written once per shape and is the restricted tree's text."""

import re

from sqlglot import exp

from siselect.instances import shadow
from siselect.instances.shadow import restrict, restricted_sql
from siselect.runtime import rowids
from siselect.runtime.catalog import load_catalog
from siselect.runtime.executor import quote_literal
from siselect.sqltext.transpile import to_tree

TEXTS = [
    "(SELECT * FROM \"s\".\"hero\" AS t WHERE t.ctid = ANY('{\"(0,1)\",\"(0,2)\"}'::tid[]))",
    "(SELECT * FROM \"s\".\"hero\" AS t WHERE t.ctid = ANY('{\"(7,3)\"}'::tid[]))",
    "(SELECT * FROM \"s\".\"hero\" AS t WHERE false)",
    # an identifier holding a quote, and a literal holding one
    "(SELECT t.\"it's\" FROM \"s\".\"o'k\" AS t WHERE t.ctid = ANY('{\"(1,1)\"}'::tid[]) "
    "AND 'a''b' = 'a''b')",
    # a leaf relation: two literals, a bigint array too
    "(SELECT * FROM \"s\".\"p\" AS t WHERE t.ctid = ANY('{\"(0,1)\"}'::tid[]) AND "
    "((1 + array_position('{5,6}'::bigint[], t.tableoid::bigint) - 1)::bigint << 48) "
    "= ANY('{281474976710657}'::bigint[]))",
]


def test_each_text_gives_the_tree_sqlglot_parses():
    for text in TEXTS + TEXTS:  # the second time from the templates
        got = shadow.parse_restriction(text)
        assert got == exp.maybe_parse(text, dialect="postgres"), text
        assert got.sql("postgres") == exp.maybe_parse(text, dialect="postgres").sql("postgres")


def test_one_template_per_shape_not_per_row_set():
    shadow._TEMPLATES.clear()
    for text in TEXTS[:2]:
        shadow.parse_restriction(text)
    assert len(shadow._TEMPLATES) == 1
    # The template keeps its mark: what one text set in its copy does not leak into the next.
    assert "(7,3)" in shadow.parse_restriction(TEXTS[1]).sql("postgres")
    assert "(0,1)" in shadow.parse_restriction(TEXTS[0]).sql("postgres")


QUERIES = [
    "SELECT s.superhero_name FROM superhero AS s JOIN publisher AS p ON s.publisher_id = p.id "
    "WHERE p.publisher_name = 'Marvel Comics'",
    "WITH c AS (SELECT publisher_id, COUNT(*) AS n FROM superhero GROUP BY publisher_id) "
    "SELECT p.publisher_name, c.n FROM c JOIN publisher AS p ON p.id = c.publisher_id",
    "SELECT a.superhero_name FROM superhero a, superhero b WHERE a.id = b.id + 1 "
    "AND a.full_name <> 'it''s'",
    "SELECT superhero_name FROM superhero WHERE id IN (SELECT hero_id FROM hero_power)",
    # a relation read twice: its marks are twice in the text
    "SELECT COUNT(*) FROM hero_power AS a JOIN hero_power AS b ON a.hero_id = b.hero_id",
]


def test_restricted_text_is_the_restricted_trees_text(executor, monkeypatch):
    """The text put together from a template is the text of the restricted tree, for each
    row set (the same template serving several), and runs to the same rows."""
    catalog = load_catalog(executor)
    ids = {name: [int(r) for (r,) in executor.run(
        f"SELECT {rowids.row_id(catalog.tables[name], catalog.number(name), 't')} "
        f"FROM {name} AS t LIMIT 80").rows] for name in ("superhero", "publisher", "hero_power")}
    row_sets = [{}, {n: v[:3] for n, v in ids.items()}, {n: v[5:40] for n, v in ids.items()},
                {"superhero": ids["superhero"][:20]}]
    for sql in QUERIES:
        tree = to_tree(sql, "postgres", catalog)
        for rows in row_sets:
            bound = restricted_sql(tree, catalog, rows)
            assert _literal(bound) == restrict(tree, catalog, rows).sql("postgres"), (sql, rows)
            assert executor.run(bound.sql, params=bound.params).rows == executor.run(
                restrict(tree, catalog, rows).sql("postgres")).rows
        assert len({repr(executor.run(b.sql, params=b.params).rows) for b in (
            restricted_sql(tree, catalog, r) for r in row_sets)}) > 1  # the row sets count
        # Row sets of one shape: one text, their row ids bound to it; a larger one written
        # in (planned with its row ids).
        one, other = (restricted_sql(tree, catalog, r) for r in (
            row_sets[1], {n: v[3:9] for n, v in ids.items()}))
        assert one.sql == other.sql and one.params != other.params
        monkeypatch.setattr(shadow, "BOUND_MOST", len(ids["superhero"]) - 1)
        assert not restricted_sql(tree, catalog, ids).params  # every query reads superhero
        monkeypatch.undo()
    # One text per query and shape, not per row set.
    for sql in (QUERIES[0], QUERIES[-1]):
        shadow._TEXTS.clear()
        tree = to_tree(sql, "postgres", catalog)
        for rows in row_sets[1:3]:
            restricted_sql(tree, catalog, rows)
        assert len(shadow._TEXTS) == 1
        assert all(text is not None for _, text in shadow._TEXTS.values())  # no fallback


def _literal(bound: shadow.Bound) -> str:
    """``bound``'s text with each parameter written as the literal it stands for."""
    return re.sub(r"\$(\d+)",
                  lambda m: quote_literal(bound.params[int(m.group(1)) - 1].text), bound.sql)
