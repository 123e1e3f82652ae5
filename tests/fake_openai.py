"""A local stand-in of the OpenAI chat-completions HTTP API, scriptable per test."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass(frozen=True)
class Behaviour:
    """What the stand-in does with one request.

    Attributes:
        status: the HTTP status to answer with.
        content: the assistant message text (for 200 answers).
        error: the OpenAI-style error message (for non-200 answers).
        delay_s: seconds to wait before answering (longer than the client timeout = a timeout).
        reject_response_format: answer 400 while requests ask for ``response_format``
            (the behaviour stays queued), then ``content``.
        headers: extra response headers (``Retry-After``...).
        finish_reason: why the model stopped (``length``: cut off at ``max_tokens``).
    """

    status: int = 200
    content: str = ""
    error: str = ""
    delay_s: float = 0.0
    reject_response_format: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str = "stop"


def reply(content: str, *, delay_s: float = 0.0, finish_reason: str = "stop") -> Behaviour:
    """A 200 answer whose message is ``content``."""
    return Behaviour(content=content, delay_s=delay_s, finish_reason=finish_reason)


def error(status: int, message: str = "error", **headers: str) -> Behaviour:
    """An OpenAI-style error answer."""
    return Behaviour(status=status, error=message, headers=headers)


def no_json_mode(content: str) -> Behaviour:
    """400 when ``response_format`` is requested, ``content`` otherwise."""
    return Behaviour(content=content, reject_response_format=True)


class FakeOpenAI:
    """The stand-in server: queue behaviours with :meth:`script`, read ``requests`` afterwards.

    When the queue is empty it answers with ``default`` (a 500, so a missing script is loud).
    """

    def __init__(self) -> None:
        self._queue: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        #: The HTTP headers of every request, in order (names lower-cased).
        self.headers: list[dict[str, str]] = []
        self.default = error(500, "no behaviour scripted")
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, *behaviours: Behaviour) -> None:
        """Queue behaviours, one per coming request."""
        with self._lock:
            self._queue.extend(behaviours)

    def _next(self) -> Behaviour:
        with self._lock:
            return self._queue.popleft() if self._queue else self.default

    @property
    def prompts(self) -> list[str]:
        """The last message's content of every request received, in order."""
        return [r["messages"][-1]["content"] for r in self.requests]

    def start(self) -> None:
        self._thread.start()

    def stop_unstarted(self) -> None:
        """Close the listening socket of a server that was never started."""
        self._server.server_close()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.requests.append(body)
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                behaviour = fake._next()
                if behaviour.delay_s:
                    time.sleep(behaviour.delay_s)
                if not self.path.endswith("/chat/completions"):
                    self._send(404, _error_body("unknown path", 404), {})
                elif behaviour.reject_response_format and "response_format" in body:
                    message = "response_format is not supported by this model"
                    with fake._lock:  # still to be answered, once asked without it
                        fake._queue.appendleft(behaviour)
                    self._send(400, _error_body(message, 400), {})
                elif behaviour.status != 200:
                    self._send(
                        behaviour.status,
                        _error_body(behaviour.error, behaviour.status),
                        behaviour.headers,
                    )
                elif body.get("stream"):
                    self._send_stream(_completion(body, behaviour), behaviour.headers)
                else:
                    self._send(200, _completion(body, behaviour), behaviour.headers)

            def _send_stream(self, completion: dict[str, Any], headers: dict[str, str]) -> None:
                """The completion as server-sent events, as clients that stream ask for it."""
                data = b"".join(
                    b"data: " + json.dumps(event, ensure_ascii=False).encode() + b"\n\n"
                    for event in _chunks(completion)
                )
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Content-Length", str(len(data) + len(_DONE)))
                    for name, value in headers.items():
                        self.send_header(name.replace("_", "-"), value)
                    self.end_headers()
                    self.wfile.write(data + _DONE)
                except OSError:
                    pass

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
                data = json.dumps(payload, ensure_ascii=False).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name.replace("_", "-"), value)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (timeout): nothing to answer

        return Handler


def _completion(request: dict[str, Any], behaviour: Behaviour) -> dict[str, Any]:
    content = behaviour.content
    prompt_chars = sum(len(m.get("content", "")) for m in request.get("messages", []))
    return {
        "id": f"chatcmpl-fake{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "fake-model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": behaviour.finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_chars // 4 + 1,
            "completion_tokens": len(content) // 4 + 1,
            "total_tokens": prompt_chars // 4 + len(content) // 4 + 2,
        },
    }


_DONE = b"data: [DONE]\n\n"


def _chunks(completion: dict[str, Any]) -> list[dict[str, Any]]:
    """A completion as the two chunks of a stream: the message, then the finish and usage."""
    choice = completion["choices"][0]
    head = {k: completion[k] for k in ("id", "created", "model")}
    head["object"] = "chat.completion.chunk"
    return [
        {**head, "choices": [{"index": 0, "delta": choice["message"], "finish_reason": None}]},
        {
            **head,
            "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
            "usage": completion["usage"],
        },
    ]


def _error_body(message: str, status: int) -> dict[str, Any]:
    kinds = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error"}
    return {
        "error": {
            "message": message,
            "type": kinds.get(status, "server_error"),
            "param": None,
            "code": None,
        }
    }


@pytest.fixture(name="fake_openai")
def fake_openai_fixture() -> Iterator[FakeOpenAI]:
    """A running stand-in on 127.0.0.1, stopped after the test.

    Use it from a test module with ``from tests.fake_openai import fake_openai_fixture``.
    """
    server = FakeOpenAI()
    server.start()
    try:
        yield server
    finally:
        server.stop()
