"""Random SQLite queries over a database's catalog, for differential testing.

Queries join tables along foreign keys and mix what trips a SQLite-to-PostgreSQL
translation: LIKE/GLOB in any case, comparisons across text and numbers, integer
division, aggregates over predicates, bare columns beside MIN/MAX, DISTINCT with ORDER BY
on other columns, ORDER BY ... LIMIT, subqueries, date functions, CAST of text, || and
IIF/IFNULL with mixed types, truth tests (IS [NOT] TRUE, FALSE), identifiers in random
case. Literals are drawn from sampled values of the data so that predicates select
something. Deterministic for a seed.
"""

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from siselect.runtime.catalog import Catalog, Table
from siselect.runtime.executor import quote_literal

NUMERIC_TYPES = ("bigint", "double precision")


@dataclass
class Source:
    """A table in the FROM clause, with its alias."""

    table: Table
    alias: str


@dataclass
class Scope:
    sources: list[Source] = field(default_factory=list)
    joins: list[str] = field(default_factory=list)


class QueryGenerator:
    """Generates SQLite query text; ``samples[(table, column)]`` holds values seen there."""

    def __init__(self, catalog: Catalog, samples: Mapping[tuple[str, str], Sequence],
                 seed: int = 0):
        self.catalog = catalog
        self.samples = samples
        self.rng = random.Random(seed)

    def query(self) -> str:
        """One random SELECT."""
        shape = self.rng.choice([self.plain, self.plain, self.aggregate, self.aggregate,
                                 self.bare_extreme, self.distinct_ordered, self.top_n,
                                 self.union])
        return shape()

    # --- query shapes -------------------------------------------------------------------

    def plain(self) -> str:
        scope = self.scope()
        items = ", ".join(self.value(scope) for _ in range(self.rng.randint(1, 3)))
        return f"SELECT {items} {self.from_(scope)}{self.where(scope)}"

    def aggregate(self) -> str:
        scope = self.scope()
        key = self.column(scope)
        aggs = ", ".join(self.aggregate_value(scope) for _ in range(self.rng.randint(1, 3)))
        having = f" HAVING COUNT(*) > {self.rng.randint(0, 3)}" if self.rng.random() < 0.3 else ""
        if self.rng.random() < 0.3:
            return f"SELECT {aggs} {self.from_(scope)}{self.where(scope)}"
        return (f"SELECT {key}, {aggs} {self.from_(scope)}{self.where(scope)} "
                f"GROUP BY {key}{having}")

    def bare_extreme(self) -> str:
        scope = self.scope()
        bare = self.column(scope)
        fn = self.rng.choice(["MIN", "MAX"])
        target = self.column(scope, numeric=True)
        group = f" GROUP BY {self.column(scope)}" if self.rng.random() < 0.5 else ""
        return f"SELECT {bare}, {fn}({target}) {self.from_(scope)}{self.where(scope)}{group}"

    def distinct_ordered(self) -> str:
        scope = self.scope()
        shown = self.column(scope)
        key = self.column(scope)
        direction = self.rng.choice(["ASC", "DESC"])
        limit = f" LIMIT {self.rng.randint(1, 5)}" if self.rng.random() < 0.5 else ""
        return (f"SELECT DISTINCT {shown} {self.from_(scope)}{self.where(scope)} "
                f"ORDER BY {key} {direction}{limit}")

    def top_n(self) -> str:
        scope = self.scope()
        shown = ", ".join(self.column(scope) for _ in range(self.rng.randint(1, 2)))
        keys = ", ".join(f"{self.column(scope)} {self.rng.choice(['ASC', 'DESC'])}"
                         for _ in range(self.rng.randint(1, 2)))
        limit = self.rng.randint(1, 5)
        offset = f" OFFSET {self.rng.randint(1, 3)}" if self.rng.random() < 0.2 else ""
        return (f"SELECT {shown} {self.from_(scope)}{self.where(scope)} ORDER BY {keys} "
                f"LIMIT {limit}{offset}")

    def union(self) -> str:
        first, second = self.scope(), self.scope()
        op = self.rng.choice(["UNION", "UNION ALL", "EXCEPT", "INTERSECT"])
        return (f"SELECT {self.column(first)} {self.from_(first)}{self.where(first)} {op} "
                f"SELECT {self.column(second)} {self.from_(second)}{self.where(second)}")

    # --- FROM and WHERE -----------------------------------------------------------------

    def scope(self) -> Scope:
        tables = [t for t in self.catalog.tables.values() if t.columns]
        start = self.rng.choice(tables)
        scope = Scope([Source(start, self.alias(0))])
        for n in range(self.rng.choice([0, 0, 1, 1, 2])):
            self.join(scope, n + 1)
        return scope

    def alias(self, n: int) -> str:
        return self.rng.choice(["T", "t"]) + str(n + 1)

    def join(self, scope: Scope, n: int) -> None:
        """Follow a foreign key from or to a table already in the scope."""
        options = []
        for source in scope.sources:
            for fk in source.table.foreign_keys:
                options.append((source, fk.columns[0], fk.ref_table, fk.ref_columns[0]))
            for other in self.catalog.tables.values():
                for fk in other.foreign_keys:
                    if fk.ref_table == source.table.name:
                        options.append((source, fk.ref_columns[0], other.name, fk.columns[0]))
        if not options:
            return
        source, local, ref, remote = self.rng.choice(options)
        table = self.catalog.tables[ref]
        alias = self.alias(n)
        kind = self.rng.choice(["JOIN", "INNER JOIN", "LEFT JOIN"])
        scope.joins.append(f"{kind} {self.name(table.name)} AS {alias} ON "
                           f"{source.alias}.{self.name(local)} = {alias}.{self.name(remote)}")
        scope.sources.append(Source(table, alias))

    def from_(self, scope: Scope) -> str:
        first = scope.sources[0]
        text = f"FROM {self.name(first.table.name)} AS {first.alias}"
        return " ".join([text, *scope.joins])

    def where(self, scope: Scope) -> str:
        count = self.rng.choice([0, 1, 1, 2, 3])
        if not count:
            return ""
        parts = [self.predicate(scope) for _ in range(count)]
        text = parts[0]
        for part in parts[1:]:
            text = f"{text} {self.rng.choice(['AND', 'AND', 'OR'])} {part}"
        return f" WHERE {text}"

    def predicate(self, scope: Scope) -> str:
        choice = self.rng.randrange(11)
        if choice == 10:  # a truth test: TRUE and FALSE are keywords here, not 1 and 0
            return (f"({self.predicate(scope)}) IS {self.rng.choice(['', 'NOT '])}"
                    f"{self.rng.choice(['TRUE', 'FALSE'])}")
        if choice == 0:
            col = self.column(scope, text=True)
            neg = "NOT " if self.rng.random() < 0.3 else ""
            return f"{col} {neg}LIKE {quote_literal(self.pattern(scope, col))}"
        if choice == 1:
            col = self.column(scope, text=True)
            return f"{col} GLOB {quote_literal(self.glob(scope, col))}"
        if choice == 2:
            col = self.column(scope, numeric=True)
            low, high = sorted([self.number_literal(scope, col), self.number_literal(scope, col)],
                               key=lambda v: float(v.strip("'")))
            return f"{col} BETWEEN {low} AND {high}"
        if choice == 3:
            col = self.column(scope)
            values = ", ".join(self.literal(scope, col, mixed=True) for _ in range(3))
            return f"{col} {self.rng.choice(['IN', 'NOT IN'])} ({values})"
        if choice == 4:
            return f"{self.column(scope)} IS {self.rng.choice(['', 'NOT '])}NULL"
        if choice == 5:
            return self.subquery_predicate(scope)
        if choice == 6:
            left, right = self.column(scope, text=True), self.column(scope, numeric=True)
            return f"{left} {self.comparison()} {right}"
        col = self.column(scope)
        return f"{col} {self.comparison()} {self.literal(scope, col, mixed=True)}"

    def subquery_predicate(self, scope: Scope) -> str:
        col = self.column(scope, numeric=True)
        sub = self.scope()
        inner = self.column(sub, numeric=True)
        kind = self.rng.randrange(3)
        if kind == 0:
            return f"{col} IN (SELECT {inner} {self.from_(sub)}{self.where(sub)})"
        if kind == 1:
            return f"{col} > (SELECT AVG({inner}) {self.from_(sub)})"
        return f"EXISTS (SELECT 1 {self.from_(sub)}{self.where(sub)})"

    # --- values -------------------------------------------------------------------------

    def value(self, scope: Scope) -> str:
        num = self.column(scope, numeric=True)
        num2 = self.column(scope, numeric=True)
        text = self.column(scope, text=True)
        return self.rng.choice([
            num, text, f"{num} / {num2}", f"{num} * 1.0 / {num2}", f"{num} % 7",
            f"{num} / 3.0", f"{text} || {num}", f"{text} || '-' || {num} / 4.0",
            f"CAST({text} AS INTEGER)", f"CAST({text} AS REAL)", f"CAST({num} / 2.0 AS TEXT)",
            f"CAST({num} / 3.0 AS INTEGER)", f"SUBSTR({text}, -3)", f"SUBSTR({text}, 2, 3)",
            f"LENGTH({num})", f"UPPER({text})", f"IIF({num} > {num2}, 'yes', 0)",
            f"IFNULL({text}, 0)", f"{num} > {num2}", f"{text} = {num}",
            f"ROUND({num} / 7.0, 2)", f"ABS({text})", f"{text} + 1", f"{num} + {num2} / 2",
            f"INSTR({text}, 'a')", f"REPLACE({text}, 'a', 'A')", f"MAX({num}, {num2})",
            f"DATE(2451545 + {num} % 4000)", f"STRFTIME('%Y-%m %j %W %w', 2451545 + {num})",
            f"JULIANDAY(DATE(2451545 + {num} % 1000, '+1 month')) - 2451545",
            f"STRFTIME('%d/%m', DATE('2012-01-31', '+' || ({num} % 40) || ' days'))",
            f"{text} LIKE '%A%'", f"COALESCE({num}, {text})", f"TRIM({text})",
            f"({num} > {num2}) IS TRUE", f"({text} = {num}) IS NOT FALSE",
        ])

    def aggregate_value(self, scope: Scope) -> str:
        num = self.column(scope, numeric=True)
        text = self.column(scope, text=True)
        return self.rng.choice([
            "COUNT(*)", f"COUNT(DISTINCT {text})", f"SUM({num})", f"AVG({num})",
            f"MIN({text})", f"MAX({num})", f"SUM({num}) / COUNT(*)",
            f"SUM({num} > {self.number_literal(scope, num)})", f"TOTAL({num})",
            f"SUM({text})", f"AVG({text})", f"CAST(SUM({num}) AS REAL) / COUNT(*)",
            f"SUM(IIF({text} LIKE '%e%', 1, 0))", f"MAX({text})", f"COUNT({num})",
            f"ROUND(AVG({num}), 1)", f"100 * SUM({num} IS NULL) / COUNT(*)",
        ])

    def column(self, scope: Scope, numeric: bool = False, text: bool = False) -> str:
        # SQLite's own columns: the loader's column for the implicit rowid is not one
        choices = [(s, c) for s in scope.sources for c in s.table.columns
                   if c.name != s.table.rowid
                   and (not numeric or c.type in NUMERIC_TYPES) and (not text or c.type == "text")]
        if not choices:
            return self.rng.choice(["1", "2.5"]) if numeric else quote_literal("x")
        source, col = self.rng.choice(choices)
        return f"{source.alias}.{self.name(col.name)}"

    def name(self, name: str) -> str:
        """The identifier in a random case, quoted when it needs quotes."""
        spelled = self.rng.choice([name, name.upper(), name.lower(), name.capitalize()])
        return spelled if spelled.replace("_", "a").isalnum() else f"`{spelled}`"

    def comparison(self) -> str:
        return self.rng.choice(["=", "<>", "<", ">", "<=", ">="])

    def sample(self, scope: Scope, column: str) -> object:
        alias, _, name = column.partition(".")
        source = next((s for s in scope.sources if s.alias == alias), None)
        if source is None:
            return None
        col = source.table.column(name.strip("`"))
        values = self.samples.get((source.table.name, col.name if col else ""), [])
        return self.rng.choice(list(values)) if values else None

    def literal(self, scope: Scope, column: str, mixed: bool = False) -> str:
        """A value seen in the column, sometimes in the other type (5 vs '5')."""
        value = self.sample(scope, column)
        if value is None:
            return self.rng.choice(["NULL", "0", "'a'"])
        if isinstance(value, str):
            return quote_literal(value)
        if mixed and self.rng.random() < 0.4:
            return quote_literal(str(value))
        return str(value)

    def number_literal(self, scope: Scope, column: str) -> str:
        value = self.sample(scope, column)
        return str(value) if isinstance(value, int | float) else str(self.rng.randint(0, 100))

    def pattern(self, scope: Scope, column: str) -> str:
        value = self.sample(scope, column)
        word = value if isinstance(value, str) and value else "a"
        start = self.rng.randrange(len(word))
        piece = word[start:start + self.rng.randint(1, 3)]
        piece = self.rng.choice([piece, piece.upper(), piece.lower()])
        return self.rng.choice([f"%{piece}%", f"{piece}%", f"%{piece}", f"_{piece}%"])

    def glob(self, scope: Scope, column: str) -> str:
        value = self.sample(scope, column)
        word = value if isinstance(value, str) and value else "a"
        head = word[:self.rng.randint(1, 2)]
        return self.rng.choice([f"{head}*", f"*{word[-1:]}", "[A-M]*", f"?{word[1:2]}*"])


def sample_values(db, catalog: Catalog, per_column: int = 12) -> dict[tuple[str, str], list]:
    """A few distinct values of each column, read from a SQLite connection."""
    found: dict[tuple[str, str], list] = {}
    for table in catalog.tables.values():
        for col in table.columns:
            rows = db.execute(f'SELECT DISTINCT "{col.name}" FROM "{table.name}" '
                              f'WHERE "{col.name}" IS NOT NULL LIMIT {per_column * 4}').fetchall()
            values = [r[0] for r in rows if not isinstance(r[0], bytes)]
            found[(table.name, col.name)] = values[::max(1, len(values) // per_column)]
    return found
