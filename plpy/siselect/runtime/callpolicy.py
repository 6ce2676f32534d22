"""Which functions, operators and types a query sent by siselect may reach.

A read-only transaction still lets a query call functions with effects that a rollback
does not undo (locks, signals, files, other sessions). The rule comes from the catalog,
not from a list: every overload a called name can resolve to must live in
``pg_catalog`` and must not be volatile. An administrator can trust more names by
inserting them into ``siselect.allowed_names``; siselect's own functions and the
names of :mod:`.blocklist` are never callable, whatever that table says.
"""

from collections.abc import Callable, Iterable, Sequence

from siselect.runtime.blocklist import forbidden_function
from siselect.runtime.errors import NotASelect
from siselect.runtime.pgcheck import Name, Statement

CATALOG = "pg_catalog"
NEVER_SCHEMAS = frozenset({"siselect", "siselect_tap"})

# Every overload with one of the names, wherever it lives: which of them a name can reach
# is decided in Python, from the schemas the query resolves names in.
_FUNCTIONS_SQL = """
SELECT n.nspname::text, p.proname::text, p.provolatile::text, p.pronargs::int
FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
WHERE p.proname = ANY ($1::text[])
"""
_OPERATORS_SQL = """
SELECT n.nspname::text, o.oprname::text, p.provolatile::text, pn.nspname::text AS code_nspname
FROM pg_catalog.pg_operator o
JOIN pg_catalog.pg_namespace n ON n.oid = o.oprnamespace
JOIN pg_catalog.pg_proc p ON p.oid = o.oprcode
JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
WHERE o.oprname = ANY ($1::text[])
"""
_TYPES_SQL = """
SELECT n.nspname::text, t.typname::text
FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
WHERE t.typname = ANY ($1::text[])
"""
_ALLOWED_SQL = """
SELECT schema_name::text, name::text FROM siselect.allowed_names
WHERE pg_catalog.to_regclass('siselect.allowed_names') IS NOT NULL
"""
_HAS_ALLOWED_SQL = "SELECT pg_catalog.to_regclass('siselect.allowed_names') IS NOT NULL"

Query = Callable[[str, Sequence[object]], list[tuple]]


class CallPolicy:
    """Checks statements against the catalog; lookups are cached for the call's life.

    ``query`` runs siselect's own catalog queries (trusted text, values as parameters);
    ``schemas`` are the schemas the checked statements resolve unqualified names in
    (``current_schemas(true)`` on the caller's path: pg_catalog and pg_temp included).
    """

    def __init__(self, query: Query, schemas: Iterable[str]):
        self._query = query
        self._reach = {CATALOG, *schemas}
        self._functions: dict[str, list[tuple]] = {}
        self._operators: dict[str, list[tuple]] = {}
        self._types: dict[str, list[tuple]] = {}
        self._allowed: frozenset[tuple[str, str]] | None = None
        # What passed in this call: every text of one shape asks again (one query on many D's).
        self._passed: set[tuple] = set()

    def check(self, statement: Statement, allow: frozenset[Name] = frozenset()) -> None:
        """Raise :class:`NotASelect` (SQLSTATE 42501) for the first name not allowed.

        ``allow`` names what siselect itself added to a query (the ProvSQL backend's
        calls); the candidate's own text was checked without it.
        """
        key = (statement.functions, statement.fields, statement.operators, statement.types,
               allow)
        if key in self._passed:
            return
        called = {n for _, n in statement.functions}
        fields = statement.fields - called
        self._prefetch(self._functions, _FUNCTIONS_SQL, called | fields)
        self._prefetch(self._operators, _OPERATORS_SQL, {n for _, n in statement.operators})
        self._prefetch(self._types, _TYPES_SQL, {n for _, n in statement.types})
        for schema, name in sorted(statement.functions, key=str):
            if (schema, name) in allow:
                continue
            if forbidden_function(name):
                raise NotASelect(
                    f"the function {name}() has effects a read-only query must not have",
                    "25006",
                )
            self._check_function(schema, name)
        for field in sorted(fields):
            self._check_function(None, field, one_argument=True)
        for schema, name in sorted(statement.operators, key=str):
            self._check_operator(schema, name)
        for schema, name in sorted(statement.types, key=str):
            self._check_type(schema, name)
        self._passed.add(key)

    def _schemas(self, schema: str | None) -> set[str]:
        return {schema} if schema else self._reach

    def _allowed_names(self) -> frozenset[tuple[str, str]]:
        if self._allowed is None:
            present = self._query(_HAS_ALLOWED_SQL, ())
            rows = self._query(_ALLOWED_SQL, ()) if present and present[0][0] else []
            self._allowed = frozenset((s, n) for s, n in rows)
        return self._allowed

    def _refuse(self, what: str, allowable: bool = True) -> NotASelect:
        if not allowable:
            return NotASelect(what, "42501")
        return NotASelect(
            f"{what}; candidate queries may call only pg_catalog's functions that are not "
            "volatile",
            "42501",
            "An administrator can allow a name: INSERT INTO siselect.allowed_names "
            "(schema_name, name) VALUES (...).",
        )

    def _prefetch(self, cache: dict[str, list], sql: str, names: set[str]) -> None:
        """One catalog query for every name not seen yet in this call."""
        missing = sorted(names - cache.keys())
        if not missing:
            return
        for name in missing:
            cache[name] = []
        for row in self._query(sql, (missing,)):
            cache[row[1]].append(row)

    def _check_function(self, schema: str | None, name: str, one_argument: bool = False) -> None:
        reach = self._schemas(schema)
        for nsp, proname, volatility, nargs in self._functions[name]:
            if nsp not in reach or (one_argument and nargs != 1):
                continue
            label = f"{nsp}.{proname}()"
            if nsp in NEVER_SCHEMAS:
                raise self._refuse(
                    f"siselect's own function {label} cannot be called by a query", False
                )
            if (nsp, proname) in self._allowed_names():
                continue
            if nsp != CATALOG:
                raise self._refuse(f"the function {label} is outside pg_catalog")
            if volatility == "v":
                raise self._refuse(f"the function {label} is volatile")

    def _check_operator(self, schema: str | None, name: str) -> None:
        reach = self._schemas(schema)
        for nsp, oprname, volatility, code_nsp in self._operators[name]:
            if nsp not in reach or (nsp, oprname) in self._allowed_names():
                continue
            if nsp != CATALOG or code_nsp != CATALOG or volatility == "v":
                raise self._refuse(f"the operator {nsp}.{oprname} is not a pg_catalog operator")

    def _check_type(self, schema: str | None, name: str) -> None:
        found = {nsp for (nsp, _) in self._types[name]}
        for nsp in sorted(found & self._schemas(schema)):
            if nsp != CATALOG and (nsp, name) not in self._allowed_names():
                raise self._refuse(f"casts to the type {nsp}.{name} are not accepted")
