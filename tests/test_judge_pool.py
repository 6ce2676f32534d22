"""Issue 17: the LLM judge's requests go out concurrently through a bounded pool; a circuit
breaker stops a call's requests once the endpoint keeps failing; a cancel ends the wait;
results do not depend on the pool's size or the order of the replies."""

import hashlib
import json
import random
import socket
import sys
import threading
import time

import psycopg
import pytest

from chat_server import Reply
from conftest import schema_valid
from siselect.instances.separate import Options
from siselect.runtime.catalog import Catalog
from siselect.selection.judges import JudgeContext
from siselect.selection.llm import LLMConfig, LLMJudge
from siselect.selection.tournament import run_tournament

QUESTION = "How many superheroes are taller than 200 cm?"
# Five answers on superhero: ten duels, each separated on a few rows.
CANDIDATES = [f"SELECT COUNT(*) FROM superhero WHERE height_cm > {h}"
              for h in (180, 190, 200, 210, 220)]


def config(base_url: str, **settings) -> LLMConfig:
    base = dict(base_url=base_url, connect_timeout=1.0, read_timeout=2.0, deadline=10.0,
                retries=3, backoff=0.5)
    return LLMConfig(**{**base, **settings})


def contexts(n: int) -> list[JudgeContext]:
    return [JudgeContext(f"How many rows are there? ({i})", None,
                         {"t": {"columns": ["x"], "rows": [[i]]}}, Catalog())
            for i in range(n)]


def refused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def content_answer(request) -> str:
    """A reply that depends only on what was asked (prompt and seed), so that any order of
    arrival gives every request the same answer; votes disagree now and then."""
    asked = json.dumps([request.body["messages"], request.body.get("seed")], sort_keys=True)
    n = int(hashlib.sha256(asked.encode()).hexdigest(), 16) % 3
    return json.dumps({"rows": [[[34, 60, 90][n]]]})


def stable(result: dict) -> dict:
    """The result without what measures time."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items()
                    if k not in {"timings", "seconds", "attempts"}}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value
    return strip(result)


def test_votes_and_duels_go_out_together_up_to_the_pool_size(chat):
    chat.respond_with(lambda request: Reply('{"rows": [[1]]}', delay=0.5))
    started = time.monotonic()
    with LLMJudge(config(chat.base_url, pool=8)) as judge:
        answers = judge.answer_all(contexts(6))
    took = time.monotonic() - started
    # 6 duels x 2 agreeing votes = 12 requests: 8, then 4 (sequentially: 6 s).
    arrivals = sorted(r.received for r in chat.chat_requests())
    assert len(arrivals) == 12 and all(a.rows == [[1]] for a in answers)
    assert arrivals[7] - arrivals[0] < 0.3, "the first eight go out at once"
    assert arrivals[8] - arrivals[0] >= 0.45, "the ninth waits for a free place"
    assert took < 1.4
    assert [a.calls for a in answers] == [2] * 6
    assert all(a.tokens == {"prompt": 20, "completion": 4} for a in answers)


@pytest.mark.parametrize("order", ["forward", "backward"])
def test_same_seed_same_result_with_a_pool_of_1_and_of_8(executor, chat, order):
    """Replies come back in a random order (random delays) with the large pool."""
    delays = random.Random(order)

    def reply(request):
        return Reply(content_answer(request), delay=delays.uniform(0.0, 0.15))

    chat.respond_with(reply)
    results = []
    for pool in (1, 8) if order == "forward" else (8, 1):
        with LLMJudge(config(chat.base_url, pool=pool, seed=5)) as judge:
            results.append(schema_valid("tournament", run_tournament(
                executor, CANDIDATES, QUESTION, None, judge, Options(seed=3))))
    one, eight = results
    assert stable(one) == stable(eight)
    votes = [len(d["judge"]["votes"]) for d in one["duels"] if "judge" in d]
    assert 3 in votes and 2 in votes, "some duels needed the third vote, some did not"


def test_idle_work_fills_the_wait_without_holding_requests_back(chat):
    """4 requests, a pool of 2, replies after 0.4 s: the main thread's idle work (0.5 s a
    piece) starts after a quiet slice and does not delay the third and fourth requests,
    which the workers take as soon as they are free; it stops when it says nothing is left,
    and the answers do not change."""
    chat.respond_with(lambda request: Reply('{"rows": [[1]]}', delay=0.4))
    pieces: list[float] = []

    def idle() -> bool:
        pieces.append(time.monotonic())
        time.sleep(0.5)
        return len(pieces) < 2

    started = time.monotonic()
    with LLMJudge(config(chat.base_url, pool=2)) as judge:
        answers = judge.answer_all(contexts(2), idle)
    arrivals = sorted(r.received for r in chat.chat_requests())
    assert len(arrivals) == 4 and all(a.rows == [[1]] for a in answers)
    assert judge.pool.counts.sent == 4
    assert len(pieces) == 2, "called until it said no more, never again"
    # The server's clock and ours are both time.monotonic in this process.
    assert pieces[0] - started >= 0.09, "after a quiet slice"
    assert pieces[0] < arrivals[2], "while requests were still to go out"
    assert arrivals[2] - arrivals[0] < 0.4 + 0.3, "the workers did not wait for idle work"


def test_the_lookahead_separates_the_next_instances_during_the_wait(executor, chat,
                                                                    monkeypatch):
    """A judge whose answers match no candidate draws every duel, so every pair is
    separated again away from its rows: with a slow endpoint those next instances are
    computed while the replies are awaited, and the result is the one computed without."""
    from siselect.selection import tournament

    chat.respond_with(lambda request: Reply('{"rows": [[-1]]}', delay=0.6))
    real = tournament._separated
    calls: list[tuple[bool, tuple]] = []

    def recorded(t, pair, a, b, exclude):
        frame, ahead = sys._getframe(1), False
        while frame is not None and not ahead:
            ahead = frame.f_code.co_name == "step"
            frame = frame.f_back
        calls.append((ahead, exclude))
        return real(t, pair, a, b, exclude)

    monkeypatch.setattr(tournament, "_separated", recorded)
    results = []
    for ahead in (True, False):
        if not ahead:
            monkeypatch.setattr(tournament, "lookahead", lambda t, pending: lambda: False)
        calls.clear()
        with LLMJudge(config(chat.base_url, pool=8, seed=5)) as judge:
            results.append(schema_valid("tournament", run_tournament(
                executor, CANDIDATES, QUESTION, None, judge, Options(seed=3))))
        if ahead:
            early = [exclude for was_ahead, exclude in calls if was_ahead]
            late = [exclude for was_ahead, exclude in calls if not was_ahead and exclude]
    with_lookahead, without = results
    assert stable(with_lookahead) == stable(without)
    again = [d for d in without["duels"] if d["attempt"] > 1]
    assert again, "duels were separated again"
    assert any(early), "next instances (rows excluded) were separated ahead"
    assert len(late) < len(again) / 2, "most next instances were ready before they were asked"


def test_a_refusing_endpoint_opens_the_breaker_and_the_call_ends_at_once(executor):
    judge = LLMJudge(config(f"http://127.0.0.1:{refused_port()}/v1"))
    started = time.monotonic()
    result = schema_valid("tournament", run_tournament(
        executor, CANDIDATES, QUESTION, None, judge, Options()))
    assert time.monotonic() - started < 3.0  # retries alone would take 3.5 s per request
    failure = result["judge_failure"]
    separated = [d for d in result["duels"] if d["separation"] == "separated"]
    assert failure["duels"] == len(separated) > 0
    assert "failed 3 times in a row" in failure["cause"]
    assert "Connection refused" in failure["cause"]
    assert json.dumps(result).count(failure["cause"]) == 1, "the cause is stated once"
    assert all(d["verdict"] == "draw" and d["reason"] == "judge unavailable"
               for d in separated)
    assert result["judge_completions"]["sent"] <= 8


def test_an_endpoint_that_never_answers_costs_one_read_timeout(executor, chat):
    chat.respond_with(lambda request: Reply('{"rows": [[1]]}', delay=60))
    judge = LLMJudge(config(chat.base_url, read_timeout=1.0))
    started = time.monotonic()
    result = run_tournament(executor, CANDIDATES, QUESTION, None, judge, Options())
    assert time.monotonic() - started < 3.0
    assert "no reply within the read timeout" in result["judge_failure"]["cause"]
    assert len(chat.chat_requests()) <= 8, "nothing was sent once the breaker opened"


def test_a_flaky_endpoint_does_not_open_the_breaker(chat):
    """Failures separated by successes are not consecutive."""
    count = iter(range(1000))
    lock = threading.Lock()

    def reply(request):
        with lock:
            n = next(count)
        return Reply(status=503, body=b"busy") if n % 2 else Reply('{"rows": [[1]]}')

    chat.respond_with(reply)
    with LLMJudge(config(chat.base_url, backoff=0.01, pool=1)) as judge:
        answers = judge.answer_all(contexts(4))
    assert all(a.rows == [[1]] and a.unavailable is None for a in answers)
    assert not judge.breaker.is_open


def test_identical_prompts_are_sent_once(chat):
    chat.respond_with(lambda request: '{"rows": [[1]]}')
    same = contexts(1) * 3
    with LLMJudge(config(chat.base_url)) as judge:
        answers = judge.answer_all(same)
        again = judge.answer_all(same)
    assert len(chat.chat_requests()) == 2
    assert [a.calls for a in answers] == [2, 0, 0] and [a.cached for a in answers] == [0, 2, 2]
    assert [a.calls for a in again] == [0, 0, 0]
    assert judge.pool.counts.sent == 2 and judge.pool.counts.cached == 10


def test_a_persistent_cache_answers_a_repeated_run(chat, tmp_path):
    chat.respond_with(lambda request: '{"rows": [[1]]}')
    settings = dict(cache_file=str(tmp_path / "cache.sqlite"))
    for _ in range(2):
        with LLMJudge(config(chat.base_url, **settings)) as judge:
            answers = judge.answer_all(contexts(3))
        assert all(a.rows == [[1]] for a in answers)
    assert len(chat.chat_requests()) == 6, "the second run sent nothing"
    assert [a.cached for a in answers] == [2, 2, 2]
    # A different seed is a different prompt: sent again.
    with LLMJudge(config(chat.base_url, seed=1, **settings)) as judge:
        judge.answer_all(contexts(1))
    assert len(chat.chat_requests()) == 8


def test_no_endpoint_is_refused_at_once(executor):
    from siselect.runtime.errors import ConfigError
    from siselect.selection.judges import make_judge

    with pytest.raises(ConfigError, match="no endpoint configured.*set_llm_config.*'none'") \
            as caught:
        make_judge("llm", None, LLMConfig())
    assert caught.value.sqlstate == "22023"


def test_no_endpoint_in_the_server_is_sqlstate_22023(conn, superhero):
    conn.execute("SELECT siselect.transpile('SELECT 1', 'sqlite')")  # the imports, once
    started = time.monotonic()
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="no endpoint configured"):
        conn.execute("SELECT siselect.tournament(%s, %s, judge => 'llm', search_path => %s)",
                     (CANDIDATES, QUESTION, superhero))
    assert time.monotonic() - started < 2.0, "at once, not after the retries' 7 s"


def test_a_cancel_during_the_judge_wait_ends_the_call(dsn, superhero, chat):
    chat.respond_with(lambda request: Reply('{"rows": [[1]]}', delay=60))
    settings = {"base_url": chat.base_url, "read_timeout": 50.0, "deadline": 60.0}
    with psycopg.connect(dsn, autocommit=True) as admin, \
            psycopg.connect(dsn, autocommit=True) as caller:
        admin.execute("SELECT siselect.set_llm_config(%s::jsonb)", (json.dumps(settings),))
        try:
            pid = caller.info.backend_pid
            failure: list[BaseException] = []

            def call() -> None:
                try:
                    caller.execute("SELECT siselect.tournament(%s, %s, judge => 'llm', "
                                   "search_path => %s)", (CANDIDATES, QUESTION, superhero))
                except BaseException as exc:  # noqa: BLE001 - examined below
                    failure.append(exc)

            worker = threading.Thread(target=call)
            worker.start()
            deadline = time.monotonic() + 30
            while not chat.chat_requests() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert chat.chat_requests(), "the judge was asked"
            cancelled = time.monotonic()
            admin.execute("SELECT pg_cancel_backend(%s)", (pid,))
            worker.join(timeout=10)
            assert not worker.is_alive()
            assert time.monotonic() - cancelled < 3.0
            assert failure and isinstance(failure[0], psycopg.errors.QueryCanceled)
        finally:
            admin.execute("SELECT siselect.set_llm_config(NULL)")


# ---- the server-wide limit ---------------------------------------------------------------

SLOTS_HELD = ("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
              "AND classid = %s::oid")


def test_the_server_wide_limit_caps_requests_in_flight(executor, chat, dsn):
    from siselect.selection.server_slots import LOCK_CLASS

    held: list[int] = []
    lock = threading.Lock()
    with psycopg.connect(dsn, autocommit=True) as watcher:
        def reply(request):
            with lock:  # the places taken, seen from another session as the request arrives
                held.append(watcher.execute(SLOTS_HELD, (LOCK_CLASS,)).fetchone()[0])
            return Reply('{"rows": [[1]]}', delay=0.3)

        chat.respond_with(reply)
        with LLMJudge(config(chat.base_url, pool=8, server_max_requests=2)) as judge:
            result = run_tournament(executor, CANDIDATES, QUESTION, None, judge, Options())
        assert result["judge_completions"]["sent"] == len(held) > 2
        assert max(held) == 2, "never more than two places taken"
        arrivals = sorted(r.received for r in chat.chat_requests())
        assert all(b - a >= 0.25 for a, b in zip(arrivals, arrivals[2:], strict=False)), \
            "a third request waits for one of two to finish"
        assert watcher.execute(SLOTS_HELD, (LOCK_CLASS,)).fetchone()[0] == 0, "all released"


def test_a_call_waits_while_other_sessions_hold_every_place(executor, chat, dsn):
    from siselect.selection.server_slots import LOCK_CLASS

    chat.respond_with(lambda request: '{"rows": [[1]]}')
    with psycopg.connect(dsn, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s, 0)", (LOCK_CLASS,))
        done: list[dict] = []

        def call() -> None:
            with LLMJudge(config(chat.base_url, server_max_requests=1)) as judge:
                done.append(run_tournament(executor, CANDIDATES, QUESTION, None, judge,
                                           Options()))

        worker = threading.Thread(target=call)
        worker.start()
        time.sleep(6)  # the separations, then the wait for a place
        assert not chat.chat_requests() and not done, "nothing sent while no place is free"
        other.execute("SELECT pg_advisory_unlock(%s, 0)", (LOCK_CLASS,))
        worker.join(timeout=60)
    assert done and done[0]["judge_completions"]["sent"] == len(chat.chat_requests()) > 0


def test_the_limit_inside_the_server(dsn, superhero, chat):
    from siselect.selection.server_slots import LOCK_CLASS

    held: list[int] = []
    with psycopg.connect(dsn, autocommit=True) as admin:
        def reply(request):
            held.append(admin.execute(SLOTS_HELD, (LOCK_CLASS,)).fetchone()[0])
            return '{"rows": [[1]]}'

        chat.respond_with(reply)
        settings = {"base_url": chat.base_url, "server_max_requests": 1}
        admin.execute("SELECT siselect.set_llm_config(%s::jsonb)", (json.dumps(settings),))
        try:
            with psycopg.connect(dsn, autocommit=True) as caller:
                result = caller.execute(
                    "SELECT siselect.tournament(%s, %s, judge => 'llm', search_path => %s)",
                    (CANDIDATES, QUESTION, superhero)).fetchone()[0]
                assert caller.execute(SLOTS_HELD, (LOCK_CLASS,)).fetchone()[0] == 0
        finally:
            admin.execute("SELECT siselect.set_llm_config(NULL)")
    assert result["judge_completions"]["sent"] == len(held) > 0
    assert set(held) == {1}


# ---- what a prompt may carry ---------------------------------------------------------------

NAMES = [f"SELECT superhero_name FROM superhero WHERE height_cm > {h}" for h in (200, 210, 220)]


def test_masked_columns_never_reach_the_endpoint(executor, chat):
    chat.respond_with(lambda request: '{"rows": [["(masked)"]]}')
    with LLMJudge(config(chat.base_url)) as judge:
        plain = run_tournament(executor, NAMES, "Which heroes are taller than 2 m?", None,
                               judge, Options())
    tables = [d["instance"]["superhero"] for d in plain["duels"] if "instance" in d]
    shown = {row[t["columns"].index(c)] for t in tables for row in t["rows"]
             for c in ("superhero_name", "full_name")} - {None, "-"}
    prompts = [json.dumps(r.body["messages"]) for r in chat.chat_requests()]
    assert shown and all(any(json.dumps(v)[1:-1] in p for p in prompts) for v in shown), \
        "the control: unmasked, the names are sent"
    sent = len(prompts)
    rules = ["*.superhero_name", "SuperHero.full_name", "x.y"]
    with LLMJudge(config(chat.base_url, masked_columns=rules)) as judge:
        run_tournament(executor, NAMES, "Which heroes are taller than 2 m?", None, judge,
                       Options())
    masked = [r.body["messages"] for r in chat.chat_requests()[sent:]]
    assert masked
    for messages in masked:
        text = json.dumps(messages)
        assert not [v for v in shown if json.dumps(v)[1:-1] in text]
        assert "(masked)" in messages[1]["content"]
        assert "withheld by the database's administrator" in messages[0]["content"]


def test_a_prompt_over_max_prompt_tokens_is_not_sent(chat):
    with LLMJudge(config(chat.base_url, max_prompt_tokens=64)) as judge:
        answers = judge.answer_all(contexts(2))
    assert not chat.chat_requests()
    assert all(a.rows is None and "exceed max_prompt_tokens=64" in a.error for a in answers)


@pytest.mark.parametrize("hosts, allowed", [
    (["127.0.0.1"], True), (["*.example.com", "127.0.0.1"], True), (["llm.example.com"], False),
    (["*.0.0.1"], True), ([], True)])
def test_endpoints_outside_the_allowed_hosts_are_refused(chat, hosts, allowed):
    from siselect.runtime.errors import ConfigError

    settings = config(chat.base_url, allowed_hosts=hosts)
    chat.respond_with(lambda request: '{"rows": [[1]]}')
    if allowed:
        with LLMJudge(settings) as judge:
            assert judge.answer(contexts(1)[0]).rows == [[1]]
        return
    with pytest.raises(ConfigError, match="not in allowed_hosts") as caught:
        LLMJudge(settings)
    assert caught.value.sqlstate == "42501" and not chat.chat_requests()


@pytest.mark.parametrize(("candidates", "question", "words"), [
    ([], QUESTION, "non-empty array"),
    (["SELECT 1"] * 65, QUESTION, "at most 64 candidates"),
    (CANDIDATES, " ", "question must not be empty"),
])
def test_a_bad_call_is_told_what_is_wrong_before_the_judge(conn, superhero, candidates,
                                                            question, words):
    """The llm judge's endpoint is unset too: the error names the call's own mistake."""
    with pytest.raises(psycopg.Error, match=words):
        conn.execute("SELECT siselect.tournament(%s::text[], %s, judge => 'llm', "
                     "search_path => %s)", (candidates, question, superhero))
