"""Running benchmark tasks on worker threads, one PostgreSQL connection each.

Each task's result depends only on the task, the settings and the seed, never on which
worker ran it or when, so any number of workers gives the same results. Databases are
loaded once before the workers start (the loader skips an unchanged file); catalogs are
read once per database and shared.

Interrupting (Ctrl-C reaches the main thread) stops the workers at their next query or
LLM call and cancels the queries running; tasks in progress are abandoned, never
recorded, so --resume redoes them.
"""

import contextlib
import queue
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import psycopg

from siselect.client.bench.inputs import Task
from siselect.client.bench.postgres_source import database_dsn
from siselect.client.bench.task import Outcome, Settings, run_task
from siselect.client.pgexec import PsycopgExecutor, connect
from siselect.runtime.catalog import Catalog, load_catalog
from siselect.runtime.executor import Executor, Rows, quote_ident

_DONE = object()


class Stopped(BaseException):
    """The run is being interrupted; a BaseException so no task-level handler keeps it."""


class StoppableExecutor:
    """An executor that refuses to start another query once the run is stopping."""

    def __init__(self, inner: Executor, stop: threading.Event):
        self.inner, self.stop = inner, stop

    @property
    def schemas(self) -> list[str]:
        return self.inner.schemas

    def run(self, sql: str, max_rows: int | None = None, **trusted: Any) -> Rows:
        if self.stop.is_set():
            raise Stopped()
        return self.inner.run(sql, max_rows, **trusted)

    def run_internal(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        if self.stop.is_set():
            raise Stopped()
        return self.inner.run_internal(sql, params)


def load_databases(dsn: str, files: dict[str, Path], say: Callable[[str], None]) -> None:
    """Load every database the tasks use (a SQLite file unchanged since its last load is
    not loaded again)."""
    from siselect.client.loader import load

    with psycopg.connect(dsn, autocommit=True) as conn:
        for name, path in sorted(files.items()):
            report = load(conn, path, name)
            total = sum(report.tables.values())
            state = "unchanged since its last load" if report.status == "unchanged" else \
                f"loaded in {report.seconds:.1f} s"
            say(f"database {name}: {len(report.tables)} tables, {total} rows, {state}")
            for warning in report.warnings:
                say(f"  warning: {warning}")


class Catalogs:
    """One catalog per database, read by whichever worker needs it first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._catalogs: dict[str, Catalog] = {}

    def get(self, name: str, executor: Executor) -> Catalog:
        with self._lock:
            if name not in self._catalogs:
                self._catalogs[name] = load_catalog(executor)
            return self._catalogs[name]


class Worker(threading.Thread):
    """Takes tasks from ``todo`` until it is empty, putting each outcome on ``done``."""

    def __init__(self, dsn: str, timeout_ms: int, todo: queue.Queue, done: queue.Queue,
                 stop: threading.Event, settings: Settings, catalogs: Catalogs,
                 make_complete: Callable[[], Callable | None]):
        super().__init__(daemon=True)
        self.dsn, self.timeout_ms, self.todo, self.done = dsn, timeout_ms, todo, done
        self.stop, self.settings, self.catalogs = stop, settings, catalogs
        self.make_complete = make_complete
        self.conn: psycopg.Connection | None = None
        self.schema: str | None = None
        self.database: str | None = None  # None: the DSN's
        self.executor: PsycopgExecutor | None = None

    def cancel(self) -> None:
        """Cancel the query in progress (called from the main thread)."""
        conn = self.conn
        if conn is not None and not conn.closed:
            # Nothing running, or the server is gone: stopping anyway.
            with contextlib.suppress(psycopg.Error, OSError):
                conn.cancel_safe(timeout=5)

    def run(self) -> None:
        try:
            self.conn = connect(self.dsn, None, self.timeout_ms)
            complete = self._stoppable(self.make_complete())
            while not self.stop.is_set():
                try:
                    task = self.todo.get_nowait()
                except queue.Empty:
                    break
                # An executor reads the session's schemas once: a new one per database.
                executor = StoppableExecutor(self._use(task), self.stop)
                catalog = self.catalogs.get(task.db_id, executor)
                outcome = run_task(executor, catalog, task, self.settings, complete)
                if self.conn.broken:
                    raise ConnectionError("the connection to PostgreSQL was lost")
                self.done.put((task, outcome, None))
        except Stopped:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises
            self.done.put((None, None, exc))
        finally:
            if self.conn is not None:
                self.conn.close()
            self.done.put(_DONE)

    def _use(self, task: Task) -> PsycopgExecutor:
        """An executor on the task's schema: the loaded db_id, or where ``--dialect
        postgres`` placed it (another database of the server takes another connection)."""
        assert self.conn is not None
        schema = task.schema or task.db_id
        if task.database != self.database:
            self.conn.close()
            self.conn = connect(database_dsn(self.dsn, task.database), None, self.timeout_ms)
            self.database, self.executor = task.database, None
        if schema != self.schema or self.executor is None:
            self.conn.execute(f"SET search_path TO {quote_ident(schema)}, public, pg_temp")
            self.schema = schema
            self.executor = PsycopgExecutor(self.conn)
        return self.executor

    def _stoppable(self, complete: Callable | None) -> Callable | None:
        if complete is None:
            return None

        def checked(messages: list[dict[str, str]], run: int) -> str:
            if self.stop.is_set():
                raise Stopped()
            return complete(messages, run)

        return checked


def run_tasks(tasks: list[Task], workers: int, dsn: str, timeout_ms: int, settings: Settings,
              make_complete: Callable[[], Callable | None],
              on_outcome: Callable[[Task, Outcome], Any]) -> None:
    """Run ``tasks`` on ``workers`` threads; ``on_outcome`` runs in the calling thread."""
    todo: queue.Queue = queue.Queue()
    for task in tasks:
        todo.put(task)
    done: queue.Queue = queue.Queue()
    stop = threading.Event()
    catalogs = Catalogs()
    pool = [Worker(dsn, timeout_ms, todo, done, stop, settings, catalogs, make_complete)
            for _ in range(max(1, min(workers, len(tasks))))]
    for worker in pool:
        worker.start()
    running = len(pool)
    try:
        while running:
            try:
                item = done.get(timeout=0.2)  # short waits let Ctrl-C through promptly
            except queue.Empty:
                continue
            if item is _DONE:
                running -= 1
                continue
            task, outcome, error = item
            if error is not None:
                raise error
            on_outcome(task, outcome)
    except BaseException:
        stop.set()
        for worker in pool:
            worker.cancel()
        for worker in pool:
            worker.join(timeout=30)
        raise
