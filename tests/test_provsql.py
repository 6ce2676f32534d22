"""The ProvSQL backend, side by side with the lineage backend.

Shape rules and the fallback where ProvSQL is not usable run everywhere. The rest needs
ProvSQL itself (built from source: no registry we reach packages it) preloaded in a
cluster of its own, started here under $SISELECT_PROVSQL_HOME; where ProvSQL is not
installed, that half skips and says so (CI has no ProvSQL).
"""

import itertools
import json
import os
import subprocess
from pathlib import Path

import psycopg
import pytest

from siselect.client.cli import main as cli_main
from siselect.client.embedded import Cluster, pg_bindir
from siselect.client.loader import load
from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.client.provsql_cmd import enable
from siselect.instances.pair import Pair
from siselect.instances.separate import Options, separate, separate_pair
from siselect.instances.shadow import tid_array
from siselect.runtime import rowids
from siselect.runtime.catalog import load_catalog
from siselect.runtime.errors import InvalidInput, QueryFailed
from siselect.selection.tournament import group, prepare
from siselect.sqltext.transpile import to_tree
from siselect.witnesses.interface import executor_for
from siselect.witnesses.lineage import witness_query as lineage_witnesses
from siselect.witnesses.provsql import available, witness_query
from siselect.witnesses.provsql.shapes import is_grouped, may_be_zero, unsupported
from siselect.witnesses.provsql.witness import MAX_ROWS

from .conftest import SHARED, SUPERHERO
from .test_separation import MARVEL_ANY, MARVEL_EXACT, TALL, TALLISH, one_minimal_on

HOME = Path(os.environ.get("SISELECT_PROVSQL_HOME", f"/tmp/siselect-provsql-tests-{os.getuid()}"))
CANDIDATES = SHARED / "siselection" / "candidates" / "24" / "stage1.json"
TASKS = SHARED / "bird" / "dev_superhero.json"
NESTED_MAX = (
    "SELECT superhero_name FROM superhero WHERE height_cm = (SELECT MAX(height_cm) FROM superhero)"
)
TALLEST = "SELECT superhero_name FROM superhero ORDER BY height_cm DESC NULLS LAST LIMIT 1"


def tree(sql: str, catalog=None):
    return to_tree(sql, "postgres", catalog)


# -- shapes: which queries ProvSQL serves (no database needed) -------------------------

DECLINED = [
    ("SELECT id FROM superhero INTERSECT SELECT hero_id FROM hero_power", "INTERSECT"),
    ("SELECT DISTINCT ON (publisher_id) id FROM superhero", "DISTINCT ON"),
    ("SELECT id, rank() OVER (ORDER BY height_cm) FROM superhero", "window function"),
    ("SELECT publisher_id FROM superhero GROUP BY ROLLUP (publisher_id)", "ROLLUP"),
    (NESTED_MAX, "aggregation inside a subquery"),
    ("SELECT * FROM (SELECT publisher_id, count(*) AS n FROM superhero GROUP BY 1) AS t",
     "aggregation inside a subquery"),
    ("SELECT id FROM superhero WHERE id IN (SELECT hp.hero_id FROM hero_power hp "
     "JOIN superpower sp ON sp.id = hp.power_id)", "written with JOIN"),
    ("SELECT id FROM superhero WHERE id IN (SELECT hero_id FROM hero_power LIMIT 5)", "LIMIT"),
    ("WITH RECURSIVE r(n) AS (SELECT 1 UNION SELECT n + 1 FROM r WHERE n < 3) "
     "SELECT n FROM r", "recursive"),
    ("SELECT to_jsonb(s) FROM superhero s", "whole-row reference"),
    ("SELECT count(s.*) FROM superhero s", "whole-row reference"),
]

SERVED = [
    (MARVEL_EXACT, False),
    (TALL, True),
    ("SELECT publisher_id FROM superhero GROUP BY publisher_id ORDER BY count(*) DESC LIMIT 1",
     True),
    ("SELECT publisher_id, avg(height_cm) FROM superhero GROUP BY 1 HAVING avg(height_cm) > 180",
     True),
    ("SELECT id FROM superhero WHERE id IN (SELECT hero_id FROM hero_power hp, superpower sp "
     "WHERE sp.id = hp.power_id)", False),
    ("SELECT s.superhero_name FROM superhero s, (SELECT DISTINCT hero_id FROM hero_power) h "
     "WHERE h.hero_id = s.id", False),
    ("SELECT t.superhero_name FROM superhero t", False),
]


@pytest.mark.parametrize(("sql", "reason"), DECLINED)
def test_shapes_provsql_cannot_serve_are_declined_with_a_reason(sql, reason):
    assert reason in (unsupported(tree(sql), load_catalog_free()) or "")


@pytest.mark.parametrize(("sql", "grouped"), SERVED)
def test_shapes_provsql_serves(sql, grouped):
    assert unsupported(tree(sql), load_catalog_free()) is None
    assert is_grouped(tree(sql)) is grouped


@pytest.mark.parametrize(
    ("sql", "zero"),
    [
        (MARVEL_EXACT, False),
        ("SELECT id FROM superhero EXCEPT SELECT hero_id FROM hero_power", True),
        ("SELECT id FROM superhero s WHERE NOT EXISTS "
         "(SELECT 1 FROM hero_power h WHERE h.hero_id = s.id)", True),
        ("SELECT s.id FROM superhero s LEFT JOIN publisher p ON p.id = s.publisher_id", True),
        ("SELECT id FROM superhero WHERE NOT (height_cm > 200)", False),
    ],
)
def test_rows_with_zero_provenance_are_expected_where_sql_negates(sql, zero):
    assert may_be_zero(tree(sql)) is zero


def load_catalog_free():
    """A catalog built from the SQLite file's table and column names, without a server."""
    import sqlite3

    from siselect.runtime.catalog import Catalog, Column, Table

    catalog = Catalog()
    with sqlite3.connect(SUPERHERO) as db:
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            columns = [Column(c[1], "bigint") for c in db.execute(f'PRAGMA table_info("{name}")')]
            catalog.tables[name] = Table("superhero", name, columns)
    return catalog


# -- where ProvSQL is not usable (the ordinary test cluster) ----------------------------


def test_auto_serves_with_lineage_where_provsql_is_not_usable(executor):
    reason = available(executor)
    if reason is None:
        pytest.skip("the test cluster serves ProvSQL: no fallback to observe")
    result = separate(executor, TALL, TALLISH, Options(backend="auto"))
    assert result["status"] == "separated"
    assert result["backend"] == "lineage"
    assert result["backend_reason"] == f"ProvSQL not usable: {reason}"


def test_provsql_requested_where_it_is_not_usable_is_an_error(executor):
    if available(executor) is None:
        pytest.skip("the test cluster serves ProvSQL: nothing to refuse")
    with pytest.raises(InvalidInput, match="backend 'provsql' cannot run here"):
        separate(executor, TALL, TALLISH, Options(backend="provsql"))


def test_unknown_backend_is_refused(executor):
    with pytest.raises(InvalidInput, match="unknown backend"):
        separate(executor, TALL, TALLISH, Options(backend="whyprov"))


# -- ProvSQL's own cluster -----------------------------------------------------------------


def provsql_missing() -> str | None:
    """Why this machine cannot run ProvSQL, or None when its files are installed."""
    pg_config = pg_bindir() / "pg_config"
    if not pg_config.exists():
        return f"no pg_config next to the server binaries ({pg_bindir()}) to locate ProvSQL"
    share, lib = subprocess.run(
        [str(pg_config), "--sharedir", "--pkglibdir"], capture_output=True, text=True, check=True
    ).stdout.split()
    for path in (Path(share) / "extension" / "provsql.control", Path(lib) / "provsql.so"):
        if not path.exists():
            return (f"ProvSQL is not installed ({path} is missing); build it from source "
                    "(make && make install) to run the ProvSQL half of these tests")
    return None


def new_database(cluster: Cluster, name: str) -> str:
    with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return cluster.dsn(name)


@pytest.fixture(scope="module")
def provsql_cluster():
    missing = provsql_missing()
    if missing:
        pytest.skip(missing)
    cluster = Cluster(HOME, {"shared_preload_libraries": "provsql"})
    started = cluster.start()
    yield cluster
    if started:
        cluster.stop()


@pytest.fixture(scope="module")
def provsql_dsn(provsql_cluster):
    """A database of the ProvSQL cluster with superhero loaded and enabled."""
    name = f"siselect_provsql_pytest_{os.getpid()}"
    dsn = new_database(provsql_cluster, name)
    with psycopg.connect(dsn, autocommit=True) as conn:
        load(conn, SUPERHERO, "superhero")
    with connect(dsn, "superhero") as conn:
        enable(conn, "superhero")
    yield dsn
    with psycopg.connect(provsql_cluster.dsn("postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture
def pexec(provsql_dsn):
    with connect(provsql_dsn, "superhero", statement_timeout_ms=120_000) as conn:
        yield PsycopgExecutor(conn)


def test_enable_tracks_every_table_and_maps_every_row(pexec):
    assert available(pexec) is None
    catalog = load_catalog(pexec)
    total = sum(pexec.run(f'SELECT count(*) FROM "{t}"').rows[0][0] for t in catalog.tables)
    assert pexec.run("SELECT count(*) FROM siselect_provsql.token_row").rows[0][0] == total
    assert not [c for t in catalog.tables.values() for c in t.columns if c.name == "provsql"]
    assert pexec.run("SELECT current_setting('provsql.active')").rows[0][0] == "off"


def witness_set(executor, lineage) -> set[tuple[int, ...]]:
    # As siselect runs it: trusting the calls the backend added (its helpers), no others.
    return {tuple(w) for (w,) in executor_for(executor, [lineage]).run(lineage.sql).rows}


SAME_WITNESSES = [
    MARVEL_ANY,
    TALL,
    "SELECT DISTINCT publisher_id FROM superhero WHERE publisher_id < 5",
    "SELECT publisher_id, count(*) FROM superhero WHERE publisher_id < 5 GROUP BY 1 "
    "HAVING count(*) > 4",
    "SELECT publisher_id FROM superhero GROUP BY publisher_id ORDER BY count(*) DESC LIMIT 1",
    "SELECT id FROM superhero WHERE id < 5 UNION SELECT hero_id FROM hero_power "
    "WHERE power_id = 1",
    "SELECT superhero_name FROM superhero WHERE id IN "
    "(SELECT hero_id FROM hero_power WHERE power_id = 1)",
]
# Under negation lineage also lists the rows the negated part reads; ProvSQL's
# why-provenance keeps the terms of the rows that stay.
FEWER_WITNESSES = [
    "SELECT id FROM superhero WHERE publisher_id = 1 "
    "EXCEPT SELECT id FROM superhero WHERE height_cm > 180",
    "SELECT id FROM superhero s WHERE NOT EXISTS "
    "(SELECT 1 FROM hero_power h WHERE h.hero_id = s.id)",
]


@pytest.mark.parametrize(
    ("sql", "same"), [(q, True) for q in SAME_WITNESSES] + [(q, False) for q in FEWER_WITNESSES]
)
def test_provsql_witnesses_are_the_lineage_witnesses(pexec, sql, same):
    catalog = load_catalog(pexec)
    query = tree(sql, catalog)
    ours = witness_set(pexec, witness_query(query, catalog))
    theirs = witness_set(pexec, lineage_witnesses(query, catalog))
    assert ours
    assert ours == theirs if same else ours < theirs


def rows_of_table(executor, catalog, witnesses, table: str, column: str) -> set:
    """The values of ``column`` in the ``table`` rows the witnesses name."""
    ctids = [rowids.decode(r)[1] for w in witnesses for r in w
             if rowids.decode(r)[0] == catalog.number(table)]
    found = executor.run(f"SELECT {column} FROM {table} WHERE ctid = ANY({tid_array(ctids)})")
    return {r[0] for r in found.rows}


@pytest.mark.parametrize(
    ("sql", "table", "column"),
    [
        # Failed HAVING groups come back from ProvSQL with a comparison gate, not filtered.
        ("SELECT publisher_id FROM superhero GROUP BY publisher_id HAVING count(*) > 20",
         "superhero", "publisher_id"),
        # NOT EXISTS and EXCEPT keep their removed rows with zero provenance.
        ("SELECT id FROM superhero s WHERE NOT EXISTS "
         "(SELECT 1 FROM hero_power h WHERE h.hero_id = s.id)", "superhero", "id"),
        ("SELECT id FROM superhero WHERE publisher_id = 1 "
         "EXCEPT SELECT id FROM superhero WHERE height_cm > 180", "superhero", "id"),
    ],
)
def test_rows_with_zero_provenance_give_no_witnesses(pexec, sql, table, column):
    catalog = load_catalog(pexec)
    answers = {r[0] for r in pexec.run(sql).rows}
    witnesses = list(witness_set(pexec, witness_query(tree(sql, catalog), catalog)))
    assert witnesses
    assert rows_of_table(pexec, catalog, witnesses, table, column) == answers


def test_declined_shapes_are_served_by_lineage_with_the_reason(pexec):
    result = separate(pexec, NESTED_MAX, TALLEST, Options(backend="auto"))
    assert result["status"] == "separated"
    assert result["backend"] == "lineage"
    assert "aggregation inside a subquery" in result["backend_reason"]


def test_shapes_provsql_refuses_at_run_time_fall_back_with_its_error(pexec):
    # ProvSQL refuses a scalar subquery under DISTINCT when it plans the query.
    q1, q2 = (
        "SELECT DISTINCT sp.power_name FROM hero_power hp JOIN superpower sp "
        f"ON sp.id = hp.power_id WHERE hp.hero_id = (SELECT id FROM superhero WHERE id = {i})"
        for i in (1, 2)
    )
    result = separate(pexec, q1, q2, Options(backend="provsql"))
    assert result["status"] == "separated"
    assert result["backend"] == "lineage"
    assert result["backend_reason"].startswith("ProvSQL failed: ")


def test_tracing_more_rows_than_the_cap_is_an_error_not_minutes_of_work(pexec):
    catalog = load_catalog(pexec)
    lineage = witness_query(tree("SELECT id FROM superhero", catalog), catalog)
    capped = lineage.sql.replace(f", {MAX_ROWS})", ", 10)")
    assert capped != lineage.sql
    with pytest.raises(QueryFailed, match="more than 10 rows to trace") as caught:
        executor_for(pexec, [lineage]).run(capped)
    assert caught.value.sqlstate == "54000"



def test_the_runner_role_is_served_by_provsql(provsql_cluster, provsql_dsn):
    """The CLI runs candidates as siselect_runner (issue 12): what ``load`` and
    ``provsql enable`` grant it lets ProvSQL serve it, not the lineage fallback."""
    database = provsql_dsn.split("?")[0].rsplit("/", 1)[1]
    with connect(provsql_cluster.runner_dsn(database), "superhero",
                 statement_timeout_ms=120_000) as conn:
        runner = PsycopgExecutor(conn)
        assert runner.run("SELECT current_user::text").rows[0][0] == "siselect_runner"
        assert available(runner) is None
        result = separate(runner, TALL, TALLISH, Options(backend="provsql"))
    assert result["status"] == "separated"
    assert result["backend"] == "provsql", result.get("backend_reason")

def superhero_pairs(executor, catalog, tasks: int):
    """Pairs of representatives of the first superhero tasks with candidates at K=24."""
    known = {t["question_id"]: t for t in json.loads(TASKS.read_text())}
    candidates = json.loads(CANDIDATES.read_text())
    chosen = sorted((int(q), c) for q, c in candidates.items() if int(q) in known)[:tasks]
    for _, sqls in chosen:
        entries = prepare(executor, catalog, sqls, "sqlite")
        for ga, gb in itertools.combinations(group(entries), 2):
            yield entries[ga.representative], entries[gb.representative]


def test_separation_suite_on_both_backends(pexec):
    catalog = load_catalog(pexec)
    pairs = [(tree(q1, catalog), tree(q2, catalog))
             for q1, q2 in ((TALL, TALLISH), (MARVEL_EXACT, MARVEL_ANY))]
    served = searched = shaped = 0
    for a, b in [*((x, y) for x, y in pairs), *((e.tree, f.tree) for e, f in
                                                 superhero_pairs(pexec, catalog, 12))]:
        # Pairs both of whose queries have shapes ProvSQL serves (SQLite's scalar subqueries,
        # read as their first row, translate with a LIMIT, which it does not).
        shaped += unsupported(a, catalog) is None and unsupported(b, catalog) is None
        answers = (pexec.run(a.sql("postgres")), pexec.run(b.sql("postgres")))
        results = {
            backend: separate_pair(Pair(pexec, catalog, (a, b)), *answers,
                                   Options(backend=backend))
            for backend in ("lineage", "provsql")
        }
        assert results["lineage"]["status"] == results["provsql"]["status"]
        if "backend_reason" in results["provsql"]:
            searched += 1
            served += results["provsql"]["backend"] == "provsql"
            assert results["provsql"]["backend"] == "provsql" or results["provsql"][
                "backend_reason"].startswith(("ProvSQL does not serve q", "ProvSQL failed: "))
        if results["provsql"]["status"] == "separated":
            ids = results["provsql"]["row_ids"]
            check = Pair(pexec, catalog, (a, b))
            assert check.separates(ids), "the instance separates"
            if results["provsql"]["backend"] == "provsql" and not check.separates([]):
                # As the lineage backend's: 1-minimal among the instances on which neither
                # answer is empty or all NULL (a pair the lineage backend served for ProvSQL
                # is that backend's, tested in test_separation).
                assert one_minimal_on(check, ids)
    assert served == shaped >= 4, f"ProvSQL served {served} of {searched} pairs searched, " \
        f"{shaped} of them of shapes it serves"


def test_cli_enable_then_disable_leaves_the_database_as_it_was(provsql_cluster, capsys):
    dsn = new_database(provsql_cluster, f"siselect_provsql_cli_{os.getpid()}")
    with psycopg.connect(dsn, autocommit=True) as conn:
        load(conn, SUPERHERO, "superhero")
        before = conn.execute("SELECT extname FROM pg_extension ORDER BY 1").fetchall()
    assert cli_main(["provsql", "enable", "--db", "superhero", "--dsn", dsn]) == 0
    assert "provenance on 10 tables" in capsys.readouterr().out
    with connect(dsn, "superhero") as conn:
        assert available(PsycopgExecutor(conn)) is None
    assert cli_main(["provsql", "disable", "--db", "superhero", "--dsn", dsn]) == 0
    assert "removed from 10 tables" in capsys.readouterr().out
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("SELECT extname FROM pg_extension ORDER BY 1").fetchall() == before
        assert conn.execute(
            "SELECT count(*) FROM pg_attribute WHERE attname = 'provsql' AND NOT attisdropped"
        ).fetchone()[0] == 0
        assert conn.execute(
            "SELECT count(*) FROM pg_namespace WHERE nspname = 'siselect_provsql'"
        ).fetchone()[0] == 0
        assert conn.execute(
            "SELECT count(*) FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase "
            "WHERE d.datname = current_database()"
        ).fetchone()[0] == 0
    with psycopg.connect(provsql_cluster.dsn("postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "siselect_provsql_cli_{os.getpid()}" WITH (FORCE)')
