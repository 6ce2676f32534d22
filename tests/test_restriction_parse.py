"""Issue 18: a restricted relation's subquery is parsed once per shape, and the tree given
back for each text is the one sqlglot parses from that text (literals in their place)."""

from sqlglot import exp

from siselect.instances import shadow

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
