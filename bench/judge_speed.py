"""Issue 17's acceptance: the LLM judge against the test suite's OpenAI-compatible endpoint
(tests/chat_server.py) answering every request after 1 s.

- A tournament's wall time must stay within the sum over its rounds of
  ceil(completions in the round / pool) x 1.3 s, plus its time with judge none: on the
  superhero task (K=24) with the most answer groups, on a task of 10 distinct candidates
  (10 COUNT(*) variants on superhero), and on a yardstick task (``--yardstick``): a kept
  task of a synthetic database under bench/out/yardstick (built as ``yardstick.run``
  builds it when missing). Tasks are tried in order of distinct candidates, most first;
  the first with 10 or more answer groups on D is taken, else the one with the most.
  The database is loaded into the yardstick's own cluster (its synthetic databases share
  schema names with the real ones), or with ``--dsn``/$SISELECT_DSN there, replacing a
  schema of that name as ``yardstick.run`` does.
- An endpoint that refuses connections, and one that accepts and never answers: the whole
  tournament ends within 10 s and its result names the cause once.
- A second ``bench`` run over the same tasks sends no completion (the persistent cache).

    python bench/judge_speed.py [--dsn DSN] [--pool 8] [--yardstick DB|auto|none]

``--yardstick auto`` (the default) tries every database whose kept inputs exist.
"""

import json
import math
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from chat_server import ChatServer, Reply  # noqa: E402
from common import (  # noqa: E402
    DATA,
    TASKS,
    database_executor,
    parser,
    superhero_executor,
    superhero_tasks,
)
from siselect.client.bench.run import BenchRun, run_bench  # noqa: E402
from siselect.client.bench.task import Settings  # noqa: E402
from siselect.client.options import resolve_dsn  # noqa: E402
from siselect.instances.separate import Options  # noqa: E402
from siselect.selection.judges import NoJudge  # noqa: E402
from siselect.selection.llm import LLMConfig, LLMJudge  # noqa: E402
from siselect.selection.tournament import group, prepare, run_tournament  # noqa: E402

YARDSTICK = HERE / "out" / "yardstick"
TEN_GROUPS = 10
DELAY = 1.0
SLICE = 1.3  # seconds allowed per pool-sized slice of a round
TEN = {"question": "How many superheroes are taller than 180 cm?", "evidence": None,
       "candidates": [f"SELECT COUNT(*) FROM superhero WHERE height_cm > {h}"
                      for h in (150, 160, 170, 175, 180, 185, 190, 200, 210, 220)],
       "question_id": "ten COUNT(*) variants"}


def answer(request) -> str:
    """Replies that depend on the prompt and seed only: votes disagree now and then."""
    text = json.dumps([request.body["messages"], request.body.get("seed")], sort_keys=True)
    return json.dumps({"rows": [[sum(text.encode()) % 3]]})


def config(base_url: str, pool: int, **more) -> LLMConfig:
    return LLMConfig(base_url=base_url, pool=pool, read_timeout=5.0, connect_timeout=2.0,
                     **more)


def refused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def groups_on_d(executor, catalog, task) -> int:
    return len(group(prepare(executor, catalog, task["candidates"], "sqlite")))


def yardstick_dsn(args) -> str:
    """--dsn or $SISELECT_DSN, else the cluster ``yardstick.run`` uses (started if need be)."""
    if args.dsn or os.environ.get("SISELECT_DSN"):
        return resolve_dsn(args)
    from dataclasses import replace

    from siselect.client.embedded import cluster, ready
    from yardstick.run import CLUSTER_HOME

    local = replace(cluster(), home=Path(CLUSTER_HOME))
    return ready(local)[1]


def yardstick_tasks(db_id: str) -> list[dict]:
    """A synthetic database's kept tasks with their candidates; the database and its input
    files are made as ``yardstick.run`` makes them (its default scale and seed) if missing."""
    inputs = YARDSTICK / "inputs" / "synthetic"
    data = YARDSTICK / "data"
    if not (data / db_id / f"{db_id}.sqlite").is_file() \
            or not (inputs / db_id / "candidates.json").is_file():
        from yardstick import CANDIDATES_DIR, GOLD_JSON
        from yardstick.run import prepare as make

        candidates = json.loads((CANDIDATES_DIR / "24" / "stage1.json").read_text())
        make(db_id, data, inputs, 1.0, 0, {str(k): v for k, v in candidates.items()},
             json.loads(GOLD_JSON.read_text()))
    candidates = json.loads((inputs / db_id / "candidates.json").read_text())
    return [dict(t, candidates=candidates[str(t["question_id"])], db_id=db_id,
                 question_id=f"{db_id} {t['question_id']}")
            for t in json.loads((inputs / db_id / "tasks.json").read_text())]


def yardstick_task(args, choice: str) -> tuple[dict, tuple]:
    """The yardstick task (see the module's text) and its database's (conn, executor,
    catalog); the other databases opened on the way are closed."""
    from siselect.runtime.catalog import load_catalog

    if choice == "auto":
        inputs = YARDSTICK / "inputs" / "synthetic"
        dbs = sorted(p.name for p in inputs.iterdir() if (p / "tasks.json").is_file()) \
            if inputs.is_dir() else []
        if not dbs:
            raise SystemExit(f"no yardstick inputs under {inputs}: name one with --yardstick DB")
    else:
        dbs = [choice]
    ranked = sorted((t for db in dbs for t in yardstick_tasks(db)),
                    key=lambda t: (-len(set(t["candidates"])), t["question_id"]))
    dsn = yardstick_dsn(args)
    opened: dict[str, tuple] = {}
    best: tuple[int, dict] | None = None
    for task in ranked:
        if best and (best[0] >= TEN_GROUPS or len(set(task["candidates"])) <= best[0]):
            break  # found, or no task left can have more groups than it has distinct SQL
        db = task["db_id"]
        if db not in opened:
            conn, executor = database_executor(
                dsn, YARDSTICK / "data" / db / f"{db}.sqlite", db, cascade=True)
            opened[db] = (conn, executor, load_catalog(executor))
        groups = groups_on_d(opened[db][1], opened[db][2], task)
        if best is None or groups > best[0]:
            best = (groups, task)
    if best is None:
        raise SystemExit(f"no kept yardstick task in {', '.join(dbs)}")
    chosen = opened.pop(best[1]["db_id"])
    for conn, _, _ in opened.values():
        conn.close()
    return best[1], chosen


def timed(executor, catalog, task, judge, dialect: str) -> tuple[dict, float]:
    started = time.perf_counter()
    result = run_tournament(executor, task["candidates"], task["question"],
                            task.get("evidence"), judge, Options(dialect=dialect), None, catalog)
    return result, time.perf_counter() - started


def judged(executor, catalog, task, dialect: str, pool: int, delay: float
           ) -> tuple[dict, float, list[int], int]:
    """A tournament judged through the fake endpoint answering after ``delay`` seconds:
    its result, wall time, completions per round and completions sent."""
    with ChatServer() as chat:
        chat.respond_with(lambda request: Reply(answer(request), delay=delay))
        with LLMJudge(config(chat.base_url, pool)) as judge:
            result, seconds = timed(executor, catalog, task, judge, dialect)
            rounds = judge.rounds
        return result, seconds, rounds, len(chat.chat_requests())


def speed(executor, catalog, task, dialect: str, pool: int) -> dict:
    _, none_seconds = timed(executor, catalog, task, NoJudge(), dialect)
    result, seconds, rounds, sent = judged(executor, catalog, task, dialect, pool, DELAY)
    # Not part of the bound: the same schedule with an instant endpoint, whose verdicts (hence
    # duels and database work) are those of the 1 s run, unlike judge none's, which draws all.
    _, instant_seconds, instant_rounds, _ = judged(executor, catalog, task, dialect, pool, 0.0)
    bound = sum(math.ceil(n / pool) for n in rounds) * SLICE + none_seconds
    return {"task": task["question_id"], "groups": len(result["groups"]),
            "duels": len(result["duels"]), "completions": sent, "rounds": rounds,
            "seconds": round(seconds, 2), "none_seconds": round(none_seconds, 2),
            "instant_seconds": round(instant_seconds, 2),
            "instant_same_rounds": instant_rounds == rounds,
            "bound": round(bound, 2), "one_at_a_time": round(sent * DELAY + none_seconds, 1),
            "ok": seconds <= bound and "judge_failure" not in result}


def failing(executor, catalog, task, dialect: str, pool: int, how: str) -> dict:
    with ChatServer() as chat:
        if how == "refused":
            base_url = f"http://127.0.0.1:{refused_port()}/v1"
        else:  # accepts, never answers
            chat.respond_with(lambda request: Reply(answer(request), delay=3600))
            base_url = chat.base_url
        with LLMJudge(config(base_url, pool)) as judge:
            result, seconds = timed(executor, catalog, task, judge, dialect)
    failure = result.get("judge_failure") or {}
    cause = failure.get("cause", "")
    return {"endpoint": how, "seconds": round(seconds, 2), "cause": cause,
            "duels_drawn": failure.get("duels"),
            "cause_stated": json.dumps(result).count(cause) if cause else 0,
            "ok": seconds <= 10 and json.dumps(result).count(cause) == 1 if cause else False}


def bench_twice(args, pool: int, limit: int) -> dict:
    sent = []
    with ChatServer() as chat, tempfile.TemporaryDirectory() as tmp:
        chat.respond_with(lambda request: Reply(answer(request), delay=DELAY))
        settings = Settings(options=Options(dialect="sqlite"), judge="llm",
                            llm_config=config(chat.base_url, pool,
                                              cache_file=os.path.join(tmp, "cache.sqlite")))
        for _ in range(2):
            before = len(chat.chat_requests())
            run = BenchRun(TASKS, DATA / "siselection" / "candidates" / "24" / "stage1.json",
                           DATA / "bird" / "dev_databases", Path(tmp) / "out",
                           lambda: resolve_dsn(args), settings, limit=limit, force=True)
            run_bench(run, lambda *a, **k: None)
            sent.append(len(chat.chat_requests()) - before)
    return {"tasks": limit, "first_run_sent": sent[0], "second_run_sent": sent[1],
            "ok": sent[0] > 0 and sent[1] == 0}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--pool", type=int, default=8)
    p.add_argument("--bench-tasks", type=int, default=3)
    p.add_argument("--yardstick", default="auto", metavar="DB",
                   help="synthetic database of the yardstick task: a db_id, auto (every "
                   "one with kept inputs) or none")
    args = p.parse_args()
    from siselect.runtime.catalog import load_catalog

    conn, executor = superhero_executor(args)
    catalog = load_catalog(executor)
    tasks = superhero_tasks(24)
    richest = max(tasks, key=lambda t: (len(set(t["candidates"])), t["question_id"]))
    richest = max((t for t in tasks if len(set(t["candidates"])) >= 4),
                  key=lambda t: groups_on_d(executor, catalog, t), default=richest)
    figures = {
        "speed": [speed(executor, catalog, richest, "sqlite", args.pool),
                  speed(executor, catalog, TEN, "postgres", args.pool)],
        "failing": [failing(executor, catalog, TEN, "postgres", args.pool, how)
                    for how in ("refused", "silent")],
        "bench": bench_twice(args, args.pool, args.bench_tasks),
    }
    conn.close()
    if args.yardstick != "none":
        task, (yconn, yexecutor, ycatalog) = yardstick_task(args, args.yardstick)
        figures["speed"].append(dict(speed(yexecutor, ycatalog, task, "sqlite", args.pool),
                                     distinct=len(set(task["candidates"]))))
        yconn.close()
    for s in figures["speed"]:
        distinct = f"{s['distinct']} distinct candidates, " if "distinct" in s else ""
        print(f"task {s['task']}: {distinct}{s['groups']} groups, {s['duels']} duels, "
              f"{s['completions']} completions in rounds {s['rounds']}: {s['seconds']} s "
              f"(bound {s['bound']} s, judge none {s['none_seconds']} s, instant endpoint "
              f"{s['instant_seconds']} s{'' if s['instant_same_rounds'] else ' other rounds'}, "
              f"one at a time ~{s['one_at_a_time']} s) {'OK' if s['ok'] else 'FAIL'}")
    for f in figures["failing"]:
        print(f"endpoint {f['endpoint']}: {f['seconds']} s, {f['duels_drawn']} duels drawn, "
              f"cause stated {f['cause_stated']}x: {f['cause']} {'OK' if f['ok'] else 'FAIL'}")
    b = figures["bench"]
    print(f"bench over {b['tasks']} tasks: first run sent {b['first_run_sent']}, second run "
          f"sent {b['second_run_sent']} {'OK' if b['ok'] else 'FAIL'}")
    out = HERE / "out" / "judge_speed.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(figures, indent=1) + "\n")
    if not all(x["ok"] for x in [*figures["speed"], *figures["failing"], figures["bench"]]):
        sys.exit(1)


if __name__ == "__main__":
    main()
