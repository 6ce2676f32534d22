"""Completions already obtained, so that an identical prompt is never paid for twice.

A prompt is identical when the endpoint, the model, every request parameter, the seed,
the vote number and the messages are: :func:`cache_key` hashes exactly that. A call keeps
a :class:`MemoryCache`; ``bench`` adds a :class:`SqliteCache` file kept between runs, so
that a resumed or repeated run sends no completion twice. Only the main thread uses them.
"""

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

# The Completion type lives with the HTTP client; a cache stores its fields only.
_FIELDS = ("text", "finish_reason", "usage")


def cache_key(endpoint: str, body: dict[str, Any], vote: int) -> str:
    """The identity of one completion request (``body`` holds model, parameters, seed and
    messages; ``vote`` tells apart votes sent without a seed)."""
    text = json.dumps([endpoint, body, vote], sort_keys=True, ensure_ascii=False,
                      default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class MemoryCache:
    def __init__(self) -> None:
        self._items: dict[str, Any] = {}

    def get(self, key: str) -> Any:
        return self._items.get(key)

    def put(self, key: str, completion: Any) -> None:
        self._items[key] = completion


class SqliteCache:
    """Completions in a SQLite file (safe to share between bench's worker processes)."""

    def __init__(self, path: str | Path, make: Any):
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._make = make  # builds a Completion from the stored fields
        self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None,
                                   check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS completion "
                         "(key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def get(self, key: str) -> Any:
        row = self._db.execute("SELECT value FROM completion WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        return self._make(text=data["text"], finish_reason=data.get("finish_reason"),
                          usage=data.get("usage") or {})

    def put(self, key: str, completion: Any) -> None:
        value = json.dumps({k: getattr(completion, k) for k in _FIELDS}, ensure_ascii=False)
        self._db.execute("INSERT OR REPLACE INTO completion VALUES (?, ?)", (key, value))

    def close(self) -> None:
        self._db.close()


def persistent_cache(path: str | None, make: Any) -> SqliteCache | None:
    return SqliteCache(path, make) if path else None
