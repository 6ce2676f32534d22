"""The PostgreSQL-dialect corpus: templates instantiated on each profile of a loaded database.

Literals come from the data (:func:`literals`), so the same generator serves the yardstick's
synthetic databases at any scale and the real superhero. :func:`generate` keeps only pairs
whose query and twin both run on the database; the ones that do not are returned apart.
"""

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import psycopg

from .profiles import PROFILES, Profile
from .templates import TEMPLATES, Template

_PLAIN = re.compile(r"^[a-z_][a-z0-9_]*$")
_RESERVED = {"order", "user", "group", "table", "select", "where", "from", "date", "type",
             "position", "year", "time", "number", "name", "status", "text", "label"}


def ident(name: str) -> str:
    """As a model writes names: bare when PostgreSQL reads them unchanged, else quoted."""
    if _PLAIN.match(name) and name not in _RESERVED:
        return name
    return '"' + name.replace('"', '""') + '"'


def literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, float):
        return repr(round(value, 4))
    return str(value)


@dataclass
class Pair:
    construct: str
    db: str
    profile: str
    template: int  # index in TEMPLATES
    query: str
    twin: str

    @property
    def key(self) -> str:
        return f"{self.db}/{self.profile}/{self.template}"


def _one(conn: psycopg.Connection, sql: str) -> Any:
    row = conn.execute(sql).fetchone()
    return None if row is None else row[0]


def _dates_cast(conn: psycopg.Connection, t: str, d: str) -> bool:
    try:
        with conn.transaction():
            conn.execute(f"SELECT count({d}::date) FROM {t}")
        return True
    except psycopg.Error:
        return False


def _number_typed(conn: psycopg.Connection, t: str, column: str) -> bool:
    """Whether the loader typed ``column`` as a number (one holding a few texts among its
    numbers, as SQLite allows, is text)."""
    row = conn.execute("SELECT y.typcategory = 'N' FROM pg_attribute AS a JOIN pg_type AS y "
                       "ON y.oid = a.atttypid WHERE a.attrelid = %s::regclass "
                       "AND a.attname = %s", (t, column)).fetchone()
    return bool(row and row[0])


def literals(conn: psycopg.Connection, p: Profile) -> dict[str, Any]:
    """Names and values for one profile's templates; a field the data cannot fill is left
    out (the templates that need it are skipped)."""
    t, k, c = ident(p.table), ident(p.key), ident(p.cat)
    out: dict[str, Any] = {"t": t, "k": k, "c": c}
    cv = _one(conn, f"SELECT {c} FROM {t} WHERE {c} IS NOT NULL GROUP BY {c} "
                    f"ORDER BY count(*) DESC, {c} LIMIT 1")
    out["cv"] = literal(cv)
    kmid = _one(conn, f"SELECT {k}::text FROM {t} WHERE {c} = {literal(cv)} "
                      f"ORDER BY {k}::text LIMIT 1 OFFSET 12")
    out["kmid"] = (kmid or "~").replace("'", "''")
    if p.num and _number_typed(conn, t, p.num):
        n = ident(p.num)
        median = _one(conn, f"SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY {n}) FROM {t}")
        low, high = conn.execute(f"SELECT min({n}), max({n}) FROM {t}").fetchone()
        if median is not None:
            step = max(1, math.ceil((float(high) - float(low)) / 8))
            out |= {"n": n, "N": literal(median), "lo": math.floor(float(low)),
                    "hi": math.ceil(float(high)), "step": step}
    if p.text:
        x = ident(p.text)
        common = _one(conn, f"SELECT {x} FROM {t} WHERE {x} ~ '[A-Za-z]{{3}}' GROUP BY {x} "
                            f"ORDER BY count(*) DESC, {x} LIMIT 1")
        found = re.search(r"[A-Za-z]{3,}", common or "")
        if found:
            out |= {"x": x, "pat": found.group()[:4].lower()}
    if p.date and _dates_cast(conn, t, ident(p.date)):
        d = ident(p.date)
        years = f"EXTRACT(YEAR FROM {d}::date)::int"
        mode = _one(conn, f"SELECT {years} FROM {t} WHERE {d} IS NOT NULL GROUP BY 1 "
                          "ORDER BY count(*) DESC, 1 LIMIT 1")
        first, last = conn.execute(f"SELECT min({years}), max({years}) FROM {t}").fetchone()
        if mode is not None:
            out |= {"d": d, "Y": mode, "Y1": max(first, last - 40), "Y2": last}
    if p.parent:
        out |= {"p": ident(p.parent.table), "pk": ident(p.parent.key),
                "pl": ident(p.parent.label), "fk": ident(p.parent.fk)}
    return out


_NEEDS = {"num": "n", "text": "x", "date": "d", "parent": "p"}


def applicable(template: Template, values: dict[str, Any]) -> bool:
    return all(_NEEDS[need] in values for need in template.needs)


def runs(conn: psycopg.Connection, sql: str) -> str | None:
    """None when ``sql`` runs, else PostgreSQL's message."""
    try:
        with conn.transaction():
            conn.execute(sql).fetchall()
        return None
    except psycopg.Error as exc:
        return (exc.diag.message_primary or str(exc)).splitlines()[0]


def generate(connections: dict[str, psycopg.Connection],
             profiles: Iterable[Profile] = PROFILES) -> tuple[list[Pair], list[tuple[Pair, str]]]:
    """The pairs on every profile whose database is in ``connections`` (db -> a connection
    whose search_path is that database's schema); and the pairs that do not run, with why."""
    kept: list[Pair] = []
    broken: list[tuple[Pair, str]] = []
    for profile in profiles:
        conn = connections.get(profile.db)
        if conn is None:
            continue
        values = literals(conn, profile)
        for number, template in enumerate(TEMPLATES):
            if not applicable(template, values):
                continue
            pair = Pair(template.construct, profile.db, profile.table, number,
                        template.query.format(**values), template.twin.format(**values))
            why = runs(conn, pair.query) or runs(conn, pair.twin)
            (broken.append((pair, why)) if why else kept.append(pair))
    return kept, broken
