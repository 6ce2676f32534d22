"""Synthetic SQLite databases for BIRD's dev schemas, in BIRD's layout.

    python3 -m yardstick.synth --out DIR [--db ID ...] [--scale F] [--seed S]

(run from bench/). Each database is ``DIR/<db_id>/<db_id>.sqlite`` with BIRD's table and
column names and declared types, primary keys unique and foreign keys holding. Values plant
the literals that the gold and candidate queries compare columns with (see harvest.py), with
skew, duplicates, ties, NULLs, empty strings and a few values of the wrong type (values.py).
The same seed, scale and generator version give the same file, byte for byte.
"""

import argparse
import hashlib
import json
import sqlite3
import sys
import time
import zlib
from pathlib import Path

import numpy as np
from faker import Faker

from . import CANDIDATES_DIR, GOLD_JSON
from . import values as V
from .harvest import Harvest, Literals, harvest
from .schema import Column, Schema, Table, read_schemas

VERSION = "synth-1"  # in every column's seed: a new one draws every database anew
#: Bumped when what some columns hold changes and every seed stays (a stamp's, not a seed's):
#: 2, dates without separators and numbers cast from text written as the queries read them.
REVISION = 2
BASE_ROWS = 2000


def column_seed(seed: int, *names: str) -> int:
    return zlib.crc32("\x1f".join([VERSION, str(seed), *names]).encode()) ^ seed


def queries_of(db_id: str, candidates_k: str = "24") -> list[str]:
    """The gold and the paper's candidate queries of a database (literals to plant)."""
    gold = [t for t in json.loads(GOLD_JSON.read_text()) if t["db_id"] == db_id]
    candidates = json.loads((CANDIDATES_DIR / candidates_k / "stage1.json").read_text())
    return [t["SQL"] for t in gold] + [q for t in gold
                                       for q in candidates.get(str(t["question_id"]), [])]


def referenced(schema: Schema) -> set[tuple[str, str]]:
    return {(c.references.table, c.references.name) for t in schema.tables
            for c in t.columns if c.references}


def row_counts(schema: Schema, scale: float) -> dict[str, int]:
    """Lookup tables small, tables others point at medium, the rest full size."""
    n = max(10, int(BASE_ROWS * scale))
    parents = {t for t, _ in referenced(schema)}
    counts = {}
    for table in schema.tables:
        refers = any(c.references for c in table.columns)
        if table.name in parents and not refers:
            counts[table.name] = max(10, n // 20) if len(table.columns) <= 3 else max(10, n // 2)
        else:
            counts[table.name] = n
    return counts


class Generator:
    def __init__(self, schema: Schema, lits: Harvest, scale: float, seed: int):
        self.schema, self.lits, self.seed, self.scale = schema, lits, seed, scale
        self.counts = row_counts(schema, scale)
        self.traits: dict[tuple[str, str], dict] = {}  # each column's V.Traits.chosen
        self._at_one: Generator | None = None
        self.keys = referenced(schema)
        self.columns: dict[tuple[str, str], list] = {}
        self._share_child_literals()

    def _share_child_literals(self) -> None:
        """A literal compared with a foreign key must exist among the keys it points at."""
        for table in self.schema.tables:
            for c in table.columns:
                child = self.lits.get((c.table, c.name))
                if c.references and child and child.equal:
                    parent = self.lits.setdefault((c.references.table, c.references.name),
                                                  Literals())
                    parent.equal.extend(child.equal)

    def rng(self, *names: str) -> tuple[np.random.Generator, Faker]:
        s = column_seed(self.seed, self.schema.db_id, *names)
        fake = Faker()
        fake.seed_instance(s)
        return np.random.default_rng(s), fake

    def _traits(self, column: Column, rng: np.random.Generator) -> V.Traits:
        """The column's character: drawn here at scale 1, else the one it has at scale 1
        (that column generated there once, to learn it)."""
        if self.scale == 1:
            return V.Traits(rng)
        if self._at_one is None:
            self._at_one = Generator(self.schema, self.lits, 1.0, self.seed)
        key = (column.table, column.name)
        if key not in self._at_one.traits:
            table = self.schema.table(column.table)
            assert table is not None
            self._at_one.values(column, self._at_one._table_size(table))
        return V.Traits(rng, self._at_one.traits[key])

    def table_rows(self, table: Table) -> list[tuple]:
        pk = table.primary_key
        n = self.counts[table.name]
        if len(pk) == 1 and pk[0].references:
            n = min(n, len(self._parent_values(pk[0])))
        cols = [self.values(c, n) for c in table.columns]
        rows = list(zip(*cols, strict=True))
        if len(pk) > 1:
            # Composite keys: drop the rows whose key repeats (drawn independently).
            at = [table.columns.index(c) for c in pk]
            seen: set = set()
            kept = []
            for row in rows:
                key = tuple(row[i] for i in at)
                if key not in seen and None not in key:
                    seen.add(key)
                    kept.append(row)
            rows = kept
        return rows

    def _parent_values(self, column: Column) -> list:
        parent = column.references
        assert parent is not None
        key = (parent.table, parent.name)
        if key not in self.columns:
            table = self.schema.table(parent.table)
            assert table is not None
            self.values(parent, self._table_size(table))
        return [v for v in dict.fromkeys(self.columns[key]) if v is not None]

    def _table_size(self, table: Table) -> int:
        pk = table.primary_key
        n = self.counts[table.name]
        if len(pk) == 1 and pk[0].references and pk[0].references.table != table.name:
            n = min(n, len(self._parent_values(pk[0])))
        return n

    def values(self, column: Column, n: int) -> list:
        key = (column.table, column.name)
        if key in self.columns and len(self.columns[key]) == n:
            return self.columns[key]
        rng, fake = self.rng(column.table, column.name)
        traits = self._traits(column, rng)
        lits = self.lits.get(key, Literals())
        table = self.schema.table(column.table)
        assert table is not None
        in_pk = column in table.primary_key
        unique = (in_pk and len(table.primary_key) == 1) or key in self.keys
        if column.references and column.references.table != column.table:
            out = self._foreign(column, n, unique, rng, traits)
        elif column.references:  # a parent in the same table (posts.ParentId): ids 1..n
            out = [int(x) for x in rng.integers(1, n + 1, n)]
            V.blemish(out, "integer", rng, traits)
        elif unique:
            out = self._unique(column, lits, n, rng, fake)
        else:
            out = self._plain(column, lits, n, rng, fake, traits)
            if not in_pk:
                if column.type in ("integer", "real"):
                    V.ties_at_top(out, rng, traits)
                V.blemish(out, column.type, rng, traits)
        self.columns[key] = out
        self.traits[key] = traits.chosen
        return out

    def _foreign(self, column: Column, n: int, unique: bool,
                 rng: np.random.Generator, traits: V.Traits) -> list:
        parents = self._parent_values(column)
        if unique:
            return list(rng.permutation(np.array(parents, dtype=object))[:n])
        weights = V.zipf_weights(len(parents), rng, a=0.8)
        out = [parents[i] for i in rng.choice(len(parents), n, p=weights)]
        if traits.draw("orphan-free NULLs", lambda r: r.random() < 0.3, False):
            hit = traits.rows(n, 0.05)
            for i in hit:
                out[i] = None
            traits.came_to("orphan-free NULLs", bool(len(hit)))
        return out

    def _unique(self, column: Column, lits: Literals, n: int, rng: np.random.Generator,
                fake: Faker) -> list:
        if column.type == "integer":
            wanted = sorted({int(v) for v in V.numeric_lits(lits)[0] if v > n})
            ids = list(range(1, n + 1 - len(wanted))) + wanted
            return ids[:n]
        if column.type in ("date", "datetime"):
            return list(dict.fromkeys(V.dates(column.name, column.type == "datetime",
                                              lits, n * 2, rng)))[:n]
        values = V.categorical(column.name, lits, n, rng, fake, unique=True)
        seen, out = set(), []
        for v in values:
            while v in seen:
                v = f"{v}{int(rng.integers(10))}"
            seen.add(v)
            out.append(v)
        while len(out) < n:
            v = "".join(rng.choice(list("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"), 8))
            if v not in seen:
                seen.add(v)
                out.append(v)
        return out

    def _plain(self, column: Column, lits: Literals, n: int, rng: np.random.Generator,
               fake: Faker, traits: V.Traits) -> list:
        kind = column.type
        if kind in ("integer", "real"):
            return V.numbers(column.name, kind == "integer", lits, n, rng, traits)
        if kind in ("date", "datetime"):
            return V.dates(column.name, kind == "datetime", lits, n, rng)
        strings = [v for v in lits.equal + lits.ranges if isinstance(v, str)]
        width = V.compact_width(strings)
        if width and (lits.years or any(p in column.name.lower() for p in ("date", "month"))):
            return V.compact_dates(column.name, lits, n, rng, width)
        date_like = sum(bool(V.DATE_RE.match(s)) for s in strings)
        if strings and date_like * 2 > len(strings) or (
                lits.years and any(p in column.name.lower() for p in ("date", "time", "birth"))):
            return V.dates(column.name, " " in max(strings, key=len, default=""), lits, n, rng)
        numeric = [v for v in lits.equal + lits.ranges
                   if isinstance(v, float) or V.NUMBER_RE.match(str(v))]
        if lits.ranges and len(numeric) * 2 > len(lits.equal + lits.ranges):
            return V.text_numbers(lits, n, rng, traits)
        if lits.numeric_casts and len(numeric) == len(lits.equal + lits.ranges):
            return V.text_numbers(lits, n, rng, traits, column.name)
        return V.categorical(column.name, lits, n, rng, fake)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def create_sql(table: Table) -> str:
    parts = [f"{_ident(c.name)} {c.type.upper()}" for c in table.columns]
    if table.primary_key:
        parts.append("PRIMARY KEY (" + ", ".join(_ident(c.name) for c in table.primary_key) + ")")
    for c in table.columns:
        if c.references:
            parts.append(f"FOREIGN KEY ({_ident(c.name)}) REFERENCES "
                         f"{_ident(c.references.table)} ({_ident(c.references.name)})")
    return f"CREATE TABLE {_ident(table.name)}\n(\n    " + ",\n    ".join(parts) + "\n)"


def build(schema: Schema, out_dir: Path, scale: float = 1.0, seed: int = 0,
          queries: list[str] | None = None) -> Path:
    """Write ``out_dir/<db_id>/<db_id>.sqlite`` (replacing it) and return its path."""
    lits = harvest(schema, queries if queries is not None else queries_of(schema.db_id))
    gen = Generator(schema, lits, scale, seed)
    path = out_dir / schema.db_id / f"{schema.db_id}.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(tmp)
    try:
        for table in schema.tables:
            conn.execute(create_sql(table))
            rows = gen.table_rows(table)
            marks = ", ".join("?" for _ in table.columns)
            conn.executemany(f"INSERT INTO {_ident(table.name)} VALUES ({marks})", rows)
        conn.commit()
    finally:
        conn.close()
    tmp.replace(path)
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--db", action="append", help="db_id (repeatable; default all but superhero)")
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    schemas = read_schemas()
    for db_id in args.db or [d for d in schemas if d != "superhero"]:
        started = time.monotonic()
        path = build(schemas[db_id], args.out, args.scale, args.seed)
        print(f"{db_id}: {path} in {time.monotonic() - started:.1f} s, sha256 "
              f"{digest(path)[:12]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
