"""One place for database fixtures.

Integration tests run against a real PostgreSQL: the cluster named by
$SISELECT_TEST_DSN (the test command starts one), or else the embedded cluster under
a private home, started here as the ``postgres`` user. Each test session gets its own
database (pytest-postgresql's janitor creates and drops it) with the extension installed.
"""

import contextlib
import json
import os
import sqlite3
import urllib.parse
from pathlib import Path

import psycopg
import pytest
from pytest_postgresql.janitor import DatabaseJanitor

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
SUPERHERO = SHARED / "bird" / "dev_databases" / "superhero" / "superhero.sqlite"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _cluster_dsn() -> str:
    if os.environ.get("SISELECT_TEST_DSN"):
        return os.environ["SISELECT_TEST_DSN"]
    from siselect.client.embedded import Cluster, ensure_database

    local = Cluster(
        Path(os.environ.get("SISELECT_TEST_HOME", f"/tmp/siselect-tests-{os.getuid()}"))
    )
    local.start()
    ensure_database(local)  # creates the runner role's grants, as `server start` does
    return local.dsn("postgres")


def _use_passfile(dsn: str) -> None:
    """The embedded cluster's DSNs name a passfile; clients given host, port and user
    instead of the DSN (the janitor, pg_basebackup, psql) find the password through
    PGPASSFILE."""
    passfile = urllib.parse.parse_qs(urllib.parse.urlparse(dsn).query).get("passfile")
    if passfile:
        os.environ["PGPASSFILE"] = passfile[0]


@pytest.fixture(scope="session")
def cluster_dsn() -> str:
    """A superuser DSN (scripts/test.sh: `siselect server start --admin`)."""
    try:
        found = _cluster_dsn()
    except Exception as exc:
        if os.environ.get("CI"):  # CI installs the server: a failed start is a failure
            pytest.fail(f"the test cluster did not start: {exc}")
        pytest.skip(f"no PostgreSQL cluster available: {exc}")
    _use_passfile(found)
    return found


@pytest.fixture(scope="session")
def dsn(cluster_dsn: str) -> str:
    """A fresh database for this test session, with siselect installed."""
    url = urllib.parse.urlparse(cluster_dsn)
    name = f"siselect_pytest_{os.getpid()}"
    janitor = DatabaseJanitor(
        user=url.username or "postgres",
        host=url.hostname or "127.0.0.1",
        port=url.port or 5432,
        dbname=name,
    )
    janitor.init()
    test_dsn = url._replace(path=f"/{name}").geturl()
    with psycopg.connect(test_dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION siselect CASCADE")
    yield test_dsn
    janitor.drop()


@pytest.fixture
def conn(dsn: str):
    with psycopg.connect(dsn, autocommit=True) as connection:
        yield connection


@pytest.fixture(scope="session")
def superhero(dsn: str) -> str:
    """Load BIRD's superhero database once per session; returns its name (schema)."""
    from siselect.client.loader import load

    with psycopg.connect(dsn, autocommit=True) as connection:
        load(connection, SUPERHERO, "superhero")
    return "superhero"


@pytest.fixture
def executor(dsn: str, superhero: str):
    """A read-only psycopg executor whose search_path is the superhero schema."""
    from siselect.client.pgexec import PsycopgExecutor, connect

    with connect(dsn, superhero, statement_timeout_ms=30_000) as connection:
        yield PsycopgExecutor(connection)


@pytest.fixture
def chat():
    """A local chat-completions server, the one test double allowed (for the LLM endpoint)."""
    from chat_server import ChatServer

    with ChatServer() as server:
        yield server


@contextlib.contextmanager
def names_allowed(dsn: str, *names: tuple[str, str], why: str):
    """An administrator's entries in siselect.allowed_names for the block, removed after:
    tests of faults and interrupts need a candidate that sleeps, and pg_sleep is volatile."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        for schema, name in names:
            conn.execute("INSERT INTO siselect.allowed_names VALUES (%s, %s, %s)",
                         (schema, name, why))
        try:
            yield
        finally:
            for schema, name in names:
                conn.execute("DELETE FROM siselect.allowed_names "
                             "WHERE schema_name = %s AND name = %s", (schema, name))


SCHEMAS = ROOT / "docs" / "schema"


class CountingExecutor:
    """A real executor that counts what it runs: ``statements``, their ``texts`` and the
    rows ``fetched`` back (tests reset the counts by assigning them)."""

    def __init__(self, inner):
        self.inner, self.statements, self.texts, self.fetched = inner, 0, [], 0

    def run(self, sql, max_rows=None, **trusted):
        self.statements += 1
        self.texts.append(sql)
        rows = self.inner.run(sql, max_rows, **trusted)
        self.fetched += len(rows.rows)
        return rows

    def __getattr__(self, name):
        return getattr(self.inner, name)


def sqlite_file_from(tmp_path_factory, schema: str, script: str) -> Path:
    """A new SQLite file, named after the schema it is loaded into, holding what ``script``
    makes."""
    path = tmp_path_factory.mktemp(schema) / f"{schema}.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(script)
    return path


def readable_schema(dsn: str, schema: str, *statements: str) -> str:
    """``schema`` made anew by ``statements`` (which name it), every role allowed to read
    it (the tests' queries run as the caller would)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        conn.execute(f"CREATE SCHEMA {schema}")
        for statement in statements:
            conn.execute(statement)
        conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO PUBLIC")
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO PUBLIC")
    return schema


def separated_on(dsn: str, schema: str, q1: str, q2: str) -> dict:
    """siselect's ``separate`` of ``q1`` and ``q2`` on ``schema``, through the client's
    executor, with the default options (a test's module settings patched still apply)."""
    from siselect.client.pgexec import PsycopgExecutor, connect
    from siselect.instances.separate import Options, separate

    with connect(dsn, schema, statement_timeout_ms=30_000) as conn:
        return separate(PsycopgExecutor(conn), q1, q2, Options())


@contextlib.contextmanager
def loaded_executor(dsn: str, sqlite_path: Path, schema: str):
    """A SQLite file loaded (again) into ``schema``, and an executor reading that schema."""
    from siselect.client.loader import load
    from siselect.client.pgexec import PsycopgExecutor, connect

    with psycopg.connect(dsn, autocommit=True) as admin:
        load(admin, sqlite_path, schema, force=True)
    with connect(dsn, schema, statement_timeout_ms=30_000) as connection:
        yield PsycopgExecutor(connection)


def untimed(result: dict) -> dict:
    """A tournament result without its timings (the tournament's and each duel's), which
    differ from run to run; the rest is a function of the inputs and the seed."""
    result.pop("timings")
    for duel in result["duels"]:
        duel.pop("timings")
    return result


def bird_layout(root: Path, task_ids: set[int], candidates_file: Path,
                extra_tasks: tuple[dict, ...] = (),
                extra_candidates: dict[str, list[str]] | None = None) -> dict[str, Path]:
    """Superhero tasks ``task_ids`` (and ``extra_tasks``) with their candidates from
    ``candidates_file``, in BIRD's layout under ``root``: tasks.json, candidates.json and a
    databases folder holding superhero."""
    tasks = [t for t in json.loads((SHARED / "bird" / "dev_superhero.json").read_text())
             if t["question_id"] in task_ids]
    candidates = {q: c for q, c in json.loads(candidates_file.read_text()).items()
                  if int(q) in task_ids}
    candidates.update(extra_candidates or {})
    (root / "tasks.json").write_text(json.dumps([*tasks, *extra_tasks]))
    (root / "candidates.json").write_text(json.dumps(candidates))
    (root / "dbs").mkdir()
    (root / "dbs" / "superhero").symlink_to(SUPERHERO.parent)
    return {"tasks": root / "tasks.json", "candidates": root / "candidates.json",
            "databases": root / "dbs", "root": root}


#: Why ProvSQL cannot serve depends on the server (installed or not, preloaded or not), not
#: on the code under test: results compared across servers or with recorded ones hold this.
PROVSQL_NOT_USABLE = "ProvSQL not usable: "


def server_neutral(value):
    """``value`` (a result, as JSON) with ProvSQL's reason for not serving made the same on
    every server."""
    if isinstance(value, dict):
        return {k: PROVSQL_NOT_USABLE + "(this server's reason)"
                if k == "backend_reason" and str(v).startswith(PROVSQL_NOT_USABLE)
                else server_neutral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [server_neutral(v) for v in value]
    return value


def schema_valid(kind: str, result):
    """``result`` checked against the committed docs/schema/<kind>.schema.json (the
    published contract, not the types it is generated from); returned unchanged."""
    import json

    import jsonschema

    schema = json.loads((SCHEMAS / f"{kind}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(json.loads(json.dumps(result, default=str)))
    return result


def row_ids(executor, catalog, table: str, where: str = "TRUE",
            order_by: str | None = "id") -> list[int]:
    """siselect's row ids (table number and ctid) of the rows of ``table`` that ``where``
    keeps, in ``order_by`` (None: as stored), as a D' names them."""
    from siselect.runtime import rowids

    number = catalog.number(table)
    order = f" ORDER BY {order_by}" if order_by else ""
    found = executor.run(f"SELECT ctid::text FROM {table} WHERE {where}{order}").rows
    return [rowids.encode(number, *(int(x) for x in tid.strip("()").split(",")))
            for (tid,) in found]
