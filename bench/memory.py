"""Issue 12, section 4: the backend's peak private memory (USS: Private_Clean +
Private_Dirty of /proc/<pid>/smaps_rollup, sampled while the call runs; RSS would count
shared buffers) for the two cases of the issue:

* ``separate`` on two answers of 100,000 rows of 5 KB each (the byte cap should refuse
  them with 54000);
* ``referenced_rows`` over a large table: a separation whose fallback reads "every row of
  the tables read", on a table of ``--big-rows`` rows;
* a tournament of three candidates over that table (issue 18: witnesses as bounded
  sketches, once per candidate).

Needs to run on the server's machine (it reads the backend's /proc entry).

    python bench/memory.py [--dsn DSN] [--big-rows 2000000]
"""

import sys
import threading
import time
from pathlib import Path

import psycopg

sys.path.insert(0, __import__("os").path.dirname(__file__))

from common import parser  # noqa: E402
from siselect.client.options import resolve_dsn  # noqa: E402

LIMIT_MB = 512
SAMPLE_SECONDS = 0.02


def uss_bytes(pid: int) -> int:
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value, *_ = line.split()
        fields[name.rstrip(":")] = int(value) * 1024
    return fields["Private_Clean"] + fields["Private_Dirty"]


def sampled_peak(pid: int, base: int, work, every: float = SAMPLE_SECONDS
                 ) -> tuple[int, float]:
    """Run ``work`` in a thread while sampling backend ``pid``'s USS: the peak (at least
    ``base``) and the seconds ``work`` took, timed by its own thread (the sampler notices
    the end only at its next sample: up to ``every`` later, 20 tasks x 25 ms on average)."""
    ended: list[float] = []

    def timed() -> None:
        try:
            work()
        finally:
            ended.append(time.perf_counter())

    thread = threading.Thread(target=timed)
    started = time.perf_counter()
    thread.start()
    peak = base
    while thread.is_alive():
        try:
            peak = max(peak, uss_bytes(pid))
        except (FileNotFoundError, ProcessLookupError):
            break
        time.sleep(every)
    thread.join()
    return peak, ended[0] - started


def peak_during(dsn: str, sql: str, args: tuple) -> tuple[int, int, float, str]:
    """Run ``sql`` on a new connection; its backend's USS before, at peak, the seconds, and
    the outcome (a status or the error's SQLSTATE and message)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        pid = conn.info.backend_pid
        conn.execute("SELECT siselect.version()")  # the package imported: not counted
        # siselect runs only in read-only transactions (its functions set it themselves).
        conn.execute("SET default_transaction_read_only = on")
        base = uss_bytes(pid)
        outcome: dict = {}
        notices: list = []
        conn.add_notice_handler(notices.append)

        def work() -> None:
            try:
                cur = conn.execute(sql, args or None)
                if cur.description is None:  # a DO block: it says what it found
                    outcome["text"] = "; ".join(n.message_primary or "" for n in notices)
                else:
                    row = cur.fetchone()[0]
                    outcome["text"] = (
                        f"status {row.get('status')}: {row.get('reason')}" if "status" in row
                        else f"winner {(row.get('winner') or {}).get('index')}, "
                        f"{len(row.get('duels', []))} duels: "
                        f"{[d.get('separation') for d in row.get('duels', [])]}")
            except psycopg.Error as exc:
                outcome["text"] = f"error {exc.sqlstate}: {str(exc).splitlines()[0]}"

        peak, seconds = sampled_peak(pid, base, work)
        return base, peak, seconds, outcome.get("text", "?")


def setup(dsn: str, big_rows: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS siselect CASCADE")
        conn.execute("CREATE SCHEMA IF NOT EXISTS bench_memory")
        conn.execute("CREATE TABLE IF NOT EXISTS bench_memory.wide AS "
                     "SELECT i, repeat(md5(i::text), 157) AS payload "  # 5,024 characters
                     "FROM generate_series(1, 100000) AS g(i)")
        have = conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'bench_memory' "
                            "AND tablename = 'big'").fetchone()[0]
        if not have or conn.execute("SELECT count(*) FROM bench_memory.big").fetchone()[0] \
                != big_rows:
            conn.execute("DROP TABLE IF EXISTS bench_memory.big")
            conn.execute("CREATE TABLE bench_memory.big AS SELECT i AS id, i % 1000 AS k "
                         f"FROM generate_series(1, {big_rows}) AS g(i)")
        conn.execute("GRANT USAGE ON SCHEMA bench_memory TO PUBLIC")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA bench_memory TO PUBLIC")


REFERENCED_ROWS = """
DO $$
import sys
path = plpy.execute("SELECT setting || '/siselect/python-' || siselect.version() AS p "
                    "FROM pg_catalog.pg_config WHERE name = 'SHAREDIR'")[0]["p"]
path in sys.path or sys.path.insert(0, path)
from siselect.runtime.catalog import load_catalog
from siselect.instances.references import referenced_rows
from siselect.runtime.plpython import PlpyExecutor
from siselect.sqltext.transpile import to_tree
executor = PlpyExecutor(plpy, "bench_memory")
catalog = load_catalog(executor)
tree = to_tree("SELECT count(*) FROM big", "postgres", catalog)
found = referenced_rows(executor, catalog, [tree], 20000)
plpy.notice("referenced_rows: " + ("over the cap" if found is None else f"{len(found)} rows"))
$$ LANGUAGE plpython3u
"""

CASES = {
    "answers of 100,000 rows of 5 KB": (
        "SELECT siselect.separate(%s, %s, search_path => 'bench_memory')",
        ("SELECT i, payload FROM wide", "SELECT i, payload || 'x' FROM wide"),
    ),
    # The function itself, in the server, as separation's fallback calls it (with its cap
    # of 20,000 row ids) on a table of --big-rows rows.
    "referenced_rows over a large table": (REFERENCED_ROWS, ()),
    # Issue 18: each candidate's witnesses are read once per tournament, as a sketch of at
    # most 8,192 witnesses: no Python list of the --big-rows witnesses.
    "a tournament over the large table": (
        "SELECT siselect.tournament(%s, 'How many rows have k below 500?', "
        "judge => 'reference', reference => %s, search_path => 'bench_memory')",
        (["SELECT count(*) FROM big WHERE k < 500", "SELECT count(*) FROM big WHERE k <= 500",
          "SELECT count(DISTINCT id) FROM big WHERE k < 499"],
         "SELECT count(*) FROM big WHERE k < 500")),
}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--big-rows", type=int, default=2_000_000)
    args = p.parse_args()
    dsn = resolve_dsn(args)
    setup(dsn, args.big_rows)
    worst = 0
    for name, (sql, params) in CASES.items():
        base, peak, seconds, outcome = peak_during(dsn, sql, params)
        worst = max(worst, peak - base)
        print(f"{name}: USS {base / 2**20:.0f} MB before, peak {peak / 2**20:.0f} MB "
              f"(+{(peak - base) / 2**20:.0f} MB) in {seconds:.1f}s; {outcome[:160]}")
    print(f"largest growth {worst / 2**20:.0f} MB (bound {LIMIT_MB} MB): "
          f"{'ok' if worst < LIMIT_MB * 2**20 else 'OVER'}")


if __name__ == "__main__":
    main()
