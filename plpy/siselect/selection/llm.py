"""The LLM judge: an OpenAI-compatible ``/v1/chat/completions`` endpoint asked what the
question's answer is on D' (paper section II), three times, majority wins.

Works with vLLM, Ollama, llama.cpp's server and hosted APIs. Every call is bounded: a
connect and a read timeout per attempt, a deadline per completion (retries included;
PostgreSQL cannot interrupt a blocking HTTP call, so this is the only bound inside the
server), and a cap on the reply's size.
"""

import dataclasses
import json
import math
import os
import re
import time
import types
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import requests
import requests.adapters

from siselect import __version__
from siselect.instances.render import FORMATS
from siselect.runtime import deadline as call_deadline
from siselect.runtime.answers import Tolerance, matches_judge
from siselect.runtime.errors import ConfigError, JudgeReplyInvalid, JudgeUnavailable
from siselect.runtime.redact import (
    ERROR_BODY_CHARS,
    redact,
    redact_url,
    request_renderings,
    url_secrets,
)
from siselect.selection.judge_audit import LEVELS as AUDIT_LEVELS
from siselect.selection.judge_audit import AuditLog, shown_columns
from siselect.selection.judge_cache import MemoryCache, cache_key, persistent_cache
from siselect.selection.judge_pool import UNAVAILABLE, Breaker, Idle, Outcome, Pool, Request
from siselect.selection.prompt_policy import (
    MASK_NOTE,
    estimated_tokens,
    masked,
    masked_names,
    without_rowids,
)
from siselect.selection.prompts import build_messages, parse_answer
from siselect.selection.verdict import JudgeAnswer, JudgeContext

MAX_BACKOFF_SECONDS = 30.0
MAX_VOTE_TEXT = 4000
# Request fields siselect sets itself; ``extra`` must not replace them.
RESERVED_EXTRA = {"messages", "stream", "n", "model", "temperature", "top_p", "seed",
                  "max_tokens"}


@dataclass
class LLMConfig:
    """How to reach and ask the LLM; see :meth:`from_env` and :meth:`from_file`."""

    base_url: str = ""  # no default: an unset endpoint is refused (see require_endpoint)
    model: str = ""  # omitted from the request when empty (single-model servers)
    api_key: str | None = field(default=None, repr=False)
    temperature: float | None = None  # None: the server's default
    top_p: float | None = None
    seed: int | None = 0  # vote i sends seed + i; None sends no seed
    max_tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. vLLM's top_k
    votes: int = 3
    early_stop: bool = True  # stop asking once a majority is certain
    connect_timeout: float = 5.0
    read_timeout: float = 120.0
    deadline: float = 300.0  # seconds per completion, retries and backoff included
    retries: int = 3
    backoff: float = 1.0  # first pause; doubles each retry
    max_response_bytes: int = 2_000_000
    format: str = "json"  # how D' is shown: json, markdown or sql
    tolerance: float = 1e-6  # relative tolerance comparing numbers with the judge's
    min_decimals: int = 2  # a judge's number counts at its written precision, at least this
    pool: int = 8  # requests of one call in flight at once
    breaker_failures: int = 3  # consecutive endpoint failures that stop a call's requests
    server_max_requests: int | None = None  # requests in flight across the server (admin)
    cache_file: str | None = None  # a persistent cache of completions (SQLite; bench)
    max_prompt_tokens: int | None = None  # D' shrinks to fit, else the duel is not sent
    masked_columns: list[str] = field(default_factory=list)  # table.column, *.column
    allowed_hosts: list[str] = field(default_factory=list)  # host or *.domain; empty: any
    audit: str = "off"  # in the server: off, on (what was sent), full (and the messages)

    def __post_init__(self) -> None:
        _validate(self)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "LLMConfig":
        """A config from the environment.

        ``SISELECT_LLM_CONFIG`` names a JSON file read first (see :meth:`from_file`);
        then ``SISELECT_LLM_URL`` (else ``OPENAI_BASE_URL``), ``SISELECT_LLM_MODEL``,
        ``SISELECT_LLM_API_KEY`` (else ``OPENAI_API_KEY``), and ``SISELECT_LLM_<FIELD>``
        for any other field (``SISELECT_LLM_TEMPERATURE``, ``..._SEED``, ``..._VOTES``,
        ``..._READ_TIMEOUT``, ``..._FORMAT``, ``..._EXTRA`` as a JSON object, ...);
        "none" unsets an optional field (``SISELECT_LLM_SEED=none`` sends no seed).
        """
        env = os.environ if environ is None else environ
        path = env.get("SISELECT_LLM_CONFIG")
        base = cls.from_file(path) if path else cls()
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            raw = env.get(f"SISELECT_LLM_{f.name.upper()}")
            if raw:
                values[f.name] = _from_text(f.name, raw)
        for name, aliases in _ENV_ALIASES.items():
            given = next((env[a] for a in aliases if env.get(a)), None)
            if name not in values and given:
                values[name] = given
        return base._with(values)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> "LLMConfig":
        """A config from a JSON object whose keys are field names (null sets None)."""
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the LLM configuration {os.fspath(path)!r}: "
                              f"{exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"the LLM configuration {os.fspath(path)!r} must be a JSON object")
        return cls()._with(data)

    def merged(self, **overrides: Any) -> "LLMConfig":
        """A copy with ``overrides`` applied; None keeps the current value and ``extra``
        is merged key by key."""
        return self._with({k: v for k, v in overrides.items() if v is not None})

    def _with(self, changes: Mapping[str, Any]) -> "LLMConfig":
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ConfigError(f"unknown LLM setting(s): {', '.join(sorted(unknown))}")
        changes = dict(changes)
        if isinstance(changes.get("extra"), dict):
            changes["extra"] = {**self.extra, **changes["extra"]}
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The settings for a report, the API key masked and the URL redacted."""
        data = dataclasses.asdict(self)
        data["api_key"] = "***" if self.api_key else None
        data["base_url"] = redact_url(self.base_url)
        return data

    def endpoint(self) -> str:
        """The chat-completions URL: ``base_url`` + ``/chat/completions`` (``/v1`` added to
        a bare host; a URL already ending in ``/chat/completions`` is used as given)."""
        # The query string (``?api-version=...``) stays after the path, where it belongs.
        parts = urllib.parse.urlsplit(self.base_url)
        path = parts.path.rstrip("/")
        if not path.endswith("/chat/completions"):
            path = (path or "/v1") + "/chat/completions"
        return urllib.parse.urlunsplit(parts._replace(path=path, fragment=""))

    def request_body(self, messages: list[dict[str, str]], seed: int | None) -> dict[str, Any]:
        """The JSON body of one chat-completions request."""
        body: dict[str, Any] = {"messages": messages, "stream": False}
        if self.model:
            body["model"] = self.model
        for key in ("temperature", "top_p", "max_tokens"):
            if getattr(self, key) is not None:
                body[key] = getattr(self, key)
        if seed is not None:
            body["seed"] = seed
        body.update(self.extra)
        return body


# Settings also read from these variables when SISELECT_LLM_<FIELD> is not set.
_ENV_ALIASES = {"base_url": ("SISELECT_LLM_URL", "OPENAI_BASE_URL"),
                "api_key": ("OPENAI_API_KEY",)}


def _hint(name: str) -> Any:
    return {f.name: f.type for f in dataclasses.fields(LLMConfig)}[name]


def _optional(name: str) -> bool:
    hint = _hint(name)
    return isinstance(hint, types.UnionType) and type(None) in hint.__args__


def _field_kind(name: str) -> type:
    hint = _hint(name)
    if isinstance(hint, types.UnionType):
        return next(t for t in hint.__args__ if t is not type(None))
    return {dict[str, Any]: dict, list[str]: list}.get(hint, hint)


def _from_text(name: str, raw: str) -> Any:
    """An environment variable's text as the field's type ("none" unsets an optional one)."""
    kind = _field_kind(name)
    if _optional(name) and raw.strip().lower() in {"none", "null"}:
        return None
    try:
        if kind is bool:
            if raw.strip().lower() not in {"1", "true", "yes", "on", "0", "false", "no", "off"}:
                raise ValueError(raw)
            return raw.strip().lower() in {"1", "true", "yes", "on"}
        if kind in (dict, list):
            return json.loads(raw)
        return kind(raw.strip()) if kind in (int, float) else raw
    except ValueError as exc:
        raise ConfigError(f"SISELECT_LLM_{name.upper()}={raw!r} is not a valid "
                          f"{kind.__name__}") from exc


_BOUNDS: dict[str, tuple[float, float]] = {
    "temperature": (0, 10), "top_p": (0, 1), "max_tokens": (1, 10**7), "votes": (1, 99),
    "connect_timeout": (1e-3, 3600), "read_timeout": (1e-3, 86400), "deadline": (1e-3, 86400),
    "retries": (0, 20), "backoff": (0, 3600), "max_response_bytes": (1024, 1 << 31),
    "tolerance": (0, 1), "min_decimals": (0, 15), "seed": (-(2**63), 2**63 - 1),
    "pool": (1, 256), "breaker_failures": (1, 1000), "server_max_requests": (1, 100_000),
    "max_prompt_tokens": (64, 10**8),
}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_type(name: str, value: Any) -> None:
    kind = _field_kind(name)
    if kind is int:
        ok = _is_number(value) and isinstance(value, int)
    elif kind is float:
        ok = _is_number(value) and math.isfinite(value)
    elif kind is list:  # of names
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise ConfigError(f"LLM setting {name} must be a {kind.__name__}, not {value!r}")


def _validate(config: LLMConfig) -> None:
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if value is None and _optional(f.name):
            continue
        _check_type(f.name, value)
        low, high = _BOUNDS.get(f.name, (-math.inf, math.inf))
        if _is_number(value) and not low <= value <= high:
            raise ConfigError(f"LLM setting {f.name}={value} is outside [{low}, {high}]")
    if config.base_url and not re.match(r"https?://[^/\s]+", config.base_url):
        raise ConfigError("the LLM base_url must be an http(s) URL, not "
                          f"{redact_url(config.base_url)!r}")
    if config.audit not in AUDIT_LEVELS:
        raise ConfigError(f"unknown audit level {config.audit!r}; use {', '.join(AUDIT_LEVELS)}")
    if config.format not in FORMATS:
        raise ConfigError(f"unknown instance format {config.format!r}; use {', '.join(FORMATS)}")
    clash = RESERVED_EXTRA & set(config.extra)
    if clash:
        raise ConfigError(f"extra must not set {', '.join(sorted(clash))}: use the named settings")


# ---- the HTTP client ---------------------------------------------------------------------


@dataclass
class Completion:
    """One chat completion: its text and how it was obtained."""

    text: str
    finish_reason: str | None = None
    attempts: int = 1
    seconds: float = 0.0
    usage: dict[str, Any] = field(default_factory=dict)


class _Retry(Exception):
    """A failure worth another attempt (connection, timeout, 429, 5xx); all but 429 are
    failures of the endpoint, which the circuit breaker counts."""

    def __init__(self, reason: str, wait: float | None = None, endpoint_failure: bool = True):
        super().__init__(reason)
        self.wait = wait
        self.endpoint_failure = endpoint_failure


NO_ENDPOINT = (
    "the llm judge has no endpoint configured. In the server an administrator sets one: "
    "SELECT siselect.set_llm_config('{\"base_url\": \"http://HOST:PORT/v1\"}') (or "
    "SISELECT_LLM_URL in the server's environment); the CLI takes --llm-url, --llm-config "
    "or SISELECT_LLM_URL. Or choose judge => 'reference' (with a reference query) or "
    "judge => 'none' (--judge reference / --judge none)")


def require_endpoint(config: LLMConfig) -> None:
    """Refuse (SQLSTATE 22023) a configuration that names no endpoint: there is no default
    address, so that an unconfigured judge fails at once instead of after its retries."""
    if not config.base_url:
        raise ConfigError(NO_ENDPOINT)
    host = (urllib.parse.urlsplit(config.base_url).hostname or "").lower()
    if config.allowed_hosts and not any(
            host == rule.lower() or (rule.startswith("*.") and host.endswith(rule[1:].lower()))
            for rule in config.allowed_hosts):
        raise ConfigError(f"the LLM endpoint's host {host!r} is not in allowed_hosts "
                          f"({', '.join(config.allowed_hosts)}): rows of D' may go only to "
                          "the hosts an administrator allows", "42501")


_USE_CONFIG: Any = object()


class ChatClient:
    """Calls the chat-completions endpoint with timeouts, retries and a size cap."""

    def __init__(self, config: LLMConfig, session: requests.Session | None = None,
                 breaker: Breaker | None = None):
        require_endpoint(config)
        self.config = config
        self.breaker = breaker
        self.url = config.endpoint()
        self.shown_url = redact_url(self.url)  # the only form of the URL in messages
        self.secrets = [config.api_key, *url_secrets(self.url)]
        if session is None:
            session = requests.Session()
            # One pooled connection per concurrent request (urllib3 keeps 10 by default).
            adapter = requests.adapters.HTTPAdapter(pool_maxsize=max(10, config.pool))
            session.mount("http://", adapter)
            session.mount("https://", adapter)
        self.session = session
        self.headers = {"Content-Type": "application/json", "Accept": "application/json",
                        "User-Agent": f"siselect/{__version__}"}
        if config.api_key:
            self.headers["Authorization"] = f"Bearer {config.api_key}"

    def close(self) -> None:
        """Close the pooled connections."""
        self.session.close()

    def __enter__(self) -> "ChatClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def complete(self, messages: list[dict[str, str]], seed: Any = _USE_CONFIG) -> str:
        """The assistant's reply text to ``messages``."""
        return self.chat(messages, seed).text

    def chat(self, messages: list[dict[str, str]], seed: Any = _USE_CONFIG) -> Completion:
        """One completion, retried with exponential backoff on connection errors, timeouts,
        429 and 5xx. Raises :class:`JudgeUnavailable` when it gives up and
        :class:`JudgeReplyInvalid` when the endpoint's reply is unusable; their messages
        are redacted (:mod:`siselect.runtime.redact`): they end up in results and reports."""
        cfg = self.config
        body = cfg.request_body(messages, cfg.seed if seed is _USE_CONFIG else seed)
        try:
            return self._chat(body)
        except (JudgeUnavailable, JudgeReplyInvalid) as exc:
            # ``from None``: the cause's text (requests' errors) holds the full URL.
            raise type(exc)(self._shown(exc.message, body)) from None

    def _shown(self, text: str, body: dict[str, Any], limit: int | None = None) -> str:
        """``text`` with this client's secrets and any echo of ``body`` removed."""
        echoes = request_renderings(body)
        if limit is None:
            return redact(text, self.secrets, echoes)
        return redact(text, self.secrets, echoes, limit)

    def _chat(self, body: dict[str, Any]) -> Completion:
        cfg = self.config
        started = time.monotonic()
        deadline = started + cfg.deadline
        attempt = 0
        while True:
            attempt += 1
            call_deadline.check()  # the caller's statement_timeout, or a cancel
            self._check_breaker()
            try:
                completion = self._attempt(body, deadline)
            except _Retry as exc:
                if self.breaker is not None and exc.endpoint_failure:
                    self.breaker.failure(str(exc), self.shown_url)
                self._check_breaker()
                pause = self._pause(exc, attempt, deadline, started)
                self._sleep(call_deadline.bounded(pause))
                continue
            except JudgeReplyInvalid:
                self._endpoint_answered()
                raise
            self._endpoint_answered()
            completion.attempts, completion.seconds = attempt, time.monotonic() - started
            return completion

    def _check_breaker(self) -> None:
        if self.breaker is not None and self.breaker.is_open:
            raise JudgeUnavailable(UNAVAILABLE)

    def _endpoint_answered(self) -> None:
        if self.breaker is not None:
            self.breaker.success()

    def _sleep(self, seconds: float) -> None:
        """A pause between attempts, cut short when the breaker opens."""
        if self.breaker is None:
            time.sleep(seconds)
        else:
            self.breaker.opened.wait(seconds)

    def _pause(self, failure: _Retry, attempt: int, deadline: float, started: float) -> float:
        """How long to wait before the next attempt, or JudgeUnavailable if there is none."""
        cfg = self.config
        pause = failure.wait if failure.wait is not None else cfg.backoff * 2 ** (attempt - 1)
        pause = min(pause, MAX_BACKOFF_SECONDS)
        spent = time.monotonic() - started
        if attempt > cfg.retries or time.monotonic() + pause >= deadline:
            why = "retries exhausted" if attempt > cfg.retries else f"deadline of {cfg.deadline:g}s"
            raise JudgeUnavailable(
                f"the LLM endpoint {self.shown_url} is unavailable ({why}; {attempt} attempt(s) "
                f"in {spent:.1f}s): {failure}")
        return pause

    def _attempt(self, body: dict[str, Any], deadline: float) -> Completion:
        cfg = self.config
        # Every timeout below is bounded by the time the caller's call has left.
        deadline = min(deadline, time.monotonic() + call_deadline.bounded(math.inf))
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _Retry("the deadline passed")
        timeout = (min(cfg.connect_timeout, remaining), min(cfg.read_timeout, remaining))
        try:
            response = self.session.post(self.url, json=body, headers=self.headers,
                                         timeout=timeout, stream=True)
        except (requests.ConnectionError, requests.Timeout) as exc:
            raise _Retry(_describe(exc, timeout)) from exc
        except requests.RequestException as exc:
            raise JudgeUnavailable(f"cannot call the LLM endpoint {self.shown_url}: "
                                   f"{type(exc).__name__}") from exc
        with response:
            status = response.status_code
            if status == 429 or status >= 500 or status != 200:
                said = self._shown(_error_text(response), body, ERROR_BODY_CHARS)
                if status == 429 or status >= 500:
                    raise _Retry(f"HTTP {status}: {said}", _retry_after(response),
                                 endpoint_failure=status != 429)
                raise JudgeUnavailable(f"the LLM endpoint {self.shown_url} refused the "
                                       f"request: HTTP {status}: {said}")
            raw = self._read(response, deadline, timeout)
        return _completion(raw, lambda text: self._shown(text, body, ERROR_BODY_CHARS))

    def _read(self, response: requests.Response, deadline: float,
              timeout: tuple[float, float]) -> bytes:
        """The body, refused once it passes ``max_response_bytes``; the deadline is checked
        between reads (each read waits at most the read timeout)."""
        cap = self.config.max_response_bytes
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > cap:
            raise JudgeReplyInvalid(f"the reply has {declared} bytes, over "
                                    f"max_response_bytes={cap}")
        chunks: list[bytes] = []
        size = 0
        try:
            for chunk in _chunks(response):
                size += len(chunk)
                if size > cap:
                    raise JudgeReplyInvalid(f"the reply passed max_response_bytes={cap}")
                if time.monotonic() > deadline:
                    raise JudgeUnavailable(f"the LLM endpoint {self.shown_url} was still "
                                           "sending its reply at the deadline of "
                                           f"{self.config.deadline:g}s")
                chunks.append(chunk)
        except (requests.ConnectionError, requests.Timeout,
                requests.exceptions.ChunkedEncodingError) as exc:
            raise _Retry(_describe(exc, timeout)) from exc
        return b"".join(chunks)


def _chunks(response: requests.Response, size: int = 65536) -> Any:
    """The body in pieces as they arrive: ``read1`` returns what one socket read gives,
    where ``iter_content`` would block until a whole piece is there."""
    raw = response.raw
    if not hasattr(raw, "read1"):  # urllib3 < 2.3
        yield from response.iter_content(size)
        return
    try:
        while chunk := raw.read1(size, decode_content=True):
            yield chunk
    except Exception as exc:  # urllib3's own errors: surface them as requests' ones
        if isinstance(exc, requests.RequestException | JudgeReplyInvalid | JudgeUnavailable):
            raise
        raise requests.ConnectionError(str(exc)) from exc


def _describe(exc: Exception, timeout: tuple[float, float]) -> str:
    if isinstance(exc, requests.ConnectTimeout):
        return f"no connection within {timeout[0]:g}s"
    if isinstance(exc, requests.ReadTimeout) or "timed out" in str(exc).lower():
        return f"no reply within the read timeout of {timeout[1]:g}s"
    errno = re.search(r"\[Errno -?\d+\] [^'\")]+", str(exc))
    return errno.group(0) if errno else f"{type(exc).__name__}: {str(exc)[:200]}"


ERROR_BODY_READ = 4096  # bytes of an error reply read to find its message


def _error_text(response: requests.Response) -> str:
    """What an error reply says: its ``error.message`` (or ``message``) when it is JSON,
    else its start; never more than ERROR_BODY_READ bytes are read. Not yet redacted."""
    try:
        head = next(response.iter_content(ERROR_BODY_READ), b"")[:ERROR_BODY_READ]
    except requests.RequestException:
        return "(no readable body)"
    text = head.decode("utf-8", "replace")
    try:
        payload = json.loads(text)
    except ValueError:
        payload = None
    said = _error_message(payload)
    return said if said is not None else (" ".join(text.split()) or "(empty body)")


def _error_message(payload: Any) -> str | None:
    """The message of an OpenAI-style (``{"error": {"message": ...}}``) or vLLM-style
    (``{"message": ...}``) error object: the other fields may echo the request."""
    if not isinstance(payload, dict):
        return None
    error = payload.get("error")
    if isinstance(error, dict):
        error = error.get("message")
    said = error if error is not None else payload.get("message")
    return said if isinstance(said, str) else None


def _retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After", "").strip()
    return float(value) if re.fullmatch(r"\d+(\.\d+)?", value) else None


def _completion(raw: bytes, shown: Any = str) -> Completion:
    """The text of choices[0] of a chat-completion reply body; ``shown`` makes the
    reply's text fit for an error message (redacted and cut)."""
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        head = raw[:ERROR_BODY_READ].decode("utf-8", "replace")
        raise JudgeReplyInvalid(f"the endpoint's reply is not JSON: {shown(head)!r}") from exc
    if isinstance(payload, dict) and "error" in payload and "choices" not in payload:
        said = _error_message(payload)
        raise JudgeReplyInvalid("the endpoint reported an error: "
                                f"{shown(said if said is not None else str(payload['error']))}")
    try:
        choice = payload["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise JudgeReplyInvalid("the endpoint's reply is not a chat completion "
                                "(no choices[0].message.content)") from exc
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise JudgeReplyInvalid("the completion's message has no text content")
    usage = payload.get("usage")
    return Completion(content, choice.get("finish_reason"),
                      usage=usage if isinstance(usage, dict) else {})


# ---- the judge ---------------------------------------------------------------------------


class LLMJudge:
    """Asks the LLM ``votes`` times (seeds seed, seed+1, ...) and takes the majority
    answer; every vote is kept in the answer for the report.

    :meth:`answer_all` judges many duels at once: the first votes of every duel go out
    together through a bounded pool (:mod:`siselect.selection.judge_pool`), then one more
    vote for each duel still undecided, round by round. Votes are placed by duel and vote
    number, so the answers do not depend on the pool's size or the order of the replies.
    """

    name = "llm"

    def __init__(self, config: LLMConfig, client: ChatClient | None = None):
        require_endpoint(config)
        self.config = config
        self.breaker = Breaker(config.breaker_failures)
        self.client = client or ChatClient(config)
        self.client.breaker = self.breaker
        self.persistent = persistent_cache(config.cache_file, Completion)
        caches: list[Any] = [MemoryCache()]
        if self.persistent is not None:
            caches.append(self.persistent)
        self.pool = Pool(self._send, config.pool, self.breaker, caches)
        self.rounds: list[int] = []  # completions sent in each round (benchmarks read it)
        self.audit: AuditLog | None = None  # set by the server when its audit is on

    def close(self) -> None:
        self.client.close()
        if self.persistent is not None:
            self.persistent.close()

    def __enter__(self) -> "LLMJudge":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def tolerance(self) -> Tolerance:
        """How the judge's numbers compare with SQL's (pass to ``matches_judge``)."""
        return Tolerance(relative=self.config.tolerance, min_decimals=self.config.min_decimals,
                         lenient_text=True)

    def answer(self, context: JudgeContext) -> JudgeAnswer:
        """The majority answer on D'; ``rows`` is None when no vote gave an answer or the
        endpoint is unavailable (the duel is then a draw)."""
        return self.answer_all([context])[0]

    def answer_all(self, contexts: list[JudgeContext], idle: Idle | None = None
                   ) -> list[JudgeAnswer]:
        """:meth:`answer` for each context, the requests of all of them sent concurrently;
        ``idle`` is the caller's work for the wait (:data:`~.judge_pool.Idle`)."""
        cfg = self.config
        made = [self._prompt(c) for c in contexts]
        votes: list[list[dict[str, Any]]] = [[] for _ in contexts]
        refused = {d: m for d, m in enumerate(made) if isinstance(m, str)}
        prompts = {d: m for d, m in enumerate(made) if isinstance(m, Prompt)}
        undecided = [d for d in range(len(contexts)) if d not in refused]
        asked = 0
        while undecided and asked < cfg.votes:
            # Early stop: a majority's worth first, then one vote at a time.
            upto = cfg.votes if not cfg.early_stop else min(
                cfg.votes, asked + (cfg.votes // 2 + 1 if asked == 0 else 1))
            batch = [(d, v) for d in undecided for v in range(asked, upto)]
            sent = self.pool.counts.sent
            outcomes = self.pool.run([self._request(prompts[d], v) for d, v in batch],
                                     idle)
            self.rounds.append(self.pool.counts.sent - sent)
            for (d, v), outcome in zip(batch, outcomes, strict=True):
                votes[d].append(self._vote(v, outcome))
            asked = upto
            undecided = [d for d in undecided
                         if not any("unavailable" in v for v in votes[d])
                         and not (cfg.early_stop and self._decided(votes[d]))]
        answers = []
        for d, duel_votes in enumerate(votes):
            if d in refused:
                answers.append(JudgeAnswer(None, error=refused[d]))
                continue
            answers.append(self._answer(duel_votes))
            answers[-1].shown = prompts[d].shown
        return answers

    def _prompt(self, context: JudgeContext) -> "Prompt | str":
        """The prompt for one duel, masked columns masked and D' shrunk to fit
        ``max_prompt_tokens`` (see siselect.instances.shrink); or why none may be sent."""
        prompt = self._prompt_on(context, None)
        limit = self.config.max_prompt_tokens
        if limit is None or prompt.tokens <= limit:
            return prompt
        for view in context.smaller() if context.smaller is not None else ():
            prompt = self._prompt_on(dataclasses.replace(context, instance=view.instance), view)
            if prompt.tokens <= limit:
                return prompt
        smallest = ("" if prompt.shown is None else
                    f", even with D' cut to the {len(prompt.shown.row_ids)} rows that still "
                    "tell the queries apart")
        return (f"not sent: the prompt's estimated {prompt.tokens} tokens exceed "
                f"max_prompt_tokens={limit}{smallest}; raise max_prompt_tokens or lower "
                "max_rows (SQLSTATE 54000)")

    def _prompt_on(self, context: JudgeContext, view: Any) -> "Prompt":
        shown, hidden = masked(without_rowids(context), self.config.masked_columns)
        messages = build_messages(shown, self.config.format, MASK_NOTE if hidden else None,
                                  left_out=None if view is None else view.left_out)
        tables, columns = shown_columns(shown.instance)
        about = {"tables": tables, "columns": columns,
                 "masked_columns": masked_names(shown.instance, self.config.masked_columns),
                 "left_out": None if view is None else view.left_out}
        return Prompt(messages, estimated_tokens(messages), view, about)

    def _seed(self, vote: int) -> int | None:
        return None if self.config.seed is None else self.config.seed + vote

    def _request(self, prompt: "Prompt", vote: int) -> Request:
        seed = self._seed(vote)
        body = self.config.request_body(prompt.messages, seed)
        return Request(cache_key(redact_url(self.client.url), body, vote), prompt.messages,
                       seed, vote, {**prompt.about, "prompt_tokens_estimated": prompt.tokens})

    def _send(self, request: Request) -> Outcome:
        """One completion; runs in a worker thread: HTTP and the audit file only, never
        PostgreSQL."""
        if self.audit is not None:
            try:
                self.audit.record(self.client.shown_url, self.config.model, request.messages,
                                  request.vote, request.seed, request.about)
            except OSError as exc:  # nothing leaves the server unrecorded
                return Outcome(error=f"not sent: the judge audit could not be written: {exc}")
        try:
            return Outcome(completion=self.client.chat(request.messages, request.seed))
        except JudgeReplyInvalid as exc:
            return Outcome(error=str(exc))
        except JudgeUnavailable as exc:
            return Outcome(unavailable=str(exc))

    def _vote(self, number: int, outcome: Outcome) -> dict[str, Any]:
        vote: dict[str, Any] = {"seed": self._seed(number), "rows": None,
                                "error": outcome.error}
        if not outcome.sent:
            vote["sent"] = False
        if outcome.unavailable is not None:
            vote.update(error=outcome.unavailable, unavailable=True)
            return vote
        completion = outcome.completion
        if completion is None:
            return vote
        vote.update(text=completion.text[:MAX_VOTE_TEXT],
                    text_truncated=len(completion.text) > MAX_VOTE_TEXT,
                    finish_reason=completion.finish_reason, attempts=completion.attempts,
                    seconds=round(completion.seconds, 3), cached=outcome.cached)
        if not outcome.cached:
            vote["tokens"] = usage_tokens(completion.usage)
        try:
            vote["rows"] = parse_answer(completion.text)
        except ValueError as exc:
            vote["error"] = f"unreadable answer: {exc}"
        return vote

    def _answer(self, votes: list[dict[str, Any]]) -> JudgeAnswer:
        answer = self._majority(votes)
        answer.cached = sum(1 for v in votes if v.get("cached"))
        answer.calls = sum(1 for v in votes if not v.get("cached") and v.get("sent", True))
        spent = [v["tokens"] for v in votes if "tokens" in v]
        answer.tokens = {k: sum(t[k] for t in spent) for k in ("prompt", "completion")}
        lost = next((v["error"] for v in votes if v.get("unavailable")), None)
        if lost is not None:
            answer.rows = None
            if self.breaker.is_open:  # the judge failed (stated once, by the tournament)
                answer.unavailable = self.breaker.cause
                answer.error = UNAVAILABLE
            else:
                answer.error = f"the LLM judge is unavailable: {lost}"
        return answer

    def _same(self, a: list[list[Any]], b: list[list[Any]]) -> bool:
        # Either way round: each vote's numbers count at the precision that vote wrote.
        return matches_judge(a, b, self.tolerance) or matches_judge(b, a, self.tolerance)

    def _groups(self, votes: list[dict[str, Any]]) -> list[list[int]]:
        """Indexes of parsed votes grouped by answer, groups in order of first appearance."""
        groups: list[list[int]] = []
        for i, vote in enumerate(votes):
            if vote["rows"] is None:
                continue
            home = next((g for g in groups if self._same(votes[g[0]]["rows"], vote["rows"])), None)
            if home is None:
                groups.append([i])
            else:
                home.append(i)
        return groups

    def _decided(self, votes: list[dict[str, Any]]) -> bool:
        return any(len(g) > self.config.votes // 2 for g in self._groups(votes))

    def _majority(self, votes: list[dict[str, Any]]) -> JudgeAnswer:
        groups = self._groups(votes)
        if not groups:
            first = next((v["error"] for v in votes if v["error"]), "no reply")
            return JudgeAnswer(None, votes, error=f"no usable answer in {len(votes)} vote(s): "
                                                  f"{first}")
        best = max(groups, key=len)  # max keeps the first of equally large groups
        for i, vote in enumerate(votes):
            vote["majority"] = i in best
        return JudgeAnswer(votes[best[0]]["rows"], votes)


@dataclass
class Prompt:
    """The messages of one duel, their estimated size, the smaller view of D' they show (or
    None: the whole of it), and what they show for the audit."""

    messages: list[dict[str, str]]
    tokens: int
    shown: Any
    about: dict[str, Any]


def usage_tokens(usage: dict[str, Any]) -> dict[str, int]:
    """Prompt and completion tokens from a reply's ``usage`` (0 where it says nothing)."""
    def count(name: str) -> int:
        value = usage.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0
    return {"prompt": count("prompt_tokens"), "completion": count("completion_tokens")}
