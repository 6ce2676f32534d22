"""What of the LLM endpoint may be shown to people: URLs without credentials, error text
without secrets and without the request echoed back.

Tournament results and reports are read by people who must not learn the endpoint's
credentials (in the URL's userinfo, its query string, a key in its path, the API key) or
see the prompt, which holds database rows the reader may not be allowed to see. The LLM
client passes every message that leaves it through :func:`redact`.
"""

import base64
import json
import re
import urllib.parse
from collections.abc import Iterable
from typing import Any

MASK = "***"
ECHO_MASK = "[request text removed]"
ERROR_BODY_CHARS = 200  # of an endpoint's error body kept in a message
MESSAGE_CHARS = 600  # of a whole message (prefix, URL, error body)
# Matching runs of at least this many characters count as the request echoed back: long
# enough that ordinary words of an error message never match by chance.
ECHO_WINDOW = 16

# Path segments after one of these names hold a key (".../key/<secret>/...").
_KEY_NAMES = {"key", "keys", "apikey", "api-key", "api_key", "token", "tokens", "secret",
              "password", "auth", "access_token", "bearer"}
_TOKEN_PREFIX = re.compile(r"(?i)^(sk|pk|rk|ak|key|api|tok|token|ghp|gho|xox[abp]|hf)[-_]")
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s'\"<>`]+")
_NAMED_SECRET = re.compile(
    r"(?i)(\b(?:authorization|proxy-authorization|x-api-key|api[-_]?key|access[-_]?token|"
    r"token|secret|password|passwd)\b[\"']?\s*[:=]\s*[\"']?)"
    r"((?:bearer|basic|token)\s+)?[^\s\"',;}&]+")
_SCHEME_TOKEN = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{4,}")


def _looks_like_token(segment: str) -> bool:
    if _TOKEN_PREFIX.match(segment) and len(segment) >= 12:
        return True
    # Long letters-and-digits runs are keys, not path words ("completions", "v1").
    return (len(segment) >= 24 and re.fullmatch(r"[A-Za-z0-9._~+=-]+", segment) is not None
            and re.search(r"\d", segment) is not None and re.search(r"[A-Za-z]", segment)
            is not None)


def _redact_path(path: str) -> str:
    segments = path.split("/")
    shown = []
    for i, segment in enumerate(segments):
        after_key = i > 0 and urllib.parse.unquote(segments[i - 1]).lower() in _KEY_NAMES
        secret = segment and (after_key or _looks_like_token(urllib.parse.unquote(segment)))
        shown.append(MASK if secret else segment)
    return "/".join(shown)


def redact_url(url: str) -> str:
    """``url`` with userinfo, query values, fragment and path keys masked:
    ``https://u:p@h/v1/key/sk-…?api_key=x`` -> ``https://***@h/v1/key/***?api_key=***``."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # not a URL we can take apart: show nothing of it
        return MASK
    netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port else "")
    if "@" in parts.netloc:
        netloc = f"{MASK}@{netloc}"
    query = "&".join(f"{name}={MASK}" if sep else MASK for name, sep, _ in
                     (item.partition("=") for item in parts.query.split("&") if item))
    shown = f"{parts.scheme}://{netloc}{_redact_path(parts.path)}"
    return shown + (f"?{query}" if query else "") + (f"#{MASK}" if parts.fragment else "")


def url_secrets(url: str) -> list[str]:
    """The pieces of ``url`` that are secret wherever they appear in text: userinfo (also
    as HTTP Basic credentials), query values, keys in the path."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return [url]
    found: list[str] = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        plain = urllib.parse.unquote(userinfo)
        found += [userinfo, plain, base64.b64encode(plain.encode()).decode()]
        found += [p for p in plain.split(":", 1)[1:]]
    for _, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=False):
        found.append(value)
    for original, shown in zip(parts.path.split("/"), _redact_path(parts.path).split("/"),
                               strict=True):
        if original != shown:
            found += [original, urllib.parse.unquote(original)]
    # Short values ("1", "v2") would mask ordinary words; they are masked inside URLs.
    return [s for s in found if len(s) >= 6]


def request_renderings(body: Any) -> list[str]:
    """The forms in which an endpoint may echo a request body back: the message texts, the
    JSON body, and that JSON as a JSON string (an echo inside an error object)."""
    texts: list[str] = []
    if isinstance(body, dict):
        for message in body.get("messages") or []:
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                texts.append(message["content"])
    for ascii_only in (True, False):
        encoded = json.dumps(body, ensure_ascii=ascii_only)
        texts += [encoded, json.dumps(encoded, ensure_ascii=ascii_only)[1:-1]]
    return texts


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def _strip_echoes(text: str, echoes: Iterable[str]) -> str:
    """``text`` with every run of ECHO_WINDOW or more characters that also occurs in one of
    ``echoes`` replaced by ECHO_MASK (whitespace compared collapsed)."""
    sources = [_squeeze(e) for e in echoes if e]
    if not sources or len(text) < ECHO_WINDOW:
        return text
    covered = [False] * len(text)
    for start in range(len(text) - ECHO_WINDOW + 1):
        window = text[start:start + ECHO_WINDOW]
        if window.strip() and any(window in s for s in sources):
            covered[start:start + ECHO_WINDOW] = [True] * ECHO_WINDOW
    out: list[str] = []
    for i, ch in enumerate(text):
        if not covered[i]:
            out.append(ch)
        elif i == 0 or not covered[i - 1]:
            out.append(ECHO_MASK)
    return "".join(out)


def redact(text: str, secrets: Iterable[str | None] = (), echoes: Iterable[str] = (),
           limit: int = MESSAGE_CHARS) -> str:
    """``text`` fit to be shown: request echoes removed, known ``secrets`` and anything
    named like a credential masked, every URL redacted (:func:`redact_url`), whitespace
    collapsed and the result cut at ``limit`` characters."""
    shown = _strip_echoes(_squeeze(text), echoes)
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        shown = shown.replace(secret, MASK)
    shown = _URL.sub(lambda m: redact_url(m.group(0)), shown)
    shown = _NAMED_SECRET.sub(lambda m: f"{m.group(1)}{m.group(2) or ''}{MASK}", shown)
    shown = _SCHEME_TOKEN.sub(lambda m: f"{m.group(1)} {MASK}", shown)
    return shown if len(shown) <= limit else shown[:limit - 1] + "…"
