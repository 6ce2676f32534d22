"""What the LLM judge sent out of the server, for administrators: one JSON line per
completion sent, written before the request leaves.

Not a table: ``siselect.tournament`` runs in a read-only transaction (a security decision:
candidate SQL can never write), where no INSERT is possible, and rows written in the
caller's transaction would vanish when the caller rolls back, which is exactly the record
an audit must keep. So the server process appends to ``siselect/judge_audit.jsonl`` in the
data directory (mode 0600 in a 0700 folder, like the LLM settings): neither transactional
nor subject to the read-only state. Each record is one ``write`` on a descriptor opened
with O_APPEND, so backends writing at once never interleave lines, and an administrator may
rename the file at any time (the next record starts a new one). A record that cannot be
written stops its request: with the audit on, nothing leaves the server unrecorded.

``siselect.judge_audit`` (a view over ``siselect.judge_audit_entries()``) reads it back for
members of ``siselect_auditor``.
"""

import datetime
import hashlib
import json
import os
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

AUDIT_FILE = Path("siselect") / "judge_audit.jsonl"
LEVELS = ("off", "on", "full")  # full: the messages' text too


def audit_path() -> Path:
    """The file in the data directory (the backend's working directory, resolved now)."""
    return Path(os.getcwd()) / AUDIT_FILE


def prompt_json(messages: list[dict[str, str]]) -> bytes:
    """The messages as the audit hashes and measures them: compact JSON, keys in order."""
    return json.dumps(messages, ensure_ascii=False, sort_keys=True,
                      separators=(",", ":")).encode()


def prompt_sha256(messages: list[dict[str, str]]) -> str:
    return hashlib.sha256(prompt_json(messages)).hexdigest()


def shown_columns(instance: dict[str, dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The tables of an instance the prompt shows, and their columns as table.column."""
    tables = sorted(instance)
    columns = [f"{t}.{c}" for t in tables for c in instance[t].get("columns", [])]
    return tables, columns


@dataclass
class AuditLog:
    """Appends records to ``path``; ``session`` (database, role) and a call id go in each."""

    path: Path
    session: dict[str, Any]
    full: bool = False
    call: str = field(default_factory=lambda: uuid.uuid4().hex)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, endpoint: str, model: str, messages: list[dict[str, str]], vote: int,
               seed: int | None, about: dict[str, Any]) -> None:
        """One completion about to be sent; ``about``: tables, columns, masked_columns,
        left_out, prompt_tokens_estimated.
        Raises OSError when the record cannot be written (the request is then not sent)."""
        body = prompt_json(messages)
        entry = {
            "sent_at": datetime.datetime.now(datetime.UTC).isoformat(),
            "pid": os.getpid(), "call_id": self.call, **self.session,
            "endpoint": endpoint, "model": model or None, "vote": vote, "seed": seed,
            "prompt_sha256": hashlib.sha256(body).hexdigest(), "prompt_bytes": len(body),
            **about,
            "messages": messages if self.full else None,
        }
        line = (json.dumps(entry, ensure_ascii=False) + "\n").encode()
        with self._lock:  # one writer per backend; O_APPEND keeps backends apart
            self.path.parent.mkdir(mode=0o700, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)


def make_audit(level: str, session: dict[str, Any], path: Path | None = None
               ) -> AuditLog | None:
    """The audit log for ``level`` (None when off)."""
    if level == "off":
        return None
    return AuditLog(path or audit_path(), session, full=level == "full")


def entries(path: Path | None = None) -> Iterator[dict[str, Any]]:
    """The records in the file, oldest first; a line that is not a record (a torn write
    after a crash) is skipped."""
    path = path or audit_path()
    if not path.exists():
        return
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                yield entry
