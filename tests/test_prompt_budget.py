"""max_prompt_tokens: D' shrinks to fit (rows referenced through foreign keys first, then
rows the separation does not need), the prompt says what was left out, and only a prompt
that does not fit even then is refused, with its SQLSTATE. Checked on the prompts the fake
endpoint received."""

import json

import pytest

from siselect.instances.separate import Options
from siselect.selection.llm import LLMConfig, LLMJudge
from siselect.selection.prompt_policy import estimated_tokens
from siselect.selection.tournament import run_tournament

CANDIDATES = ["SELECT superhero_name FROM superhero WHERE height_cm > 200",
              "SELECT superhero_name FROM superhero WHERE height_cm > 210"]
QUESTION = "Which heroes are taller than 2.1 m?"
LEFT_OUT = "Left out of the instance:"


def tournament(executor, chat, **settings):
    chat.respond_with(lambda request: '{"rows": [["Hulk"]]}')
    config = LLMConfig(base_url=chat.base_url, pool=2, votes=1, **settings)
    with LLMJudge(config) as judge:
        return run_tournament(executor, CANDIDATES, QUESTION, None, judge,
                              Options(with_references=True))


def shown_instance(request) -> dict:
    """The JSON instance in the prompt the endpoint received."""
    text = request.body["messages"][1]["content"]
    start = text.index("{", text.index("Instance ("))
    return json.JSONDecoder().raw_decode(text, start)[0]


def judged_duels(result) -> list[dict]:
    return [d for d in result["duels"] if "judge" in d]


def sizes(requests) -> list[int]:
    return [estimated_tokens(r.body["messages"]) for r in requests]


def prompt(request) -> str:
    return request.body["messages"][1]["content"]


@pytest.fixture
def whole(executor, chat):
    """The duels without a limit, and the sizes of their prompts."""
    result = tournament(executor, chat)
    requests = chat.chat_requests()
    assert requests and not any(LEFT_OUT in prompt(r) for r in requests)
    duels = judged_duels(result)
    assert all(len(d["instance"]) > 1 for d in duels), "D' holds referenced rows"
    chat.requests.clear()
    return duels, sizes(requests)


def check_views(result, requests, limit: int) -> None:
    """Every prompt sent fits; every duel shown a smaller view records it, and the view
    still tells the queries apart."""
    assert requests and max(sizes(requests)) <= limit
    for duel in judged_duels(result):
        view = duel["judge"].get("instance_shown")
        if view is None:
            continue
        assert any(duel["judge"]["left_out"] in prompt(r) for r in requests)
        assert any(shown_instance(r) == {t: [dict(zip(v["columns"], row, strict=True))
                                             for row in v["rows"]] for t, v in view.items()}
                   for r in requests)
        assert duel["answers"]["a"] != duel["answers"]["b"]
        hulk = ["Hulk"] in duel["answers"]["a"]["rows"], ["Hulk"] in duel["answers"]["b"]["rows"]
        assert duel["verdict"] == {(True, False): "a", (False, True): "b"}.get(hulk, "draw")


def test_references_go_first(executor, chat, whole):
    duels, whole_sizes = whole
    limit = min(whole_sizes) - 1
    result = tournament(executor, chat, max_prompt_tokens=limit)
    requests = chat.chat_requests()
    check_views(result, requests, limit)
    assert all(LEFT_OUT in prompt(r) and "that the rows shown refer to" in prompt(r)
               for r in requests)
    for duel in judged_duels(result):
        assert set(duel["judge"]["instance_shown"]) < set(duel["instance"])
        assert "superhero" in duel["judge"]["instance_shown"]
    assert [d["instance"] for d in judged_duels(result)] == [d["instance"] for d in duels], \
        "the duels still record the whole D'"


def test_then_rows_beyond_those_that_separate(executor, chat, whole):
    duels, whole_sizes = whole
    tournament(executor, chat, max_prompt_tokens=min(whole_sizes) - 1)
    limit = min(sizes(chat.chat_requests())) - 1
    chat.requests.clear()
    result = tournament(executor, chat, max_prompt_tokens=limit)
    requests = chat.chat_requests()
    check_views(result, requests, limit)
    further = [r for r in requests if "further row(s)" in prompt(r)]
    assert further, "some duel was cut to the rows its separation needs"
    most = max(len(d["instance"]["superhero"]["rows"]) for d in duels)
    assert all(len(shown_instance(r)["superhero"]) < most for r in further)


def test_refused_only_when_even_the_least_does_not_fit(executor, chat, whole):
    result = tournament(executor, chat, max_prompt_tokens=64)
    assert not chat.chat_requests(), "nothing was sent"
    assert judged_duels(result)
    for duel in judged_duels(result):
        error = duel["judge"]["error"]
        assert "exceed max_prompt_tokens=64" in error and "even with D' cut to the" in error
        assert "(SQLSTATE 54000)" in error
        assert duel["verdict"] == "draw" and "the judge failed" in duel["reason"]


def test_a_prompt_that_fits_is_left_whole(executor, chat, whole):
    duels, whole_sizes = whole
    result = tournament(executor, chat, max_prompt_tokens=max(whole_sizes))
    requests = chat.chat_requests()
    assert requests and not any(LEFT_OUT in prompt(r) for r in requests)
    assert not any("instance_shown" in d["judge"] for d in judged_duels(result))
