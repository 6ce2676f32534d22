"""What the bench scripts share: a server, the shared data, superhero loaded, statistics."""

import argparse
import json
from pathlib import Path

import psycopg

from siselect.client.bench.metrics import spread
from siselect.client.bench.run import add_parser, settings_from
from siselect.client.bench.task import Settings
from siselect.client.loader import load
from siselect.client.options import resolve_dsn
from siselect.client.pgexec import PsycopgExecutor, connect

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SUPERHERO = DATA / "bird" / "dev_databases" / "superhero" / "superhero.sqlite"
TASKS = DATA / "bird" / "dev_superhero.json"


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--dsn", help="server to use (default: $SISELECT_DSN or the embedded one)")
    return p


def superhero_executor(args: argparse.Namespace) -> tuple[psycopg.Connection, PsycopgExecutor]:
    return database_executor(resolve_dsn(args), SUPERHERO, "superhero")


def database_executor(dsn: str, path: Path, name: str, cascade: bool = False
                      ) -> tuple[psycopg.Connection, PsycopgExecutor]:
    """``path`` loaded as schema ``name`` (unless loaded unchanged), and an executor on it."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        load(conn, path, name, cascade=cascade)
    conn = connect(dsn, name, statement_timeout_ms=60_000)
    return conn, PsycopgExecutor(conn)


def superhero_tasks(k: int) -> list[dict]:
    """The superhero tasks that have candidates at K rollouts, with their candidates."""
    tasks = {t["question_id"]: t for t in json.loads(TASKS.read_text())}
    candidates = json.loads(
        (DATA / "siselection" / "candidates" / str(k) / "stage1.json").read_text()
    )
    return [dict(tasks[int(q)], candidates=c) for q, c in candidates.items() if int(q) in tasks]


def bench_settings(tasks: Path, candidates: Path, *more: str) -> Settings:
    """The settings ``siselect bench --tasks TASKS --candidates CANDIDATES MORE...`` runs
    with, its defaults included: built from ``Options``' own defaults instead, instances lost
    the rows their rows reference (bench/tournament.py: 48 of 52 on superhero K=24, where
    the command scores 51)."""
    command = argparse.ArgumentParser()
    add_parser(command.add_subparsers())
    return settings_from(command.parse_args(
        ["bench", "--tasks", str(tasks), "--candidates", str(candidates), *more]))


def summary(values: list[float]) -> dict[str, float]:
    """Median, p95 and max as ``siselect bench`` computes them; NaN where there are none."""
    return {k: float("nan") if v is None else v for k, v in spread(values).items()}
