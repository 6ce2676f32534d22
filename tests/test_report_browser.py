"""Issue 19, points 1 and 6: a tournament report that stands alone, read in Chromium.

Five candidates of one question on BIRD's superhero database (one dropped, one returning
nothing, two in one group, twelve-column answers, rows reached through foreign keys):
the Markdown report holds every input and starts with the summary; the HTML page folds
and unfolds every duel, its links land on the page, and nothing is wider than 1280 px.
``SISELECT_SCREENSHOTS=DIR`` keeps the page's screenshots there (docs/ holds them).
"""

import json
import os
import re
from pathlib import Path

from siselect.client.cli import main

pytest_plugins = ["browser"]

QUESTION = "Which superheroes taller than 220 cm were published by Marvel Comics?"
EVIDENCE = "Marvel Comics is a publisher_name; height_cm is the height"
MARVEL = ("SELECT s.* FROM superhero s JOIN publisher p ON p.id = s.publisher_id\n"
          "WHERE p.publisher_name = 'Marvel Comics' AND s.height_cm > 220")
CANDIDATES = [
    MARVEL,
    "SELECT s.* FROM superhero s\nWHERE s.height_cm > 220",
    ("SELECT s.* FROM superhero s JOIN publisher p ON p.id = s.publisher_id\n"
     "WHERE p.publisher_name = 'Marvel Comics' AND s.height_cm > 300"),
    ("SELECT s.* FROM publisher p JOIN superhero s ON s.publisher_id = p.id\n"
     "WHERE s.height_cm > 220 AND p.publisher_name = 'Marvel Comics'"),
    "SELECT s.* FROM superhero s\nWHERE s.height_cm > 1000000",
    "SELECT s.nope FROM superhero s",
]


def tournament_report(dsn: str, db: str, out: Path, capsys) -> dict:
    code = main(["tournament", "--dsn", dsn, "--db", db, "--judge", "reference", "--reference",
                 MARVEL, "--question", QUESTION, "--evidence", EVIDENCE, "--report", str(out),
                 "--json", *CANDIDATES])
    assert code == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_markdown_report_stands_alone_summary_first(dsn, superhero, tmp_path, capsys):
    out = tmp_path / "report.md"
    result = tournament_report(dsn, superhero, out, capsys)
    text = out.read_text()
    assert result["winner"]["index"] == 0 and len(result["groups"]) == 4
    for index, sql in enumerate(CANDIDATES):
        assert f"### Candidate {index} (" in text and sql in text
    assert "### Candidate 5 (dropped out: " in text and "nope" in text
    assert "### Candidate 3 (group #0)" in text
    assert EVIDENCE in text and text.count(MARVEL) >= 3  # reference, winner, candidate 0
    order = [text.index(h) for h in ("## Summary", "**Verdicts**", "## Candidates", "## Duels")]
    assert order == sorted(order)
    assert "(0 rows; columns: id, superhero_name" in text  # candidate 4's empty answer
    assert "foreign-key context" in text
    assert "**Judge (reference)**" in text
    assert not re.search(r"\bq[12]\b", text.split("## Duels")[1])  # A and B only


def _overflow(page) -> list[str]:
    """Elements reaching past the viewport's right edge, outside a scrolling box."""
    return page.evaluate("""() => [...document.querySelectorAll('body *')]
        .filter(e => e.getBoundingClientRect().right > window.innerWidth
                     && !e.closest('.scroll'))
        .map(e => e.localName + '.' + e.className)""")


def test_html_report_folds_links_and_fits(dsn, superhero, tmp_path, capsys, page):
    out = tmp_path / "report.html"
    result = tournament_report(dsn, superhero, out, capsys)
    page.goto(out.as_uri())
    duels = page.query_selector_all("details.duel")
    assert len(duels) == len(result["duels"]) >= 3  # one a pair of the 4 groups, at least
    for duel in duels:
        body = duel.query_selector(".pair")
        assert duel.get_attribute("open") is None and not body.is_visible()
        duel.query_selector("summary").click()
        assert duel.get_attribute("open") is not None and body.is_visible()
        duel.query_selector("summary").click()
        assert duel.get_attribute("open") is None and not body.is_visible()
    # Every link lands on an element of the page, and following it shows that element.
    links = page.eval_on_selector_all("a[href]", "as => as.map(a => a.getAttribute('href'))")
    played = {frozenset((d["a"], d["b"])) for d in result["duels"]}
    assert len(links) >= 1 + 2 * len(played)  # the winner, both verdict cells of a pair
    for href in set(links):
        assert href.startswith("#") and page.query_selector(href) is not None, href
    page.click("a[href='#duel-0-1']")  # unfolds the duel on arrival
    assert page.evaluate("document.getElementById('duel-0-1').closest('details').open")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    for summary in page.query_selector_all("details.duel:not([open]) > summary"):
        summary.click()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    assert _overflow(page) == []
    # The matrix is coloured by outcome; the dropped candidate says why.
    classes = page.eval_on_selector_all(".matrix td", "cs => cs.map(c => c.className)")
    assert {"win", "loss", "self"} <= set(classes)
    assert "nope" in page.inner_text("#candidate-5")
    assert page.query_selector_all(".context") and page.query_selector_all(".answer-judge")
    keep = os.environ.get("SISELECT_SCREENSHOTS")
    if keep:
        for summary in page.query_selector_all("details.duel[open] > summary")[1:]:
            summary.click()  # one duel open: the rest as a reader first sees them
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(Path(keep) / "report.png"), full_page=True)
