"""The baselines the tournament is compared with: consistency, naive LLM selection and
pairwise LLM judging, the LLM ones against the local chat-completions server."""

import json
import re

import pytest

from chat_server import ChatServer, Reply
from siselect.client.bench.baseline_prompts import parse_better, parse_choice, schema_ddl
from siselect.client.bench.baselines import (
    Contender,
    chat_complete,
    consistency,
    naive_selection,
    pairwise_selection,
)
from siselect.runtime.catalog import load_catalog
from siselect.runtime.executor import Rows
from siselect.selection.llm import ChatClient, LLMConfig

QUESTION = "How many superheroes are taller than 200 cm?"
EVIDENCE = "taller than 200 cm refers to height_cm > 200"
SCHEMA = "CREATE TABLE superhero (\n  id bigint PRIMARY KEY,\n  height_cm bigint\n);"
CANDIDATES = [(0, "SELECT COUNT(*) FROM superhero WHERE height_cm >= 200"),
              (3, "SELECT COUNT(*) FROM superhero WHERE height_cm > 200"),
              (5, "SELECT COUNT(id) FROM superhero WHERE height_cm > 200")]


def client_for(server: ChatServer, **settings) -> ChatClient:
    base = dict(base_url=server.base_url, model="test-model", connect_timeout=1.0,
                read_timeout=2.0, deadline=5.0, retries=0, seed=10)
    return ChatClient(LLMConfig(**{**base, **settings}))


def user_text(request) -> str:
    return request.body["messages"][1]["content"]


def contender(index: int, sql: str, value: int, size: int) -> Contender:
    return Contender(index, sql, Rows(["count"], [(value,)]), size)


# ---- consistency -------------------------------------------------------------------------


def test_consistency_takes_the_largest_group_then_the_earlier_candidate():
    groups = [contender(4, "a", 1, 2), contender(1, "b", 2, 3), contender(7, "c", 3, 3)]
    assert consistency(groups) == 1
    assert consistency([contender(6, "a", 1, 1), contender(2, "b", 2, 1)]) == 2
    with pytest.raises(ValueError):
        consistency([])


# ---- naive selection ---------------------------------------------------------------------


def test_naive_lists_the_candidates_and_takes_the_most_frequent_pick(chat):
    chat.script('I check them. {"choice": 2}', '```json\n{"choice": 3}\n```', '{"choice": 2}')
    with client_for(chat) as client:
        result = naive_selection(chat_complete(client), SCHEMA, QUESTION, EVIDENCE, CANDIDATES)
    assert result["choice"] == 3  # the 2nd listed candidate is input candidate 3
    assert result["votes"] == [3, 5, 3] and result["calls"] == 3 and not result["fallback"]
    assert [r.body["seed"] for r in chat.requests] == [10, 11, 12]
    prompt = user_text(chat.requests[0])
    for number, (_, sql) in enumerate(CANDIDATES, 1):
        assert f"Candidate {number}:\n```sql\n{sql}\n```" in prompt
    assert QUESTION in prompt and EVIDENCE in prompt and SCHEMA in prompt
    assert "first candidate that passes every item" in chat.requests[0].body["messages"][0][
        "content"]


def test_naive_stops_asking_once_a_majority_is_certain(chat):
    chat.script('{"choice": 1}', '{"choice": 1}')
    with client_for(chat) as client:
        result = naive_selection(chat_complete(client), SCHEMA, QUESTION, None, CANDIDATES)
    assert result["choice"] == 0 and result["calls"] == 2 and len(chat.requests) == 2
    assert "<hint>\n(none)\n</hint>" in user_text(chat.requests[0])


def test_naive_breaks_ties_toward_the_earlier_candidate(chat):
    chat.script('{"choice": 3}', '{"choice": 2}', "I cannot decide.")
    with client_for(chat) as client:
        result = naive_selection(chat_complete(client), SCHEMA, QUESTION, EVIDENCE, CANDIDATES)
    assert result["choice"] == 3 and result["votes"] == [5, 3, None]
    assert result["errors"] == ["the reply names no candidate"]


def test_naive_falls_back_on_the_first_candidate_when_no_reply_is_usable(chat):
    chat.script('{"choice": 9}', Reply(status=400, body=b'{"error": "bad request"}'),
                "<think>maybe {\"choice\": 2}</think> none of them")
    with client_for(chat) as client:
        result = naive_selection(chat_complete(client), SCHEMA, QUESTION, EVIDENCE, CANDIDATES)
    assert result["choice"] == 0 and result["fallback"] and result["calls"] == 3
    assert any("HTTP 400" in e for e in result["errors"])


# ---- pairwise judging ---------------------------------------------------------------------


def prefer(sql_part: str):
    """A reply that names the side whose query contains ``sql_part``."""
    def answer(request) -> str:
        text = user_text(request)
        a = re.search(r"Query A:\n```sql\n(.*?)\n```", text, re.S).group(1)
        return json.dumps({"better": "A" if sql_part in a else "B"})
    return answer


def test_pairwise_judges_every_pair_with_its_results_on_the_database(chat):
    chat.respond_with(prefer("> 200"))
    groups = [contender(0, CANDIDATES[0][1], 120, 3), contender(3, CANDIDATES[1][1], 118, 1),
              contender(8, "SELECT COUNT(*) FROM superhero", 750, 1)]
    with client_for(chat) as client:
        result = pairwise_selection(chat_complete(client), SCHEMA, QUESTION, EVIDENCE, groups)
    assert result["choice"] == 3 and not result["shortcut"]
    assert [(d["a"], d["b"]) for d in result["duels"]] == [(0, 3), (0, 8), (3, 8)]
    assert [d["verdict"] for d in result["duels"]] == ["b", "b", "a"]
    assert result["scores"] == {0: 0.0, 3: 2.0, 8: 1.0}
    assert result["calls"] == len(chat.requests) == 6  # two agreeing votes settle a pair
    first = user_text(chat.requests[0])
    assert "Result of A on the database:\ncolumns: [\"count\"]\n1 row:\n[120]" in first
    assert "Result of B on the database:\ncolumns: [\"count\"]\n1 row:\n[118]" in first


def test_pairwise_shows_long_results_cut_and_counted(chat):
    chat.script('{"better": "B"}', '{"better": "B"}')
    many = Rows(["name"], [(f"hero {i}",) for i in range(50)])
    groups = [Contender(0, "SELECT name FROM superhero", many, 1),
              Contender(1, "SELECT 1", Rows(["x"], [(1,)]), 1)]
    with client_for(chat) as client:
        result = pairwise_selection(chat_complete(client), SCHEMA, QUESTION, EVIDENCE, groups,
                                    max_rows=5)
    assert result["choice"] == 1
    text = user_text(chat.requests[0])
    assert "50 rows (the first 5 shown):" in text
    assert '["hero 4"]' in text and '["hero 5"]' not in text


def test_pairwise_draws_go_to_the_larger_group(chat):
    chat.respond_with(lambda request: "no idea")
    groups = [contender(0, "SELECT 1", 1, 1), contender(1, "SELECT 2", 2, 2)]
    with client_for(chat) as client:
        result = pairwise_selection(chat_complete(client), SCHEMA, QUESTION, EVIDENCE, groups)
    assert result["choice"] == 1 and result["duels"][0]["verdict"] == "draw"
    assert result["duels"][0]["errors"] == ["the reply decides nothing"] * 3


def test_pairwise_takes_a_confident_majority_without_asking(chat):
    groups = [contender(0, "SELECT 1", 1, 1), contender(2, "SELECT 2", 2, 3)]
    with client_for(chat) as client:
        complete = chat_complete(client)
        result = pairwise_selection(complete, SCHEMA, QUESTION, EVIDENCE, groups,
                                    confident_share=0.75)
        assert result == {"choice": 2, "shortcut": True, "duels": [], "calls": 0}
        assert chat.requests == []
        chat.script('{"better": "A"}', '{"better": "A"}')
        asked = pairwise_selection(complete, SCHEMA, QUESTION, EVIDENCE, groups,
                                   confident_share=0.8)
    assert asked["choice"] == 0 and len(chat.requests) == 2


# ---- prompts ------------------------------------------------------------------------------


def test_decisions_are_read_from_the_end_of_the_reply():
    assert parse_choice('{"choice": 1} ... on reflection {"choice": 2}', 3) == 1
    assert parse_choice("<think>choice: 3</think>", 3) is None
    assert parse_choice('{"choice": 0}', 3) is None
    assert parse_choice('{"choice": "2"}', 2) == 1
    assert parse_better("B looks right. {\"better\": \"b\"}") == "b"
    assert parse_better('{"better": "C"}') is None


def test_schema_ddl_carries_keys_and_descriptions(executor):
    ddl = schema_ddl(load_catalog(executor))
    hero = re.search(r"CREATE TABLE superhero \((.*?)\n\);", ddl, re.S).group(1)
    assert "\n  id bigint PRIMARY KEY," in hero
    assert "FOREIGN KEY (publisher_id) REFERENCES publisher (id)" in hero
    assert re.search(r"height_cm bigint,\s+-- .*height", hero, re.I)
    assert ddl.count("CREATE TABLE") == 10
