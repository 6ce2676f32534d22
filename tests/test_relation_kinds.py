"""Issue 16, section 2: separating instances on every kind of relation.

Copies of the real superhero database, made in PostgreSQL from the loaded schema:
partitioned (``PARTITION BY LIST``, two partitions per table), inherited (a parent holding
some rows, a child the others), views over stored tables (read through their definition by
a role that may read the tables, read as they are by a role that may read only the
views), and foreign tables (postgres_fdw to the same server). Each gives, for real
candidate pairs, the status the plain schema gives, with instances that separate, are
1-minimal within their rank and show as many rows as ``rows`` says. Rows that a
security-barrier view or row-level security hides never reach an instance or a prompt.
"""

import itertools
import json
import os
import urllib.parse
from functools import cache
from pathlib import Path

import psycopg
import pytest

from conftest import SHARED
from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.instances.backends import serve
from siselect.instances.meaning import FAILED, Meaning
from siselect.instances.pair import Pair
from siselect.instances.references import fetch_instance
from siselect.instances.render import instance_size
from siselect.instances.separate import Options, parse_pair, run_on_d, separate
from siselect.instances.shadow import restrict
from siselect.runtime import rowids
from siselect.runtime.catalog import load_catalog
from siselect.runtime.executor import quote_ident
from siselect.selection.grouping import group
from siselect.selection.prompts import user_prompt
from siselect.selection.tournament import prepare
from siselect.selection.verdict import JudgeContext
from siselect.sqltext.transpile import to_tree

SUFFIX = os.getpid()
PLAIN = "superhero"
SCHEMAS = {kind: f"rk_{kind}_{SUFFIX}" for kind in
           ("partitioned", "inherited", "views", "foreign", "secret")}
READER = f"rk_reader_{SUFFIX}"  # may read the views only (and the secret schema's objects)
CANDIDATES = SHARED / "siselection" / "candidates" / "24" / "stage1.json"
TASKS = SHARED / "bird" / "dev_superhero.json"
#: Tasks whose candidate pairs the test runs per variant (the bench note has all of them).
SAMPLE_TASKS = int(os.environ.get("SISELECT_RELATION_KIND_TASKS", "12"))
# The default budget: a pair whose instance needs many rows (HAVING COUNT(*) > 15) takes
# many verifications, and the machine running the tests may be busy.
OPTIONS = Options(dialect="sqlite")
# Heroes 1 and 2 are the first rows of their partition (or parent and child): both have
# ctid (0,1), which once made them one row.
BOTH_FIRST = ("SELECT a.superhero_name, b.superhero_name FROM superhero a, superhero b "
              "WHERE a.id = 1 AND b.id = 2")
BOTH_FIRST_NONE = BOTH_FIRST + " AND a.height_cm > 1000"


def _tables(conn) -> list[tuple[str, str]]:
    """(table, its first column) of the plain schema."""
    return conn.execute(
        "SELECT c.relname, a.attname FROM pg_class c JOIN pg_namespace n ON n.oid = "
        "c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = 1 "
        "WHERE n.nspname = %s AND c.relkind = 'r' ORDER BY 1", (PLAIN,)).fetchall()


def _partitioned(conn, schema: str, table: str, first: str) -> None:
    t, s, f = quote_ident(table), quote_ident(schema), quote_ident(first)
    odd = conn.execute(f"SELECT string_agg(DISTINCT {f}::text, ',') FROM {PLAIN}.{t} "
                       f"WHERE {f} % 2 = 1").fetchone()[0]
    conn.execute(f"CREATE TABLE {s}.{t} (LIKE {PLAIN}.{t}) PARTITION BY LIST ({f})")
    conn.execute(f"CREATE TABLE {s}.{quote_ident(table + '_odd')} PARTITION OF {s}.{t} "
                 f"FOR VALUES IN ({odd})")
    conn.execute(f"CREATE TABLE {s}.{quote_ident(table + '_rest')} PARTITION OF {s}.{t} "
                 "DEFAULT")
    conn.execute(f"INSERT INTO {s}.{t} SELECT * FROM {PLAIN}.{t} ORDER BY {f}")


def _inherited(conn, schema: str, table: str, first: str) -> None:
    t, s, f = quote_ident(table), quote_ident(schema), quote_ident(first)
    child = quote_ident(table + "_child")
    conn.execute(f"CREATE TABLE {s}.{t} (LIKE {PLAIN}.{t})")
    conn.execute(f"CREATE TABLE {s}.{child} () INHERITS ({s}.{t})")
    conn.execute(f"INSERT INTO {s}.{t} SELECT * FROM {PLAIN}.{t} "
                 f"WHERE {f} % 2 = 0 OR {f} IS NULL ORDER BY {f}")
    conn.execute(f"INSERT INTO {s}.{child} SELECT * FROM {PLAIN}.{t} WHERE {f} % 2 = 1 "
                 f"ORDER BY {f}")


def _viewed(conn, schema: str, table: str) -> None:
    t, s = quote_ident(table), quote_ident(schema)
    stored = quote_ident("stored_" + table)
    conn.execute(f"CREATE TABLE {s}.{stored} AS SELECT * FROM {PLAIN}.{t}")
    conn.execute(f"CREATE VIEW {s}.{t} AS SELECT * FROM {s}.{stored}")
    conn.execute(f"GRANT SELECT ON {s}.{t} TO {READER}")


def _foreign(conn, dsn: str) -> None:
    url = urllib.parse.urlparse(dsn)
    query = urllib.parse.parse_qs(url.query)
    host = url.hostname or query.get("host", ["/var/run/postgresql"])[0]
    options = {"dbname": url.path.lstrip("/"), "host": host, "port": str(url.port or 5432)}
    server = f"rk_loop_{SUFFIX}"
    conn.execute("CREATE EXTENSION IF NOT EXISTS postgres_fdw")
    conn.execute(f"CREATE SERVER {server} FOREIGN DATA WRAPPER postgres_fdw OPTIONS ("
                 + ", ".join(f"{k} '{v}'" for k, v in options.items()) + ")")
    mapping = {"user": url.username or "postgres"}
    password = url.password or _password(query, mapping["user"])
    if password:
        mapping["password"] = password
    conn.execute(f"CREATE USER MAPPING FOR CURRENT_USER SERVER {server} OPTIONS ("
                 + ", ".join(f"{k} '{v}'" for k, v in mapping.items()) + ")")
    conn.execute(f"IMPORT FOREIGN SCHEMA {PLAIN} FROM SERVER {server} "
                 f"INTO {SCHEMAS['foreign']}")


def _password(query: dict[str, list[str]], user: str) -> str | None:
    """The user's password from the DSN's passfile (the embedded cluster's DSNs name one):
    the server's postgres_fdw connection authenticates like any client."""
    path = query.get("passfile", [os.environ.get("PGPASSFILE", "")])[0]
    if not path or not os.path.exists(path):
        return None
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        fields = line.split(":")
        if len(fields) == 5 and fields[3] in (user, "*"):
            return fields[4]
    return None


def _secret(conn) -> None:
    """A security-barrier view showing the odd heroes, and a publisher table whose
    row-level security shows the reader the odd publishers only."""
    s = SCHEMAS["secret"]
    conn.execute(f"CREATE TABLE {s}.stored_superhero AS SELECT * FROM {PLAIN}.superhero")
    conn.execute(f"CREATE VIEW {s}.superhero WITH (security_barrier) AS "
                 f"SELECT * FROM {s}.stored_superhero WHERE id % 2 = 1")
    conn.execute(f"CREATE TABLE {s}.publisher AS SELECT * FROM {PLAIN}.publisher")
    conn.execute(f"ALTER TABLE {s}.publisher ENABLE ROW LEVEL SECURITY")
    conn.execute(f"CREATE POLICY odd ON {s}.publisher TO {READER} USING (id % 2 = 1)")
    conn.execute(f"GRANT SELECT ON {s}.superhero, {s}.publisher TO {READER}")


@pytest.fixture(scope="module")
def copies(dsn: str, superhero: str):
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {READER}")
        conn.execute(f"GRANT siselect_user TO {READER}")
        for schema in SCHEMAS.values():
            conn.execute(f"CREATE SCHEMA {schema}")
            conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO {READER}")
        for table, first in _tables(conn):
            _partitioned(conn, SCHEMAS["partitioned"], table, first)
            _inherited(conn, SCHEMAS["inherited"], table, first)
            _viewed(conn, SCHEMAS["views"], table)
        _foreign(conn, dsn)
        _secret(conn)
    yield SCHEMAS
    with psycopg.connect(dsn, autocommit=True) as conn:
        for schema in SCHEMAS.values():
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
        conn.execute(f"DROP SERVER rk_loop_{SUFFIX} CASCADE")
        conn.execute(f"DROP OWNED BY {READER}")
        conn.execute(f"DROP ROLE {READER}")


#: variant: (schema kind, role) — ``views`` read by the owner (who may read the stored
#: tables: lineage through the definition), ``view_only`` by the reader.
VARIANTS = {
    "partitioned": ("partitioned", None),
    "inherited": ("inherited", None),
    "views": ("views", None),
    "view_only": ("views", READER),
    "foreign": ("foreign", None),
}
IDENTITY = {"partitioned": "leaf", "inherited": "leaf", "views": "inline",
            "view_only": "content", "foreign": "content"}


@pytest.fixture
def executor_for(dsn: str, copies):
    opened = []

    def make(schema: str, role: str | None = None) -> PsycopgExecutor:
        conn = connect(dsn, schema, statement_timeout_ms=60_000).__enter__()
        opened.append(conn)
        if role:
            conn.execute(f"SET ROLE {role}")
        return PsycopgExecutor(conn)

    yield make
    for conn in opened:
        conn.close()


def variant_executor(executor_for, variant: str) -> PsycopgExecutor:
    kind, role = VARIANTS[variant]
    return executor_for(SCHEMAS[kind], role)


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_kind_gets_its_row_identity(executor_for, variant):
    catalog = load_catalog(variant_executor(executor_for, variant))
    assert catalog.tables["superhero"].identity == IDENTITY[variant]
    if variant == "partitioned":
        assert catalog.tables["superhero_odd"].identity == "ctid"
        assert len(catalog.tables["superhero"].members) == 2
    if variant == "view_only":
        assert "may not read" in (catalog.tables["superhero"].opaque_reason or "")


@pytest.mark.parametrize("variant", ["partitioned", "inherited"])
def test_rows_with_the_same_ctid_in_two_relations_are_two_rows(executor_for, variant):
    executor = variant_executor(executor_for, variant)
    ctids = executor.run("SELECT ctid::text FROM superhero WHERE id IN (1, 2)").rows
    assert [c for (c,) in ctids] == ["(0,1)", "(0,1)"]  # the case that once merged them
    result = separate(executor, BOTH_FIRST, BOTH_FIRST_NONE, Options(budget_seconds=60))
    assert result["status"] == "separated"
    shown = result["instance"]["superhero"]
    assert result["rows"] == len(result["row_ids"]) == instance_size(result["instance"]) == 2
    assert sorted(row[shown["columns"].index("id")] for row in shown["rows"]) == [1, 2]


def test_restrict_reads_exactly_the_rows_named(executor_for):
    executor = variant_executor(executor_for, "partitioned")
    catalog = load_catalog(executor)
    number = catalog.number("superhero")
    ids = [int(r) for (r,) in executor.run(
        f"SELECT {rowids.row_id(catalog.tables['superhero'], number, 't')} "
        "FROM superhero t WHERE id IN (1, 2, 3)").rows]
    assert len(set(ids)) == 3
    tree = to_tree("SELECT id FROM superhero", "postgres", catalog)
    for some in (ids[:1], ids[1:], ids):
        answer = executor.run(restrict(tree, catalog, {"superhero": some}).sql("postgres"))
        assert len(answer.rows) == len(some)
        assert len(fetch_instance(executor, catalog, some)["superhero"]["rows"]) == len(some)


@cache
def candidate_pairs(tasks: int) -> tuple[tuple[str, str], ...]:
    """Representatives of the answer groups of the first superhero tasks' candidates (K=24),
    two by two: the pairs a tournament separates."""
    known = {t["question_id"] for t in json.loads(TASKS.read_text())}
    candidates = json.loads(CANDIDATES.read_text())
    return tuple(sorted((int(q), tuple(c)) for q, c in candidates.items()
                        if int(q) in known))[:tasks]


def representative_pairs(executor, tasks: int) -> list[tuple[str, str]]:
    catalog = load_catalog(executor)
    pairs = []
    for _, sqls in candidate_pairs(tasks):
        entries = prepare(executor, catalog, list(sqls), "sqlite")
        for ga, gb in itertools.combinations(group(entries), 2):
            pairs.append((entries[ga.representative].sql, entries[gb.representative].sql))
    return pairs


def rank_of(pair: Pair, meaning: Meaning, rows: list[int]) -> int:
    answers = pair.separation(rows)
    return FAILED + 1 if answers is None else meaning.assess(rows, answers).rank


def check_instance(executor, q1: str, q2: str, result) -> None:
    """The instance separates, shows ``rows`` rows, and is 1-minimal within its rank."""
    assert result["rows"] == len(result["row_ids"]) == instance_size(result["instance"])
    catalog = load_catalog(executor)
    pair = Pair(executor, catalog, parse_pair(q1, q2, "sqlite", catalog))
    on_d = run_on_d(pair)
    pool = serve(executor, pair.trees, catalog, "lineage", OPTIONS.seed).pool
    meaning = Meaning.of(pair.trees, on_d, pool.only1 + pool.only2)
    ids = list(result["row_ids"])
    rank = rank_of(pair, meaning, ids)
    assert rank <= FAILED
    for i in range(len(ids)):
        assert rank_of(pair, meaning, ids[:i] + ids[i + 1:]) > rank, (q1, q2, ids[i])


@pytest.fixture(scope="module")
def plain_results(dsn: str, superhero: str):
    with connect(dsn, PLAIN, statement_timeout_ms=60_000) as conn:
        executor = PsycopgExecutor(conn)
        pairs = representative_pairs(executor, SAMPLE_TASKS)
        results = []
        for q1, q2 in pairs:
            result = separate(executor, q1, q2, OPTIONS)
            if result["status"] == "separated":
                # The plain schema's instances too: a minimisation cut short by its test
                # limit once returned sets that were not 1-minimal here as well.
                check_instance(executor, q1, q2, result)
            results.append((q1, q2, result["status"]))
        return results


@pytest.mark.parametrize("variant", VARIANTS)
def test_real_pairs_get_the_plain_schemas_status(executor_for, plain_results, variant):
    executor = variant_executor(executor_for, variant)
    assert len(plain_results) >= 10
    separated = 0
    for q1, q2, status in plain_results:
        result = separate(executor, q1, q2, OPTIONS)
        assert result["status"] == status, (variant, q1, q2, result.get("reason"))
        if status == "separated":
            separated += 1
            check_instance(executor, q1, q2, result)
    assert separated >= 5
    # The figures the issue asks for (pytest -s shows them).
    print(f"\n{variant}: {len(plain_results)} pairs, same status {len(plain_results)}, "
          f"separated {separated}, each verified 1-minimal")


def test_a_view_read_as_it_is_is_shadowed_itself(executor_for):
    """The reader may not read the stored tables: D' is applied to the view itself."""
    executor = variant_executor(executor_for, "view_only")
    with pytest.raises(Exception, match="permission denied"):
        executor.run("SELECT * FROM stored_superhero")
    result = separate(executor, BOTH_FIRST, BOTH_FIRST_NONE, Options(budget_seconds=60))
    assert result["status"] == "separated" and set(result["instance"]) == {"superhero"}
    assert result["rows"] == instance_size(result["instance"]) == 2


def test_a_view_read_through_its_definition_shows_the_stored_rows(executor_for):
    executor = variant_executor(executor_for, "views")
    result = separate(executor, BOTH_FIRST, BOTH_FIRST_NONE, Options(budget_seconds=60))
    assert result["status"] == "separated"
    assert set(result["instance"]) == {"stored_superhero"}
    assert result["rows"] == instance_size(result["instance"]) == 2


SECRET_WIDE = ("SELECT s.superhero_name, p.publisher_name FROM superhero s "
               "JOIN publisher p ON p.id = s.publisher_id WHERE s.height_cm > 190")
SECRET_NARROW = SECRET_WIDE.replace("> 190", "> 200")


def test_hidden_rows_never_reach_an_instance_or_a_prompt(executor_for, dsn):
    executor = executor_for(SCHEMAS["secret"], READER)
    catalog = load_catalog(executor)
    assert catalog.tables["superhero"].identity == "content"
    assert catalog.tables["superhero"].opaque_reason == "a security-barrier view"
    with psycopg.connect(dsn) as admin:
        hidden = {name for (name,) in admin.execute(
            f"SELECT superhero_name FROM {PLAIN}.superhero WHERE id % 2 = 0 EXCEPT "
            f"SELECT superhero_name FROM {PLAIN}.superhero WHERE id % 2 = 1")}
        hidden |= {name for (name,) in admin.execute(
            f"SELECT publisher_name FROM {PLAIN}.publisher WHERE id % 2 = 0")}
        # The pair tells heroes apart on D only if heights over 190 reach both kinds.
        assert admin.execute(f"SELECT count(*) FROM {PLAIN}.superhero s WHERE "
                             "s.height_cm > 190 AND s.id % 2 = 0").fetchone()[0] > 0
    found = 0
    for q1, q2 in ((SECRET_WIDE, SECRET_NARROW), (SECRET_NARROW, SECRET_WIDE)):
        result = separate(executor, q1, q2, Options(budget_seconds=60))
        assert result["status"] == "separated"
        found += 1
        shown = result["instance"]
        for table in shown:
            ids = [row[shown[table]["columns"].index("id")] for row in shown[table]["rows"]]
            assert ids and all(i % 2 == 1 for i in ids), (table, ids)
        prompt = user_prompt(JudgeContext("Which tall heroes?", None, shown, catalog))
        assert not [name for name in hidden if name and f'"{name}"' in prompt]
        answers = json.dumps(result["answers"])
        assert not [name for name in hidden if name and f'"{name}"' in answers]
    assert found == 2


@pytest.mark.parametrize("variant", ["partitioned", "view_only"])
def test_the_sql_function_separates_on_the_kind(dsn, copies, variant):
    """The server's own call (the installed package), which once failed on a view with
    ``column v.ctid does not exist`` and no SQLSTATE."""
    kind, role = VARIANTS[variant]
    with psycopg.connect(dsn, autocommit=True) as conn:
        if role:
            conn.execute(f"SET ROLE {role}")
        result = conn.execute("SELECT siselect.separate(%s, %s, search_path => %s)",
                              (BOTH_FIRST, BOTH_FIRST_NONE, SCHEMAS[kind])).fetchone()[0]
    assert result["status"] == "separated"
    assert result["rows"] == instance_size(result["instance"]) == 2
