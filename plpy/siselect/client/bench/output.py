"""The files of a benchmark run, and resuming an interrupted one.

``DIR/run.json`` (inputs' digests and settings), ``DIR/results.jsonl`` (one line per
finished task, flushed as it finishes), ``DIR/reports/<question_id>.md`` and, at the end,
``DIR/summary.json``. A task's report is written before its results line, so a task in
results.jsonl always has its report; a line cut short by an interruption is dropped.
"""

import json
import os
import re
from pathlib import Path
from typing import Any

from siselect.client.bench.inputs import sort_key
from siselect.runtime.errors import InvalidInput

RESULTS, RUN, SUMMARY, REPORTS = "results.jsonl", "run.json", "summary.json", "reports"
COSMETIC = ("label",)  # run settings that may change on --resume


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, default=str, sort_keys=True)


def report_name(question_id: int | str) -> str:
    """A file name for a question id (ids are numbers in BIRD, but any text is accepted)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", str(question_id)) + ".md"


class OutDir:
    """Where a run writes; :meth:`start` returns the records an earlier run finished."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.results = self.path / RESULTS
        self._file: Any = None

    def start(self, run: dict[str, Any], resume: bool, force: bool) -> dict[str, dict]:
        if self.path.exists() and not self.path.is_dir():
            raise InvalidInput(f"--out {self.path}: exists and is not a directory")
        (self.path / REPORTS).mkdir(parents=True, exist_ok=True)
        finished: dict[str, dict] = {}
        if self.results.exists() and self.results.stat().st_size > 0:
            if resume:
                self._check_same_run(run)
                finished = self._read_finished()
            elif force:
                self._clear()
            else:
                raise InvalidInput(f"{self.path} holds the results of an earlier run; pass "
                                   "--resume to continue it or --force to start again")
        (self.path / RUN).write_text(_dump(run) + "\n", encoding="utf-8")
        self._file = self.results.open("a", encoding="utf-8")
        return finished

    def _check_same_run(self, run: dict[str, Any]) -> None:
        try:
            before = json.loads((self.path / RUN).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise InvalidInput(f"{self.path / RUN} is missing or unreadable: cannot tell "
                               "which settings the earlier run used; use --force") from None
        changed = sorted(k for k in set(run) | set(before)
                         if k not in COSMETIC and run.get(k) != before.get(k))
        if changed:
            detail = "; ".join(f"{k}: {before.get(k)!r} then, {run.get(k)!r} now" for k in changed)
            raise InvalidInput(f"cannot resume {self.path}: the run differs ({detail})")

    def _read_finished(self) -> dict[str, dict]:
        """The records in results.jsonl; a last line cut short is dropped from the file."""
        finished, good_bytes, good_lines = {}, 0, 0
        with self.results.open("rb") as f:
            lines = f.readlines()
        for number, raw in enumerate(lines, 1):
            try:
                record = json.loads(raw)
            except ValueError:
                if number == len(lines):
                    break  # written when the run was interrupted
                raise InvalidInput(f"{self.results}, line {number}: not a JSON object; "
                                   "the file was changed by hand?") from None
            finished[str(record["question_id"])] = record
            good_bytes += len(raw)
            good_lines += 1
        with self.results.open("r+b") as f:
            f.truncate(good_bytes)
            if good_bytes and not lines[good_lines - 1].endswith(b"\n"):
                f.seek(0, os.SEEK_END)
                f.write(b"\n")
        return finished

    def _clear(self) -> None:
        for name in (RESULTS, SUMMARY):
            (self.path / name).unlink(missing_ok=True)
        for report in (self.path / REPORTS).glob("*.md"):
            report.unlink()

    def append(self, record: dict[str, Any], report: str) -> None:
        """Keep one finished task: its report, then its line (flushed to the OS)."""
        (self.path / REPORTS / report_name(record["question_id"])).write_text(
            report, encoding="utf-8")
        self._file.write(_dump(record) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def finish(self, records: list[dict[str, Any]], summary: dict[str, Any]) -> None:
        """Rewrite results.jsonl in question-id order and write summary.json."""
        self.close()
        ordered = sorted(records, key=lambda r: sort_key(r["question_id"]))
        temporary = self.results.with_suffix(".jsonl.tmp")
        temporary.write_text("".join(_dump(r) + "\n" for r in ordered), encoding="utf-8")
        temporary.replace(self.results)
        (self.path / SUMMARY).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n",
                                         encoding="utf-8")


def read_results(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A finished run's summary and records, from its directory or its summary.json."""
    if path.is_file() and path.name != SUMMARY:
        raise InvalidInput(f"{path}: neither a results directory nor its {SUMMARY}")
    folder = path.parent if path.is_file() else path
    summary_path = folder / SUMMARY
    if not summary_path.exists():
        raise InvalidInput(f"{folder}: no {SUMMARY} (is it the --out directory of a finished "
                           "siselect bench run?)", "58P01")
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        records = [json.loads(line) for line in
                   (folder / RESULTS).read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{folder}: unreadable results ({exc})") from None
    return summary, records
