"""Names the way SQLite resolves them, written out as PostgreSQL must read them.

SQLite matches every name (quoted or not) case-insensitively; PostgreSQL folds unquoted
names to lower case and matches quoted ones exactly. So each name is resolved here by
SQLite's rules (docs/identifiers.md, with an example for each) and written quoted, in the
spelling of its definition: the catalogued name of a table or column, the declared name of
an alias, CTE or derived-table column. What SQLite decides and PostgreSQL would decide
otherwise is made explicit:

- a column reference is qualified with its source (PostgreSQL's own resolution of a bare
  name is never relied on), the columns merged by USING/NATURAL with the left source;
- an output alias used in ON, WHERE, GROUP BY, HAVING or an ORDER BY expression (SQLite
  allows it there when no source column has the name) becomes a copy of its expression;
- an ORDER BY term that is just an output alias names that output, even when a source
  column has the same name (it becomes the alias, or the output's position);
- the columns of a derived table or CTE are those SQLite gives it (its column list, the
  aliases, the catalogued names of plain columns, ``name:N`` for repeated names);
- a double-quoted word that names nothing is a string literal, as SQLite reads it;
- ``rowid`` (``_rowid_``, ``oid``) is the INTEGER PRIMARY KEY, or the column where the
  loader kept SQLite's implicit rowid, which ``*`` and ``t.*`` (then written as column
  lists) and NATURAL/USING never show.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from siselect.runtime.catalog import Catalog, Table
from siselect.runtime.errors import SiselectError
from siselect.sqltext.sqlite_rules.aggregate_scope import is_aggregate
from siselect.sqltext.sqlite_rules.walk import parenthesized


def resolve_identifiers(tree: exp.Expr, catalog: Catalog | None) -> exp.Expr:
    """Every name resolved by SQLite's rules and written quoted in its defined spelling."""
    _Resolver(catalog).query(tree, None, {})
    return tree


@dataclass
class _Source:
    """A FROM item as the names in its SELECT see it."""

    name: str  # what qualifies its columns in the PostgreSQL text
    columns: list[str] | None  # output spellings in order; None when unknown
    table: Table | None = None
    hidden: set[str] = field(default_factory=set)  # merged into a left source by USING

    def find(self, name: str) -> str | None:
        if self.columns is None:
            return None
        lowered = name.lower()
        return next((c for c in self.columns if c.lower() == lowered), None)


@dataclass
class _Frame:
    """One SELECT's names, seen from an expression of that SELECT or of a subquery in it."""

    sources: list[_Source]
    aliases: dict[str, exp.Expr] | None  # lower alias -> resolved expression, where visible
    outer: _Frame | None
    ctes: dict[str, _Source]

    def source(self, qualifier: str) -> _Source | None:
        lowered = qualifier.lower()
        return next((s for s in self.sources if s.name.lower() == lowered), None)


def _quoted(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


class _Resolver:
    def __init__(self, catalog: Catalog | None) -> None:
        self.catalog = catalog
        self.unnamed = 0
        # CTE bodies being resolved whose columns are not declared: a recursive member
        # reads the CTE with the columns of its anchor (the compound's first SELECT).
        self.anchored: dict[int, _Source] = {}

    # --- queries ------------------------------------------------------------------

    def query(self, node: exp.Expr, outer: _Frame | None,
              ctes: dict[str, _Source]) -> list[str] | None:
        """Resolve a query in place; the names of its output columns (None if unknown)."""
        if isinstance(node, exp.Subquery):
            return self.query(node.this, outer, ctes)
        ctes = self.with_(node, outer, ctes)
        if isinstance(node, exp.SetOperation):
            left = self.query(node.left, outer, ctes)
            recursive = self.anchored.get(id(node))
            if recursive is not None and recursive.columns is None:
                recursive.columns = left
            self.query(node.right, outer, ctes)
            self.compound_order(node)
            return left
        if isinstance(node, exp.Select):
            return self.select(node, outer, ctes)
        return None

    def with_(self, node: exp.Expr, outer: _Frame | None,
              ctes: dict[str, _Source]) -> dict[str, _Source]:
        with_ = node.args.get("with_")
        if with_ is None:
            return ctes
        ctes = dict(ctes)
        for cte in with_.expressions:
            alias = cte.args.get("alias")
            declared = [c.name for c in alias.columns] if isinstance(alias, exp.TableAlias) else []
            for ident in (alias.columns if isinstance(alias, exp.TableAlias) else []):
                ident.set("quoted", True)
            source = _Source(cte.alias, declared or None)
            # A recursive CTE reads itself: visible (columns as declared) while resolved.
            ctes[cte.alias.lower()] = source
            if not declared:
                self.anchored[id(cte.this)] = source
            names = self.query(cte.this, outer, ctes)
            self.anchored.pop(id(cte.this), None)
            if not declared:
                source.columns = names
            if isinstance(alias, exp.TableAlias) and isinstance(alias.this, exp.Identifier):
                alias.this.set("quoted", True)
        return ctes

    def select(self, select: exp.Select, outer: _Frame | None,
               ctes: dict[str, _Source]) -> list[str] | None:
        from_ = select.args.get("from_")
        joins = select.args.get("joins") or []
        items = ([from_.this] if from_ is not None else []) + [j.this for j in joins]
        # A derived table sees the enclosing queries, never its sibling FROM items.
        sources = [self.from_item(item, outer, ctes) for item in items]
        merged = any([self.join_columns(join, sources[:i + 1], sources[i + 1])
                     for i, join in enumerate(joins)])
        self.expand_stars(select, sources, merged)
        frame = _Frame(sources, None, outer, ctes)
        for projection in select.expressions:
            self.expression(projection, frame)
        aliases: dict[str, exp.Expr] = {}
        for projection in select.expressions:
            if isinstance(projection, exp.Alias):
                aliases.setdefault(projection.alias.lower(), projection.this)
                projection.args["alias"].set("quoted", True)
        with_aliases = _Frame(sources, aliases, outer, ctes)
        for join in joins:
            if join.args.get("on") is not None:
                self.expression(join.args["on"], with_aliases)
        for key in ("where", "group", "having", "qualify"):
            part = select.args.get(key)
            if part is not None:
                self.expression(part, with_aliases)
        self.name_outputs(select)
        self.order(select, with_aliases)
        return self.output_names(select, sources)

    def from_item(self, item: exp.Expr, outer: _Frame | None,
                  ctes: dict[str, _Source]) -> _Source:
        alias = item.args.get("alias")
        if isinstance(alias, exp.TableAlias) and isinstance(alias.this, exp.Identifier):
            alias.this.set("quoted", True)
        if isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier):
            return self.table(item, ctes)
        if isinstance(item, exp.Subquery):
            names = self.query(item.this, outer, ctes)
            if item.args.get("alias") is None:
                # SQLite lets a subquery in FROM go unnamed; PostgreSQL 15 does not.
                item.set("alias", exp.TableAlias(this=_quoted(f"_subquery{self.unnamed}")))
                self.unnamed += 1
            return _Source(item.alias, names)
        return _Source(item.alias_or_name, None)  # a table function, VALUES: not resolved

    def table(self, table: exp.Table, ctes: dict[str, _Source]) -> _Source:
        if table.db.lower() in ("main", "temp", ""):
            cte = ctes.get(table.name.lower()) if not table.db else None
            if cte is not None:
                table.set("this", _quoted(cte.name))
                return _Source(table.alias or cte.name, cte.columns)
            found = self.catalog.table(table.name) if self.catalog is not None else None
            if found is not None:
                if table.args.get("alias") is None:
                    # Named as the catalog spells it: any case of it qualifies columns.
                    table.set("alias", exp.TableAlias(this=_quoted(found.name)))
                table.set("this", _quoted(found.name))
                table.set("db", None)
                table.set("catalog", None)
                # The loader's column for SQLite's implicit rowid is no column of SQLite's.
                own = [c.name for c in found.columns if c.name != found.rowid]
                return _Source(table.alias, own, found)
        return _Source(table.alias_or_name, None)

    def join_columns(self, join: exp.Join, left: list[_Source], right: _Source) -> bool:
        """Resolve USING/NATURAL; True when there were any (``*`` must then be expanded:
        PostgreSQL puts merged columns first, SQLite leaves them where the left table has them)."""
        using = join.args.get("using") or []
        natural = join.args.get("method", "").upper() == "NATURAL"
        if natural:
            if right.columns is None or any(s.columns is None for s in left):
                return False
            names = [c for c in right.columns if any(s.find(c) for s in left)]
        else:
            names = [ident.name for ident in using]
        pairs: list[tuple[_Source, str, str]] = []
        single = True  # PostgreSQL's USING needs the name once on the left, spelled alike
        for name in names:
            owners = [s for s in left if s.find(name) is not None and name.lower() not in s.hidden]
            theirs = right.find(name)
            if not owners or theirs is None:
                return False  # SQLite rejects the join: leave it to fail
            pairs.append((owners[0], owners[0].find(name) or name, theirs))
            single = single and len(owners) == 1
            right.hidden.add(name.lower())
        if natural and not pairs:
            join.set("method", None)  # no common column: a cross join, as in SQLite
            join.set("kind", "CROSS")
            return False
        if single and all(mine == theirs for _, mine, theirs in pairs):
            join.set("method", None)
            join.set("using", [_quoted(mine) for _, mine, _ in pairs])
            return True
        join.set("method", None)
        join.set("using", None)
        join.set("on", exp.and_(*[
            exp.EQ(this=exp.column(_quoted(mine), table=_quoted(owner.name)),
                   expression=exp.column(_quoted(theirs), table=_quoted(right.name)))
            for owner, mine, theirs in pairs]))
        return True

    def expand_stars(self, select: exp.Select, sources: list[_Source], merged: bool) -> None:
        """``*`` and ``t.*`` as SQLite's column lists where PostgreSQL's would differ or not
        serve: over USING/NATURAL joins (PostgreSQL puts merged columns first, SQLite leaves
        them where the left table has them, once), in a query that groups rows (the
        bare-column rewrite takes each column from the row SQLite picks; ``t.*`` would
        become one composite value), and over a table whose loaded copy keeps SQLite's
        implicit rowid in a column of its own (SQLite's ``*`` does not show it)."""
        grouped = is_aggregate(select)
        expanded: list[exp.Expr] = []
        for projection in select.expressions:
            star = isinstance(projection, exp.Star)
            chosen = sources if star else self.star_sources(projection, sources)
            if chosen is None or any(s.columns is None for s in chosen) or not (
                    grouped or (star and merged)
                    or any(s.table is not None and s.table.rowid for s in chosen)):
                expanded.append(projection)
                continue
            expanded.extend(exp.column(_quoted(c), table=_quoted(s.name))
                            for s in chosen for c in s.columns or []
                            if not (star and c.lower() in s.hidden))
        select.set("expressions", expanded)

    @staticmethod
    def star_sources(projection: exp.Expr, sources: list[_Source]) -> list[_Source] | None:
        """The source ``t`` of a ``t.*`` projection (None for any other projection)."""
        if not (isinstance(projection, exp.Column) and projection.is_star and projection.table):
            return None
        lowered = projection.table.lower()
        found = [s for s in sources if s.name.lower() == lowered]
        return found[:1] or None

    # --- expressions ----------------------------------------------------------------

    def expression(self, node: exp.Expr, frame: _Frame) -> None:
        if isinstance(node, (exp.Select, exp.SetOperation)):
            self.query(node, frame, frame.ctes)
            return
        if isinstance(node, exp.Column):
            self.column(node, frame)
            return
        for child in list(node.iter_expressions()):
            self.expression(child, frame)

    def column(self, column: exp.Column, frame: _Frame) -> None:
        if column.is_star:
            source = frame.source(column.table) if column.table else None
            if source is not None:
                column.set("table", _quoted(source.name))
            return
        name, qualifier = column.name, column.table
        scope: _Frame | None = frame
        while scope is not None:
            if qualifier:
                source = scope.source(qualifier)
                if source is not None:
                    spelling = source.find(name) or _rowid(source, name)
                    if spelling is not None:
                        _set(column, source, spelling)
                    return
            else:
                matches = [s for s in scope.sources
                           if s.find(name) is not None and name.lower() not in s.hidden]
                if len(matches) == 1:
                    _set(column, matches[0], matches[0].find(name) or name)
                    return
                if matches or any(s.columns is None for s in scope.sources):
                    return  # ambiguous (SQLite refuses) or unknown: left as written
                if len(scope.sources) == 1:
                    spelling = _rowid(scope.sources[0], name)
                    if spelling is not None:
                        _set(column, scope.sources[0], spelling)
                        return
                if scope.aliases is not None and name.lower() in scope.aliases:
                    column.replace(parenthesized(scope.aliases[name.lower()].copy(),
                                                 column.parent))
                    return
            scope = scope.outer
        if (not qualifier and self.catalog is not None and isinstance(column.this, exp.Identifier)
                and column.this.quoted):
            column.replace(exp.Literal.string(name))

    # --- outputs ----------------------------------------------------------------

    def name_outputs(self, select: exp.Select) -> None:
        """Plain columns get their SQLite name as an alias (later rewrites may wrap them);
        a repeated name becomes ``name:N`` as SQLite numbers it."""
        seen: set[str] = set()
        for index, projection in enumerate(select.expressions):
            if isinstance(projection, exp.Column) and not projection.is_star:
                projection = exp.alias_(projection.copy(), _quoted(projection.name))
                select.expressions[index].replace(projection)
            if not isinstance(projection, exp.Alias):
                continue
            name, number = projection.alias, 0
            while name.lower() in seen:
                number += 1
                name = f"{projection.alias}:{number}"
            if name != projection.alias:
                projection.set("alias", _quoted(name))
            seen.add(name.lower())

    def output_names(self, select: exp.Select, sources: list[_Source]) -> list[str] | None:
        names: list[str] = []
        for projection in select.expressions:
            if isinstance(projection, exp.Star) or (
                    isinstance(projection, exp.Column) and projection.is_star):
                chosen = sources if isinstance(projection, exp.Star) else [
                    s for s in sources if s.name == projection.table]
                if not chosen or any(s.columns is None for s in chosen):
                    return None
                star = isinstance(projection, exp.Star)
                names.extend(c for s in chosen for c in s.columns or []
                             if not (star and c.lower() in s.hidden))
            else:
                names.append(projection.alias_or_name)
        return names

    def order(self, select: exp.Select, frame: _Frame) -> None:
        order = select.args.get("order")
        if order is None:
            return
        outputs = [p.alias if isinstance(p, exp.Alias) else None for p in select.expressions]
        for ordered in order.expressions:
            key = ordered.this
            if isinstance(key, exp.Column) and not key.table and frame.aliases is not None and (
                    key.name.lower() in frame.aliases):
                ordered.set("this", _output(select, key.name, outputs))
            elif not (isinstance(key, exp.Literal) and key.is_int):
                self.expression(key, frame)

    def compound_order(self, node: exp.SetOperation) -> None:
        """ORDER BY of a UNION/INTERSECT/EXCEPT: a name is an output of any of its SELECTs."""
        order = node.args.get("order")
        if order is None:
            return
        arms = _arms(node)
        for ordered in order.expressions:
            key = ordered.this
            if not isinstance(key, exp.Column) or key.table:
                continue
            for arm in arms:
                index = _position(arm, key.name)
                if index is not None:
                    ordered.set("this", exp.Literal.number(index + 1))
                    break


def _set(column: exp.Column, source: _Source, spelling: str) -> None:
    column.set("this", _quoted(spelling))
    column.set("table", _quoted(source.name))
    column.set("db", None)
    column.set("catalog", None)


def _rowid(source: _Source, name: str) -> str | None:
    """SQLite's rowid (a name no column of the table takes): the column where the loader
    kept it, else the INTEGER PRIMARY KEY column, which is the rowid itself."""
    table = source.table
    if table is None or name.lower() not in ("rowid", "oid", "_rowid_"):
        return None
    if table.rowid is not None:
        return table.rowid
    key = table.column(table.primary_key[0]) if len(table.primary_key) == 1 else None
    if key is None or key.type != "bigint":
        # Otherwise it numbers the rows in storage order: only a load that kept it knows it.
        raise SiselectError(f"{name} of table {table.name!r} (which has no INTEGER PRIMARY KEY) "
                            "has no PostgreSQL counterpart: load the database again with "
                            "siselect 0.2.0 or later, which keeps it", "0A000")
    return key.name


def _output(select: exp.Select, name: str, outputs: list[str | None]) -> exp.Expr:
    """A reference to the output aliased ``name``: the alias if PostgreSQL reads it as that
    output alone, else the output's position."""
    index = _position(select, name)
    assert index is not None
    spelling = outputs[index]
    names = [p.alias_or_name for p in select.expressions]
    if spelling is not None and names.count(spelling) == 1:
        return exp.column(_quoted(spelling))
    return exp.Literal.number(index + 1)


def _position(select: exp.Expr, name: str) -> int | None:
    if not isinstance(select, exp.Select):
        return None
    lowered = name.lower()
    for index, projection in enumerate(select.expressions):
        if isinstance(projection, exp.Alias) and projection.alias.lower() == lowered:
            return index
    return None


def _arms(node: exp.Expr) -> list[exp.Expr]:
    while isinstance(node, exp.Subquery):
        node = node.this
    if isinstance(node, exp.SetOperation):
        return _arms(node.left) + _arms(node.right)
    return [node]
