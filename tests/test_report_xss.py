"""Issue 12, point 5: the HTML report shows hostile text as text and runs none of it.

Every payload of the corpus is placed in the candidates' SQL text, in database values,
in column names (quoted identifiers) and in the question; a real tournament (reference
judge) writes the HTML report, which Debian's chromium opens. Each payload, if it ran,
would open a dialog, log to the console or set ``window.__xss``.
"""

import json
import re
import sqlite3
from pathlib import Path

import psycopg
import pytest

from siselect.client.cli import main
from siselect.client.loader import load

pytest_plugins = ["browser"]

SCHEMA = "xss_report"
PAYLOADS = [
    "<script>window.__xss=1</script>",
    "<img src=x onerror=window.__xss=2>",
    "<svg onload=window.__xss=3>",
    '<a href="javascript:window.__xss=4">click</a>',
    '"><script>alert(5)</script>',
    "'><img src=x onerror=alert(6)>",
    "</textarea><script>alert(7)</script>",
    "</title><script>alert(8)</script>",
    "</code></pre><script>alert(9)</script>",
    "{{7*7}}{{window.__xss=10}}{% if 1 %}x{% endif %}",
    "${alert(11)}#{alert(11)}",
    "[click](javascript:alert(12))",
    '![img](x"onerror="alert(13))',
    "<iframe src=javascript:alert(14)>",
    "<details open ontoggle=alert(15)>",
    "<math><mtext><img src=x onerror=alert(16)>",
    "<!--<img src=x onerror=alert(17)>-->",
    "\uff1cscript\uff1ealert(18)\uff1c/script\uff1e",
    "\u202e<img src=x onerror=alert(19)>",
    "<scr\u200bipt>alert(20)</script>",
    "&lt;img src=x onerror=alert(21)&gt;",
    "<input autofocus onfocus=alert(22)>",
    "<object data=javascript:alert(23)>",
    "`<img src=x onerror=alert(24)>`",
    "<base href=javascript:alert(25)//>",
    "<meta http-equiv=refresh content=0;url=javascript:alert(26)>",
    "<style>*{background:url(javascript:alert(27))}</style>",
    "<body onload=console.log('xss-28')>",
]
# The elements and attributes the template writes; a payload that became markup adds others.
TEMPLATE_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "h4",
                 "p", "strong", "pre", "code", "div", "table", "thead", "tbody", "tr", "th",
                 "td", "ul", "ol", "li", "section", "span", "blockquote", "details", "summary",
                 "a"}
TEMPLATE_ATTRIBUTES = {"lang", "charset", "http-equiv", "content", "name", "class", "id", "href"}


def _columns() -> list[str]:
    return ["id", *PAYLOADS]


def _hostile_database(path: Path) -> Path:
    """A SQLite file with one table whose column names and values are the payloads."""
    db = sqlite3.connect(path)
    columns = ", ".join('"' + c.replace('"', '""') + '" TEXT' for c in PAYLOADS)
    db.execute(f"CREATE TABLE hostile (id INTEGER PRIMARY KEY, {columns})")
    for row_id in (1, 2):
        db.execute(f"INSERT INTO hostile VALUES ({', '.join('?' * len(_columns()))})",
                   [row_id, *PAYLOADS])
    db.commit()
    db.close()
    return path


def _candidate(condition: str) -> str:
    """Every payload as a column it selects and as a comment line of its text."""
    comments = "".join(f"-- {p}\n" for p in PAYLOADS)
    selected = ", ".join('"' + c.replace('"', '""') + '"' for c in _columns())
    return f"{comments}SELECT {selected}\nFROM hostile WHERE {condition}"


@pytest.fixture(scope="module")
def hostile_schema(dsn: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    assert all(len(p.encode()) <= 63 for p in PAYLOADS), "column names are cut at 63 bytes"
    with psycopg.connect(dsn, autocommit=True) as conn:
        load(conn, _hostile_database(tmp_path_factory.mktemp("xss") / "hostile.sqlite"), SCHEMA)
    return SCHEMA


def _report(dsn: str, schema: str, out: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    right = _candidate("id >= 1")
    question = " ".join(PAYLOADS)
    failing = 'SELECT "' + PAYLOADS[0] + '-missing" FROM hostile'  # its error names it
    code = main(["tournament", "--dsn", dsn, "--db", schema, "--judge", "reference",
                 "--reference", right, "--question", question, "--report", str(out), "--json",
                 _candidate("id > 1"), right, failing])
    assert code == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_the_corpus_is_large_and_distinct():
    assert len(PAYLOADS) >= 20 and len(set(PAYLOADS)) == len(PAYLOADS)


def test_html_report_shows_every_payload_as_text_and_runs_none(
        dsn, hostile_schema, tmp_path, capsys, page):
    out = tmp_path / "report.html"
    result = _report(dsn, hostile_schema, out, capsys)
    # The payloads really are in the result: the winner's SQL, D', both answers, an error.
    assert result["winner"]["index"] == 1 and len(result["duels"]) == 1
    duel = result["duels"][0]
    assert duel["instance"]["hostile"]["columns"] == _columns()
    assert duel["answers"]["b"]["rows"][0][1:] == PAYLOADS
    assert PAYLOADS[0] in result["dropped"][0]["message"]

    page.goto(out.as_uri())
    page.wait_for_load_state("load")
    page.wait_for_timeout(500)  # let failed image loads fire their error events
    seen = page.seen
    assert seen.dialogs == [] and seen.errors == []
    assert not [m for m in seen.console if "xss" in m.lower() or "security policy" in m.lower()]
    assert page.evaluate("typeof window.__xss") == "undefined"
    markup = page.evaluate("""() => [...document.querySelectorAll('*')].map(e =>
        [e.localName, [...e.attributes].map(a => a.name)])""")
    assert {tag for tag, _ in markup} <= TEMPLATE_TAGS
    assert {name for _, names in markup for name in names} <= TEMPLATE_ATTRIBUTES
    # The template's links stay on the page (summary to duels and candidates).
    hrefs = page.eval_on_selector_all("[href]", "links => links.map(a => a.getAttribute('href'))")
    assert hrefs and all(h.startswith("#") for h in hrefs), hrefs

    for summary in page.query_selector_all("details > summary"):
        summary.click()  # duels are folded: unfold them as a reader would
    assert page.evaluate("[...document.querySelectorAll('details')].every(d => d.open)")
    text = page.inner_text("body")
    question = page.inner_text("p.question")
    cells = page.eval_on_selector_all("th, td", "cells => cells.map(c => c.innerText)")
    sql = page.inner_text("pre code.sql")
    for payload in PAYLOADS:
        assert payload in question, f"question: {payload!r}"
        assert cells.count(payload) >= 3, f"column name and values: {payload!r}"
        assert f"-- {payload}\n" in sql, f"SQL text: {payload!r}"
    assert f'"{PAYLOADS[0]}-missing"' in text  # the dropped candidate's error
    assert page.title() == "Tournament: " + " ".join(PAYLOADS)


def test_markdown_report_has_no_html_or_links_outside_code(dsn, hostile_schema, tmp_path,
                                                           capsys):
    out = tmp_path / "report.md"
    _report(dsn, hostile_schema, out, capsys)
    text = out.read_text()
    fences = re.findall(r"(?ms)^(`{3,})sql\n.*?^\1$", text)
    assert fences, "the winner's SQL is fenced"
    outside = re.sub(r"(?ms)^(`{3,})sql\n.*?^\1$", "", text)
    # Code spans (the judge's rows) show their text literally too.
    outside = re.sub(r"(?<![\\`])(`+)(?!`).*?(?<!`)\1(?!`)", "", outside)
    assert "<" not in outside and ">" not in outside.replace("\n> **Evidence", "")
    assert re.search(r"(?<!\\)\]\(", outside) is None  # no [text](url) link
    assert re.search(r"(?<!\\)!\[", outside) is None  # no image
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in outside  # escaped, not lost
