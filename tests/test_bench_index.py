"""Issue 19, points 2 and 6: a benchmark run's index.html, read in Chromium.

Three BIRD superhero tasks and one of our own with a candidate that fails: the index
shows the accuracy by difficulty with n, links every task to its report, sorts without
script, lists the dropped candidate, and fits a 1280 px viewport.
``SISELECT_SCREENSHOTS=DIR`` keeps its screenshot there (docs/ holds it).
"""

import json
import os
from pathlib import Path

from conftest import SHARED, SUPERHERO
from siselect.client.bench.index import difficulty_rows
from siselect.client.cli import main

pytest_plugins = ["browser"]

TASK_IDS = [735, 744, 766]
CANDIDATES_K2 = SHARED / "siselection" / "candidates" / "2" / "stage1.json"
OURS = {"question_id": 999_101, "db_id": "superhero", "difficulty": "challenging",
        "question": "How many superheroes are there?", "evidence": "",
        "SQL": "SELECT COUNT(*) FROM superhero"}
OURS_CANDIDATES = ["SELECT nope FROM superhero", "SELECT COUNT(*) FROM superhero",
                   "SELECT COUNT(id) FROM superhero WHERE height_cm > 0"]


def _bench(dsn: str, root: Path, capsys, *options: str, name: str = "run") -> tuple[Path, str]:
    tasks = [t for t in json.loads((SHARED / "bird" / "dev_superhero.json").read_text())
             if t["question_id"] in TASK_IDS]
    candidates = {q: c for q, c in json.loads(CANDIDATES_K2.read_text()).items()
                  if int(q) in TASK_IDS}
    candidates[str(OURS["question_id"])] = OURS_CANDIDATES
    (root / "tasks.json").write_text(json.dumps([*tasks, OURS]))
    (root / "candidates.json").write_text(json.dumps(candidates))
    if not (root / "dbs").exists():
        (root / "dbs").mkdir()
        (root / "dbs" / "superhero").symlink_to(SUPERHERO.parent)
    out = root / name
    code = main(["bench", "--tasks", str(root / "tasks.json"), "--candidates",
                 str(root / "candidates.json"), "--databases", str(root / "dbs"), "--dsn", dsn,
                 "--out", str(out), "--statement-timeout", "20000", *options])
    printed = capsys.readouterr().out
    assert code == 0
    assert "difficulty" in printed
    return out, printed


def test_difficulty_rows_count_each_label_and_all():
    records = [{"status": "ok", "difficulty": d, "hits": {"tournament": h}}
               for d, h in [("simple", True), ("simple", False), ("moderate", True), (None, True)]]
    records.append({"status": "gold_failed", "difficulty": "simple"})
    rows = {r["difficulty"]: (r["n"], r["right"]["tournament"])
            for r in difficulty_rows(records, ["tournament"])}
    assert rows == {"simple": (2, 1), "moderate": (1, 1), "(none)": (1, 1), "all": (4, 3)}


def test_bench_index_links_sorts_and_fits(dsn, superhero, tmp_path, capsys, page):
    out, printed = _bench(dsn, tmp_path, capsys)
    assert "challenging" in printed
    assert "dropped: task 999101 candidate 0 (execute)" in printed
    # A second run on two of the tasks, plotted into the first run's plots folder: the
    # figures warn that the task sets differ, and the index (written again) says so.
    two, _ = _bench(dsn, tmp_path, capsys, "--limit", "2", name="two")
    assert main(["plot", str(out), str(two), "--out", str(out / "plots")]) == 0
    assert str(out / "index.html") in capsys.readouterr().err
    index = out / "index.html"
    page.goto(index.as_uri())
    assert page.seen.errors == [] and page.seen.dialogs == []
    difficulty = page.eval_on_selector_all(".difficulty tbody th", "t => t.map(e => e.innerText)")
    assert difficulty[-1] == "all" and "challenging" in difficulty
    # Every task links to its report, which exists; the fragment links land on the page.
    for href in page.eval_on_selector_all("a[href]", "as => as.map(a => a.getAttribute('href'))"):
        if href.startswith("#"):
            assert page.query_selector(href) is not None, href
        else:
            assert (out / href).is_file(), href
    reports = page.eval_on_selector_all("#by-id a", "as => as.map(a => a.innerText)")
    assert reports == [str(i) for i in [*TASK_IDS, OURS["question_id"]]]
    # One order shows at a time; a link switches it without script.
    assert page.is_visible("#by-id") and not page.is_visible("#by-seconds")
    page.click("a[href='#by-seconds']")
    assert page.is_visible("#by-seconds") and not page.is_visible("#by-id")
    seconds = page.eval_on_selector_all("#by-seconds tbody tr td:last-child",
                                        "t => t.map(e => parseFloat(e.innerText))")
    assert seconds == sorted(seconds, reverse=True)
    dropped = page.inner_text("#dropped ~ .scroll")
    assert "999101" in dropped and "nope" in dropped
    figures = page.query_selector_all("figure.plot")
    assert len(figures) == 2  # accuracy by K and instance sizes; no noise levels here
    for figure in figures:
        assert figure.query_selector("img").evaluate("i => i.naturalWidth") == 1200
        warning = figure.query_selector(".alert")
        assert warning.is_visible() and "the runs score different task sets" in \
            warning.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    page.click("#by-seconds a[href='reports/999101.md']")
    assert "Returning the gold result (BIRD's rule): candidate 1\n" in page.inner_text("body")
    keep = os.environ.get("SISELECT_SCREENSHOTS")
    if keep:
        page.goto(index.as_uri())
        page.screenshot(path=str(Path(keep) / "bench-index.png"), full_page=True)
