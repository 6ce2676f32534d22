"""Glue between PL/Python and the core: the executor over ``plpy`` and the entry points.

Every SQL function of the extension is one call to :func:`call`; nothing here imports
``plpy``: the function body passes the module in.
"""

import json
import math
from collections.abc import Callable
from typing import Any

from . import __version__
from .errors import QueryFailed, SiselectError
from .executor import Rows, quote_ident, quote_literal
from .values import canonical_rows


class _Discard(Exception):
    """Leaves a subtransaction by rolling it back, carrying the rows already fetched."""

    def __init__(self, result: Any):
        super().__init__()
        self.result = result


class PlpyExecutor:
    """Runs queries through SPI, read-only.

    ``SET LOCAL transaction_read_only`` must travel in the same SPI call as the query:
    PL/Python wraps each call in a subtransaction whose end restores the read-only flag.
    Rows come back as dicts, which would merge duplicate column names, so each query is
    wrapped with positional aliases after a zero-row probe of its columns.
    """

    def __init__(self, plpy: Any, search_path: str | None = None):
        self.plpy = plpy
        # The functions pin their own search_path; candidate queries resolve names on the
        # caller's, which the SQL signature captures in a default argument.
        path = (
            ""
            if search_path is None
            else (
                f"SELECT pg_catalog.set_config('search_path', {quote_literal(search_path)}, true); "
            )
        )
        self._guard = path + "SET LOCAL transaction_read_only = on; "

    def _execute(self, sql: str, limit: int = 0):
        try:
            # Rolled back even when it succeeds: a read-only transaction still lets a query
            # change session settings and a few catalogs; the rollback undoes that.
            with self.plpy.subtransaction():
                raise _Discard(self.plpy.execute(self._guard + sql, limit))
        except _Discard as done:
            return done.result
        except self.plpy.SPIError as exc:
            sqlstate = getattr(exc, "sqlstate", None) or "XX000"
            if sqlstate in ("57014", "57P01", "57P02", "57P03", "53200"):
                # Cancel, statement_timeout (set by the caller for the whole call),
                # shutdown, out of memory: end the call, never carry on.
                raise
            message = str(exc.args[0] if exc.args else exc).splitlines()[0]
            raise QueryFailed(message, sqlstate, getattr(exc, "detail", None)) from None

    def run(self, sql: str, max_rows: int | None = None) -> Rows:
        # Line breaks keep a trailing "--" comment from hiding the closing parenthesis.
        probe = self._execute(f"SELECT * FROM (\n{sql}\n) AS _q LIMIT 0")
        columns = list(probe.colnames())
        aliases = [f"c{i}" for i in range(len(columns))]
        wrapped = f"SELECT * FROM (\n{sql}\n) AS _q({', '.join(aliases)})"
        result = self._execute(wrapped, 0 if max_rows is None else max_rows + 1)
        data = [tuple(row[a] for a in aliases) for row in result]
        truncated = max_rows is not None and len(data) > max_rows
        if truncated:
            data = data[:max_rows]
        return Rows(columns, canonical_rows(data), truncated)


def _version(plpy: Any) -> str:
    return __version__


ENTRY_POINTS: dict[str, Callable[..., Any]] = {"version": _version}


def register(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Make ``fn(plpy, **args)`` callable from SQL as entry point ``name``."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        ENTRY_POINTS[name] = fn
        return fn

    return wrap


def call(plpy: Any, sql_version: str, name: str, **args: Any) -> Any:
    """Run entry point ``name``; turn our errors into PostgreSQL errors with their SQLSTATE."""
    if sql_version != __version__:
        plpy.error(
            f"siselect: the SQL objects are version {sql_version} but the Python package is "
            f"{__version__}",
            hint="Run ALTER EXTENSION siselect UPDATE, or reinstall with make install.",
            sqlstate="0A000",
        )
    _load_entry_points()
    try:
        result = ENTRY_POINTS[name](plpy, **args)
    except SiselectError as exc:
        # PL/Python prints a detail of None as the text "None": pass one only when set.
        extra = {"detail": exc.detail} if exc.detail else {}
        plpy.error(f"siselect: {exc.message}", sqlstate=exc.sqlstate, **extra)
    except RecursionError:  # any recursive walk of a tree (parser, lineage, generator)
        plpy.error("siselect: a query is nested too deeply to process", sqlstate="54001")
    if isinstance(result, dict | list):
        return json.dumps(_jsonb_ready(result))
    return result


def _jsonb_ready(value: Any) -> Any:
    """``value`` as jsonb takes it: infinite and NaN floats spelled as PostgreSQL spells
    them, and NUL characters (which no text can hold) replaced by U+FFFD. The data can hold
    an infinity, and the LLM judge's reply anything."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {_jsonb_ready(k): _jsonb_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonb_ready(v) for v in value]
    return value


def _load_entry_points() -> None:
    # Importing the modules registers their entry points; done lazily so that
    # siselect.version() stays cheap and works even if a later stage fails to import.
    from . import server_api  # noqa: F401


def search_path_schemas(plpy: Any) -> list[str]:
    rows = plpy.execute("SELECT unnest(current_schemas(false)) AS s")
    return [r["s"] for r in rows]


__all__ = ["PlpyExecutor", "call", "register", "quote_ident", "search_path_schemas"]
