"""docs/dba.md runs: its SQL blocks in order in a fresh database of a private cluster (the
guide creates and drops cluster-wide roles and writes the LLM settings file, which must not
touch the shared test cluster), its settings blocks against the server's settings, and its
shell commands as far as they can run here: `make` with -n (they would replace the
server's files), the rest parsed by bash.

A block preceded by ``<!-- test: NAME -->`` is also (or only) run by the test NAME here."""

import os
import re
import stat
import subprocess
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

import psycopg
import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = (ROOT / "docs" / "dba.md").read_text()
BLOCK = re.compile(r"(?:<!-- test: ([\w ]+) -->\n)?```(\w+)\n(.*?)```", re.S)


def blocks(language: str, tag: str | None = None) -> list[str]:
    return [body for found_tag, lang, body in BLOCK.findall(GUIDE)
            if lang == language and (tag is None or found_tag == tag)]


@pytest.fixture(scope="module")
def cluster():
    """A cluster of the guide's own, removed after."""
    from siselect.client.embedded import Cluster, provsql_library

    home = Path(tempfile.mkdtemp(prefix="siselect-dba-", dir="/tmp"))
    os.chmod(home, 0o755)  # the postgres user makes its 0700 home inside
    # Configured as the guide tells a DBA to: ProvSQL preloaded where it is installed.
    preload = {"shared_preload_libraries": "provsql"} if provsql_library() else {}
    local = Cluster(home / "cluster", preload)
    local.start()
    yield local
    local.stop()
    subprocess.run(["rm", "-rf", str(home)], check=True)


_databases = iter(range(1, 1000))


@pytest.fixture
def database(cluster) -> str:
    name = f"dba_guide_{next(_databases)}"
    with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return cluster.dsn(name)


def psql(dsn: str, sql: str) -> subprocess.CompletedProcess:
    url = urllib.parse.urlparse(dsn)
    passfile = urllib.parse.parse_qs(url.query)["passfile"][0]
    return subprocess.run(
        ["psql", "-X", "-v", "ON_ERROR_STOP=1", "-h", url.hostname, "-p", str(url.port),
         "-U", url.username, "-d", url.path.lstrip("/"), "-f", "-"],
        input=sql, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PGPASSFILE": passfile})


def provsql_available(dsn: str) -> bool:
    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT count(*) > 0 FROM pg_available_extensions "
                            "WHERE name = 'provsql'").fetchone()[0]


def test_every_sql_block_runs_in_order_and_the_removal_leaves_nothing(database, cluster):
    needs_provsql = set(blocks("sql", "needs provsql"))
    script = []
    for body in blocks("sql"):
        if body in needs_provsql and not provsql_available(database):
            continue  # test_the_provsql_block_runs_where_provsql_is_installed says so
        script.append(body)
    run = psql(database, "\n".join(script))
    assert run.returncode == 0, run.stderr
    assert "ERROR" not in run.stderr, run.stderr
    # The commented results are the ones the blocks print.
    for expected in ("separated", "same_answer", "0.2.0"):
        assert re.search(rf"^\s*{expected}\s*$", run.stdout, re.M), expected
    with psycopg.connect(database) as conn:
        left = conn.execute(
            "SELECT (SELECT count(*) FROM pg_roles "
            "        WHERE rolname IN ('siselect_user', 'siselect_auditor')), "
            "(SELECT count(*) FROM pg_extension WHERE extname LIKE 'siselect%'), "
            "(SELECT count(*) FROM pg_namespace WHERE nspname = 'siselect')").fetchone()
    assert left == (0, 0, 0)
    assert not (cluster.datadir / "siselect" / "llm.json").exists()


def test_the_provsql_block_runs_where_provsql_is_installed(database):
    if not provsql_available(database):
        pytest.skip("ProvSQL is not installed on this server (it needs its own package)")
    run = psql(database, "\n".join(blocks("sql", "needs provsql")))
    assert run.returncode == 0, run.stderr


def test_the_llm_settings_land_in_a_file_only_the_server_reads(database, cluster):
    [block] = [b for b in blocks("sql") if "set_llm_config('" in b]
    run = psql(database, "CREATE EXTENSION siselect CASCADE;\n" + block)
    assert run.returncode == 0, run.stderr
    assert "sk-example" not in run.stdout  # llm_config() masks the key
    path = cluster.datadir / "siselect" / "llm.json"
    try:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert "sk-example" in path.read_text()
    finally:
        psql(database, "SELECT siselect.set_llm_config(NULL)")
    assert not path.exists()


def test_the_upgrade_block_updates_a_0_1_0_database(database):
    setup = psql(database, "CREATE EXTENSION siselect VERSION '0.1.0' CASCADE;")
    assert setup.returncode == 0, setup.stderr
    [block] = blocks("sql", "upgrade")
    run = psql(database, block)
    assert run.returncode == 0, run.stderr
    assert re.search(r"^\s*0\.2\.0\s*$", run.stdout, re.M), run.stdout


def test_the_monitoring_query_shows_a_running_call(database):
    """A separation kept busy by a slow candidate (pg_sleep, trusted for this test only)
    is what the guide's query finds, with the caller's pid."""
    setup = psql(database, "CREATE EXTENSION siselect CASCADE;\n"
                 "INSERT INTO siselect.allowed_names VALUES "
                 "('pg_catalog', 'pg_sleep', 'the monitoring test''s slow candidate');")
    assert setup.returncode == 0, setup.stderr
    [query] = blocks("sql", "monitoring")
    busy: dict[str, int] = {}

    def call():
        with psycopg.connect(database, autocommit=True) as conn:
            busy["pid"] = conn.info.backend_pid
            conn.execute("SELECT siselect.separate('SELECT 1 FROM pg_sleep(3)', 'SELECT 2')")

    worker = threading.Thread(target=call)
    worker.start()
    try:
        seen = []
        with psycopg.connect(database, autocommit=True) as conn:
            for _ in range(40):
                seen = conn.execute(query).fetchall()
                if seen:
                    break
                time.sleep(0.1)
        assert [row[0] for row in seen] == [busy["pid"]]
        assert seen[0][5].startswith("SELECT siselect.separate(")
    finally:
        worker.join(timeout=60)


def test_the_settings_blocks_name_settings_the_server_has(database):
    lines = [line for body in blocks("ini") for line in body.splitlines()
             if line.strip() and not line.startswith("#")]
    assert lines
    with psycopg.connect(database) as conn:
        for line in lines:
            name, value = (part.strip() for part in line.split("=", 1))
            context = conn.execute("SELECT context FROM pg_settings WHERE name = %s",
                                   (name,)).fetchone()
            assert context is not None, f"{name} is not a setting of this server"
            assert value.startswith("'") and value.endswith("'"), line


def test_the_shell_commands_parse_and_their_make_targets_exist():
    commands = [line for body in blocks("sh") for line in body.splitlines() if line.strip()]
    assert commands
    for line in commands:
        assert subprocess.run(["bash", "-n", "-c", line]).returncode == 0, line
        if line.startswith("make "):
            run = subprocess.run(["make", "-n", *line.split()[1:]], cwd=ROOT,
                                 capture_output=True, text=True, timeout=120)
            assert run.returncode == 0, f"{line}: {run.stderr}"
