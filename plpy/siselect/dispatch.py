"""What every SQL function of the extension calls: ``call(plpy, version, name, **args)``.

It checks that the SQL objects and the Python package are the same version, runs the entry
point ``name`` (see :mod:`siselect.entry_points`), and turns siselect's errors into
PostgreSQL errors with their SQLSTATE. Nothing here imports ``plpy``: the function body
passes the module in.
"""

import json
import math
from typing import Any

from siselect import __version__
from siselect.runtime.errors import SiselectError


def call(plpy: Any, sql_version: str, name: str, **args: Any) -> Any:
    """Run entry point ``name``; turn our errors into PostgreSQL errors with their SQLSTATE."""
    if sql_version != __version__:
        plpy.error(
            f"siselect: the SQL objects are version {sql_version} but the Python package is "
            f"{__version__}",
            hint="Run ALTER EXTENSION siselect UPDATE, or reinstall with make install.",
            sqlstate="0A000",
        )
    if name == "version":  # cheap, and works even if a later stage fails to import
        return __version__
    from siselect.entry_points import ENTRY_POINTS

    try:
        result = ENTRY_POINTS[name](plpy, **args)
    except SiselectError as exc:
        # PL/Python prints a detail of None as the text "None": pass one only when set.
        extra = {"detail": exc.detail} if exc.detail else {}
        plpy.error(f"siselect: {exc.message}", sqlstate=exc.sqlstate, **extra)
    except RecursionError:  # any recursive walk of a tree (parser, lineage, generator)
        plpy.error("siselect: a query is nested too deeply to process", sqlstate="54001")
    if isinstance(result, dict | list):
        return jsonb_text(result)
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


def jsonb_text(value: Any) -> str:
    """``value`` as the JSON text a jsonb result of the SQL functions holds."""
    return json.dumps(_jsonb_ready(value))
