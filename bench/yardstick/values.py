"""Values for one column: planted literals, skew, ties, NULLs, empty strings, wrong types.

Every function takes its own numpy Generator and Faker, seeded from the column's name, so a
column's values do not change when another column or table is added.

A column's character (its rate of NULLs, whether it holds values of the wrong type or empty
strings, ties at its top, its decimal places) is chosen once, at scale 1, and kept at every
scale (:class:`Traits`): a scaled database is the same database with more rows. Drawn from
the column's own generator after its rows, those choices used to change with the number of
rows: a third of the columns of every yardstick database differed between scale 1 and
scale 10 in whether they held NULLs or text among numbers (student_club's
``budget.remaining`` was text at scale 100 and REAL at scale 1).
"""

import datetime as dt
import re
import string
from collections.abc import Callable
from typing import Any

import numpy as np
from faker import Faker

from .harvest import Literals

DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}")
#: A date written without separators, to the month or to the day (BIRD's yearmonth.Date
#: holds '201304', and its questions' evidence says so: "Between 201201 And 201212").
COMPACT_DATE_RE = re.compile(r"^(\d{4})(0[1-9]|1[0-2])(\d{2})?$")
NUMBER_RE = re.compile(r"^-?\d+(\.\d+)?$")


class Traits:
    """The choices that make a column's character. At scale 1 (``fixed`` None) each is drawn
    from the column's generator where the column's values need it, as it always was (the
    data at scale 1 stays the same, byte for byte); at another scale each is the one made at
    scale 1 (``fixed``, that column's :attr:`chosen`), and nothing is drawn for it."""

    def __init__(self, rng: np.random.Generator, fixed: dict[str, Any] | None = None):
        self.rng, self.fixed = rng, fixed
        self.chosen: dict[str, Any] = {}

    def draw(self, name: str, choose: Callable[[np.random.Generator], Any], absent: Any) -> Any:
        """The choice ``name``: drawn by ``choose`` at scale 1; ``absent`` where scale 1
        never came to it (too few values there to place ties among)."""
        value = choose(self.rng) if self.fixed is None else self.fixed.get(name, absent)
        self.chosen[name] = value
        return value

    def rows(self, n: int, rate: float) -> np.ndarray:
        """The rows of ``n`` a choice hits at ``rate`` (per row); at another scale than 1, at
        least one: the choice hit one at scale 1, or its rate would be 0 (:meth:`came_to`)."""
        hit = np.flatnonzero(self.rng.random(n) < rate)
        if self.fixed is not None and rate and n and not len(hit):
            hit = np.array([int(self.rng.integers(n))])
        return hit

    def came_to(self, name: str, value: Any) -> None:
        """What the choice ``name`` amounted to at scale 1: a rate that hit no row of a small
        table there is no rate at all (else a table a hundred times larger holds the text
        among numbers that scale 1 never showed, and its column is loaded as another type)."""
        if self.fixed is None:
            self.chosen[name] = value


def zipf_weights(n: int, rng: np.random.Generator, a: float = 1.1) -> np.ndarray:
    """Zipf weights over n values in a random order (which value is popular is random)."""
    w = 1.0 / np.arange(1, n + 1) ** a
    rng.shuffle(w)
    return w / w.sum()


def _distinct(values: list) -> list:
    return list(dict.fromkeys(values))


def mimic(template: str, rng: np.random.Generator, fake: Faker) -> str:
    """A value shaped like ``template``: words become other words, digits other digits."""
    out = []
    for token in re.split(r"(\W+)", template):
        if not token or not token.isalnum():
            out.append(token)
        elif token.isdigit():
            out.append("".join(str(rng.integers(10)) for _ in token))
        elif token.isalpha() and len(token) > 3:
            word = fake.word()
            out.append(word.upper() if token.isupper() else
                       word.title() if token[0].isupper() else word)
        else:
            out.append("".join(
                str(rng.integers(10)) if ch.isdigit() else
                rng.choice(list(string.ascii_uppercase)) if ch.isupper() else
                rng.choice(list(string.ascii_lowercase)) for ch in token))
    return "".join(out)


_FAKER_BY_NAME = [  # (pattern in the lower-case column name, Faker method)
    ("first", "first_name"), ("forename", "first_name"), ("surname", "last_name"),
    ("last_name", "last_name"), ("lastname", "last_name"), ("email", "email"),
    ("url", "url"), ("website", "url"), ("phone", "phone_number"), ("street", "street_address"),
    ("address", "street_address"), ("city", "city"), ("location", "city"),
    ("country", "country"), ("nationality", "country"), ("state", "state"), ("zip", "postcode"),
    ("uuid", "uuid4"), ("comment", "sentence"), ("text", "sentence"), ("body", "sentence"),
    ("description", "sentence"), ("about", "sentence"), ("title", "catch_phrase"),
    ("name", "name"),
]
#: Words that make a column categorical whatever else its name says ("County Name").
CATEGORICAL = ("county", "district", "city", "country", "state", "region", "type", "status",
               "category", "class", "level", "group", "kind", "format", "language", "gender")
HIGH_CARDINALITY = ("name", "title", "text", "body", "comment", "description", "about", "url",
                    "email", "phone", "address", "street", "zip", "uuid")


def text_background(column: str, lits: Literals, rng: np.random.Generator,
                    fake: Faker) -> str:
    lower = column.lower()
    strings = [v for v in lits.equal if isinstance(v, str) and v]
    if strings and any(p in lower for p in CATEGORICAL):
        return mimic(strings[int(rng.integers(len(strings)))], rng, fake)
    for pattern, method in _FAKER_BY_NAME:
        if pattern in lower:
            return str(getattr(fake, method)())
    if strings:
        return mimic(strings[int(rng.integers(len(strings)))], rng, fake)
    if lower.endswith(("id", "code")):
        return "".join(rng.choice(list(string.ascii_uppercase + string.digits), 6))
    word = fake.word()
    return word.title() if rng.random() < 0.5 else word


def like_values(pattern: str, rng: np.random.Generator, fake: Faker, k: int = 3) -> list[str]:
    """Values a LIKE pattern matches, some in another letter case (SQLite's LIKE ignores it)."""
    out = []
    for i in range(k):
        value = "".join(fake.word() if ch == "%" else
                        rng.choice(list(string.ascii_lowercase)) if ch == "_" else ch
                        for ch in pattern)
        if i == k - 1 and value.lower() != value:
            value = value.lower()
        out.append(value)
    return out


def numeric_lits(lits: Literals) -> tuple[list[float], list[float]]:
    def nums(values: list) -> list[float]:
        out = []
        for v in values:
            if isinstance(v, float):
                out.append(v)
            elif isinstance(v, str) and NUMBER_RE.match(v.strip()):
                out.append(float(v))
        return out
    return nums(lits.equal), nums(lits.ranges)


def _name_range(column: str, integer: bool) -> tuple[float, float]:
    lower = column.lower()
    if "year" in lower:
        return 1950, 2020
    if lower == "age" or lower.endswith("_age"):
        return 18, 90
    if any(p in lower for p in ("rank", "position", "order", "lap", "number", "stop", "grade")):
        return 1, 30
    return (0, 500) if integer else (0, 100)


def numbers(column: str, integer: bool, lits: Literals, n: int,
            rng: np.random.Generator, traits: Traits) -> list:
    eq, ranges = numeric_lits(lits)
    marks = sorted(set(eq + ranges))
    if marks and set(marks) <= {0.0, 1.0} and not ranges:
        p = traits.draw("share of ones", lambda r: r.uniform(0.2, 0.6), 0.4)
        return [int(x) for x in (rng.random(n) < p)]
    lo, hi = (min(marks), max(marks)) if marks else _name_range(column, integer)
    if marks and len(marks) == 1:
        lo, hi = (0, 2 * hi) if hi > 0 else (2 * lo, 0) if lo < 0 else (0, 10)
    span = max(hi - lo, 1.0)
    a = lo - 0.3 * span if lo < 0 or lo - 0.3 * span >= 0 else 0
    b = hi + 0.3 * span
    values = a + rng.beta(1.3, 2.2, n) * (b - a)
    if eq or ranges:
        planted = rng.random(n) < 0.15
        values[planted] = rng.choice(marks, planted.sum())
    if integer:
        return [int(round(v)) for v in values]
    places = traits.draw("decimal places", lambda r: int(r.integers(1, 3)), 2)
    return [round(float(v), places) for v in values]


def _parse_date(text: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        return None


def dates(column: str, with_time: bool, lits: Literals, n: int,
          rng: np.random.Generator) -> list:
    exact = [d for d in (_parse_date(v) for v in lits.equal + lits.ranges
                         if isinstance(v, str)) if d]
    years = lits.years + [d.year for d in exact]
    if years:
        y0, y1 = min(years) - 2, max(years) + 2
    elif any(p in column.lower() for p in ("birth", "dob")):
        y0, y1 = 1930, 2000
    else:
        y0, y1 = 1990, 2020
    start = dt.date(y0, 1, 1).toordinal()
    end = dt.date(min(y1, 2099), 12, 31).toordinal()
    days = rng.integers(start, end + 1, n)
    result = [dt.date.fromordinal(int(d)) for d in days]
    if lits.years:
        in_year = np.flatnonzero(rng.random(n) < 0.25)
        for i in in_year:
            y = int(rng.choice(lits.years))
            result[i] = dt.date(y, int(rng.integers(1, 13)), int(rng.integers(1, 29)))
    if exact:
        for i in np.flatnonzero(rng.random(n) < 0.1):
            result[i] = exact[int(rng.integers(len(exact)))]
    if not with_time:
        return [d.isoformat() for d in result]
    seconds = rng.integers(0, 86400, n)
    return [f"{d.isoformat()} {s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"
            for d, s in zip(result, seconds, strict=True)]


def compact_width(strings: list[str]) -> int | None:
    """6 or 8 when most of a text column's literals are dates without separators, all of that
    width (the width the queries compare the column at); else None."""
    compact = [s for s in strings if COMPACT_DATE_RE.match(s)]
    widths = {len(s) for s in compact}
    return widths.pop() if len(compact) * 2 > len(strings) and len(widths) == 1 else None


def compact_dates(column: str, lits: Literals, n: int, rng: np.random.Generator,
                  width: int) -> list[str]:
    """:func:`dates` written as the literals write them, ``YYYYMM`` or ``YYYYMMDD``: a query
    that compares the column with '201201' then means on the data what it means on BIRD's,
    where an ISO date made ``Date BETWEEN '201201' AND '201212'`` select nothing, so the
    candidates that use it were right on D only by coincidence."""
    planted = []
    for value in lits.equal + lits.ranges:
        found = COMPACT_DATE_RE.match(value) if isinstance(value, str) else None
        if found and len(value) == width:
            planted.append(f"{found[1]}-{found[2]}-{found[3] or '01'}")
    as_iso = Literals(equal=planted, years=lits.years)
    written = "%Y%m" if width == 6 else "%Y%m%d"
    return [dt.date.fromisoformat(d).strftime(written)
            for d in dates(column, False, as_iso, n, rng)]


def categorical(column: str, lits: Literals, n: int, rng: np.random.Generator,
                fake: Faker, unique: bool = False) -> list:
    """Text values: the queries' literals and LIKE matches among a skewed background."""
    planted = _distinct([v if isinstance(v, str) else _number_text(v) for v in lits.equal])
    for pattern in _distinct(lits.like):
        planted += like_values(pattern, rng, fake)
    planted = _distinct(planted)
    lower = column.lower()
    high = unique or (any(p in lower for p in HIGH_CARDINALITY)
                      and not any(p in lower for p in CATEGORICAL))
    size = n if high else int(np.clip(n ** 0.5, 4, 60))
    background: list = []
    seen = set(planted)
    for _ in range(size * 3):
        if len(background) >= size:
            break
        value = text_background(column, lits, rng, fake)
        if value not in seen:
            seen.add(value)
            background.append(value)
    if unique:
        values = (planted + background)[:n]
        rng.shuffle(values)
        return values
    if high:
        # Names are nearly unique; the planted ones appear a few times, so DISTINCT matters.
        values = [background[i % len(background)] for i in range(n)] if background else [""] * n
        for value in planted:
            for i in rng.integers(0, n, int(rng.integers(1, 4))):
                values[i] = value
        return values
    domain = planted + background
    weights = zipf_weights(len(domain), rng)
    if planted:
        # A filter on a literal should select a fair share, not the Zipf tail.
        weights[: len(planted)] = np.maximum(weights[: len(planted)], 0.5 / len(domain))
        weights /= weights.sum()
    return [domain[i] for i in rng.choice(len(domain), n, p=weights)]


def _number_text(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


def text_numbers(lits: Literals, n: int, rng: np.random.Generator, traits: Traits,
                 column: str = "") -> list:
    """A text column that holds numbers (compared with numbers in the queries, or cast to
    one): integers where every literal is one, else with decimals, as without literals."""
    values = numbers(column, False, lits, n, rng, traits)
    marks = numeric_lits(lits)[0] + numeric_lits(lits)[1]
    integral = bool(marks) and all(float(v).is_integer() for v in marks)
    return [_number_text(round(v)) if integral else _number_text(v) for v in values]


def ties_at_top(values: list, rng: np.random.Generator, traits: Traits) -> None:
    """Copy the largest and smallest value into other rows: ORDER BY ... LIMIT 1 has ties."""
    present = [i for i, v in enumerate(values) if isinstance(v, int | float)]
    if len(present) < 4:
        return
    for pick in (max, min):
        if traits.draw(f"ties at the {pick.__name__}", lambda r: r.random() < 0.6, False):
            top = values[pick(present, key=lambda i: values[i])]
            for i in rng.choice(present, int(rng.integers(1, 3)), replace=False):
                values[i] = top


def blemish(values: list, kind: str, rng: np.random.Generator, traits: Traits) -> None:
    """NULLs, empty strings and values of the wrong SQLite type, at a per-column rate."""
    n = len(values)
    null_rate = traits.draw("null rate",
                            lambda r: float(r.choice([0, 0, 0.02, 0.05, 0.15, 0.3])), 0.0)
    hit = traits.rows(n, null_rate)
    for i in hit:
        values[i] = None
    traits.came_to("null rate", null_rate if len(hit) else 0.0)
    if kind == "text" and traits.draw("empty strings", lambda r: r.random() < 0.25, False):
        hit = traits.rows(n, 0.02)
        for i in hit:
            values[i] = ""
        traits.came_to("empty strings", bool(len(hit)))
    if kind in ("integer", "real") and traits.draw("wrong types", lambda r: r.random() < 0.06,
                                                   False):
        wrong = ["", "N/A"] if kind == "real" else ["", "N/A", 2.5]
        hit = traits.rows(n, 0.005)
        for i in hit:
            values[i] = wrong[int(rng.integers(len(wrong)))]
        traits.came_to("wrong types", bool(len(hit)))
