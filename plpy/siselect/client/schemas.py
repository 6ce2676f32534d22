"""JSON Schemas (draft 2020-12) of siselect's results, generated from their types.

    python3 -m siselect.client.schemas [DIR]   # writes DIR/<kind>.schema.json (docs/schema)

The types are the contract (:mod:`siselect.runtime.results`,
:mod:`siselect.client.bench.record`); the committed schemas are this module's output, and a
test holds them equal.
"""

import dataclasses
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal, Union

from siselect.client.bench.record import BenchRecord, BenchSummary
from siselect.runtime.results import (
    SCHEMA_VERSION,
    Duel,
    SeparationResult,
    TournamentResult,
    may_be_absent,
    without_absent,
)

DRAFT = "https://json-schema.org/draft/2020-12/schema"
#: Each kind of result and its type; ``<kind>.schema.json`` is its schema's file name.
KINDS: dict[str, type] = {
    "separation": SeparationResult,
    "duel": Duel,
    "tournament": TournamentResult,
    "bench_record": BenchRecord,
    "bench_summary": BenchSummary,
}
_SIMPLE = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def json_schema(cls: type) -> dict[str, Any]:
    """The JSON Schema of results of type ``cls`` (nested types under ``$defs``)."""
    defs: dict[str, Any] = {}
    body = _object(cls, defs)
    schema = {"$schema": DRAFT, "title": cls.__name__, **body}
    if defs:
        schema["$defs"] = dict(sorted(defs.items()))
    return schema


def _object(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    properties, required = {}, []
    for f in dataclasses.fields(cls):
        if f.name == "schema_version":
            prop: dict[str, Any] = {"const": SCHEMA_VERSION}
        else:
            prop = _type(without_absent(hints[f.name]), defs)
        if f.metadata.get("doc"):
            prop = {"description": f.metadata["doc"], **prop}
        properties[f.name] = prop
        if not may_be_absent(f):
            required.append(f.name)
    return {"description": (cls.__doc__ or "").strip().splitlines()[0], "type": "object",
            "properties": properties, "required": required, "additionalProperties": False}


def _type(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    if tp is Any:
        return {}
    if tp in _SIMPLE:
        return {"type": _SIMPLE[tp]}
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if tp.__name__ not in defs:
            defs[tp.__name__] = {}  # a placeholder first: a type may contain itself
            defs[tp.__name__] = _object(tp, defs)
        return {"$ref": f"#/$defs/{tp.__name__}"}
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (Union, types.UnionType):
        return {"anyOf": [_type(a, defs) for a in args]}
    if origin is list:
        return {"type": "array", "items": _type(args[0], defs)}
    if origin is dict and args[0] is str:
        return {"type": "object", "additionalProperties": _type(args[1], defs)}
    raise TypeError(f"no JSON Schema for {tp!r}")


def schemas() -> dict[str, dict[str, Any]]:
    """Every kind's schema, by file name."""
    return {f"{kind}.schema.json": json_schema(cls) for kind, cls in KINDS.items()}


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def write(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in schemas().items():
        (folder / name).write_text(render(schema), encoding="utf-8")
        written.append(folder / name)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    for path in write(Path(args[0] if args else "docs/schema")):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
