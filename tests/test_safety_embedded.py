"""Issue 12, point 2: the embedded cluster lets nobody else in, prints no secret, and runs
candidates as an unprivileged role; a cluster made with ``-A trust`` is secured on start.

Each test works on a cluster of its own module, started through the CLI as a user would
(``python -m siselect server start``), under a fresh home in /tmp (the ``postgres`` OS user
must reach it when we are root).
"""

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

import psycopg
import psycopg.errors
import pytest
from psycopg.conninfo import conninfo_to_dict

from siselect.client.credentials import read_passfile
from siselect.client.embedded import RUNNER, SUPERUSER, Cluster, _free_port, pg_bindir
from siselect.client.loader import load

from .conftest import ROOT, SUPERHERO

API_KEY = "sk-embedded-safety-4f1c9a7e"


def siselect(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """The CLI in a process of its own, on the cluster under ``home``."""
    env = {**os.environ, "SISELECT_HOME": str(home), "PYTHONPATH": str(ROOT / "plpy")}
    for name in ("SISELECT_DSN", "PGPASSFILE", "PGPASSWORD"):
        env.pop(name, None)
    result = subprocess.run([sys.executable, "-m", "siselect", *args], capture_output=True,
                            text=True, env=env, timeout=300)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def last_line(result: subprocess.CompletedProcess) -> str:
    return result.stdout.strip().splitlines()[-1]


def new_home() -> Path:
    return Path(tempfile.mkdtemp(prefix="siselect-embedded-"))


@pytest.fixture(scope="module")
def cluster():
    """A cluster started by ``server start``, superhero loaded by ``load``."""
    try:
        pg_bindir()
    except Exception as exc:
        pytest.skip(f"no PostgreSQL server binaries: {exc}")
    home = new_home()
    try:
        siselect(home, "server", "start")
        siselect(home, "load", str(SUPERHERO))
        yield Cluster(home)
    finally:
        siselect(home, "server", "stop", check=False)
        shutil.rmtree(home, ignore_errors=True)


def no_password_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PGPASSFILE"] = "/nonexistent/pgpass"  # nor may ~/.pgpass, libpq's default
    return env


def psql(*args: str, user: str | None = None) -> subprocess.CompletedProcess:
    """psql without any password, optionally as another OS user."""
    command = [str(pg_bindir() / "psql"), "-w", "-X", "-At", *args]
    if user is not None:
        command = ["runuser", "-u", user, "--", *command]
    return subprocess.run(command, capture_output=True, text=True, env=no_password_env(),
                          timeout=60)


# -- (a) nobody else gets in ---------------------------------------------------------------


def test_another_os_user_is_refused_over_tcp_and_the_socket(cluster: Cluster):
    if os.geteuid() != 0:
        pytest.skip("switching to another OS user (runuser) needs root")
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no OS user 'nobody' on this machine")
    port = str(cluster.port())
    for role in (SUPERUSER, RUNNER):
        tcp = psql(f"postgresql://{role}@127.0.0.1:{port}/siselect", "-c", "SELECT 4242",
                   user="nobody")
        assert tcp.returncode != 0 and "4242" not in tcp.stdout, tcp
        # ... nor with the DSN the CLI prints: the passfile it names is not theirs to read.
        printed = psql(cluster.dsn("siselect", role), "-c", "SELECT 4242", user="nobody")
        assert printed.returncode != 0 and "4242" not in printed.stdout, printed
        local = psql("-h", str(cluster.socket_dir), "-p", port, "-U", role, "-d", "siselect",
                     "-c", "SELECT 4242", user="nobody")
        assert local.returncode != 0 and "4242" not in local.stdout, local


def test_no_connection_is_trusted_not_even_the_owners(cluster: Cluster):
    """The owner of the cluster (or root) still needs the password: pg_hba.conf trusts
    nothing, so the socket's directory permissions are not the only fence."""
    port = str(cluster.port())
    owner = "postgres" if os.geteuid() == 0 else None
    for target in (["-h", "127.0.0.1"], ["-h", str(cluster.socket_dir)]):
        refused = psql(*target, "-p", port, "-U", SUPERUSER, "-d", "siselect",
                       "-c", "SELECT 4242", user=owner)
        assert refused.returncode != 0 and "4242" not in refused.stdout, refused
    hba = (cluster.datadir / "pg_hba.conf").read_text()
    rules = [line.split() for line in hba.splitlines() if line.strip() and line[0] != "#"]
    assert rules and all(rule[-1] == "scram-sha-256" for rule in rules)
    # The control: with the passfile the same connection works.
    allowed = psql(cluster.dsn("siselect"), "-c", "SELECT 4242")
    assert allowed.returncode == 0 and allowed.stdout.strip() == "4242", allowed


# -- (b) no secret in what the CLI prints ------------------------------------------------


def test_printed_dsns_carry_no_password_and_work(cluster: Cluster):
    passwords = read_passfile(cluster.passfile)
    assert set(passwords) == {SUPERUSER, RUNNER}
    outputs = [siselect(cluster.home, "server", *a) for a in
               (["start"], ["start", "--admin"], ["status"], ["dsn"], ["dsn", "--admin"])]
    for result in outputs:
        for password in passwords.values():
            assert password not in result.stdout + result.stderr
    users = {}
    for result in outputs:
        dsn = last_line(result)
        params = conninfo_to_dict(dsn)
        assert "password" not in params and params["passfile"] == str(cluster.passfile)
        assert urllib.parse.urlparse(dsn).password is None
        with psycopg.connect(dsn) as conn:
            row = conn.execute("SELECT current_user").fetchone()
            assert row is not None
            users[dsn] = row[0]
    # The default DSN is the runner's; --admin gives the superuser's.
    assert [users[last_line(r)] for r in outputs] == [RUNNER, SUPERUSER, RUNNER, RUNNER,
                                                       SUPERUSER]


# -- (e) where the passwords are kept --------------------------------------------------------


def test_the_passfile_is_0600_in_a_0700_home_owned_by_the_cluster_owner(cluster: Cluster):
    owner = pwd.getpwnam("postgres").pw_uid if os.geteuid() == 0 else os.geteuid()
    for path, mode in ((cluster.passfile, 0o600), (cluster.home, 0o700),
                       (cluster.socket_dir, 0o700)):
        info = path.stat()
        assert stat.S_IMODE(info.st_mode) == mode, path
        assert info.st_uid == owner, path


# -- (c) the runner role's privileges ----------------------------------------------------


def test_the_runner_is_no_superuser_and_cannot_read_the_llm_key(cluster: Cluster):
    admin_dsn = cluster.dsn("siselect")
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute("SELECT siselect.set_llm_config(%s::jsonb)",
                      (json.dumps({"api_key": API_KEY}),))
        # The control: the file is where the runner will look, and holds the key.
        row = admin.execute("SELECT pg_read_file('siselect/llm.json')").fetchone()
        assert row is not None and API_KEY in row[0]
    try:
        with psycopg.connect(cluster.runner_dsn("siselect"), autocommit=True) as runner:
            attributes = runner.execute(
                "SELECT rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls "
                "FROM pg_roles WHERE rolname = current_user").fetchone()
            assert attributes == (False, False, False, False, False)
            granted = runner.execute(
                "SELECT array_agg(b.rolname ORDER BY b.rolname) FROM pg_auth_members m "
                "JOIN pg_roles b ON b.oid = m.roleid JOIN pg_roles u ON u.oid = m.member "
                "WHERE u.rolname = current_user").fetchone()
            assert granted == (["siselect_user"],)
            for probe in ("SELECT pg_read_file('siselect/llm.json')",
                          "SELECT convert_from(pg_read_binary_file('siselect/llm.json'), "
                          "'UTF8')",
                          "SELECT string_agg(f, ',') FROM pg_ls_dir('siselect') AS f"):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    runner.execute(probe).fetchall()
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                runner.execute("CREATE TEMP TABLE k (t text)")
                runner.execute("COPY k FROM '/proc/self/environ'")
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute("SELECT siselect.set_llm_config(NULL)")


def test_the_runner_reads_loaded_schemas_and_nothing_else(cluster: Cluster):
    with psycopg.connect(cluster.dsn("siselect"), autocommit=True) as admin:
        admin.execute("DROP SCHEMA IF EXISTS not_loaded CASCADE")
        admin.execute("CREATE SCHEMA not_loaded")
        admin.execute("CREATE TABLE not_loaded.secret AS SELECT 'classified'::text AS t")
    with psycopg.connect(cluster.runner_dsn("siselect"), autocommit=True) as runner:
        assert runner.execute("SELECT count(*) FROM superhero.superhero").fetchone() == (750,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            runner.execute("SELECT t FROM not_loaded.secret").fetchall()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            runner.execute("DELETE FROM superhero.superhero")
    with psycopg.connect(cluster.dsn("siselect"), autocommit=True) as admin:
        assert admin.execute("SELECT count(*) FROM superhero.superhero").fetchone() == (750,)


# -- (d) the CLI runs candidates as the runner -----------------------------------------------

WHO = "SELECT current_user::text AS u"
RUNNER_LITERAL = f"SELECT '{RUNNER}'::text AS u"
SUPERUSER_LITERAL = f"SELECT '{SUPERUSER}'::text AS u"


def test_sql_separate_and_tournament_run_candidates_as_the_runner(cluster: Cluster):
    home = cluster.home
    sql = json.loads(last_line(siselect(home, "sql", "--db", "superhero", "--json", WHO)))
    assert sql["rows"] == [[RUNNER]]
    # current_user gives the runner's name: the same answer as that literal, not the other.
    same = json.loads(last_line(siselect(home, "separate", "--db", "superhero", "--json",
                                         WHO, RUNNER_LITERAL)))
    assert same["status"] == "same_answer"
    apart = siselect(home, "separate", "--db", "superhero", "--json", WHO, SUPERUSER_LITERAL,
                     check=False)
    assert json.loads(last_line(apart))["status"] == "separated"
    result = json.loads(last_line(siselect(
        home, "tournament", "--db", "superhero", "--judge", "none", "--question", "who?",
        "--no-with-references", "--json", WHO, RUNNER_LITERAL, SUPERUSER_LITERAL)))
    groups = sorted(sorted(g["members"]) for g in result["groups"])
    assert groups == [[0, 1], [2]]



def test_bench_loads_as_the_superuser_and_runs_tasks_as_the_runner(cluster: Cluster,
                                                                    tmp_path: Path):
    """The gold answer is the runner's name: only a task run as the runner finds
    ``current_user`` correct (and loading, which the runner may not do, succeeded)."""
    (tmp_path / "dbs").mkdir()
    (tmp_path / "dbs" / "superhero").symlink_to(SUPERHERO.parent)
    task = {"question_id": 1, "db_id": "superhero", "difficulty": "simple",
            "question": "Who runs this?", "evidence": "", "SQL": RUNNER_LITERAL}
    (tmp_path / "tasks.json").write_text(json.dumps([task]))
    (tmp_path / "candidates.json").write_text(json.dumps({"1": [WHO, SUPERUSER_LITERAL]}))
    siselect(cluster.home, "bench", "--tasks", str(tmp_path / "tasks.json"),
             "--candidates", str(tmp_path / "candidates.json"),
             "--databases", str(tmp_path / "dbs"), "--out", str(tmp_path / "out"),
             "--judge", "none")
    (record,) = [json.loads(line) for line in
                 (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert record["status"] == "ok" and record["correct"] == [0]

# -- migration -----------------------------------------------------------------------------


def test_a_trust_cluster_is_secured_on_start(cluster: Cluster):
    """A cluster made by an earlier siselect (initdb -A trust, socket in the home), with a
    database loaded, still running: ``server start`` stops it, sets passwords and
    pg_hba.conf, restarts it, and the runner role may read what was loaded."""
    old = Cluster(new_home())
    try:
        old._prepare_home()
        made = old._pg("initdb", "-D", str(old.datadir), "-U", SUPERUSER, "-A", "trust",
                       "-E", "UTF8", "--locale=C.UTF-8", "--no-instructions")
        assert made.returncode == 0, made.stderr
        port = str(_free_port())
        started = old._pg("pg_ctl", "start", "-w", "-D", str(old.datadir), "-l",
                          str(old.logfile), "-o",
                          f"-p {port} -c listen_addresses=127.0.0.1 -k {old.home}")
        assert started.returncode == 0, started.stderr
        old.portfile.write_text(port)
        opened = psql(f"postgresql://{SUPERUSER}@127.0.0.1:{port}/postgres", "-c", "SELECT 1")
        assert opened.returncode == 0, "the old cluster should be open before the migration"
        with psycopg.connect(f"postgresql://{SUPERUSER}@127.0.0.1:{port}/postgres",
                             autocommit=True) as conn:
            conn.execute("CREATE DATABASE siselect")
        with psycopg.connect(f"postgresql://{SUPERUSER}@127.0.0.1:{port}/siselect",
                             autocommit=True) as conn:
            load(conn, SUPERHERO, "superhero")  # loaded before any runner role existed

        siselect(old.home, "server", "start")
        assert old.secured() and old.running()
        new_port = str(old.port())
        for target in (["-h", "127.0.0.1"], ["-h", str(old.socket_dir)]):
            refused = psql(*target, "-p", new_port, "-U", SUPERUSER, "-d", "postgres",
                           "-c", "SELECT 4242")
            assert refused.returncode != 0 and "4242" not in refused.stdout, refused
        with psycopg.connect(old.runner_dsn("siselect")) as conn:
            assert conn.execute("SELECT current_user, count(*) FROM superhero.superhero"
                                ).fetchone() == (RUNNER, 750)
    finally:
        old.stop()
        shutil.rmtree(old.home, ignore_errors=True)



def test_processes_starting_one_fresh_cluster_at_once_all_get_it():
    """Two commands run at once on a machine without a cluster (a researcher's two benches):
    both succeed on one cluster, started once, and it answers afterwards."""
    home = new_home()
    env = {**os.environ, "SISELECT_HOME": str(home), "PYTHONPATH": str(ROOT / "plpy")}
    try:
        starting = [subprocess.Popen([sys.executable, "-m", "siselect", "server", "start"],
                                     env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True) for _ in range(3)]
        finished = [p.communicate(timeout=300) for p in starting]
        assert [p.returncode for p in starting] == [0, 0, 0], finished
        cluster = Cluster(home)
        assert cluster.running() and cluster.secured()
        with psycopg.connect(cluster.dsn("postgres")) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        Cluster(home).stop()
        shutil.rmtree(home, ignore_errors=True)
