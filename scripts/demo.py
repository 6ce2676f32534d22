"""The main job on the embedded default: BIRD's superhero database, a few of its
questions, one separating instance and one tournament, printed for a person to read."""

import json
import os
import sys
from pathlib import Path

from siselect.client.cli import main as siselect

DATA = Path(
    os.environ.get("SISELECT_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
SQLITE = DATA / "bird" / "dev_databases" / "superhero" / "superhero.sqlite"
TASKS = DATA / "bird" / "dev_superhero.json"
CANDIDATES = DATA / "siselection" / "candidates" / "24" / "stage1.json"


def step(title: str) -> None:
    print(f"\n=== {title} ===\n", flush=True)


def run(*args: str) -> None:
    code = siselect(list(args))
    if code not in (0, 2):
        sys.exit(code)


def main() -> None:
    step("embedded PostgreSQL")
    run("server", "start")
    step(f"load {SQLITE.name}")
    run("load", str(SQLITE))
    tasks = {t["question_id"]: t for t in json.loads(TASKS.read_text())}
    for task in list(tasks.values())[:3]:
        step(f"BIRD question {task['question_id']}: {task['question']}")
        print(task["SQL"] + "\n", flush=True)
        run("sql", "--db", "superhero", "--dialect", "sqlite", task["SQL"])
    candidates = json.loads(CANDIDATES.read_text())
    qid, sqls = next((int(q), c) for q, c in candidates.items() if int(q) in tasks)
    task = tasks[qid]
    step(f"separating two candidates for question {qid}: {task['question']}")
    print(f"Q1: {sqls[0]}\nQ2: {sqls[1]}\n", flush=True)
    run("separate", "--db", "superhero", "--dialect", "sqlite", sqls[0], sqls[1])
    judge = (
        ["--judge", "llm"]
        if os.environ.get("SISELECT_LLM_URL")
        else ["--judge", "reference", "--reference", task["SQL"]]
    )
    step(f"tournament of {len(sqls)} candidates ({judge[1]} judge)")
    if judge[1] == "reference":
        print("(the gold query judges; for an LLM judge set SISELECT_LLM_URL, SISELECT_LLM_MODEL "
              "and OPENAI_API_KEY to an OpenAI-compatible endpoint)\n", flush=True)
    run(
        "tournament",
        "--db",
        "superhero",
        "--dialect",
        "sqlite",
        "--question",
        task["question"],
        "--evidence",
        task["evidence"],
        *judge,
        *sqls,
    )


if __name__ == "__main__":
    main()
