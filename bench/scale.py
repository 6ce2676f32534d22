"""Issue 18: does a tournament's cost stay a small multiple of running its candidates as D
grows? Builds scaled copies of superhero (x1, x10, x100, x1000) and of a yardstick database
with new, distinct entities (not copies: a copied hero would tie with its original at every
ORDER BY ... LIMIT 1 and change the gold answers), runs the same tasks on each with the
reference judge and prints per scale:

* separation rate over that scale's differing pairs (duels), and instance rows;
* tournament accuracy as a share of that scale's upper bound (a candidate matching gold);
* tournament seconds / plain candidate seconds, summed over tasks, in the same run;
* the backend's peak private memory (USS, as bench/memory.py samples it) during the calls:
  its growth over the backend's USS before the call, and the absolute peak;

and writes a plot of the ratio against rows (``--out``/scale_ratio.png) with the figures
(``--out``/scale.json). Runs in its own cluster (``/var/tmp/siselect-scale``) unless
``--dsn``/``$SISELECT_DSN`` names one; needs the server's machine (it reads /proc).

    python bench/scale.py [--scales 1 10 100] [--tasks 20] [--yardstick student_club]
                          [--yardstick-scales 1 10] [--out bench/out/scale]
    python bench/scale.py --scales 1000 --yardstick ''   # later: added to the same figures
"""

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("SISELECT_HOME", "/var/tmp/siselect-scale")
sys.path.insert(0, os.path.dirname(__file__))

import psycopg  # noqa: E402

from common import DATA, SUPERHERO, parser  # noqa: E402
from memory import sampled_peak, uss_bytes  # noqa: E402
from siselect.client.loader import load  # noqa: E402
from siselect.client.options import resolve_dsn  # noqa: E402
from siselect.client.pgexec import PsycopgExecutor  # noqa: E402
from siselect.instances.pair import MAX_ANSWER_ROWS  # noqa: E402
from siselect.runtime.answers import same_answer  # noqa: E402
from siselect.runtime.catalog import load_catalog  # noqa: E402
from siselect.runtime.shared_subqueries import evaluated_once  # noqa: E402
from siselect.runtime.values import canonical_rows  # noqa: E402
from siselect.sqltext.transpile import to_tree  # noqa: E402

ROOT = Path(__file__).resolve().parent
CANDIDATES = DATA / "siselection" / "candidates" / "24" / "stage1.json"
GOLD = DATA / "siselection" / "bird_corrected.json"
YARDSTICK_INPUTS = ROOT / "out" / "yardstick" / "inputs" / "synthetic"
SAMPLE_SECONDS = 0.05
MB = 2**20

# Superhero at scale n: heroes (with their powers and attributes) n times, copy c > 0 a new
# hero: its names carry " c", its height, weight and attribute values move by a seeded
# amount in [-10, 10] kept strictly inside the original range (so the original extremes stay
# the unique extremes and the gold answers of ORDER BY ... LIMIT 1 stay put; 0, "unknown",
# stays 0). Lookup tables (publisher, colour, race, ...) are kept as they are.
NOISE = "((hashint8({id}::bigint * 7919 + c) % 11) + (hashint8({id}::bigint * 104729 + c) % 11))"


def _moved(column: str, id_expr: str, table: str, key: str = "true") -> str:
    lo, hi = (f"(SELECT {f}({column}) FROM superhero.{table} WHERE {column} <> 0 AND {key})"
              for f in ("min", "max"))
    return (f"CASE WHEN c = 0 OR coalesce({column}, 0) = 0 THEN {column} "
            f"ELSE least(greatest({column} + {NOISE.format(id=id_expr)}, {lo} + 1), {hi} - 1) "
            f"END")


def build_superhero(conn: psycopg.Connection, n: int) -> str:
    schema = f"superhero_x{n}"
    done = conn.execute("SELECT obj_description(%s::regnamespace, 'pg_namespace')",
                        (schema,)).fetchone() if _exists(conn, schema) else None
    if done and done[0] == f"scale {n} ready":
        return schema
    conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    conn.execute(f"CREATE SCHEMA {schema}")
    offset = conn.execute("SELECT max(id) FROM superhero.superhero").fetchone()[0]
    tables = [r[0] for r in conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'superhero'").fetchall()]
    for t in tables:
        conn.execute(f"CREATE TABLE {schema}.{t} (LIKE superhero.{t} INCLUDING ALL)")
    copies = f"generate_series(0, {n - 1}) AS g(c)"
    hero_cols = [r[0] for r in conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'superhero' "
        "AND table_name = 'superhero' ORDER BY ordinal_position").fetchall()]
    exprs = []
    for col in hero_cols:
        if col == "id":
            exprs.append(f"h.id + c * {offset}")
        elif col in ("superhero_name", "full_name"):
            exprs.append(f"CASE WHEN c = 0 OR {col} IS NULL OR {col} = '-' THEN {col} "
                         f"ELSE {col} || ' ' || c END")
        elif col in ("height_cm", "weight_kg"):
            exprs.append(_moved(col, "h.id", "superhero"))
        else:
            exprs.append(col)
    conn.execute(f"INSERT INTO {schema}.superhero SELECT {', '.join(exprs)} "
                 f"FROM superhero.superhero AS h, {copies}")
    conn.execute(f"INSERT INTO {schema}.hero_power SELECT hero_id + c * {offset}, power_id "
                 f"FROM superhero.hero_power, {copies}")
    value = _moved("attribute_value", "hero_id * 31 + attribute_id", "hero_attribute")
    conn.execute(f"INSERT INTO {schema}.hero_attribute SELECT hero_id + c * {offset}, "
                 f"attribute_id, {value} FROM superhero.hero_attribute, {copies}")
    for t in tables:
        if t not in ("superhero", "hero_power", "hero_attribute"):
            conn.execute(f"INSERT INTO {schema}.{t} SELECT * FROM superhero.{t}")
    conn.execute("SET search_path TO superhero")
    fks = conn.execute(
        "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE contype = 'f' AND connamespace = 'superhero'::regnamespace").fetchall()
    conn.execute(f"SET search_path TO {schema}")
    for table, name, definition in fks:
        conn.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')
    conn.execute("RESET search_path")
    _finish(conn, schema, n)
    return schema


def _exists(conn: psycopg.Connection, schema: str) -> bool:
    return conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s",
                        (schema,)).fetchone() is not None


def _finish(conn: psycopg.Connection, schema: str, n: int) -> None:
    conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO PUBLIC")
    conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO PUBLIC")
    for (t,) in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s",
                             (schema,)).fetchall():
        conn.execute(f"ANALYZE {schema}.{t}")
    conn.execute(f"COMMENT ON SCHEMA {schema} IS 'scale {n} ready'")


def build_yardstick(conn: psycopg.Connection, db_id: str, n: int, out: Path) -> str:
    """The yardstick's generator at ``--scale n``: new rows, not copies."""
    schema = f"{db_id}_x{n}"
    path = out.resolve() / f"yardstick-x{n}" / db_id / f"{db_id}.sqlite"
    if not path.exists():
        subprocess.run([sys.executable, "-m", "yardstick.synth", "--out", str(path.parents[1]),
                        "--db", db_id, "--scale", str(n)], check=True, cwd=ROOT)
    load(conn, path, schema, cascade=True)
    return schema


def rows_in(conn: psycopg.Connection, schema: str) -> int:
    return sum(conn.execute(f"SELECT count(*) FROM {schema}.{t}").fetchone()[0]
               for (t,) in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s",
                                        (schema,)).fetchall())


def superhero_tasks(count: int) -> list[dict]:
    gold = {t["question_id"]: t for t in json.loads(GOLD.read_text())
            if t["db_id"] == "superhero"}
    candidates = json.loads(CANDIDATES.read_text())
    ids = sorted(int(q) for q in candidates if int(q) in gold)[:count]
    return [dict(gold[q], candidates=candidates[str(q)]) for q in ids]


def yardstick_tasks(db_id: str, count: int) -> list[dict]:
    tasks = json.loads((YARDSTICK_INPUTS / db_id / "tasks.json").read_text())
    candidates = json.loads((YARDSTICK_INPUTS / db_id / "candidates.json").read_text())
    tasks = sorted((t for t in tasks if str(t["question_id"]) in candidates),
                   key=lambda t: t["question_id"])[:count]
    return [dict(t, candidates=candidates[str(t["question_id"])]) for t in tasks]


def answers(conn: psycopg.Connection, executor: PsycopgExecutor, catalog, sqls: list[str]
            ) -> tuple[list[list | None], float]:
    """Each query's answer on D (None when it fails) and the seconds spent running them."""
    got, seconds = [], 0.0
    for sql in sqls:
        try:
            # The text siselect runs for the candidate on D: a subquery that the translation
            # repeats is evaluated once there too (runtime.shared_subqueries).
            text = evaluated_once(to_tree(sql, "sqlite", catalog).sql("postgres"))
        except Exception:  # noqa: BLE001 - a candidate the tournament drops too
            got.append(None)
            continue
        started = time.perf_counter()
        try:
            # As the tournament reads an answer: at most MAX_ANSWER_ROWS + 1 rows (a larger
            # one drops the candidate), so an answer of millions of rows costs the same here.
            with conn.transaction(), conn.cursor(name="plain") as cur:
                cur.execute(text)
                rows = cur.fetchmany(MAX_ANSWER_ROWS + 1)
            got.append(canonical_rows(rows) if len(rows) <= MAX_ANSWER_ROWS else None)
        except psycopg.Error:
            got.append(None)
        seconds += time.perf_counter() - started
    return got, seconds


# The package a backend imports, ahead of the installed one: sys.path holding the installed
# folder already, the functions' boot line adds nothing before it (see the Makefile's BOOT).
SERVER_PYTHON = """
DO $$
import sys
installed = plpy.execute(
    "SELECT s.setting || '/siselect/python-' || e.extversion AS p FROM pg_catalog.pg_config s, "
    "pg_catalog.pg_extension e WHERE s.name = 'SHAREDIR' AND e.extname = 'siselect'")[0]["p"]
sys.path[0:0] = [%s, installed]
$$ LANGUAGE plpython3u
"""


def superhero_scale(args, n: int, count: int) -> tuple[str, str, list[dict]]:
    """The server's DSN (``--dsn`` or the embedded one), the superhero copy at scale ``n``
    (built first if missing), and its first ``count`` tasks."""
    dsn = resolve_dsn(args)
    with psycopg.connect(dsn, autocommit=True) as conn:
        load(conn, SUPERHERO, "superhero")
        schema = build_superhero(conn, n)
    return dsn, schema, superhero_tasks(count)


def use_package(conn: psycopg.Connection, python: Path) -> None:
    """Make ``conn``'s backend run the siselect package under ``python`` (SERVER_PYTHON)."""
    conn.execute(SERVER_PYTHON % repr(str(python.resolve())))


def warm_up(conn: psycopg.Connection) -> None:
    """A backend imports siselect's modules at its first tournament (1.5 s or so here), once
    per session: a duel on no table pays for that before any clock starts."""
    conn.execute("SELECT siselect.tournament(ARRAY['SELECT 1', 'SELECT 2'], 'warm-up', "
                 "judge => 'reference', reference => 'SELECT 1')")


def call_tournament(conn: psycopg.Connection, task: dict, schema: str) -> dict:
    """The tournament of a scale task (its candidates in SQLite's dialect, the reference
    judge) on ``schema``, by the SQL function."""
    return conn.execute(
        "SELECT siselect.tournament(%s, %s, evidence => %s, judge => 'reference', "
        "reference => %s, dialect => 'sqlite', search_path => %s)",
        (task["candidates"], task["question"], task.get("evidence"), task["SQL"],
         schema)).fetchone()[0]


def tournament(dsn: str, schema: str, task: dict, timeout_s: int, python: Path | None = None
               ) -> tuple[dict, float, int]:
    """The tournament on a fresh backend: its result, seconds, and peak USS growth.
    ``python``: a folder whose siselect package that backend runs instead of the installed
    one (a work tree's ``plpy``: its code measured without ``make install``)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        pid = conn.info.backend_pid
        if python is not None:
            use_package(conn, python)
        warm_up(conn)
        conn.execute(f"SET statement_timeout = '{int(timeout_s)}s'")
        base = uss_bytes(pid)
        outcome: dict = {}

        def work() -> None:
            try:
                outcome["result"] = call_tournament(conn, task, schema)
            except psycopg.Error as exc:
                outcome["error"] = f"{exc.sqlstate}: {str(exc).splitlines()[0]}"

        peak, seconds = sampled_peak(pid, base, work, SAMPLE_SECONDS)
        return (outcome.get("result") or {"error": outcome.get("error")}, seconds, peak - base,
                peak)


def run_scale(dsn: str, schema: str, tasks: list[dict], timeout_s: int, say,
              python: Path | None = None) -> dict:
    conn = psycopg.connect(dsn, autocommit=True)
    conn.execute(f"SET search_path TO {schema}")
    conn.execute(f"SET statement_timeout = '{int(timeout_s)}s'")
    executor = PsycopgExecutor(conn)
    catalog = load_catalog(executor)
    figures = {"schema": schema, "rows": rows_in(conn, schema), "plain_s": 0.0,
               "tournament_s": 0.0, "duels": 0, "separated": 0, "instance_rows": [],
               "failed_pairs": [], "hits": 0, "achievable": 0, "peak_mb": 0.0, "tasks": []}
    for task in tasks:
        (gold,), _ = answers(conn, executor, catalog, [task["SQL"]])
        got, plain = answers(conn, executor, catalog, task["candidates"])
        result, seconds, peak, absolute = tournament(dsn, schema, task, timeout_s, python)
        figures["plain_s"] += plain
        figures["tournament_s"] += seconds
        figures["peak_mb"] = max(figures["peak_mb"], peak / MB)
        figures["peak_uss_mb"] = max(figures.get("peak_uss_mb", 0.0), absolute / MB)
        # A pair of representatives is one pair however often the tournament separated it
        # (again away from an earlier instance, or per unit of a group split on D'): it
        # separates when one of its first attempts did, on that attempt's instance.
        by_pair: dict[tuple, list[dict]] = {}
        for d in result.get("duels", []):
            if d.get("attempt", 1) == 1:
                by_pair.setdefault((d.get("a"), d.get("b")), []).append(d)
        duels = list(by_pair.values())
        figures["duels"] += len(duels)
        for (a, b), records in by_pair.items():
            done = [d for d in records if d.get("separation") == "separated"]
            if done:
                figures["separated"] += 1
                figures["instance_rows"].append(done[0].get("rows"))
            else:
                figures["failed_pairs"].append((task["question_id"], a, b,
                                                records[0].get("separation"),
                                                records[0].get("reason")))
        ok = [g is not None and gold is not None and same_answer(g, gold) for g in got]
        winner = (result.get("winner") or {}).get("index")
        achievable = any(ok)
        hit = winner is not None and ok[winner]
        figures["achievable"] += achievable
        figures["hits"] += hit and achievable
        phases: dict[str, float] = {}
        for d in result.get("duels", []):
            for phase, seconds_ in (d.get("timings") or {}).items():
                phases[phase] = round(phases.get(phase, 0.0) + seconds_, 4)
        figures["tasks"].append({"question_id": task["question_id"], "plain_s": round(plain, 4),
                                 "phases": phases, "timings": result.get("timings"),
                                 "tournament_s": round(seconds, 4), "duels": len(duels),
                                 "peak_mb": round(peak / MB, 1), "hit": hit,
                                 "achievable": achievable, "error": result.get("error"),
                                 "duel_records": [
                                     {k: d.get(k) for k in ("a", "b", "attempt", "separation",
                                                            "rows", "meaning", "reason")}
                                     for d in result.get("duels", [])]})
        say(f"  {schema} task {task['question_id']}: tournament {seconds:.2f}s, plain "
            f"{plain:.2f}s, {len(duels)} duels, peak +{peak / MB:.0f} MB"
            + (f", error {result['error']}" if result.get("error") else ""))
    conn.close()
    return figures


def report_line(name: str, f: dict) -> str:
    rate = f["separated"] / f["duels"] if f["duels"] else float("nan")
    share = f["hits"] / f["achievable"] if f["achievable"] else float("nan")
    sizes = f["instance_rows"]
    ratio = f["tournament_s"] / f["plain_s"] if f["plain_s"] else float("nan")
    median = statistics.median(sizes) if sizes else float("nan")
    return (f"{name:24} {f['rows']:>10} {f['separated']:>4}/{f['duels']:<4} {rate:6.1%} "
            f"{median:6.1f} {max(sizes, default=0):5} {f['hits']:>3}/{f['achievable']:<3} "
            f"{share:6.1%} {f['tournament_s']:9.1f} {f['plain_s']:8.2f} {ratio:6.2f} "
            f"{f['peak_mb']:8.0f} {f.get('peak_uss_mb', float('nan')):8.0f}")


def plot(results: dict[str, list[dict]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, series in results.items():
        xs = [f["rows"] for f in series]
        ys = [f["tournament_s"] / f["plain_s"] if f["plain_s"] else float("nan") for f in series]
        ax.plot(xs, ys, marker="o", label=name)
    ax.axhline(3, color="grey", linestyle="--", label="target 3x")
    ax.set_xscale("log")
    ax.set_xlabel("rows in D")
    ax.set_ylabel("tournament s / plain candidate s")
    ax.set_title("Tournament cost against plain execution (issue 18)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--scales", type=int, nargs="*", default=[1, 10, 100])
    p.add_argument("--tasks", type=int, default=20)
    p.add_argument("--yardstick", default="student_club", help="'' for none")
    p.add_argument("--yardstick-scales", type=int, nargs="+", default=[1, 10])
    p.add_argument("--timeout", type=int, default=900, help="seconds per statement")
    p.add_argument("--out", type=Path, default=ROOT / "out" / "scale")
    p.add_argument("--server-python", type=Path,
                   help="run this folder's siselect package in the server (e.g. a work "
                        "tree's plpy) instead of the installed one; needs a superuser DSN")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    dsn = resolve_dsn(args)

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    with psycopg.connect(dsn, autocommit=True) as conn:
        load(conn, SUPERHERO, "superhero")
    # Figures of earlier runs into the same --out are kept (a scale run again is replaced):
    # x1000 can run on its own, later, and still share the table and the plot.
    saved = args.out / "scale.json"
    series: dict[str, list[dict]] = json.loads(saved.read_text()) if saved.exists() else {}
    plans = [("superhero", n, superhero_tasks(args.tasks)) for n in args.scales]
    if args.yardstick:
        plans += [(args.yardstick, n, yardstick_tasks(args.yardstick, args.tasks))
                  for n in args.yardstick_scales]
    for name, n, _ in plans:
        series[name] = [f for f in series.get(name, []) if f["scale"] != n]
    for name, n, tasks in plans:
        started = time.perf_counter()
        with psycopg.connect(dsn, autocommit=True) as conn:
            schema = (build_superhero(conn, n) if name == "superhero"
                      else build_yardstick(conn, name, n, args.out))
        say(f"{schema}: built in {time.perf_counter() - started:.0f}s")
        figures = run_scale(dsn, schema, tasks, args.timeout, say, args.server_python)
        series[name].append(dict(figures, scale=n))
        series[name].sort(key=lambda f: f["scale"])
        saved.write_text(json.dumps(series, indent=1) + "\n")
    print(f"{'database':24} {'rows':>10} {'separated':>9} {'rate':>6} {'med':>6} {'max':>5} "
          f"{'won':>7} {'share':>6} {'tourn s':>9} {'plain s':>8} {'ratio':>6} {'+USS MB':>8} "
          f"{'USS MB':>8}")
    for name, figures in series.items():
        for f in figures:
            print(report_line(f"{name} x{f['scale']}", f))
    for name, figures in series.items():
        for f in figures:
            for failed in f["failed_pairs"]:
                print(f"  {name} x{f['scale']} not separated: {failed}")
    plot(series, args.out / "scale_ratio.png")
    print(f"plot: {args.out / 'scale_ratio.png'}; figures: {args.out / 'scale.json'}")


if __name__ == "__main__":
    main()
