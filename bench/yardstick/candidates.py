"""Candidate sets made from gold queries, like an NL2SQL system's: rewrites and mistakes.

    python3 -m yardstick.candidates --out DIR [--db ID ...] [--k K] [--correct F] [--seed S]

(run from bench/). Each candidate is the gold query, an equivalent rewrite that looks
different (join order, IIF vs CASE, EXISTS vs IN, aliases, casts, COUNT of a key, BETWEEN)
or a typical mistake (wrong column or join key, > vs >=, missing DISTINCT, COUNT(*) vs
COUNT(col), wrong aggregate, missing filter, LIMIT 1 instead of ties, integer division,
wrong ORDER BY direction), sometimes disguised by a rewrite as well. Writes
``DIR/candidates.json`` in the paper's format (``{question_id: [sql, ...]}``, SQLite) and
``DIR/provenance.json`` (``{question_id: [{"how": [...], "correct": bool}, ...]}``), where
``correct`` means correct by construction (gold or rewrites only).
"""

import argparse
import json
import random
import sys
import zlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import sqlglot
from sqlglot import exp

from . import GOLD_JSON
from .schema import Schema, read_schemas

VERSION = "candidates-1"
Transform = Callable[[exp.Expression, Schema, random.Random], exp.Expression | None]


def _selects(tree: exp.Expression) -> list[exp.Select]:
    return list(tree.find_all(exp.Select))


def _tables(tree: exp.Expression, schema: Schema) -> dict[str, str]:
    """alias (lower case) -> schema table name, for the schema's tables in the query."""
    out = {}
    for t in tree.find_all(exp.Table):
        known = schema.table(t.name)
        if known:
            out[(t.alias or t.name).lower()] = known.name
    return out


def _pick(rng: random.Random, items: list):
    return items[rng.randrange(len(items))] if items else None


# ---- equivalent rewrites -------------------------------------------------------------------

def rename_aliases(tree: exp.Expression, schema: Schema, rng: random.Random):
    tables = [t for t in tree.find_all(exp.Table) if t.alias]
    if not tables:
        return None
    style = rng.choice(["short", "name"])
    mapping = {}
    for i, t in enumerate(tables):
        new = f"{t.name[:1].lower()}{i + 1}" if style == "short" else f"{t.name.lower()}_{i}"
        mapping[t.alias.lower()] = new
        t.set("alias", exp.TableAlias(this=exp.to_identifier(new)))
    for c in tree.find_all(exp.Column):
        if c.table and c.table.lower() in mapping:
            c.set("table", exp.to_identifier(mapping[c.table.lower()]))
    return tree


def join_order(tree: exp.Expression, schema: Schema, rng: random.Random):
    for select in _selects(tree):
        joins = select.args.get("joins") or []
        source = select.args.get("from_")
        if joins and source and (joins[0].args.get("kind") or "").upper() in ("", "INNER") \
                and joins[0].args.get("on") is not None and not joins[0].args.get("side"):
            first, other = source.this, joins[0].this
            source.set("this", other.copy())
            joins[0].set("this", first.copy())
            return tree
    return None


def case_iif(tree: exp.Expression, schema: Schema, rng: random.Random):
    for case in tree.find_all(exp.Case):
        ifs = case.args.get("ifs") or []
        if len(ifs) == 1 and case.args.get("default") is not None and not case.this:
            case.replace(exp.If(this=ifs[0].this.copy(), true=ifs[0].args["true"].copy(),
                                false=case.args["default"].copy()))
            return tree
    for node in tree.find_all(exp.If):
        if not isinstance(node.parent, exp.Case) and node.args.get("false") is not None:
            node.replace(exp.Case(ifs=[exp.If(this=node.this.copy(),
                                              true=node.args["true"].copy())],
                                  default=node.args["false"].copy()))
            return tree
    return None


def in_exists(tree: exp.Expression, schema: Schema, rng: random.Random):
    for node in tree.find_all(exp.In):
        query = node.args.get("query")
        sub = query.this if isinstance(query, exp.Subquery) else query
        if not isinstance(sub, exp.Select) or len(sub.expressions) != 1 or \
                not isinstance(node.this, exp.Column) or not node.this.table or \
                sub.args.get("limit") or sub.args.get("group"):
            continue
        inner = sub.copy()
        target = inner.expressions[0]
        inner.set("expressions", [exp.Literal.number(1)])
        inner.set("distinct", None)
        inner = inner.where(exp.EQ(this=target.copy(), expression=node.this.copy()))
        node.replace(exp.Exists(this=inner))
        return tree
    return None


def cast_real(tree: exp.Expression, schema: Schema, rng: random.Random):
    for cast in tree.find_all(exp.Cast):
        if cast.to.this == exp.DataType.Type.DOUBLE or cast.to.sql("sqlite").upper() == "REAL":
            cast.replace(exp.Mul(this=exp.Paren(this=cast.this.copy()),
                                 expression=exp.Literal.number("1.0")))
            return tree
    return None


def count_key(tree: exp.Expression, schema: Schema, rng: random.Random):
    """COUNT(*) as COUNT of a primary key: equal, since keys are never NULL."""
    for count in tree.find_all(exp.Count):
        if not isinstance(count.this, exp.Star):
            continue
        select = count.find_ancestor(exp.Select)
        tables = _tables(select, schema) if select else {}
        if len(tables) != 1:
            continue
        alias, name = next(iter(tables.items()))
        table = schema.table(name)
        if table and len(table.primary_key) == 1:
            column = exp.column(table.primary_key[0].name, table=alias if alias != name.lower()
                                else None, quoted=True)
            count.set("this", column)
            return tree
    return None


def between(tree: exp.Expression, schema: Schema, rng: random.Random):
    for node in tree.find_all(exp.Between):
        low = exp.GTE(this=node.this.copy(), expression=node.args["low"].copy())
        high = exp.LTE(this=node.this.copy(), expression=node.args["high"].copy())
        node.replace(exp.And(this=low, expression=high))
        return tree
    return None


REWRITES: dict[str, Transform] = {
    "aliases": rename_aliases, "join_order": join_order, "case_iif": case_iif,
    "in_exists": in_exists, "cast_real": cast_real, "count_key": count_key,
    "between": between,
}


# ---- mistakes ------------------------------------------------------------------------------

def _columns_like(column: exp.Column, tree: exp.Expression, schema: Schema) -> list[str]:
    tables = _tables(tree, schema)
    name = tables.get(column.table.lower()) if column.table else (
        next(iter(tables.values())) if len(tables) == 1 else None)
    table = schema.table(name) if name else None
    own = table.column(column.name) if table else None
    if not table or not own:
        return []
    return [c.name for c in table.columns if c.name != own.name and c.type == own.type]


def wrong_column(tree: exp.Expression, schema: Schema, rng: random.Random):
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    if select is None:
        return None
    columns = [c for e in select.expressions for c in e.find_all(exp.Column)]
    rng.shuffle(columns)
    for column in columns:
        others = _columns_like(column, tree, schema)
        if others:
            column.set("this", exp.to_identifier(rng.choice(others), quoted=True))
            return tree
    return None


def wrong_join_key(tree: exp.Expression, schema: Schema, rng: random.Random):
    joins = [j for s in _selects(tree) for j in (s.args.get("joins") or [])
             if isinstance(j.args.get("on"), exp.EQ)]
    for join in joins:
        on = join.args["on"]
        side = on.this if rng.random() < 0.5 else on.expression
        if isinstance(side, exp.Column):
            others = [c for c in _columns_like(side, tree, schema) if c.lower().endswith("id")]
            if others:
                side.set("this", exp.to_identifier(rng.choice(others), quoted=True))
                return tree
    return None


_FLIP = {exp.GT: exp.GTE, exp.GTE: exp.GT, exp.LT: exp.LTE, exp.LTE: exp.LT}


def comparison(tree: exp.Expression, schema: Schema, rng: random.Random):
    nodes = list(tree.find_all(*_FLIP))
    node = _pick(rng, nodes)
    if node is None:
        return None
    node.replace(_FLIP[type(node)](this=node.this.copy(), expression=node.expression.copy()))
    return tree


def missing_distinct(tree: exp.Expression, schema: Schema, rng: random.Random):
    for select in _selects(tree):
        if select.args.get("distinct"):
            select.set("distinct", None)
            return tree
    for count in tree.find_all(exp.Count):
        if isinstance(count.this, exp.Distinct):
            count.set("this", count.this.expressions[0].copy())
            return tree
    return None


def count_star(tree: exp.Expression, schema: Schema, rng: random.Random):
    """COUNT(col) as COUNT(*), or COUNT(*) as COUNT of a column that may be NULL."""
    for count in tree.find_all(exp.Count):
        if isinstance(count.this, exp.Column) and not _is_key(count.this, tree, schema):
            count.set("this", exp.Star())
            return tree
        if isinstance(count.this, exp.Star):
            select = count.find_ancestor(exp.Select)
            tables = _tables(select, schema) if select else {}
            if tables:
                alias, name = _pick(rng, sorted(tables.items()))
                table = schema.table(name)
                keys = {c.name for c in table.primary_key} if table else set()
                plain = [c.name for c in table.columns if c.name not in keys] if table else []
                if plain:
                    count.set("this", exp.column(rng.choice(plain), table=alias, quoted=True))
                    return tree
    return None


def _is_key(column: exp.Column, tree: exp.Expression, schema: Schema) -> bool:
    """A primary key column: COUNT(*) and COUNT(it) agree, so the swap is no mistake."""
    tables = _tables(tree, schema)
    name = tables.get(column.table.lower()) if column.table else (
        next(iter(tables.values())) if len(tables) == 1 else None)
    table = schema.table(name) if name else None
    return bool(table and any(c.name.lower() == column.name.lower() for c in table.primary_key))


def extra_distinct(tree: exp.Expression, schema: Schema, rng: random.Random):
    """COUNT(col) as COUNT(DISTINCT col): duplicates are counted once."""
    for count in tree.find_all(exp.Count):
        if isinstance(count.this, exp.Column) and not _is_key(count.this, tree, schema):
            count.set("this", exp.Distinct(expressions=[count.this.copy()]))
            return tree
    return None


_AGGREGATES = {exp.Max: [exp.Min], exp.Min: [exp.Max], exp.Avg: [exp.Sum, exp.Max],
               exp.Sum: [exp.Avg, exp.Count]}


def wrong_aggregate(tree: exp.Expression, schema: Schema, rng: random.Random):
    node = _pick(rng, list(tree.find_all(*_AGGREGATES)))
    if node is None:
        return None
    node.replace(rng.choice(_AGGREGATES[type(node)])(this=node.this.copy()))
    return tree


def missing_filter(tree: exp.Expression, schema: Schema, rng: random.Random):
    wheres = [w for w in tree.find_all(exp.Where) if isinstance(w.this, exp.And)]
    where = _pick(rng, wheres)
    if where is None:
        return None
    parts = list(where.this.flatten())
    parts.pop(rng.randrange(len(parts)))
    where.set("this", exp.and_(*[p.copy() for p in parts]))
    return tree


def limit_ties(tree: exp.Expression, schema: Schema, rng: random.Random):
    """``col = (SELECT MAX(col) ...)`` as ``ORDER BY col DESC LIMIT 1``: one of the ties."""
    select = tree if isinstance(tree, exp.Select) else None
    where = select.args.get("where") if select else None
    if where is None or select.args.get("limit") or select.args.get("group"):
        return None
    for eq in where.find_all(exp.EQ):
        sub = eq.expression
        inner = sub.this if isinstance(sub, exp.Subquery) else None
        if isinstance(inner, exp.Select) and len(inner.expressions) == 1 and \
                isinstance(inner.expressions[0], exp.Max | exp.Min):
            desc = isinstance(inner.expressions[0], exp.Max)
            key = eq.this.copy()
            if eq is where.this:
                select.set("where", None)
            else:
                eq.replace(exp.true())
            return select.order_by(exp.Ordered(this=key, desc=desc)).limit(1)
    return None


def integer_division(tree: exp.Expression, schema: Schema, rng: random.Random):
    for div in tree.find_all(exp.Div):
        for cast in div.find_all(exp.Cast):
            if cast.to.sql("sqlite").upper() in ("REAL", "FLOAT", "DOUBLE"):
                cast.replace(cast.this.copy())
                return tree
        for lit in div.find_all(exp.Literal):
            if not lit.is_string and "." in lit.this:
                lit.replace(exp.Literal.number(lit.this.split(".")[0] or "0"))
                return tree
    return None


def order_direction(tree: exp.Expression, schema: Schema, rng: random.Random):
    ordered = _pick(rng, list(tree.find_all(exp.Ordered)))
    if ordered is None:
        return None
    ordered.set("desc", not ordered.args.get("desc"))
    return tree


MISTAKES: dict[str, Transform] = {
    "wrong_column": wrong_column, "wrong_join_key": wrong_join_key, "comparison": comparison,
    "missing_distinct": missing_distinct, "count_star": count_star,
    "extra_distinct": extra_distinct,
    "wrong_aggregate": wrong_aggregate, "missing_filter": missing_filter,
    "limit_ties": limit_ties, "integer_division": integer_division,
    "order_direction": order_direction,
}


def _apply(tree: exp.Expression, name: str, fn: Transform, schema: Schema,
           rng: random.Random) -> exp.Expression | None:
    try:
        return fn(tree.copy(), schema, rng)
    except Exception:  # noqa: BLE001 - a transform that cannot handle a tree just does not apply
        return None


def candidates_for(gold: str, schema: Schema, k: int, correct_share: float,
                   seed: int, qid: str) -> list[dict]:
    """Up to ``k`` distinct candidates ``{"sql", "how", "correct"}`` for one gold query."""
    rng = random.Random(zlib.crc32(f"{VERSION}|{seed}|{qid}".encode()))
    try:
        tree = sqlglot.parse_one(gold, read="sqlite")
    except sqlglot.errors.ParseError:
        return []
    out: dict[str, dict] = {}
    if rng.random() < 0.8:
        out[gold] = {"sql": gold, "how": ["gold"], "correct": True}
    n_correct = round(k * correct_share)
    for attempt in range(k * 6):
        if len(out) >= k:
            break
        want_correct = sum(c["correct"] for c in out.values()) < n_correct
        current, how = tree, []
        if not want_correct:
            name = rng.choice(sorted(MISTAKES))
            changed = _apply(current, name, MISTAKES[name], schema, rng)
            if changed is None:
                continue
            current, how = changed, [f"mistake:{name}"]
        for name in rng.sample(sorted(REWRITES), rng.randint(1 if want_correct else 0, 2)):
            changed = _apply(current, name, REWRITES[name], schema, rng)
            if changed is not None:
                current, how = changed, [*how, f"rewrite:{name}"]
        if not how:
            continue
        sql = current.sql(dialect="sqlite")
        if sql not in out and (want_correct or attempt < k * 5):
            out[sql] = {"sql": sql, "how": how, "correct": want_correct}
    items = list(out.values())
    rng.shuffle(items)
    return items


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--db", action="append", help="db_id (repeatable; default all eleven)")
    p.add_argument("--k", type=int, default=8)
    p.add_argument("--correct", type=float, default=0.4,
                   help="share of candidates that are correct by construction")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    schemas = read_schemas()
    wanted = set(args.db or schemas)
    gold = [t for t in json.loads(GOLD_JSON.read_text()) if t["db_id"] in wanted]
    sets, provenance = {}, {}
    kinds: Counter[str] = Counter()
    for task in gold:
        qid = str(task["question_id"])
        made = candidates_for(task["SQL"], schemas[task["db_id"]], args.k, args.correct,
                              args.seed, qid)
        if len({c["sql"] for c in made}) < 2:
            continue
        sets[qid] = [c["sql"] for c in made]
        provenance[qid] = [{"how": c["how"], "correct": c["correct"]} for c in made]
        kinds.update(h for c in made for h in c["how"])
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "candidates.json").write_text(json.dumps(sets, indent=1) + "\n")
    (args.out / "provenance.json").write_text(json.dumps(
        {"version": VERSION, "k": args.k, "correct_share": args.correct, "seed": args.seed,
         "candidates": provenance}, indent=1) + "\n")
    print(f"{len(sets)} of {len(gold)} tasks, {sum(map(len, sets.values()))} candidates; "
          + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
