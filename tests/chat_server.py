"""A real local HTTP server speaking OpenAI chat completions: the one test double allowed.

Runs ``http.server`` in a thread on 127.0.0.1 (a free port), records every request, and
answers from a script: a queue of :class:`Reply` (or plain strings: the assistant's
text), or a function of the :class:`Request`. A reply can be delayed, trickled, carry an
HTTP status, a raw (garbage or huge) body, or headers.
"""

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"


@dataclass
class Request:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON body, or the raw text when it is not JSON
    received: float = field(default_factory=time.monotonic)


@dataclass
class Reply:
    """What to send back. ``content`` becomes a chat completion unless ``body`` is given;
    ``delay`` waits before the headers, ``trickle`` waits between body bytes;
    ``declare_length=False`` sends no Content-Length and ends the body by closing."""

    content: str | None = None
    status: int = 200
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    trickle: float = 0.0
    finish_reason: str = "stop"
    declare_length: bool = True


def completion_body(content: str, finish_reason: str = "stop", model: str = "test-model") -> bytes:
    """A chat.completion JSON body with one choice."""
    return json.dumps({
        "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": len(content.split()),
                  "total_tokens": 10 + len(content.split())},
    }).encode()


class _Server(ThreadingHTTPServer):
    # The default backlog of 5 drops connections when a pool opens many at once, and the
    # client then retries the connection a second later: real inference servers listen
    # with a long queue.
    request_queue_size = 128


class ChatServer:
    """The server; use as a context manager or call :meth:`close`."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.replies: deque[Reply] = deque()
        self.handler: Callable[[Request], Reply | str] | None = None
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Reply | str) -> None:
        """Queue replies, answered in order (a string is the assistant's text)."""
        with self._lock:
            self.replies.extend(_as_reply(r) for r in replies)

    def respond_with(self, handler: Callable[[Request], Reply | str]) -> None:
        """Answer every request (once the queue is empty) with ``handler(request)``."""
        self.handler = handler

    def chat_requests(self) -> list[Request]:
        return [r for r in self.requests if _route(r.path) == CHAT_PATH]

    def next_reply(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self.replies:
                return self.replies.popleft()
        if self.handler is not None:
            return _as_reply(self.handler(request))
        # Not retryable, so an unscripted call fails the client at once, visibly.
        return Reply(status=418, body=b'{"error": {"message": "no scripted reply"}}')

    def close(self) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "ChatServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _route(path: str) -> str:
    # Endpoints may be given query strings (``?api-version=...``, keys): routed on the path.
    return path.partition("?")[0]


def _as_reply(reply: Reply | str) -> Reply:
    return Reply(content=reply) if isinstance(reply, str) else reply


def _make_handler(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # else headers and body wait on delayed ACKs (40 ms)

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace")
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = raw
            request = Request("POST", self.path, dict(self.headers.items()), body)
            if _route(self.path) != CHAT_PATH:
                self._send(Reply(status=404, body=b'{"error": {"message": "not found"}}'))
                return
            self._send(server.next_reply(request))

        def _send(self, reply: Reply) -> None:
            if reply.delay and server.stopping.wait(reply.delay):
                return
            payload = reply.body if reply.body is not None else completion_body(
                reply.content or "", reply.finish_reason)
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                if reply.declare_length:
                    self.send_header("Content-Length", str(len(payload)))
                else:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self._write(payload, reply.trickle)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout, size cap): expected in these tests

        def _write(self, payload: bytes, trickle: float) -> None:
            if not trickle:
                self.wfile.write(payload)
                return
            for i in range(len(payload)):
                if server.stopping.wait(trickle):
                    return
                self.wfile.write(payload[i:i + 1])
                self.wfile.flush()

    return Handler
