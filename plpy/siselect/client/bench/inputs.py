"""A benchmark's inputs in BIRD's own formats, read and checked before anything runs.

- tasks: a JSON array like BIRD's ``dev.json``: objects with ``question_id``, ``db_id``,
  ``question``, ``evidence`` (may be empty or absent) and ``SQL`` (the gold query, SQLite);
- candidates: a JSON object ``{question_id: [sql, ...]}`` (SQLite dialect);
- databases: ``DIR/<db_id>/<db_id>.sqlite``, with BIRD's ``database_description/`` beside
  it when present (the loader turns it into column comments).

Only tasks that have candidates are run (the candidate files hold only tasks whose
candidates disagree); every other mismatch is a clear error or a note.
"""

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from siselect.runtime.errors import InvalidInput

REQUIRED = ("question_id", "db_id", "question", "SQL")


@dataclass
class Task:
    question_id: int | str
    db_id: str
    question: str
    evidence: str
    sql: str  # the gold query, in the run's dialect (BIRD's: SQLite)
    candidates: list[str]
    difficulty: str | None = None
    # Where the task runs when its database already lives on the server (``--dialect
    # postgres``): the schema, and the database when not the DSN's. None: the loaded db_id.
    schema: str | None = None
    database: str | None = None

    @property
    def key(self) -> str:
        """The question id as the candidates file and results.jsonl spell it."""
        return str(self.question_id)


@dataclass
class Inputs:
    tasks: list[Task]
    databases: dict[str, Path]  # db_id -> .sqlite file
    fingerprint: dict[str, str]  # SHA-256 of the input files
    notes: list[str] = field(default_factory=list)


def read_json(path: Path, what: str) -> Any:
    """The JSON value in ``path``; errors name the file and, for bad JSON, the place."""
    if not path.exists():
        raise InvalidInput(f"{what} file {path}: no such file", "58P01")
    if not path.is_file():
        raise InvalidInput(f"{what} file {path}: not a file")
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{what} file {path}: not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{what} file {path}: not valid JSON: {exc.msg} at line "
                           f"{exc.lineno}, column {exc.colno}") from None


def sort_key(question_id: int | str) -> tuple[int, int, str]:
    """Numeric ids in numeric order, then any others as text."""
    text = str(question_id)
    return (0, int(text), "") if text.lstrip("-").isdigit() else (1, 0, text)


def _task(item: Any, position: int, path: Path, candidates: list[str]) -> Task:
    where = f"tasks file {path}, item {position}"
    if not isinstance(item, dict):
        raise InvalidInput(f"{where}: expected an object with {', '.join(REQUIRED)}")
    missing = [k for k in REQUIRED if item.get(k) in (None, "")]
    if missing:
        raise InvalidInput(f"{where}: missing {', '.join(missing)}")
    for key in ("db_id", "question", "SQL"):
        if not isinstance(item[key], str):
            raise InvalidInput(f"{where}: {key} must be a string")
    if not isinstance(item["question_id"], int | str) or isinstance(item["question_id"], bool):
        raise InvalidInput(f"{where}: question_id must be a number or a string")
    evidence = item.get("evidence") or ""
    if not isinstance(evidence, str):
        raise InvalidInput(f"{where}: evidence must be a string")
    return Task(item["question_id"], item["db_id"], item["question"], evidence, item["SQL"],
                candidates, item.get("difficulty"))


def read_candidates(path: Path) -> dict[str, list[str]]:
    """``{question_id: [sql, ...]}`` with every value checked."""
    data = read_json(path, "candidates")
    if not isinstance(data, dict):
        raise InvalidInput(f"candidates file {path}: expected an object "
                           "{question_id: [sql, ...]}")
    for key, value in data.items():
        if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
            raise InvalidInput(f"candidates file {path}: the value of {key!r} must be a list "
                               "of SQL strings")
    return {str(k).strip(): v for k, v in data.items()}


def read_tasks(path: Path, candidates: dict[str, list[str]]) -> tuple[list[Task], list[str]]:
    """The tasks that have candidates, in question-id order, and notes on the others."""
    data = read_json(path, "tasks")
    if not isinstance(data, list):
        raise InvalidInput(f"tasks file {path}: expected a JSON array of tasks as in BIRD's "
                           "dev.json")
    tasks, seen, without = [], set(), 0
    for position, item in enumerate(data):
        task = _task(item, position, path, [])
        if task.key in seen:
            raise InvalidInput(f"tasks file {path}: question_id {task.key} appears twice")
        seen.add(task.key)
        if not candidates.get(task.key):
            without += 1
            continue
        task.candidates = candidates[task.key]
        tasks.append(task)
    notes = []
    if without:
        notes.append(f"{without} of {len(data)} tasks have no candidates and are skipped")
    unknown = len(set(candidates) - seen)
    if unknown:
        notes.append(f"{unknown} question ids of the candidates file are not in the tasks file "
                     "and are ignored")
    tasks.sort(key=lambda t: sort_key(t.question_id))
    return tasks, notes


def database_file(directory: Path, db_id: str) -> Path:
    return directory / db_id / f"{db_id}.sqlite"


def locate_databases(directory: Path, tasks: list[Task]) -> dict[str, Path]:
    """The .sqlite file of every database the tasks use; all missing ones in one error."""
    if not directory.is_dir():
        raise InvalidInput(f"databases directory {directory}: no such directory", "58P01")
    files: dict[str, Path] = {}
    missing: dict[str, int] = {}
    for task in tasks:
        path = database_file(directory, task.db_id)
        if path.is_file():
            files[task.db_id] = path
        else:
            missing[task.db_id] = missing.get(task.db_id, 0) + 1
    if missing:
        listed = ", ".join(f"{db} ({n} tasks)" for db, n in sorted(missing.items()))
        raise InvalidInput(f"databases not found under {directory} (expected "
                           f"{database_file(directory, '<db_id>')}): {listed}", "58P01")
    return files


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_inputs(tasks_path: Path, candidates_path: Path, databases: Path,
                limit: int | None = None) -> Inputs:
    """Read and check everything a benchmark run needs; ``limit`` keeps the first tasks."""
    inputs = read_inputs(tasks_path, candidates_path, limit)
    inputs.databases = locate_databases(databases, inputs.tasks)
    return inputs


def read_inputs(tasks_path: Path, candidates_path: Path, limit: int | None = None) -> Inputs:
    """The tasks with their candidates, checked; no database is located yet."""
    candidates = read_candidates(candidates_path)
    tasks, notes = read_tasks(tasks_path, candidates)
    if not tasks:
        raise InvalidInput(f"no task of {tasks_path} has candidates in {candidates_path} "
                           "(question ids must match)")
    if limit is not None:
        if limit < 1:
            raise InvalidInput("--limit must be at least 1")
        tasks = tasks[:limit]
    fingerprint = {"tasks_sha256": digest(tasks_path),
                   "candidates_sha256": digest(candidates_path)}
    return Inputs(tasks, {}, fingerprint, notes)
