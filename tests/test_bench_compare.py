"""Issue 19, point 2: ``siselect bench-compare A B`` on two real bench runs.

Three BIRD superhero tasks, run with the reference judge (A) and with no judge (B): with
no judge every duel is a draw and input order decides, so two tasks the reference judge
gets right turn wrong. The comparison names them, says why (what decided, the duel whose
verdict changed), on the console, as JSON and as an HTML page read in Chromium. A third
run on two of the tasks shows the warning about task sets.
``SISELECT_SCREENSHOTS=DIR`` keeps the page's screenshot there (docs/ holds it).
"""

import json
import os
from pathlib import Path

import pytest

from conftest import SHARED, bird_layout
from siselect.client.bench.compare import BROKEN, FIXED
from siselect.client.cli import main
from siselect.client.exit_codes import ERROR, OK, USAGE

pytest_plugins = ["browser"]

TASK_IDS = [745, 765, 772]
FLIPPED = ["765", "772"]  # right with the reference judge, wrong by input order
CANDIDATES = SHARED / "siselection" / "candidates" / "5" / "stage1.json"


@pytest.fixture(scope="module")
def runs(dsn, superhero, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("compare")
    bird_layout(root, TASK_IDS, CANDIDATES)
    made = {}
    for name, options in {"reference": ["--judge", "reference"], "none": ["--judge", "none"],
                          "two": ["--judge", "reference", "--limit", "2"]}.items():
        made[name] = root / name
        assert main(["bench", "--tasks", str(root / "tasks.json"), "--candidates",
                     str(root / "candidates.json"), "--databases", str(root / "dbs"), "--dsn",
                     dsn, "--out", str(made[name]), "--label", name, *options]) == OK
    return made


def compared(capsys, *args: str) -> dict:
    capsys.readouterr()
    assert main(["bench-compare", *args, "--json"]) == OK
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_flipped_tasks_and_why(runs, capsys):
    result = compared(capsys, str(runs["reference"]), str(runs["none"]))
    assert result["warning"] is None and result["tasks"]["common"] == list(map(str, TASK_IDS))
    flips = result["flips"]["tournament"]
    assert [str(f["question_id"]) for f in flips] == FLIPPED
    assert {f["direction"] for f in flips} == {BROKEN}
    assert result["flip_counts"] == {"tournament": {FIXED: 0, BROKEN: 2},
                                     "consistency": {FIXED: 0, BROKEN: 0}}
    for f in flips:
        assert (f["a"]["correct"], f["b"]["correct"]) == (True, False)
        assert (f["a"]["decided_by"], f["b"]["decided_by"]) == ("tournament", "input order")
        assert f["a"]["choice"] != f["b"]["choice"]
        # The first duel: separated in both runs, on the same instance; only the verdict
        # moved. Duels B played besides are listed as such.
        first, *others = f["duels"]
        assert (first["pair"], first["changed"], first["b"]["verdict"]) == (
            "0-1", ["verdict"], "draw")
        assert all(c["changed"] == ["played"] and c["a"] is None for c in others)
        assert f["a"]["separation"] == "1 separated" and "1 separated" in f["b"]["separation"]
        assert Path(f["a"]["report"]).is_file()
    figures = {f["name"]: f for f in result["figures"]}
    assert figures["accuracy tournament"]["difference"] == pytest.approx(-2 / 3, abs=1e-5)
    assert figures["decided by input order"]["a"] == 0
    assert figures["decided by input order"]["b"] == 3
    assert [s["name"] for s in result["settings"] if s["differs"]] == ["label", "judge"]
    # The other way round, the same tasks are fixed.
    back = compared(capsys, str(runs["none"]), str(runs["reference"]))
    assert [(str(f["question_id"]), f["direction"]) for f in back["flips"]["tournament"]] == \
        [(q, FIXED) for q in FLIPPED]


def test_console_text_names_each_flip(runs, capsys):
    assert main(["bench-compare", str(runs["reference"]), str(runs["none"])]) == OK
    out = capsys.readouterr().out
    assert "settings that differ: label reference -> none, judge reference -> none" in out
    assert "tournament: 2 of 3 tasks flipped (0 wrong -> correct, 2 correct -> wrong)" in out
    lines = {line.split(":")[0]: line for line in out.splitlines()}
    for qid in FLIPPED:
        line = lines[f"  task {qid} correct -> wrong"]
        assert "chose 1 -> 0; decided by tournament -> input order; duels 1 separated" in line
        assert "duel 0-1: verdict b -> draw" in line
    assert "-66.7 pts" in out


def test_different_task_sets_are_a_warning(runs, capsys):
    result = compared(capsys, str(runs["reference"]), str(runs["two"]))
    assert result["tasks"]["only_a"] == ["772"] and result["tasks"]["only_b"] == []
    assert "different task sets (A 3, B 2, 2 in both)" in result["warning"]
    assert main(["bench-compare", str(runs["reference"]), str(runs["two"])]) == OK
    assert capsys.readouterr().out.splitlines()[2].startswith("warning: the runs score different")


def test_missing_or_invalid_folders_fail_loudly(runs, tmp_path, capsys):
    cases = {tmp_path / "nowhere": "no such folder", tmp_path: "no summary.json"}
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "summary.json").write_text((runs["none"] / "summary.json").read_text())
    (broken / "results.jsonl").write_text('{"question_id": 1}\n')
    cases[broken] = "not a bench run's"
    garbled = tmp_path / "garbled"
    garbled.mkdir()
    (garbled / "summary.json").write_text("{")
    (garbled / "results.jsonl").write_text("")
    cases[garbled] = "unreadable results"
    for folder, message in cases.items():
        for args in ([str(runs["reference"]), str(folder)], [str(folder), str(runs["none"])]):
            capsys.readouterr()
            assert main(["bench-compare", *args]) == ERROR
            captured = capsys.readouterr()
            assert message in captured.err and "SQLSTATE" in captured.err, captured.err
            assert captured.out == ""
    # The page's folder is checked before anything is read.
    assert main(["bench-compare", str(runs["reference"]), str(runs["none"]), "--html",
                 str(tmp_path / "no" / "page.html")]) == ERROR
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        main(["bench-compare", str(runs["reference"])])
    assert usage.value.code == USAGE


def _overflow(page) -> list[str]:
    return page.evaluate("""() => [...document.querySelectorAll('body *')]
        .filter(e => e.getBoundingClientRect().right > window.innerWidth
                     && !e.closest('.scroll'))
        .map(e => e.localName + '.' + e.className)""")


def test_compare_page_fits_and_its_links_resolve(runs, tmp_path, capsys, page):
    target = tmp_path / "pages" / "compare.html"
    target.parent.mkdir()
    assert main(["bench-compare", str(runs["reference"]), str(runs["none"]), "--html",
                 str(target)]) == OK
    page.goto(target.as_uri())
    assert page.seen.errors == [] and page.seen.dialogs == []
    links = page.eval_on_selector_all("a[href]", "as => as.map(a => a.getAttribute('href'))")
    assert len(links) >= 2 + 2 + 2 * len(FLIPPED)  # both indexes, methods, reports
    for href in links:
        if href.startswith("#"):
            assert page.query_selector(href) is not None, href
        else:
            assert (target.parent / href).resolve().is_file(), href
    rows = page.eval_on_selector_all("#flips-tournament ~ .scroll .flips tbody tr",
                                     "rs => rs.map(r => r.cells[0].innerText)")
    assert rows == FLIPPED
    assert page.inner_text(".settings tr.differs th") == "label"
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    assert _overflow(page) == []
    page.click(f"a[href='{links[-1]}']")  # a task's report in B opens
    assert "Returning the gold result (BIRD's rule)" in page.inner_text("body")
    keep = os.environ.get("SISELECT_SCREENSHOTS")
    if keep:
        page.goto(target.as_uri())
        page.screenshot(path=str(Path(keep) / "bench-compare.png"), full_page=True)
