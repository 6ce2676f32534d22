"""What SQLite would make of an expression: its storage class and its affinity.

The rules need both: the storage class decides how values compare and divide, the
affinity (columns and CASTs have one, other expressions none) decides which conversions
SQLite applies before comparing (datatype3.html, section 4.2). Column types come from
the catalog, i.e. the PostgreSQL types the loader chose: bigint, double precision, text,
bytea. ``None`` means unknown; rules then leave the expression alone.
"""

from dataclasses import dataclass

from sqlglot import exp

from siselect.runtime.catalog import Catalog

INTEGER, REAL, NUMBER, TEXT, BLOB, BOOLEAN, NULL = (
    "integer", "real", "number", "text", "blob", "boolean", "null")
NUMERIC_KINDS = (INTEGER, REAL, NUMBER, BOOLEAN)

_PG_KINDS = {
    "bigint": (INTEGER, "INTEGER"), "integer": (INTEGER, "INTEGER"),
    "smallint": (INTEGER, "INTEGER"), "double precision": (REAL, "REAL"),
    "real": (REAL, "REAL"), "numeric": (NUMBER, "NUMERIC"), "text": (TEXT, "TEXT"),
    "bytea": (BLOB, "BLOB"), "boolean": (BOOLEAN, None),
}


@dataclass(frozen=True)
class SqliteType:
    kind: str | None  # one of the storage classes above, None when unknown
    affinity: str | None = None  # INTEGER, REAL, NUMERIC, TEXT, BLOB, or None

    @property
    def numeric(self) -> bool:
        return self.kind in NUMERIC_KINDS

    @property
    def text(self) -> bool:
        return self.kind == TEXT


UNKNOWN = SqliteType(None)


def pg_kind(pg_type: str) -> SqliteType:
    """The SQLite view of a loaded column's PostgreSQL type."""
    base = pg_type.split("(")[0].strip().lower()
    if base.startswith(("character", "varchar")):
        base = "text"
    kind, affinity = _PG_KINDS.get(base, (None, None))
    return SqliteType(kind, affinity)


def _cast_type(to: exp.DataType) -> SqliteType:
    t = to.this
    D = exp.DataType.Type
    if t in (D.INT, D.BIGINT, D.SMALLINT, D.TINYINT):
        return SqliteType(INTEGER, "INTEGER")
    if t in (D.DOUBLE, D.FLOAT):
        return SqliteType(REAL, "REAL")
    if t in (D.DECIMAL,):
        return SqliteType(NUMBER, "NUMERIC")
    if t in (D.TEXT, D.VARCHAR, D.CHAR, D.NVARCHAR, D.NCHAR):
        return SqliteType(TEXT, "TEXT")
    if t in (D.BOOLEAN,):
        return SqliteType(BOOLEAN)
    if t in (D.VARBINARY, D.BINARY):
        return SqliteType(BLOB, "BLOB")
    return UNKNOWN


def _arith(a: SqliteType, b: SqliteType) -> SqliteType:
    if a.kind == NULL or b.kind == NULL:
        return SqliteType(NULL)
    kinds = {a.kind, b.kind}
    if None in kinds:
        return SqliteType(NUMBER)
    if kinds <= {INTEGER, BOOLEAN}:
        return SqliteType(INTEGER)
    if REAL in kinds:
        return SqliteType(REAL)
    return SqliteType(NUMBER)


def common(types: list[SqliteType]) -> SqliteType:
    """The storage class shared by several branches (CASE, COALESCE), or unknown."""
    kinds = {t.kind for t in types} - {NULL}
    if not kinds:
        return SqliteType(NULL)
    if len(kinds) == 1:
        return SqliteType(kinds.pop())
    if kinds <= {INTEGER, BOOLEAN}:
        return SqliteType(INTEGER)
    if kinds <= set(NUMERIC_KINDS):
        return SqliteType(NUMBER)
    return UNKNOWN


_TEXT_RESULT = (exp.Upper, exp.Lower, exp.Substring, exp.Trim, exp.Replace, exp.DPipe,
                exp.Concat, exp.GroupConcat, exp.TimeToStr, exp.Chr, exp.Hex, exp.Typeof,
                exp.Pad, exp.Initcap, exp.Left, exp.Right)
_INTEGER_RESULT = (exp.Count, exp.Length, exp.StrPosition, exp.Unicode, exp.Sign, exp.Ascii)
_REAL_RESULT = (exp.Avg, exp.Round, exp.Sqrt, exp.Log, exp.Ln, exp.Pow, exp.Exp, exp.Rand)
_SAME_AS_ARG = (exp.Abs, exp.Min, exp.Max, exp.Neg, exp.Paren, exp.Nullif, exp.Ceil,
                exp.Floor)
_BOOLEAN_RESULT = (exp.Predicate, exp.Connector, exp.Not, exp.Exists, exp.Boolean,
                   exp.Escape)
_TEXT_FUNCTIONS = {"DATE", "DATETIME", "TIME", "STRFTIME", "PRINTF", "FORMAT", "QUOTE",
                   "TO_CHAR", "CONCAT_WS"}
_REAL_FUNCTIONS = {"JULIANDAY", "TOTAL"}


class Typer:
    """Types of expressions of one query tree, resolving columns through their sources."""

    def __init__(self, catalog: Catalog | None):
        self.catalog = catalog
        # Columns being resolved: an unqualified column that its own FROM does not know
        # (no catalog, or a table outside it) is looked for in the enclosing query, whose
        # derived table may be the one it belongs to, and so on for ever.
        self._resolving: set[int] = set()

    def __call__(self, node: exp.Expr | None) -> SqliteType:
        return self.type_of(node)

    def type_of(self, node: exp.Expr | None) -> SqliteType:
        """The SQLite storage class and affinity of ``node``."""
        if node is None:
            return UNKNOWN
        if isinstance(node, exp.Literal):
            if node.is_string:
                return SqliteType(TEXT)
            return SqliteType(REAL if any(c in node.this for c in ".eE") else INTEGER)
        if isinstance(node, exp.Null):
            return SqliteType(NULL)
        if isinstance(node, exp.Column):
            return self.column(node)
        if isinstance(node, exp.Cast):
            return _cast_type(node.to)
        if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)):
            kind = _arith(self.type_of(node.left), self.type_of(node.right))
            return kind if not isinstance(node, exp.Mod) or kind.kind != NUMBER else kind
        if isinstance(node, _BOOLEAN_RESULT):
            return SqliteType(BOOLEAN)
        if isinstance(node, exp.Sum):
            arg = self.type_of(node.this)
            return SqliteType(INTEGER if arg.kind in (INTEGER, BOOLEAN) else
                              REAL if arg.kind == REAL else NUMBER)
        if isinstance(node, _TEXT_RESULT):
            return SqliteType(TEXT)
        if isinstance(node, _INTEGER_RESULT):
            return SqliteType(INTEGER)
        if isinstance(node, _REAL_RESULT):
            return SqliteType(REAL)
        if isinstance(node, _SAME_AS_ARG):
            inner = self.type_of(node.this)
            return SqliteType(inner.kind, inner.affinity if isinstance(node, exp.Paren) else None)
        if isinstance(node, (exp.Coalesce, exp.Greatest, exp.Least)):
            return common([self.type_of(node.this)] + [self.type_of(e) for e in node.expressions])
        if isinstance(node, exp.Case):
            branches = [i.args.get("true") for i in node.args.get("ifs") or []]
            return common([self.type_of(b) for b in branches + [node.args.get("default")]
                           if b is not None])
        if isinstance(node, exp.If):
            return common([self.type_of(node.args.get("true")),
                           self.type_of(node.args.get("false"))])
        if isinstance(node, exp.Subquery):
            return self.type_of(node.this)
        if isinstance(node, exp.Query):
            return self.projection(node, 0)
        if isinstance(node, exp.Bracket):
            agg = node.this.unnest() if isinstance(node.this, exp.Paren) else node.this
            if isinstance(agg, exp.ArrayAgg):
                arg = agg.this.this if isinstance(agg.this, exp.Order) else agg.this
                return SqliteType(self.type_of(arg).kind)
            return UNKNOWN
        if isinstance(node, exp.Anonymous):
            name = node.name.upper()
            if name in _TEXT_FUNCTIONS:
                return SqliteType(TEXT)
            if name in _REAL_FUNCTIONS:
                return SqliteType(REAL)
        if isinstance(node, exp.Extract):
            return SqliteType(REAL)
        return UNKNOWN

    def projection(self, query: exp.Expr, index: int | str) -> SqliteType:
        """The type of a query's output column, by position or by name."""
        while isinstance(query, (exp.Subquery, exp.Paren)):
            query = query.this
        if isinstance(query, exp.SetOperation):
            return self.projection(query.left, index)
        if not isinstance(query, exp.Select):
            return UNKNOWN
        projections = query.expressions
        if isinstance(index, int):
            chosen = projections[index] if index < len(projections) else None
        else:
            lowered = index.lower()
            chosen = next((p for p in projections if p.alias_or_name.lower() == lowered), None)
            if chosen is None and any(isinstance(p, exp.Star) or
                                      (isinstance(p, exp.Column) and p.is_star)
                                      for p in projections):
                return self.unqualified(query, index)
        if chosen is None:
            return UNKNOWN
        return self.type_of(chosen.unalias())

    def column(self, column: exp.Column) -> SqliteType:
        """Resolve a column reference through the FROM clauses around it."""
        if column.is_star or id(column) in self._resolving:
            return UNKNOWN
        self._resolving.add(id(column))
        try:
            return self._resolved(column)
        finally:
            self._resolving.discard(id(column))

    def _resolved(self, column: exp.Column) -> SqliteType:
        select = column.find_ancestor(exp.Select)
        while select is not None:
            if column.table:
                source = _source(select, column.table)
                if source is not None:
                    return self.from_source(source, column.name)
            else:
                found = self.unqualified(select, column.name)
                if found.kind is not None:
                    return found
            select = select.find_ancestor(exp.Select)
        return UNKNOWN

    def unqualified(self, select: exp.Select, name: str) -> SqliteType:
        for source in _sources(select).values():
            found = self.from_source(source, name)
            if found.kind is not None:
                return found
        return UNKNOWN

    def from_source(self, source: exp.Expr, name: str) -> SqliteType:
        if isinstance(source, exp.Table):
            table = self.catalog.table(source.name) if self.catalog else None
            col = table.column(name) if table else None
            if col is None:
                return UNKNOWN
            loaded = pg_kind(col.type)
            return SqliteType(loaded.kind, col.affinity) if col.affinity else loaded
        if isinstance(source, exp.CTE):
            return self.from_alias_columns(source, source.this, name)
        if isinstance(source, exp.Subquery):
            return self.from_alias_columns(source, source.this, name)
        return UNKNOWN

    def from_alias_columns(self, holder: exp.Expr, query: exp.Expr,
                           name: str) -> SqliteType:
        alias = holder.args.get("alias")
        columns = alias.columns if isinstance(alias, exp.TableAlias) else []
        names = [c.name.lower() for c in columns]
        if name.lower() in names:
            return self.projection(query, names.index(name.lower()))
        return self.projection(query, name)


def _sources(select: exp.Select) -> dict[str, exp.Expr]:
    """Alias (lower case) -> Table, Subquery or CTE for the FROM and JOINs of ``select``."""
    found: dict[str, exp.Expr] = {}
    from_ = select.args.get("from_")
    items = ([from_.this] if from_ is not None else []) + [
        j.this for j in select.args.get("joins") or []]
    for item in items:
        if isinstance(item, exp.Table):
            cte = _cte(select, item.name) if not item.db else None
            found[item.alias_or_name.lower()] = cte if cte is not None else item
        elif isinstance(item, exp.Subquery):
            found[item.alias_or_name.lower()] = item
    return found


def _source(select: exp.Select, alias: str) -> exp.Expr | None:
    return _sources(select).get(alias.lower())


def _cte(node: exp.Expr, name: str) -> exp.CTE | None:
    lowered = name.lower()
    scope: exp.Expr | None = node
    while scope is not None:
        with_ = scope.args.get("with_")
        if with_ is not None:
            for cte in with_.expressions:
                if cte.alias_or_name.lower() == lowered:
                    return cte
        scope = scope.parent
    return None
