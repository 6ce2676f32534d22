"""Cost of the lineage (witness) query against the query itself, on a generated table.

Creates (once) schema ``lineage_bench`` with ``fact`` (--rows rows, default 1,000,000)
and ``dim`` (1,000 rows), then for a few query shapes prints the time of the original
query, the time of its witness query (all witnesses produced and counted on the server),
the time of its witness keys alone (what comparing and sampling large witness sets reads
for every witness, see ``siselect.instances.search``), the ratios, and the number of witnesses.

    python3 bench/lineage_speed.py [--dsn DSN] [--rows 1000000] [--repeat 3]
"""

import statistics
import sys
import time

import psycopg

from common import parser
from siselect.client.options import resolve_dsn
from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.runtime.catalog import load_catalog
from siselect.sqltext.transpile import to_tree
from siselect.witnesses.lineage import witness_query

SCHEMA = "lineage_bench"

SHAPES = {
    "join + group by + count":
        "SELECT d.name, COUNT(*) FROM fact f JOIN dim d ON d.id = f.k GROUP BY d.name",
    "order by count desc limit 1":
        "SELECT d.name FROM fact f JOIN dim d ON d.id = f.k GROUP BY d.name "
        "ORDER BY COUNT(*) DESC LIMIT 1",
    "IN subquery":
        "SELECT COUNT(*) FROM fact f WHERE f.k IN (SELECT id FROM dim WHERE cat = 3)",
    "DISTINCT":
        "SELECT DISTINCT f.g FROM fact f WHERE f.v > 0.5",
    "filter, order by limit 10":
        "SELECT f.id, f.v FROM fact f JOIN dim d ON d.id = f.k WHERE d.cat < 5 "
        "ORDER BY f.v DESC LIMIT 10",
    "derived aggregate, outer filter":
        "SELECT x.g FROM (SELECT g, AVG(v) AS a FROM fact GROUP BY g) x WHERE x.a > 0.5",
    "MAX subquery":
        "SELECT f.id FROM fact f WHERE f.v = (SELECT MAX(v) FROM fact)",
    "AVG subquery (rows listed apart)":
        "SELECT COUNT(*) FROM fact f WHERE f.v > (SELECT AVG(v) FROM fact)",
}


def create_tables(dsn: str, rows: int) -> None:
    """The generated tables, made once for a given size."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        found = conn.execute(
            "SELECT obj_description(to_regnamespace(%s), 'pg_namespace')", (SCHEMA,)).fetchone()
        if found and found[0] == f"rows={rows}":
            return
        conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        conn.execute(f"CREATE SCHEMA {SCHEMA}")
        conn.execute(f"CREATE TABLE {SCHEMA}.dim AS SELECT i AS id, 'name ' || (i % 700) AS name, "
                     "i % 10 AS cat FROM generate_series(1, 1000) AS i")
        conn.execute(f"ALTER TABLE {SCHEMA}.dim ADD PRIMARY KEY (id)")
        conn.execute(f"CREATE TABLE {SCHEMA}.fact AS SELECT i AS id, (i * 7919) % 5000 AS g, "
                     "1 + (i * 104729) % 1000 AS k, ((i * 2654435761) % 1000003) / 1000003.0 AS v "
                     f"FROM generate_series(1::bigint, {rows}) AS i")
        conn.execute(f"ANALYZE {SCHEMA}.dim")
        conn.execute(f"ANALYZE {SCHEMA}.fact")
        conn.execute(f"COMMENT ON SCHEMA {SCHEMA} IS 'rows={rows}'")


def timed(executor: PsycopgExecutor, sql: str, repeat: int, column: str = "t") \
        -> tuple[float, int]:
    """Median seconds to run ``sql`` to completion on the server, and its row count.

    ``count(t)`` computes every column; ``count(k)`` the keys only (where the plan allows).
    """
    counted = f"SELECT count({column}) FROM ({sql}) AS t"
    times = []
    count = 0
    for _ in range(repeat):
        started = time.perf_counter()
        count = int(executor.run(counted).rows[0][0])
        times.append(time.perf_counter() - started)
    return statistics.median(times), count


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    dsn = resolve_dsn(args)
    create_tables(dsn, args.rows)
    with connect(dsn, SCHEMA, statement_timeout_ms=600_000) as conn:
        executor = PsycopgExecutor(conn)
        catalog = load_catalog(executor)
        print(f"fact: {args.rows} rows, dim: 1000 rows; median of {args.repeat} runs")
        print(f"{'shape':34s} {'original':>9s} {'witnesses':>10s} {'keys':>7s} "
              f"{'ratio w':>7s} {'ratio k':>7s} {'count':>8s}")
        for name, sql in SHAPES.items():
            tree = to_tree(sql, "postgres", catalog)
            lineage = witness_query(tree, catalog)
            plain, _ = timed(executor, sql, args.repeat)
            traced, count = timed(executor, lineage.sql, args.repeat)
            assert lineage.keyed_sql is not None
            keys, _ = timed(executor, lineage.keyed_sql, args.repeat, "k")
            print(f"{name:34s} {plain:8.3f}s {traced:9.3f}s {keys:6.3f}s "
                  f"{traced / plain:6.1f}x {keys / plain:6.1f}x {count:8d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
