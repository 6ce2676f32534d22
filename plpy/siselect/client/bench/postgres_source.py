"""Benchmarks on databases that already live on a PostgreSQL server (``--dialect postgres``).

Teams that generate PostgreSQL SQL against their own PostgreSQL data (BIRD mini-dev ships
a PostgreSQL version of its tasks for them) have nothing to load: each ``db_id`` names a
schema of the server, the db_id itself or what ``--schema-map db_id=schema,...`` says
(``db_id=database.schema`` for a schema of another database of the same server). The tasks
file is BIRD's format with ``SQL`` in PostgreSQL (mini-dev's ``mini_dev_postgresql.json``
as it is), the candidates are PostgreSQL, and everything (gold, candidates, upper bound,
consistency, the tournament) runs on PostgreSQL without transpiling.

Every schema the tasks need is checked before the first task runs, with the role the tasks
run as: a missing one, or one it may not use, is an error (SQLSTATE 3F000) naming all of them.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from siselect.client.bench.inputs import Inputs, Task, read_inputs
from siselect.runtime.errors import InvalidInput

Say = Callable[[str], None]


def parse_schema_map(text: str | None) -> dict[str, str]:
    """``db_id=schema,db_id=database.schema`` as a dict; an empty or absent map is {}."""
    found: dict[str, str] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        db_id, sep, target = (part.strip() for part in item.partition("="))
        if not sep or not db_id or not target or target.startswith(".") or \
                target.endswith("."):
            raise InvalidInput(f"--schema-map expects db_id=schema or db_id=database.schema, "
                               f"got {item.strip()!r}")
        if db_id in found:
            raise InvalidInput(f"--schema-map names {db_id!r} twice")
        found[db_id] = target
    return found


def place(target: str) -> tuple[str | None, str]:
    """(database or None for the DSN's, schema) of a map value."""
    database, dot, schema = target.partition(".")
    return (database, schema) if dot else (None, target)


def database_dsn(dsn: str, database: str | None) -> str:
    """``dsn`` pointed at another database of the same server (None: unchanged)."""
    return dsn if database is None else make_conninfo(dsn, dbname=database)


@dataclass
class PostgresSource:
    """Where each db_id's tables are on the server; replaces loading SQLite files."""

    schema_map: dict[str, str] = field(default_factory=dict)

    def inputs(self, tasks: Path, candidates: Path, limit: int | None) -> Inputs:
        found = read_inputs(tasks, candidates, limit)
        unused = sorted(set(self.schema_map) - {t.db_id for t in found.tasks})
        if unused:
            found.notes.append(f"--schema-map names db_ids no task uses: {', '.join(unused)}")
        for task in found.tasks:
            task.database, task.schema = place(self.schema_map.get(task.db_id, task.db_id))
        # Resuming must find the same places: a run on other schemas is another run.
        found.fingerprint = {**found.fingerprint, "dialect": "postgres",
                             "schemas": ",".join(f"{db}={target}" for db, target
                                                 in sorted(self.targets(found.tasks).items()))}
        return found

    def targets(self, tasks: list[Task]) -> dict[str, str]:
        return {t.db_id: self.schema_map.get(t.db_id, t.db_id) for t in tasks}

    def check(self, dsn: str, tasks: list[Task], say: Say) -> None:
        """Every schema the tasks use exists and may be used by the role of ``dsn``."""
        by_database: dict[str | None, dict[str, list[str]]] = {}
        for task in tasks:
            assert task.schema is not None, "inputs() places every task"
            db_ids = by_database.setdefault(task.database, {}).setdefault(task.schema, [])
            if task.db_id not in db_ids:
                db_ids.append(task.db_id)
        problems: list[str] = []
        for database, schemas in sorted(by_database.items(), key=lambda kv: kv[0] or ""):
            problems += _check_database(dsn, database, schemas, say)
        if problems:
            raise InvalidInput("; ".join(problems), "3F000")


def _check_database(dsn: str, database: str | None, schemas: dict[str, list[str]],
                    say: Say) -> list[str]:
    where = database or conninfo_to_dict(dsn).get("dbname") or "the DSN's database"
    try:
        conn = psycopg.connect(database_dsn(dsn, database), autocommit=True)
    except psycopg.OperationalError as exc:
        if database is None:
            raise
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        return [f"cannot connect to database {database!r} ({first})"]
    problems = []
    with conn:
        for schema, db_ids in sorted(schemas.items()):
            row = conn.execute(
                "SELECT pg_catalog.has_schema_privilege(n.oid, 'USAGE'), "
                "(SELECT count(*) FROM pg_catalog.pg_class c WHERE c.relnamespace = n.oid "
                "AND c.relkind IN ('r', 'p', 'v', 'm', 'f')) "
                "FROM pg_catalog.pg_namespace n WHERE n.nspname = %s", (schema,)).fetchone()
            named = f"schema {schema!r} of database {where!r} (db_id {', '.join(db_ids)})"
            if row is None:
                problems.append(f"no {named}")
            elif not row[0]:
                problems.append(f"you may not use the {named}")
            else:
                say(f"database {', '.join(db_ids)}: {named.split(' (')[0]}, {row[1]} relations")
    return problems
