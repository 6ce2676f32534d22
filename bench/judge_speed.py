"""Issue 17's acceptance: the LLM judge against the test suite's OpenAI-compatible endpoint
(tests/chat_server.py) answering every request after 1 s.

- A tournament's wall time must stay within the sum over its rounds of
  ceil(completions in the round / pool) x 1.3 s, plus its time with judge none: on the
  superhero task (K=24) with the most answer groups, and on a task of 10 distinct
  candidates (10 COUNT(*) variants on superhero, as the yardstick's databases have).
- An endpoint that refuses connections, and one that accepts and never answers: the whole
  tournament ends within 10 s and its result names the cause once.
- A second ``bench`` run over the same tasks sends no completion (the persistent cache).

    python bench/judge_speed.py [--dsn DSN] [--pool 8]
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
from common import DATA, TASKS, parser, superhero_executor, superhero_tasks  # noqa: E402
from siselect.client.bench.run import BenchRun, run_bench  # noqa: E402
from siselect.client.bench.task import Settings  # noqa: E402
from siselect.client.options import resolve_dsn  # noqa: E402
from siselect.instances.separate import Options  # noqa: E402
from siselect.selection.judges import NoJudge  # noqa: E402
from siselect.selection.llm import LLMConfig, LLMJudge  # noqa: E402
from siselect.selection.tournament import group, prepare, run_tournament  # noqa: E402

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


def timed(executor, catalog, task, judge, dialect: str) -> tuple[dict, float]:
    started = time.perf_counter()
    result = run_tournament(executor, task["candidates"], task["question"],
                            task.get("evidence"), judge, Options(dialect=dialect), None, catalog)
    return result, time.perf_counter() - started


def speed(executor, catalog, task, dialect: str, pool: int) -> dict:
    _, none_seconds = timed(executor, catalog, task, NoJudge(), dialect)
    with ChatServer() as chat:
        chat.respond_with(lambda request: Reply(answer(request), delay=DELAY))
        with LLMJudge(config(chat.base_url, pool)) as judge:
            result, seconds = timed(executor, catalog, task, judge, dialect)
            rounds = judge.rounds
        sent = len(chat.chat_requests())
    bound = sum(math.ceil(n / pool) for n in rounds) * SLICE + none_seconds
    return {"task": task["question_id"], "groups": len(result["groups"]),
            "duels": len(result["duels"]), "completions": sent, "rounds": rounds,
            "seconds": round(seconds, 2), "none_seconds": round(none_seconds, 2),
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
    for s in figures["speed"]:
        print(f"task {s['task']}: {s['groups']} groups, {s['duels']} duels, {s['completions']} "
              f"completions in rounds {s['rounds']}: {s['seconds']} s (bound {s['bound']} s, "
              f"judge none {s['none_seconds']} s, one at a time ~{s['one_at_a_time']} s) "
              f"{'OK' if s['ok'] else 'FAIL'}")
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
