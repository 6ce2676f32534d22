"""SQLite column types to PostgreSQL types, decided by declared affinity and stored values.

SQLite stores any value in any column; a faithful load picks, per column, the narrowest
PostgreSQL type that holds every stored value unchanged. Integers load as ``bigint``
(BIRD multiplies integer columns past 2^31).
"""


def affinity(declared: str) -> str:
    """SQLite's affinity rules (datatype3.html, section 3.1), in their order."""
    d = (declared or "").upper()
    if "INT" in d:
        return "INTEGER"
    if any(k in d for k in ("CHAR", "CLOB", "TEXT")):
        return "TEXT"
    if "BLOB" in d or not d:
        return "BLOB"
    if any(k in d for k in ("REAL", "FLOA", "DOUB")):
        return "REAL"
    return "NUMERIC"


def pg_type(declared: str, stored: set[str]) -> str:
    """The PostgreSQL type for a column; ``stored`` holds SQLite ``typeof()`` names."""
    kinds = stored - {"null"}
    aff = affinity(declared)
    if aff == "TEXT":
        return (
            "text"
            if kinds <= {"text", "integer", "real"}
            else "bytea"
            if kinds == {"blob"}
            else "text"
        )
    if kinds == {"blob"}:
        return "bytea"
    if "text" in kinds or "blob" in kinds:
        return "text"
    if kinds <= {"integer"}:
        return "double precision" if aff == "REAL" else "bigint"
    return "double precision"
