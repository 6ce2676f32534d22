"""Issue 12, section 3: comparing two answers costs at most twice fetching them, whatever
the data's shape. Each shape is a pair of 100,000-row queries run by PostgreSQL; the
fetch time (both answers, canonical values, as the core gets them) and the comparison
time (the one the core makes: same_answer, or matches_judge against a judge's rounded
text) are measured in the same run, the best of ``--repeat``.

    python bench/compare_cost.py [--rows 100000] [--repeat 3] [--dsn DSN]
"""

import sys
import time
from collections.abc import Callable
from functools import partial

import psycopg

sys.path.insert(0, __import__("os").path.dirname(__file__))

from common import parser  # noqa: E402
from siselect.client.options import resolve_dsn  # noqa: E402
from siselect.runtime.answers import matches_judge, same_answer  # noqa: E402
from siselect.runtime.values import canonical_rows  # noqa: E402

LIMIT = 2.0  # the bound on comparison time / fetch time

# name -> (Q1, Q2); {n} is the number of rows. The second query differs in float noise
# where the shape needs the tolerance, so the comparison cannot stop at set equality.
SERIES = "FROM generate_series(1, {n}) AS g(i)"
SHAPES: dict[str, tuple[str, str]] = {
    "constant first column": (
        f"SELECT 0 AS c, i * 0.1::float8 AS v, i % 7 AS k {SERIES}",
        f"SELECT 0 AS c, i * 0.1::float8 * (1 + 1e-9) AS v, i % 7 AS k {SERIES}",
    ),
    "all distinct, exact": (
        f"SELECT i, i * 1.5::float8, 'n' || i {SERIES}",
        f"SELECT 'n' || i, i, i * 1.5::float8 {SERIES} ORDER BY i DESC",
    ),
    "many duplicates": (
        f"SELECT i % 100, (i % 100) * 0.25::float8 + 0.1, 'd' {SERIES}",
        f"SELECT i % 100, ((i % 100) * 0.25::float8 + 0.1) * (1 + 1e-9), 'd' {SERIES}",
    ),
    "floats needing tolerance": (
        f"SELECT sin(i), cos(i) * 1e6, i % 13 {SERIES}",
        f"SELECT sin(i) * (1 + 1e-9), cos(i) * 1e6 * (1 - 1e-9), i % 13 {SERIES}",
    ),
    "big whole numbers with fractions": (
        f"SELECT 1000000000 + i, i / 3.0::float8 {SERIES}",
        f"SELECT 1000000000 + i, i / 3.0::float8 * (1 + 1e-9) {SERIES}",
    ),
}


def best(repeat: int, work: Callable[[], object]) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - started)
    return min(times), result


def fetch(conn: psycopg.Connection, sql: str) -> list[tuple]:
    """The rows as an executor hands them to the core (canonical values). Straight through
    psycopg: the executor's checks before a query cost the same whatever the answer."""
    with conn.cursor() as cur:
        cur.execute(sql)
        return canonical_rows(cur.fetchall())


def fetch_all(conn: psycopg.Connection, sql: tuple[str, ...]) -> list[list[tuple]]:
    return [fetch(conn, q) for q in sql]


def judge_text(rows: list[tuple]) -> list[list]:
    """The rows as an LLM judge writes them: numbers as text at two decimals."""
    return [[f"{v:.2f}" if isinstance(v, float) else v for v in row] for row in rows]


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    conn = psycopg.connect(resolve_dsn(args), autocommit=True)
    print(f"{args.rows} rows per answer; seconds are the best of {args.repeat}")
    print(f"{'shape':36} {'fetch s':>8} {'compare s':>10} {'ratio':>6}  same")
    worst = 0.0
    for name, (q1, q2) in SHAPES.items():
        sql = (q1.format(n=args.rows), q2.format(n=args.rows))
        fetched, answers = best(args.repeat, partial(fetch_all, conn, sql))
        a, b = answers  # type: ignore[misc]
        cases = [(name, partial(same_answer, a, b))]
        if name == "floats needing tolerance":
            cases.append((name + " (judge)", partial(matches_judge, b, judge_text(a))))
        for label, compare in cases:
            seconds, same = best(args.repeat, compare)
            ratio = seconds / fetched
            worst = max(worst, ratio)
            print(f"{label:36} {fetched:8.3f} {seconds:10.3f} {ratio:6.2f}  {same}")
    print(f"worst ratio {worst:.2f} (bound {LIMIT:g}): {'ok' if worst <= LIMIT else 'OVER'}")
    sys.exit(0 if worst <= LIMIT else 1)


if __name__ == "__main__":
    main()
