"""Rendering separating instances: JSON, Markdown and SQL INSERTs (run in PostgreSQL)."""

import json
import math

import pytest

from siselect.instances.render import (
    instance_size,
    markdown_table,
    render,
    to_json,
    to_markdown,
    to_sql_inserts,
)
from siselect.runtime.errors import InvalidInput
from siselect.runtime.values import canonical_rows

TRICKY = "it's a \\path\\ | with\nnew line, “quotes” and ünïcode"

ODD = {
    'Odd "Table"': {
        "columns": ["id", 'Na"me', "score", "flag", "day", "tags"],
        "rows": [
            [1, TRICKY, 1e-05, True, "2020-02-29", ["a", "b'c"]],
            [2, None, None, False, None, None],
            [3, "", math.inf, None, "1999-12-31", []],
        ],
    },
    "empty": {"columns": ["x"], "rows": []},
}

ODD_DDL = ('CREATE TEMP TABLE "Odd ""Table""" (id bigint, "Na""me" text, score float8, '
           'flag boolean, day date, tags text[]); CREATE TEMP TABLE empty (x int)')


def test_instance_size():
    assert instance_size(ODD) == 3
    assert instance_size({}) == 0


def test_json_lists_each_table_as_row_objects():
    data = json.loads(to_json(ODD))
    assert list(data) == ['Odd "Table"', "empty"]
    first = data['Odd "Table"'][0]
    assert first == {"id": 1, 'Na"me': TRICKY, "score": 1e-05, "flag": True,
                     "day": "2020-02-29", "tags": ["a", "b'c"]}
    assert data['Odd "Table"'][2]["score"] == "Infinity"   # JSON has no infinity
    assert data["empty"] == []
    assert len(to_json(ODD).splitlines()) == 3 + 5          # a row a line
    assert json.loads(to_json({})) == {}


def test_markdown_has_a_heading_and_a_table_per_table():
    text = to_markdown(ODD)
    assert '### Odd "Table" (3 rows)' in text
    assert "### empty (0 rows)" in text
    assert "| id | Na\"me | score | flag | day | tags |" in text
    row_lines = [line for line in text.splitlines() if line.startswith("| 2 ")]
    assert row_lines == ["| 2 | NULL | NULL | false | NULL | NULL |"]
    tricky = next(line for line in text.splitlines() if line.startswith("| 1 "))
    assert "\\|" in tricky and "<br>" in tricky           # a cell stays one cell
    assert tricky.count(" | ") == 5
    assert '| 3 | "" |' in text                           # empty text is not NULL


def test_markdown_table_and_heading_level():
    assert markdown_table(["a", "b|c"], [[1, None], ["x\ny", True]]) == (
        "| a | b\\|c |\n| --- | --- |\n| 1 | NULL |\n| x<br>y | true |")
    assert markdown_table([], []) == ""
    assert to_markdown({"t": {"columns": ["a"], "rows": []}}, level=4).startswith("#### t (0 rows)")


def test_render_dispatches_and_rejects_unknown_formats():
    assert render(ODD, "json") == to_json(ODD)
    assert render(ODD, "markdown") == to_markdown(ODD)
    assert render(ODD, "sql") == to_sql_inserts(ODD)
    with pytest.raises(InvalidInput, match="unknown instance format"):
        render(ODD, "yaml")


@pytest.mark.parametrize("bad", [
    [],
    {"t": {"columns": ["a"]}},
    {"t": {"columns": ["a"], "rows": [[1, 2]]}},
    {"t": "rows"},
])
def test_malformed_instances_are_rejected(bad):
    with pytest.raises(InvalidInput):
        to_json(bad)


@pytest.mark.parametrize("conforming", ["on", "off"])
def test_sql_inserts_load_the_same_rows(conn, conforming):
    """The INSERTs run in PostgreSQL and give back exactly the instance's rows."""
    with conn.transaction(force_rollback=True):
        conn.execute(f"SET LOCAL standard_conforming_strings = {conforming}")
        conn.execute(ODD_DDL)
        conn.execute(to_sql_inserts(ODD))
        rows = conn.execute('SELECT * FROM "Odd ""Table""" ORDER BY id').fetchall()
        empty = conn.execute("SELECT count(*) FROM empty").fetchone()
    expected = [tuple(r) for r in ODD['Odd "Table"']["rows"]]
    assert canonical_rows(rows) == expected
    assert empty == (0,)


def test_sql_inserts_qualify_with_a_schema():
    text = to_sql_inserts({"t": {"columns": ["a"], "rows": [[1]]}}, schema="My Schema")
    assert text == 'INSERT INTO "My Schema"."t" ("a") VALUES\n  (1);'
    comment = to_sql_inserts({"x\nDROP TABLE y": {"columns": ["a"], "rows": []}})
    assert comment.count("\n") == 0 and comment.startswith("-- ")


def test_real_rows_render_in_every_format(executor):
    """An instance built from real superhero rows renders, and the JSON reads back."""
    result = executor.run("SELECT * FROM superhero ORDER BY id LIMIT 3")
    publishers = executor.run("SELECT * FROM publisher ORDER BY id LIMIT 2")
    instance = {
        "superhero": {"columns": result.columns, "rows": [list(r) for r in result.rows]},
        "publisher": {"columns": publishers.columns, "rows": [list(r) for r in publishers.rows]},
    }
    assert instance_size(instance) == 5
    data = json.loads(to_json(instance))
    assert [list(row.values()) for row in data["superhero"]] == instance["superhero"]["rows"]
    markdown = to_markdown(instance)
    assert markdown.count("\n| ") == 2 * 2 + 5           # header and rule twice, five rows
    assert to_sql_inserts(instance).count("INSERT INTO") == 2
