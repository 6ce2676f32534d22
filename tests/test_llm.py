"""The LLM judge against a real local chat-completions server (tests/chat_server.py):
request fields, majority voting, malformed replies, timeouts, retries, size caps."""

import json
import socket
import time

import pytest

from chat_server import ChatServer, Reply
from siselect.runtime.answers import matches_judge
from siselect.runtime.catalog import Catalog, load_catalog
from siselect.runtime.errors import ConfigError, JudgeReplyInvalid, JudgeUnavailable
from siselect.selection.judges import JudgeContext
from siselect.selection.llm import ChatClient, LLMConfig, LLMJudge

MESSAGES = [{"role": "user", "content": "How many?"}]
INSTANCE = {"hero": {"columns": ["id", "name"], "rows": [[1, "Hulk"], [2, "Thor"]]}}


def config_for(server: ChatServer, **settings) -> LLMConfig:
    # pool=1: a script's replies go to requests in arrival order, so these tests send one
    # at a time (tests/test_judge_pool.py covers the concurrent pool).
    base = dict(base_url=server.base_url, model="test-model", connect_timeout=1.0,
                read_timeout=2.0, deadline=10.0, retries=2, backoff=0.01, pool=1)
    return LLMConfig(**{**base, **settings})


def ask(config: LLMConfig, question: str = "How many heroes are there?"):
    with LLMJudge(config) as judge:
        return judge.answer(JudgeContext(question, None, INSTANCE, Catalog()))


def refused_port() -> int:
    """A local port nobody listens on (bound, never listening)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# ---- the request -------------------------------------------------------------------------


def test_request_carries_the_configured_fields(chat):
    chat.script('{"rows": [[2]]}')
    config = config_for(chat, api_key="sk-test", temperature=0.7, top_p=0.8, seed=41,
                        max_tokens=512, extra={"top_k": 20, "repetition_penalty": 1.05})
    with ChatClient(config) as client:
        assert client.complete(MESSAGES) == '{"rows": [[2]]}'
    (request,) = chat.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert request.body == {"messages": MESSAGES, "stream": False, "model": "test-model",
                            "temperature": 0.7, "top_p": 0.8, "max_tokens": 512, "seed": 41,
                            "top_k": 20, "repetition_penalty": 1.05}


def test_unset_fields_are_left_to_the_server(chat):
    chat.script("x")
    with ChatClient(LLMConfig(base_url=chat.base_url, seed=None)) as client:
        client.complete(MESSAGES)
    body = chat.requests[0].body
    assert body == {"messages": MESSAGES, "stream": False}
    assert "Authorization" not in chat.requests[0].headers


def test_judge_sends_the_prompt_and_one_seed_per_vote(chat):
    chat.script('{"rows": [[1]]}', '{"rows": [[2]]}', '{"rows": [[3]]}')
    answer = ask(config_for(chat, seed=7))
    assert [r.body["seed"] for r in chat.requests] == [7, 8, 9]
    messages = chat.requests[0].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert '"name": "Hulk"' in messages[1]["content"]
    assert "How many heroes are there?" in messages[1]["content"]
    assert answer.calls == 3 and [v["seed"] for v in answer.votes] == [7, 8, 9]


@pytest.mark.parametrize("fmt, marker", [("json", '"name": "Thor"'),
                                         ("markdown", "| 2 | Thor |"),
                                         ("sql", "(2, 'Thor')")])
def test_instance_format_is_configurable(chat, fmt, marker):
    chat.script('{"rows": [[2]]}', '{"rows": [[2]]}')
    ask(config_for(chat, format=fmt))
    assert marker in chat.requests[0].body["messages"][1]["content"]


# ---- voting ------------------------------------------------------------------------------


def test_two_of_three_agree(chat):
    chat.script('{"rows": [[2]]}', '{"rows": [[3]]}', '```json\n{"rows": [["2"]]}\n```')
    answer = ask(config_for(chat))
    assert answer.rows == [[2]] and answer.error is None
    assert answer.calls == 3
    assert [v["majority"] for v in answer.votes] == [True, False, True]
    assert [v["rows"] for v in answer.votes] == [[[2]], [[3]], [[2]]]


def test_voting_stops_once_a_majority_is_certain(chat):
    chat.script('{"rows": [[2]]}', '{"rows": [[2.0]]}', '{"rows": [[3]]}')
    answer = ask(config_for(chat))
    assert answer.rows == [[2]] and answer.calls == 2 and len(chat.requests) == 2


def test_every_vote_is_asked_without_early_stop(chat):
    chat.script('{"rows": [[2]]}', '{"rows": [[2]]}', '{"rows": [[3]]}')
    answer = ask(config_for(chat, early_stop=False))
    assert answer.rows == [[2]] and answer.calls == 3


def test_a_tie_goes_to_the_first_answer(chat):
    chat.script('{"rows": [[1]]}', '{"rows": [[2]]}', '{"rows": [[3]]}')
    assert ask(config_for(chat)).rows == [[1]]


def test_votes_agree_at_the_precision_they_wrote(chat):
    chat.script('{"rows": [[0.5]]}', '{"rows": [[0.3333]]}', '{"rows": [[0.33]]}')
    answer = ask(config_for(chat))
    assert answer.rows == [[0.3333]]
    assert matches_judge([(1 / 3,)], answer.rows)


def test_one_garbage_vote_out_of_three_still_gives_the_majority(chat):
    chat.script("I am not sure.", '<think>hero 1, hero 2</think>{"rows": [[2]]}',
                'Counting: [1, 2].\n```json\n{"rows": [[2]]}\n```')
    answer = ask(config_for(chat))
    assert answer.rows == [[2]] and answer.error is None
    assert answer.votes[0]["rows"] is None
    assert "no JSON answer" in answer.votes[0]["error"]
    assert answer.votes[0]["text"] == "I am not sure."


def test_all_garbage_gives_no_answer(chat):
    chat.script("no idea", Reply(body=b"<html>oops</html>"), Reply(body=b'{"id": 1}'))
    answer = ask(config_for(chat))
    assert answer.rows is None and answer.calls == 3
    assert "no usable answer in 3 vote(s)" in answer.error
    errors = [v["error"] for v in answer.votes]
    assert "no JSON answer" in errors[0]
    assert "not JSON" in errors[1]
    assert "not a chat completion" in errors[2]


def test_vote_records_are_bounded(chat):
    long_reply = "x" * 10_000 + '{"rows": [[2]]}'
    chat.script(long_reply, long_reply)
    answer = ask(config_for(chat))
    assert answer.rows == [[2]]
    assert len(answer.votes[0]["text"]) == 4000 and answer.votes[0]["text_truncated"]
    assert answer.votes[0]["finish_reason"] == "stop"


def test_a_reply_cut_off_inside_think_is_a_failed_vote(chat):
    chat.script(Reply(content="<think>Let me count", finish_reason="length"),
                '{"rows": [[2]]}', '{"rows": [[2]]}')
    answer = ask(config_for(chat))
    assert answer.rows == [[2]]
    assert answer.votes[0]["finish_reason"] == "length"
    assert "<think>" in answer.votes[0]["error"]


# ---- failures of the endpoint ------------------------------------------------------------


def test_http_500_then_success_is_retried(chat):
    chat.script(Reply(status=500, body=b"overloaded"), Reply(status=503), '{"rows": [[2]]}')
    with ChatClient(config_for(chat)) as client:
        completion = client.chat(MESSAGES)
    assert completion.text == '{"rows": [[2]]}' and completion.attempts == 3
    assert len(chat.requests) == 3


def test_429_honours_retry_after(chat):
    chat.script(Reply(status=429, headers={"Retry-After": "0"}), "fine")
    with ChatClient(config_for(chat, backoff=60.0)) as client:
        started = time.monotonic()
        assert client.complete(MESSAGES) == "fine"
    assert time.monotonic() - started < 5


def test_retries_are_bounded(chat):
    chat.respond_with(lambda request: Reply(status=502, body=b"bad gateway"))
    with ChatClient(config_for(chat, retries=2)) as client, \
            pytest.raises(JudgeUnavailable, match="retries exhausted.*HTTP 502: bad gateway"):
        client.complete(MESSAGES)
    assert len(chat.requests) == 3


def test_a_client_error_is_not_retried(chat):
    chat.script(Reply(status=401, body=b'{"error": {"message": "invalid api key"}}'))
    with ChatClient(config_for(chat)) as client, \
            pytest.raises(JudgeUnavailable, match="HTTP 401.*invalid api key") as caught:
        client.complete(MESSAGES)
    assert len(chat.requests) == 1
    assert caught.value.sqlstate == "58000"


def test_a_slow_endpoint_hits_the_read_timeout(chat):
    chat.respond_with(lambda request: Reply(content="late", delay=5.0))
    config = config_for(chat, read_timeout=0.3, retries=1)
    started = time.monotonic()
    with ChatClient(config) as client, pytest.raises(JudgeUnavailable, match="read timeout"):
        client.complete(MESSAGES)
    assert time.monotonic() - started < 2.0
    assert len(chat.requests) == 2


def test_the_deadline_bounds_all_attempts(chat):
    chat.respond_with(lambda request: Reply(content="late", delay=5.0))
    config = config_for(chat, read_timeout=0.4, retries=20, backoff=0.05, deadline=1.0)
    started = time.monotonic()
    with ChatClient(config) as client, pytest.raises(JudgeUnavailable, match="deadline of 1s"):
        client.complete(MESSAGES)
    assert time.monotonic() - started < 2.0


def test_the_deadline_bounds_a_trickling_reply(chat):
    chat.script(Reply(content="a slow answer", trickle=0.05))
    config = config_for(chat, read_timeout=1.0, deadline=0.6)
    started = time.monotonic()
    with ChatClient(config) as client, pytest.raises(JudgeUnavailable, match="still sending"):
        client.complete(MESSAGES)
    assert time.monotonic() - started < 2.0


def test_endpoint_down_is_a_clear_error_in_bounded_time():
    config = LLMConfig(base_url=f"http://127.0.0.1:{refused_port()}/v1", retries=2,
                       backoff=0.05, connect_timeout=1.0)
    started = time.monotonic()
    with ChatClient(config) as client, \
            pytest.raises(JudgeUnavailable, match=r"unavailable.*3 attempt.*Connection refused"):
        client.complete(MESSAGES)
    assert time.monotonic() - started < 2.0


def test_judge_with_the_endpoint_down_abstains_once_the_breaker_opens():
    config = LLMConfig(base_url=f"http://127.0.0.1:{refused_port()}", retries=1, backoff=0.01,
                       pool=1)
    answer = ask(config)
    # Vote 1: two refused attempts; vote 2's first is the third failure in a row.
    assert answer.rows is None and answer.calls == 2
    assert answer.error == "judge unavailable"
    assert "failed 3 times in a row" in answer.unavailable
    assert "Connection refused" in answer.unavailable
    assert "Connection refused" in answer.votes[0]["error"]


def test_judge_failing_mid_vote_abstains(chat):
    chat.script('{"rows": [[1]]}', '{"rows": [[2]]}', Reply(status=404, body=b"no such model"))
    answer = ask(config_for(chat))
    assert answer.rows is None and answer.calls == 3
    assert "HTTP 404" in answer.error


@pytest.mark.parametrize("declare_length", [True, False])
def test_a_huge_body_is_refused(chat, declare_length):
    huge = Reply(body=b'{"choices": "' + b"x" * 3_000_000 + b'"}',
                 declare_length=declare_length)
    chat.script(huge)
    with ChatClient(config_for(chat, max_response_bytes=100_000)) as client, \
            pytest.raises(JudgeReplyInvalid, match="max_response_bytes=100000"):
        client.complete(MESSAGES)
    assert len(chat.requests) == 1  # a bad reply is not retried


def test_a_huge_vote_does_not_sink_the_judge(chat):
    chat.script(Reply(body=b"[" * 200_000), '{"rows": [[2]]}', '{"rows": [[2]]}')
    answer = ask(config_for(chat, max_response_bytes=100_000))
    assert answer.rows == [[2]]
    assert "max_response_bytes" in answer.votes[0]["error"]


def test_unscripted_calls_fail_visibly(chat):
    with ChatClient(config_for(chat)) as client, pytest.raises(JudgeUnavailable, match="418"):
        client.complete(MESSAGES)


# ---- configuration -----------------------------------------------------------------------


def test_from_env(tmp_path):
    env = {"SISELECT_LLM_URL": "http://llm:8000/v1", "SISELECT_LLM_MODEL": "qwen",
           "OPENAI_API_KEY": "sk-1", "SISELECT_LLM_TEMPERATURE": "0.7",
           "SISELECT_LLM_SEED": "5", "SISELECT_LLM_VOTES": "5", "SISELECT_LLM_EARLY_STOP": "no",
           "SISELECT_LLM_EXTRA": '{"top_k": 20}', "SISELECT_LLM_FORMAT": "markdown"}
    config = LLMConfig.from_env(env)
    assert (config.base_url, config.model, config.api_key) == ("http://llm:8000/v1", "qwen", "sk-1")
    assert (config.temperature, config.seed, config.votes) == (0.7, 5, 5)
    assert config.early_stop is False and config.extra == {"top_k": 20}
    assert config.format == "markdown"
    assert LLMConfig.from_env({**env, "SISELECT_LLM_API_KEY": "sk-2"}).api_key == "sk-2"
    assert LLMConfig.from_env({}) == LLMConfig()
    assert LLMConfig.from_env({"SISELECT_LLM_SEED": "none"}).seed is None
    assert LLMConfig.from_env({"OPENAI_BASE_URL": "https://x/v1"}).base_url == "https://x/v1"


def test_from_env_reads_a_file_first(tmp_path):
    path = tmp_path / "llm.json"
    path.write_text(json.dumps({"model": "from-file", "votes": 1, "extra": {"top_k": 5}}))
    config = LLMConfig.from_env({"SISELECT_LLM_CONFIG": str(path), "SISELECT_LLM_VOTES": "3",
                                 "SISELECT_LLM_EXTRA": '{"min_p": 0.1}'})
    assert (config.model, config.votes) == ("from-file", 3)
    assert config.extra == {"top_k": 5, "min_p": 0.1}


@pytest.mark.parametrize("env, message", [
    ({"SISELECT_LLM_VOTES": "three"}, "not a valid int"),
    ({"SISELECT_LLM_EARLY_STOP": "maybe"}, "not a valid bool"),
    ({"SISELECT_LLM_EXTRA": "{top_k: 1}"}, "not a valid dict"),
    ({"SISELECT_LLM_URL": "llm:8000"}, "http"),
])
def test_from_env_rejects_bad_values(env, message):
    with pytest.raises(ConfigError, match=message):
        LLMConfig.from_env(env)


def test_from_file(tmp_path):
    path = tmp_path / "llm.json"
    path.write_text(json.dumps({"base_url": "https://api.example/v1", "temperature": 0,
                                "read_timeout": 30}))
    config = LLMConfig.from_file(path)
    assert (config.base_url, config.temperature, config.read_timeout) == \
        ("https://api.example/v1", 0, 30)
    path.write_text(json.dumps({"seed": None, "extra": {"top_k": 20}}))
    unseeded = LLMConfig.from_file(path)
    assert (unseeded.seed, unseeded.extra) == (None, {"top_k": 20})
    path.write_text(json.dumps({"modle": "x"}))
    with pytest.raises(ConfigError, match="unknown LLM setting.*modle"):
        LLMConfig.from_file(path)
    path.write_text("[1]")
    with pytest.raises(ConfigError, match="must be a JSON object"):
        LLMConfig.from_file(path)
    with pytest.raises(ConfigError, match="cannot read"):
        LLMConfig.from_file(tmp_path / "missing.json")


def test_merged_keeps_unset_values_and_merges_extra():
    base = LLMConfig(model="a", temperature=0.5, extra={"top_k": 20})
    merged = base.merged(model="b", temperature=None, extra={"min_p": 0.1})
    assert (merged.model, merged.temperature) == ("b", 0.5)
    assert merged.extra == {"top_k": 20, "min_p": 0.1}
    assert base.model == "a"


@pytest.mark.parametrize("settings, message", [
    ({"votes": 0}, "votes=0"),
    ({"format": "yaml"}, "unknown instance format"),
    ({"extra": {"messages": []}}, "extra must not set messages"),
    ({"extra": {"temperature": 1}}, "extra must not set temperature"),
    ({"base_url": "ftp://host/"}, "http"),
    ({"temperature": -1.0}, "temperature"),
    ({"retries": True}, "must be a int"),
    ({"seed": 1.5}, "must be a int"),
    ({"read_timeout": 0}, "read_timeout"),
])
def test_invalid_settings_are_refused(settings, message):
    with pytest.raises(ConfigError, match=message):
        LLMConfig(**settings)


def test_the_api_key_stays_out_of_reports():
    config = LLMConfig(api_key="sk-secret")
    assert "sk-secret" not in repr(config)
    assert config.to_dict()["api_key"] == "***"


@pytest.mark.parametrize("base_url, endpoint", [
    ("http://h:8000/v1", "http://h:8000/v1/chat/completions"),
    ("http://h:8000/v1/", "http://h:8000/v1/chat/completions"),
    ("http://h:8000", "http://h:8000/v1/chat/completions"),
    ("https://api.example/openai/v1", "https://api.example/openai/v1/chat/completions"),
    ("http://h/v1/chat/completions", "http://h/v1/chat/completions"),
])
def test_endpoint(base_url, endpoint):
    assert LLMConfig(base_url=base_url).endpoint() == endpoint


# ---- with a real instance ----------------------------------------------------------------


def test_judge_answer_on_real_rows_matches_postgres(chat, executor):
    """A server that answers from the prompt's own JSON instance, as a perfect LLM would;
    its answer matches what PostgreSQL computes on the same rows."""
    heroes = executor.run("SELECT id, superhero_name, height_cm FROM superhero "
                          "WHERE height_cm > 0 ORDER BY id LIMIT 4")
    instance = {"superhero": {"columns": heroes.columns, "rows": [list(r) for r in heroes.rows]}}

    def perfect(request):
        prompt = request.body["messages"][1]["content"]
        start = prompt.index("{", prompt.index("Instance ("))
        data, _ = json.JSONDecoder().raw_decode(prompt, start)
        heights = [row["height_cm"] for row in data["superhero"]]
        return f"<think>average of {heights}</think>\n" + json.dumps(
            {"rows": [[round(sum(heights) / len(heights), 2)]]})

    chat.respond_with(perfect)
    context = JudgeContext("What is the average height of these superheroes?",
                           "height refers to height_cm", instance, load_catalog(executor))
    with LLMJudge(config_for(chat)) as judge:
        answer = judge.answer(context)
    ids = ", ".join(str(r[0]) for r in heroes.rows)
    on_postgres = executor.run(f"SELECT avg(height_cm) FROM superhero WHERE id IN ({ids})")
    assert answer.error is None and answer.calls == 2
    assert matches_judge(on_postgres.rows, answer.rows, judge.tolerance)
    assert not matches_judge([(on_postgres.rows[0][0] + 1,)], answer.rows, judge.tolerance)
    prompt = chat.requests[0].body["messages"][1]["content"]
    assert "height_cm (bigint)" in prompt


def test_the_prompt_leaves_out_a_loaded_tables_implicit_rowid(dsn, tmp_path):
    """A SQLite table without INTEGER PRIMARY KEY is loaded with a column holding its
    rowid (docs/identifiers.md); SQLite never shows it, so the judge is not shown it
    either: not in the schema, not in the rows. The separation still used it."""
    import sqlite3

    from conftest import loaded_executor
    from siselect.instances.separate import Options
    from siselect.selection.tournament import run_tournament

    path = tmp_path / "lab.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript("CREATE TABLE lab (patient TEXT, glucose REAL);"
                         "INSERT INTO lab VALUES ('p1', 90), ('p2', 140), ('p3', 200);")
    with ChatServer() as chat, loaded_executor(dsn, path, "rowid_prompt") as executor:
        chat.respond_with(lambda request: '{"rows": [[2]]}')
        catalog = load_catalog(executor)
        assert catalog.table("lab").rowid == "rowid"
        with LLMJudge(config_for(chat)) as judge:
            result = run_tournament(
                executor, ["SELECT COUNT(*) FROM lab WHERE glucose > 100",
                           "SELECT COUNT(*) FROM lab WHERE glucose > 150"],
                "How many tests show a glucose above 100?", None, judge,
                Options(dialect="sqlite"), catalog=catalog)
        prompts = [r.body["messages"][1]["content"] for r in chat.chat_requests()]
    assert prompts and result["winner"] is not None
    instance = next(d["instance"] for d in result["duels"] if "instance" in d)
    assert "rowid" in instance["lab"]["columns"], "the instance itself keeps it"
    for prompt in prompts:
        assert "rowid" not in prompt.lower()
        assert "glucose" in prompt and "patient" in prompt
