"""Issue 12, point 5: the LLM endpoint's credentials and the prompt never reach tournament
results or reports, even when the endpoint's errors echo the request back."""

import base64
import itertools
import json
import urllib.parse

import pytest

from chat_server import Reply, Request
from siselect.client.cli import main
from siselect.client.exit_codes import JUDGE_FAILED
from siselect.runtime.redact import ECHO_MASK, MASK, redact, redact_url, request_renderings
from siselect.selection.llm import ChatClient, LLMConfig
from siselect.selection.prompts import SYSTEM_PROMPT

USER, PASSWORD = "alice", "pw-in-userinfo-81f2"
QUERY_KEY = "sk-in-query-4d9a0c7e"
PATH_KEY = "sk-proj-in-path-6b1e93aa"
API_KEY = "sk-bearer-key-2f7d51c0"
EVIDENCE = "EVIDENCE-CANARY-only-in-the-prompt"
QUESTION = "How many superheroes are taller than 200 cm?"
CANDIDATES = ["SELECT COUNT(*) FROM superhero WHERE height_cm >= 198",
              "SELECT COUNT(*) FROM superhero WHERE height_cm > 200",
              "SELECT COUNT(*) FROM superhero"]
# Distinctive parts of the prompt that a result has no other reason to hold.
PROMPT_MARKERS = ["Schema of the tables in the instance", "Hint (how terms of the question",
                  'Reply with the JSON object {"rows"', "<question>", EVIDENCE]


@pytest.mark.parametrize("url, shown", [
    ("https://alice:secret@api.example.com:8443/v1?api_key=sk-x&api-version=2024",
     "https://***@api.example.com:8443/v1?api_key=***&api-version=***"),
    ("http://h/key/sk-proj-abcdef1234567890/v1", "http://h/key/***/v1"),
    ("http://h/v1/models/abcdEFGH1234ijkl5678mnop90/chat", "http://h/v1/models/***/chat"),
    ("http://[::1]:8000/v1#token", "http://[::1]:8000/v1#***"),
    ("http://127.0.0.1:8000/v1/chat/completions", "http://127.0.0.1:8000/v1/chat/completions"),
])
def test_urls_lose_userinfo_query_values_and_path_keys(url, shown):
    assert redact_url(url) == shown


def test_redact_removes_echoes_secrets_and_named_credentials():
    body = {"messages": [{"role": "system", "content": SYSTEM_PROMPT},
                         {"role": "user", "content": "rows: [[1, 'x']]\nQuestion: " + EVIDENCE}]}
    echoed = json.dumps({"error": "bad", "request": json.dumps(body)})
    text = (f"HTTP 400 {echoed} Authorization: Bearer {API_KEY} at "
            f"http://{USER}:{PASSWORD}@h/v1?api_key={QUERY_KEY} password={PASSWORD}")
    shown = redact(text, [API_KEY], request_renderings(body), limit=10_000)
    for secret in (API_KEY, PASSWORD, QUERY_KEY, EVIDENCE, SYSTEM_PROMPT[:40]):
        assert secret not in shown
    assert ECHO_MASK in shown and shown.startswith("HTTP 400")
    assert len(redact("x" * 5000, limit=200)) == 200


def test_the_endpoint_url_keeps_its_query_after_the_path(chat):
    chat.script('{"rows": [[1]]}')
    config = LLMConfig(base_url=f"{chat.base_url}?api-version=2024-06", retries=0)
    with ChatClient(config) as client:
        assert client.complete([{"role": "user", "content": "q"}]) == '{"rows": [[1]]}'
    assert chat.chat_requests()[0].path == "/v1/chat/completions?api-version=2024-06"


def _echo(request: Request) -> str:
    """Everything the client sent: body, headers (Authorization) and path (query key)."""
    return json.dumps({"body": request.body, "headers": request.headers, "path": request.path})


def _echoing_endpoint():
    """Error replies of four kinds, in turn, each quoting the whole request."""
    kinds = itertools.cycle([
        lambda raw, req: Reply(status=400, body=json.dumps(
            {"error": {"message": f"invalid request {raw}", "type": "invalid_request_error"},
             "request": req.body}).encode()),
        lambda raw, req: Reply(status=500, body=f"internal error handling {raw}".encode()),
        lambda raw, req: Reply(body=json.dumps({"error": f"cannot parse {raw}"}).encode()),
        lambda raw, req: Reply(body=f"<html>proxy error for {raw}</html>".encode()),
    ])
    return lambda request: next(kinds)(_echo(request), request)


def _secrets(chat) -> list[str]:
    userinfo = f"{USER}:{PASSWORD}"
    sent = {r.headers.get("Authorization", "").partition(" ")[2] for r in chat.chat_requests()}
    return [PASSWORD, QUERY_KEY, PATH_KEY, API_KEY, urllib.parse.quote(PASSWORD),
            base64.b64encode(userinfo.encode()).decode(), *sorted(s for s in sent if s)]


def test_results_and_reports_hold_no_secret_and_no_prompt(chat, dsn, superhero, tmp_path,
                                                          capsys, monkeypatch):
    chat.respond_with(_echoing_endpoint())
    base_url = (f"http://{USER}:{PASSWORD}@127.0.0.1:{chat.port}/v1"
                f"?api_key={QUERY_KEY}&path_key={PATH_KEY}")
    config = tmp_path / "llm.json"
    config.write_text(json.dumps({"base_url": base_url, "api_key": API_KEY, "retries": 0,
                                  "votes": 3, "deadline": 20.0, "backoff": 0.0}))
    monkeypatch.delenv("SISELECT_LLM_URL", raising=False)
    outputs = {}
    for suffix in ("md", "html"):
        report = tmp_path / f"report.{suffix}"
        code = main(["tournament", "--dsn", dsn, "--db", superhero, "--judge", "llm",
                     "--llm-config", str(config), "--question", QUESTION, "--evidence", EVIDENCE,
                     "--report", str(report), "--json", *CANDIDATES])
        assert code == JUDGE_FAILED  # every duel's judge failed: the fallback picked
        outputs[f"result ({suffix} run)"] = capsys.readouterr().out.strip().splitlines()[-1]
        # A report shows the evidence once, by design (issue 19: it stands alone); any
        # other copy came back from the endpoint.
        shown = report.read_text()
        assert shown.count(EVIDENCE) == 1, suffix
        outputs[suffix] = shown.replace(EVIDENCE, "", 1)
    result = json.loads(outputs["result (html run)"])
    # The endpoint was reached, answered with its echoes, and every duel says why it failed.
    assert len(chat.chat_requests()) >= 6
    assert len(result["duels"]) == 3
    reasons = [d["reason"] for d in result["duels"]]
    assert all(r.startswith("the judge failed") for r in reasons), reasons
    shown_url = f"http://{MASK}@127.0.0.1:{chat.port}/v1/chat/completions?api_key={MASK}"
    assert any(shown_url in r for r in reasons), reasons
    assert any(ECHO_MASK in json.dumps(d["judge"]) for d in result["duels"])
    secrets = _secrets(chat)
    prompt_windows = [SYSTEM_PROMPT[i:i + 40] for i in range(0, len(SYSTEM_PROMPT) - 40, 20)]
    for name, text in outputs.items():
        for secret in secrets:
            assert secret not in text, f"{secret!r} in the {name}"
        for fragment in PROMPT_MARKERS + prompt_windows:
            assert fragment not in text, f"prompt text {fragment!r} in the {name}"
        assert "the judge failed" in text, name
