"""Issue 12, section 1: a generated hostile-candidate corpus (see ``hostile_corpus``) run
through every path that executes candidates, with the effects observed from outside.

Paths: ``siselect.separate`` and ``siselect.selection.tournament`` in SQL, as a superuser (whose
session has ``standard_conforming_strings = off``) and as ``siselect_runner`` (a member of
``siselect_user``); the CLI's ``separate`` (``siselect.client.cli.main`` in this process
for every case, and ``python3 -m siselect separate`` for a sample that covers every token
and every trick) and ``python3 -m siselect tournament`` for every case (many candidates a
run), both as the superuser.

The cluster is this module's own: it preloads ``pg_stat_statements`` with ``track = all``
and ``track_utility = on``, so even statements run inside siselect's functions are
recorded. After each batch, from the ``postgres`` database as ``postgres`` (roles and
database the attack does not use): no file made by ``COPY ... TO PROGRAM`` in the data
directory, no user function ran (its tripwire file) and its sink table is empty, no
advisory lock in ``pg_locks``, the victim session lives, the attacking sessions have no
prepared statement and their application_name, the secret file's content appears in no
output, and every statement the attacking roles ran is a SELECT (or one of the few
transaction and session statements siselect's client itself sends), and none run inside
a function calls siselect's own functions.
"""

import contextlib
import io
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest

import hostile_corpus as hc
from conftest import ROOT, SUPERHERO
from siselect.client import credentials
from siselect.client.embedded import Cluster, ensure_database
from siselect.client.runner_role import RUNNER
from siselect.runtime.pgcheck import parser as pg_parser

DATABASE = "hostile_attack"
ATTACKER = "hostile_su"  # a superuser that only attacks: its statements are the attack's
BENIGN = "SELECT count(*) FROM superhero"
SEARCH_PATH = "superhero, public"
CHUNK = 120  # cases between two effect checks
CLI_BATCH = 40  # candidates per `siselect tournament` run
OUT = ROOT / "bench" / "out" / "hostile_table.md"
# What siselect's client sends besides the candidates' SELECTs (pgexec.connect and
# PsycopgExecutor), as pg_stat_statements records it for our DSN and --db superhero.
CLIENT_UTILITY = re.compile("|".join([
    "BEGIN", "ROLLBACK", "SET TRANSACTION READ ONLY",
    "SET LOCAL search_path TO pg_catalog, pg_temp",
    "SET standard_conforming_strings = on",
    'SET search_path TO "superhero", public(, pg_temp)?',
    r"SET statement_timeout = \d+",
]))


# ---- the cluster --------------------------------------------------------------------------


@dataclass
class Site:
    cluster: Cluster
    attacker_dsn: str
    member_dsn: str
    ctx: hc.Context
    secret_text: str
    tripwire: Path  # the folder evil.tripwire() writes to

    @property
    def monitor_dsn(self) -> str:
        return self.cluster.dsn("postgres")


def _home() -> Path:
    base = os.environ.get("SISELECT_TEST_HOME", f"/tmp/siselect-tests-{os.getuid()}")
    return Path(base + "-hostile")


def _add_superuser(cluster: Cluster, conn: psycopg.Connection) -> None:
    passwords = credentials.read_passfile(cluster.passfile)
    password = passwords.setdefault(ATTACKER, credentials.generate())
    credentials.write_passfile(cluster.passfile, passwords, cluster._owner())
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ATTACKER,)).fetchone()
    verb = "ALTER" if exists else "CREATE"
    conn.execute(f"{verb} ROLE {ATTACKER} LOGIN SUPERUSER PASSWORD "
                 f"'{credentials.scram_verifier(password)}'")


def _as_server_user(path: Path) -> None:
    if os.geteuid() == 0:
        import pwd

        owner = pwd.getpwnam("postgres")
        os.chown(path, owner.pw_uid, owner.pw_gid)


def _plant(conn: psycopg.Connection, tripwire: Path, key: int) -> None:
    """Schema ``evil`` (a sink table, a function that writes it, one that records that it
    ran, one that locks while declared immutable) and an unqualified twin in public."""
    fired = str(tripwire / "fired")
    conn.execute("DROP SCHEMA IF EXISTS evil CASCADE")
    conn.execute("CREATE SCHEMA evil")
    conn.execute("CREATE TABLE evil.sink (note text)")
    conn.execute("GRANT USAGE ON SCHEMA evil TO PUBLIC")
    conn.execute("GRANT INSERT, SELECT ON evil.sink TO PUBLIC")
    conn.execute("CREATE FUNCTION evil.write_sink() RETURNS integer LANGUAGE sql VOLATILE "
                 "AS 'INSERT INTO evil.sink VALUES (''function'') RETURNING 1'")
    for name in ("evil.tripwire", "public.hostile_tripwire"):
        conn.execute(
            f"CREATE OR REPLACE FUNCTION {name}(tag text) RETURNS boolean "
            "LANGUAGE plpython3u STABLE AS $body$\n"
            f"with open({fired!r}, 'a') as f:\n"
            "    f.write((tag or 'null') + '\\n')\n"
            "return True\n$body$")
    conn.execute("CREATE FUNCTION evil.lying_lock() RETURNS integer LANGUAGE plpgsql "
                 f"IMMUTABLE AS 'BEGIN PERFORM pg_catalog.pg_advisory_lock({key}); "
                 "RETURN 1; END'")


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    settings = {
        "shared_preload_libraries": "pg_stat_statements",
        "pg_stat_statements.track": "all",
        "pg_stat_statements.track_utility": "on",
        "pg_stat_statements.max": "20000",
    }
    cluster = Cluster(_home(), settings)
    try:
        started = cluster.start()
    except Exception as exc:  # no server binaries here
        pytest.skip(f"no PostgreSQL cluster for the hostile corpus: {exc}")
    tripwire = Path(tempfile.mkdtemp(prefix="siselect-hostile-"))
    tripwire.chmod(0o777)  # the server's OS user writes here
    try:
        ensure_database(cluster, DATABASE)
        with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            tracked = conn.execute("SHOW pg_stat_statements.track").fetchone()
            assert tracked == ("all",), "a cluster without our settings is running there"
            _add_superuser(cluster, conn)
        key = secrets.randbelow(2**31)
        with psycopg.connect(cluster.dsn(DATABASE), autocommit=True) as conn:
            from siselect.client.loader import load

            load(conn, SUPERHERO, "superhero")
            _plant(conn, tripwire, key)
        secret_name = f"hostile_secret_{secrets.token_hex(4)}"
        secret_text = f"SECRET-{secrets.token_hex(16)}"
        (cluster.datadir / secret_name).write_text(secret_text + "\n")
        _as_server_user(cluster.datadir / secret_name)
        ctx = hc.Context(victim_pid=0, lock_key=key,
                         touched=f"pwned_hostile_{secrets.token_hex(4)}", secret=secret_name)
        yield Site(cluster, cluster.dsn(DATABASE, ATTACKER), cluster.runner_dsn(DATABASE),
                   ctx, secret_text, tripwire)
    finally:
        shutil.rmtree(tripwire, ignore_errors=True)
        for stray in cluster.datadir.glob("hostile_secret_*"):
            stray.unlink()
        if started:
            cluster.stop()


# ---- outcomes and effects -----------------------------------------------------------------


@dataclass
class Outcome:
    refused: bool
    sqlstate: str  # of the refusal, "" when the candidate ran
    output: str  # everything siselect said: result or error text


@dataclass
class Attack:
    site: Site
    ctx: hc.Context
    victim: psycopg.Connection
    sessions: dict[str, psycopg.Connection]
    results: dict[tuple[str, str], Outcome] = field(default_factory=dict)  # (path, case)

    def record(self, path: str, case: hc.Case, outcome: Outcome) -> None:
        assert self.site.secret_text not in outcome.output, (path, case.ident)
        self.results[(path, case.ident)] = outcome


def _sqlstate(text: str) -> str:
    found = re.search(r"SQLSTATE ([0-9A-Z]{5})", text)
    return found.group(1) if found else ""


class Effects:
    """What the attacks must not have done, seen from the postgres database as postgres."""

    def __init__(self, attack: Attack, monitor: psycopg.Connection):
        self.attack = attack
        self.monitor = monitor
        self.dbid = monitor.execute("SELECT oid FROM pg_database WHERE datname = %s",
                                    (DATABASE,)).fetchone()[0]
        self.roles = [r for (r,) in monitor.execute(
            "SELECT oid FROM pg_roles WHERE rolname = ANY(%s)", ([ATTACKER, RUNNER],))]
        self.statements_checked = 0

    def reset(self) -> None:
        self.monitor.execute("SELECT pg_stat_statements_reset()")

    def breaches(self, path: str) -> list[str]:
        site = self.attack.site
        found = [f"file {p.name} in the data directory"
                 for p in site.cluster.datadir.glob(f"{self.attack.ctx.touched}*")]
        fired = site.tripwire / "fired"
        if fired.exists():
            found.append(f"a user function ran: {fired.read_text().split()}")
        found += [f"advisory lock held by {pid}" for (pid,) in self.monitor.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory'").fetchall()]
        if not self._alive(self.attack.victim):
            found.append("the victim session was terminated")
        for name, conn in self.attack.sessions.items():
            if not self._alive(conn):
                found.append(f"the attacking session {name} was terminated")
                continue
            left = conn.execute("SELECT name FROM pg_prepared_statements").fetchall()
            found += [f"prepared statement {n} left in {name}" for (n,) in left]
            app = conn.execute("SELECT current_setting('application_name')").fetchone()
            if app != ("hostile-attack",):
                found.append(f"application_name of {name} changed to {app}")
        with psycopg.connect(site.cluster.dsn(DATABASE), autocommit=True) as conn:
            sunk = conn.execute("SELECT count(*) FROM evil.sink").fetchone()
        if sunk != (0,):
            found.append(f"{sunk[0]} rows in evil.sink")
        found += self._statements(path)
        return found

    @staticmethod
    def _alive(conn: psycopg.Connection) -> bool:
        try:
            return conn.execute("SELECT 1").fetchone() == (1,)
        except psycopg.Error:
            return False

    def _statements(self, path: str) -> list[str]:
        rows = self.monitor.execute(
            "SELECT query, toplevel FROM pg_stat_statements "
            "WHERE dbid = %s AND userid = ANY(%s)", (self.dbid, self.roles)).fetchall()
        found = []
        for query, toplevel in rows:
            self.statements_checked += 1
            problem = statement_problem(query, toplevel, path.startswith("cli"))
            if problem:
                found.append(f"{problem}: {query[:200]!r}")
        return found


def statement_problem(query: str, toplevel: bool, from_cli: bool) -> str | None:
    """Why a statement that pg_stat_statements recorded for an attacking role is a breach,
    or None. The SQL paths' own call (top level) may name siselect's functions; nothing
    else may."""
    if CLIENT_UTILITY.fullmatch(query):
        return None if from_cli else "a client statement on a SQL path"
    try:
        tree = json.loads(pg_parser.parse_sql_json(query))
    except pg_parser.ParseError as exc:
        return f"unreadable statement ({exc})"
    kinds = [next(iter(s.get("stmt", {})), "?") for s in tree.get("stmts", [])]
    if kinds != ["SelectStmt"]:
        return f"not one SELECT: {kinds}"
    if (from_cli or not toplevel) and "siselect" in {schema for schema, _ in calls(tree)}:
        return "siselect's own function called from a query"
    return None


def calls(tree: object) -> set[tuple[str | None, str]]:
    """(schema, name) of every function call in a parse tree (pglast's JSON form)."""
    found: set[tuple[str | None, str]] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            if isinstance(node.get("FuncCall"), dict):
                names = [p["String"]["sval"] for p in node["FuncCall"].get("funcname", [])]
                found.add((names[-2] if len(names) > 1 else None, names[-1]))
            stack.extend(node.values())
    return found


# ---- the paths ----------------------------------------------------------------------------


def _sql_call(conn: psycopg.Connection, sql: str, params: tuple) -> tuple[object, Outcome | None]:
    try:
        return conn.execute(sql, params).fetchone()[0], None
    except psycopg.Error as exc:
        text = f"{exc.sqlstate}: {exc}"
        return None, Outcome(True, exc.sqlstate or "", text)


def sql_separate(session: str) -> Callable[[Attack, list[hc.Case]], None]:
    def run(attack: Attack, batch: list[hc.Case]) -> None:
        conn = attack.sessions[session]
        for case in batch:
            result, refused = _sql_call(
                conn, "SELECT siselect.separate(%s, %s, dialect => %s, search_path => %s)",
                (case.sql, BENIGN, case.dialect, SEARCH_PATH))
            attack.record(f"sql separate {session}", case,
                          refused or Outcome(False, "", json.dumps(result)))
    return run


def _dropped(result: dict) -> dict[int, dict]:
    return {d["index"]: d for d in result.get("dropped", [])}


def sql_tournament(session: str) -> Callable[[Attack, list[hc.Case]], None]:
    def run(attack: Attack, batch: list[hc.Case]) -> None:
        conn = attack.sessions[session]
        for case in batch:
            result, refused = _sql_call(
                conn, "SELECT siselect.tournament(%s, 'How many heroes?', judge => 'none', "
                "dialect => %s, search_path => %s)", ([case.sql, BENIGN], case.dialect,
                                                       SEARCH_PATH))
            if refused is None:
                assert isinstance(result, dict)
                drop = _dropped(result).get(0)
                text = json.dumps(result)
                refused = Outcome(drop is not None, (drop or {}).get("sqlstate", ""), text)
            attack.record(f"sql tournament {session}", case, refused)
    return run


def _cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "plpy"), env.get("PYTHONPATH", "")])
    # The client must force standard strings on whatever the session starts with.
    env["PGOPTIONS"] = "-c standard_conforming_strings=off -c application_name=hostile-cli"
    return env


def cli_separate_in_process(attack: Attack, batch: list[hc.Case]) -> None:
    from siselect.client.cli import main

    saved = os.environ.get("PGOPTIONS")
    os.environ["PGOPTIONS"] = _cli_env()["PGOPTIONS"]
    try:
        for case in batch:
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(["separate", "--dsn", attack.site.attacker_dsn, "--db", "superhero",
                             "--dialect", case.dialect, "--json", case.sql, BENIGN])
            text = out.getvalue() + err.getvalue()
            attack.record("cli separate (main)", case, Outcome(code == 1, _sqlstate(text), text))
    finally:
        if saved is None:
            os.environ.pop("PGOPTIONS", None)
        else:
            os.environ["PGOPTIONS"] = saved


def _run_cli(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "siselect", *args], capture_output=True,
                          text=True, env=_cli_env(), timeout=300, cwd=ROOT)


def cli_separate_subprocess(attack: Attack, batch: list[hc.Case]) -> None:
    for case in batch:
        done = _run_cli(["separate", "--dsn", attack.site.attacker_dsn, "--db", "superhero",
                         "--dialect", case.dialect, "--json", case.sql, BENIGN])
        text = done.stdout + done.stderr
        attack.record("cli separate (python3 -m)", case,
                      Outcome(done.returncode == 1, _sqlstate(text), text))


def cli_tournament(attack: Attack, batch: list[hc.Case]) -> None:
    """Candidates of one dialect per run, the benign one last: a dropped index names a
    refused case; a run that fails as a whole refuses all of its cases."""
    by_dialect: dict[str, list[hc.Case]] = {}
    for case in batch:
        by_dialect.setdefault(case.dialect, []).append(case)
    for dialect, group in by_dialect.items():
        for part in hc.chunks(group, CLI_BATCH):
            done = _run_cli(["tournament", "--dsn", attack.site.attacker_dsn, "--db",
                             "superhero", "--dialect", dialect, "--judge", "none",
                             "--question", "How many heroes?", "--json",
                             *[c.sql for c in part], BENIGN])
            text = done.stdout + done.stderr
            if done.returncode != 0:
                for case in part:
                    attack.record("cli tournament", case, Outcome(True, _sqlstate(text), text))
                continue
            result = json.loads(done.stdout.strip().splitlines()[-1])
            dropped = _dropped(result)
            for i, case in enumerate(part):
                drop = dropped.get(i)
                attack.record("cli tournament", case, Outcome(
                    drop is not None, (drop or {}).get("sqlstate", ""),
                    json.dumps(drop) if drop else text))


def covering_sample(cases: list[hc.Case]) -> list[hc.Case]:
    """A diagonal of token x trick (the n-th token with the (n mod tricks)-th trick), so that
    every token, trick and payload occurs, for the slow subprocess path; every case with
    $SISELECT_HOSTILE_FULL=1."""
    if os.environ.get("SISELECT_HOSTILE_FULL") == "1":
        return cases
    labels = list(dict.fromkeys(c.token.label for c in cases))
    tricks = list(hc.TRICKS)
    wanted = {(label, tricks[i % len(tricks)]) for i, label in enumerate(labels)}
    chosen, seen = [], set()
    for case in cases:
        key = (case.token.label, case.trick)
        if key in wanted and key not in seen:
            chosen.append(case)
            seen.add(key)
    return chosen


# ---- the test -----------------------------------------------------------------------------


@contextlib.contextmanager
def _session(dsn: str, *setup: str) -> Iterator[psycopg.Connection]:
    # prepare_threshold=None: psycopg would otherwise prepare the repeated call itself.
    with psycopg.connect(dsn, autocommit=True, prepare_threshold=None,
                         application_name="hostile-attack") as conn:
        for statement in setup:
            conn.execute(statement)
        yield conn


@pytest.fixture(scope="module")
def attack(site: Site) -> Iterator[Attack]:
    with contextlib.ExitStack() as stack:
        victim = stack.enter_context(psycopg.connect(site.member_dsn, autocommit=True))
        pid = victim.info.backend_pid
        ctx = hc.Context(pid, site.ctx.lock_key, site.ctx.touched, site.ctx.secret)
        sessions = {
            "superuser": stack.enter_context(
                _session(site.attacker_dsn, "SET standard_conforming_strings = off")),
            "member": stack.enter_context(_session(site.member_dsn)),
        }
        yield Attack(site, ctx, victim, sessions)


PATHS: list[tuple[str, Callable[[Attack, list[hc.Case]], None], bool]] = [
    ("sql separate superuser", sql_separate("superuser"), False),
    ("sql separate member", sql_separate("member"), False),
    ("sql tournament superuser", sql_tournament("superuser"), False),
    ("sql tournament member", sql_tournament("member"), False),
    ("cli separate (main)", cli_separate_in_process, False),
    ("cli separate (python3 -m)", cli_separate_subprocess, True),
    ("cli tournament", cli_tournament, False),
]


def test_the_corpus_covers_every_placeholder_kind_sqlglot_has() -> None:
    found = hc.tokens()
    for dialect in hc.DIALECTS:
        roles = {t.role for t in found if t.dialect == dialect}
        assert {"Placeholder", "Parameter"} <= roles, (dialect, roles)
    # The spellings, and SQLite's own parameter forms as sqlglot reads them.
    labels = {t.label for t in found}
    assert {"sqlite:@A$", "sqlite:@@x", "sqlite:?", "sqlite::x", "sqlite:$A$",
            "postgres:$1", "postgres:%(x)s", "postgres:?"} <= labels, sorted(labels)
    ctx = hc.Context(1, 1, "f", "s")
    assert len(hc.cases(ctx)) >= 200
    assert set(Counter(c.payload for c in hc.cases(ctx))) == {p.name for p in hc.payloads(ctx)}


def test_every_hostile_case_is_refused_or_harmless(site: Site, attack: Attack) -> None:
    corpus = hc.cases(attack.ctx)
    started = time.monotonic()
    timings: dict[str, float] = {}
    with psycopg.connect(site.monitor_dsn, autocommit=True) as monitor:
        effects = Effects(attack, monitor)
        for name, run, sampled in PATHS:
            todo = covering_sample(corpus) if sampled else corpus
            began = time.monotonic()
            for batch in hc.chunks(todo, CHUNK):
                effects.reset()
                run(attack, batch)
                found = effects.breaches(name)
                assert not found, f"{name}: " + "\n".join(found[:20])
            timings[name] = time.monotonic() - began
    assert effects.statements_checked > 0  # pg_stat_statements did record the attacks
    table = per_class_table(corpus, attack.results, timings, time.monotonic() - started)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(table)
    OUT.with_suffix(".json").write_text(json.dumps([
        {"path": path, "case": ident, "sql": next(c.sql for c in corpus if c.ident == ident),
         "refused": o.refused, "sqlstate": o.sqlstate, "output": o.output[:500]}
        for (path, ident), o in attack.results.items()], indent=1))
    print("\n" + table)
    # A refusal is a clear error (a SQLSTATE, not an internal error or an unhandled Python
    # exception), so each case did reach the check it was meant for.
    unclear = [(p, i, o.output[:200]) for (p, i), o in attack.results.items()
               if o.refused and (not o.sqlstate or o.sqlstate.startswith("XX")
                                 or o.sqlstate == "38000")]
    assert not unclear, unclear[:5]
    # The issue's own forms, and every payload in them, are refused on every path.
    for (path, ident), outcome in attack.results.items():
        label, trick, _ = ident.split("|")
        if label == "sqlite:@A$" and trick in hc.FULL_CROSS_TRICKS:
            assert outcome.refused, (path, ident, outcome.output[:300])


def per_class_table(corpus: list[hc.Case], results: dict[tuple[str, str], Outcome],
                    timings: dict[str, float], total: float) -> str:
    """Markdown: cases refused / ran (harmless: the effect checks passed) per path, per
    token x path, per trick x path, per payload x path, and the full token x trick x path."""
    by_ident = {c.ident: c for c in corpus}
    paths = [p for p, _, _ in PATHS]
    lines = [f"# Hostile corpus: {len(corpus)} cases, {len(results)} runs, {total:.0f} s",
             "", "Cell: refused/ran. Every run that ran was harmless (effects checked after "
             "each batch).", ""]

    def section(title: str, key: Callable[[hc.Case], str]) -> None:
        cells: dict[tuple[str, str], Counter] = {}
        for (path, ident), outcome in results.items():
            cell = cells.setdefault((key(by_ident[ident]), path), Counter())
            cell["refused" if outcome.refused else "ran"] += 1
        rows = sorted({k for k, _ in cells})
        lines.extend([f"## {title}", "", "| " + title + " | " + " | ".join(paths) + " |",
                      "|" + "---|" * (len(paths) + 1)])
        for row in rows:
            row_cells = []
            for path in paths:
                c = cells.get((row, path))
                row_cells.append(f"{c['refused']}/{c['ran']}" if c else "-")
            lines.append(f"| {row} | " + " | ".join(row_cells) + " |")
        lines.append("")

    section("path", lambda c: "all")
    section("token", lambda c: f"`{c.token.label}` ({c.token.role} → `{c.token.printed}`)")
    section("trick", lambda c: c.trick)
    section("payload", lambda c: c.payload)
    section("token x trick", lambda c: f"`{c.token.label}` x {c.trick}")
    states = Counter(o.sqlstate for o in results.values() if o.refused)
    lines += ["## refusals by SQLSTATE", ""]
    lines += [f"- {s or '(none)'}: {n}" for s, n in states.most_common()]
    lines += ["", "## seconds per path", ""]
    lines += [f"- {p}: {t:.1f}" for p, t in timings.items()]
    return "\n".join(lines) + "\n"


def test_the_effect_checks_see_each_breach(site: Site, attack: Attack) -> None:
    """The oracle itself: each payload run directly (past siselect) by the attacking roles
    is reported, so a breach through siselect could not pass unseen."""
    su, member = attack.sessions["superuser"], attack.sessions["member"]
    # A victim of its own, so that the corpus test's victim survives in any order.
    spare = psycopg.connect(site.member_dsn, autocommit=True)
    kept, attack.victim = attack.victim, spare
    ctx = attack.ctx
    direct = [
        (su, f"SELECT pg_advisory_lock({ctx.lock_key})", "advisory lock"),
        (su, "PREPARE pwned_plan AS SELECT 1", "prepared statement"),
        (su, f"COPY (SELECT 1) TO PROGRAM 'touch {ctx.touched}'", f"file {ctx.touched}"),
        (su, "SELECT evil.tripwire('direct')", "a user function ran"),
        (member, "SELECT set_config('application_name', 'pwned', false)", "application_name"),
        (member, f"SELECT pg_terminate_backend({spare.info.backend_pid})", "victim session"),
    ]
    with psycopg.connect(site.monitor_dsn, autocommit=True) as monitor:
        effects = Effects(attack, monitor)
        try:
            for conn, sql, seen in direct:
                effects.reset()
                conn.execute(sql)
                found = effects.breaches("sql direct")
                assert any(seen in f for f in found), (sql, found)
        finally:
            attack.victim = kept
            spare.close()
            for undo in ("SELECT pg_advisory_unlock_all()", "DEALLOCATE ALL",
                         "SET application_name = 'hostile-attack'"):
                for conn in (su, member):
                    conn.execute(undo)
            (site.cluster.datadir / ctx.touched).unlink(missing_ok=True)
            (site.tripwire / "fired").unlink(missing_ok=True)
        effects.reset()
        su.execute("SELECT 1 FROM superhero.superhero LIMIT 1")
        assert effects.breaches("sql direct") == []
        su.execute("SET work_mem = '5MB'")
        su.execute("RESET work_mem")
        assert [f for f in effects.breaches("sql direct") if "not one SELECT" in f]
