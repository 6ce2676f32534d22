"""Which tasks a synthetic database keeps, measured with sqlite3 alone.

A task is dropped when its gold query fails on SQLite or when all its candidates return the
same set of rows (BIRD's rule) there: such a task measures nothing. A gold that fails only
on PostgreSQL is a fidelity defect, counted by the bench run, never dropped here.
"""

import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

TIMEOUT_SECONDS = 5.0


@dataclass
class Retention:
    kept: list[str] = field(default_factory=list)
    gold_failed: list[str] = field(default_factory=list)
    all_agree: list[str] = field(default_factory=list)
    gold_empty: list[str] = field(default_factory=list)  # kept, but the gold returns no row
    # Per task: candidates whose SQLite answer is the gold's, and those failing on SQLite;
    # the runner compares them with PostgreSQL's (transpile disagreements).
    sqlite: dict[str, dict[str, list[int]]] = field(default_factory=dict)

    def figures(self, total: int) -> dict:
        return {"tasks": total, "kept": len(self.kept), "gold_failed": len(self.gold_failed),
                "all_agree": len(self.all_agree), "gold_empty": len(self.gold_empty),
                "kept_share": round(len(self.kept) / total, 4) if total else None}


def _answer(conn: sqlite3.Connection, sql: str) -> frozenset | str:
    deadline = time.monotonic() + TIMEOUT_SECONDS
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        return frozenset(conn.execute(sql).fetchall())
    except (sqlite3.Error, sqlite3.Warning, OverflowError, ValueError) as error:
        return f"error: {type(error).__name__}"
    finally:
        conn.set_progress_handler(None, 0)


def retention(database: Path, tasks: list[dict], candidates: dict[str, list[str]],
              keep_all: bool = False) -> Retention:
    """``tasks`` as in BIRD's dev.json, ``candidates`` ``{question_id: [sql, ...]}``;
    ``keep_all``: drop nothing (real data), only record SQLite's verdicts."""
    out = Retention()
    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        for task in tasks:
            qid = str(task["question_id"])
            gold = _answer(conn, task["SQL"])
            if isinstance(gold, str) and not keep_all:
                out.gold_failed.append(qid)
                continue
            each = [_answer(conn, sql) for sql in candidates.get(qid, [])]
            out.sqlite[qid] = {"correct": [i for i, a in enumerate(each)
                                           if not isinstance(gold, str) and a == gold],
                               "failed": [i for i, a in enumerate(each) if isinstance(a, str)]}
            if len(set(each)) <= 1 and not keep_all:
                out.all_agree.append(qid)
                continue
            out.kept.append(qid)
            if not gold:
                out.gold_empty.append(qid)
    finally:
        conn.close()
    return out
