"""Entry points callable from the extension's SQL functions (registered on import)."""

from typing import Any

from .server import PlpyExecutor, register
from .transpile import to_postgres


@register("transpile")
def transpile(plpy: Any, sql: str, dialect: str) -> str:
    return to_postgres(sql, dialect)


__all__ = ["PlpyExecutor"]
