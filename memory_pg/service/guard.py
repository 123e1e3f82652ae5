"""Below the HTTP app: how long a client may take to send a request, and how many may hold one.

Uvicorn waits for a request's head and body as long as the client likes, and
accepts every connection until the process runs out of file descriptors: 1,100
connections that each sent a request line and one header, then nothing, made
``/healthz`` fail for everyone under ``ulimit -n 1024`` (issue 38). Here:

* **the head** of each request (request line and headers) must arrive within
  ``header_timeout_s`` of the connection (or of its first byte, on a kept-alive
  connection): else ``408`` and the connection is closed;
* **the body** must arrive within ``body_timeout_s`` of the head: else ``408``
  (the app never sees a part of it);
* **open connections** are bounded for the server (``max_connections``, kept
  below the descriptor limit) and per client address
  (``max_connections_per_client``): one past either bound is answered ``503`` and
  closed at once, so its descriptor is free again;
* on SIGTERM, a request still sending its body is answered ``503`` at once rather
  than held for the graceful timeout and then cancelled (a traceback per request);
* a malformed request gets the service's JSON error body, not uvicorn's text.

Each refusal is logged at WARNING with the client's address, at most once a
minute per kind. ``/mcp`` offers no event stream (``GET`` is ``405``): the server
is stateless and has nothing to send outside a reply, so a stream could only be
held open, one descriptor each.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import resource
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any, cast

from memory_pg.service.responses import error_body

logger = logging.getLogger(__name__)

__all__ = ["Guard", "GuardSettings", "descriptor_limit", "protocol_class"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: Descriptors kept for the database pool, the model, logs and the listening socket.
RESERVED_DESCRIPTORS = 64


def descriptor_limit() -> int:
    """The process's soft limit on open files (``ulimit -n``)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


@dataclass(frozen=True)
class GuardSettings:
    """Timeouts and connection bounds of ``memory-pg serve``.

    Attributes:
        header_timeout_s: seconds for a request's line and headers to arrive.
        body_timeout_s: seconds for its body to arrive, after the headers.
        max_connections: open connections at most (None: 1000, and always at least
            64 under the descriptor limit, else the limit's three quarters).
        max_connections_per_client: open connections at most from one address.
    """

    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    max_connections: int | None = None
    max_connections_per_client: int = 100

    def connection_bound(self, descriptors: int | None = None) -> int:
        """``max_connections``, kept where the process still has descriptors to spare."""
        limit = descriptor_limit() if descriptors is None else descriptors
        room = max(8, min(limit - RESERVED_DESCRIPTORS, limit * 3 // 4))
        return min(self.max_connections or 1000, room)


@dataclass
class Guard:
    """The shared state of one server's connections (see the module's docstring)."""

    settings: GuardSettings = field(default_factory=GuardSettings)
    #: Open connections in all, and per client address.
    open: int = 0
    per_client: collections.Counter[str] = field(default_factory=collections.Counter)
    #: Protocols by the client's (address, port): the app tells one its head is read.
    by_peer: dict[tuple[str, int], Any] = field(default_factory=dict)
    #: Set when the server begins to shut down (made at the app's start-up).
    draining: asyncio.Event | None = None
    #: The event loop's time after which a body still arriving is answered 503.
    drain_deadline: float | None = None
    #: Refusals so far, by kind (``/metrics``).
    refused: collections.Counter[str] = field(default_factory=collections.Counter)
    _warned: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.bound = self.settings.connection_bound()

    def warn(self, kind: str, message: str, *args: object) -> None:
        """Log a refusal at WARNING, at most once a minute per kind (then at DEBUG)."""
        self.refused[kind] += 1
        now = time.monotonic()
        last = self._warned.get(kind)
        quiet = last is not None and now - last < 60
        if not quiet:
            self._warned[kind] = now
        (logger.debug if quiet else logger.warning)(message, *args)

    def drain(self, grace_s: float) -> None:
        """The server shuts down with ``grace_s`` for in-flight requests: one still
        sending its body may do so for two thirds of that, then is answered 503."""
        loop = asyncio.get_running_loop()
        self.drain_deadline = loop.time() + grace_s * 2 / 3
        if self.draining is None:
            self.draining = asyncio.Event()
        self.draining.set()

    def head_read(self, scope: Scope) -> None:
        """The app has a request: its head arrived in time (stop the head's clock)."""
        client = scope.get("client")
        if client:
            protocol = self.by_peer.get((str(client[0]), int(client[1])))
            if protocol is not None:
                protocol.memory_pg_head_read()

    async def read_body(self, receive: Receive, limit: int) -> Message | None:
        """The whole body as one message within ``body_timeout_s``; None past ``limit``
        bytes.

        Raises:
            TimeoutError: the body did not arrive in time.
            Draining: the server is shutting down and the body did not arrive in the
                part of the graceful timeout left to it.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.body_timeout_s
        reading = asyncio.ensure_future(_read_limited(receive, limit))
        try:
            while True:
                waits: set[asyncio.Future[Any]] = {reading}
                stop = None
                if self.drain_deadline is None and self.draining is not None:
                    stop = asyncio.ensure_future(self.draining.wait())
                    waits.add(stop)
                until = (
                    deadline if self.drain_deadline is None else min(deadline, self.drain_deadline)
                )
                try:
                    done, _ = await asyncio.wait(
                        waits,
                        timeout=max(0.0, until - loop.time()),
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                finally:
                    if stop is not None:
                        stop.cancel()
                if reading in done:
                    return reading.result()
                if stop is not None and stop in done:
                    continue  # the server began to shut down: a nearer deadline
                if self.drain_deadline is not None and until < deadline:
                    raise Draining
                raise TimeoutError
        finally:
            if not reading.done():
                reading.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reading


class Draining(Exception):
    """The server is shutting down (answered 503)."""


async def _read_limited(receive: Receive, limit: int) -> Message | None:
    """The whole body as one message, or None past ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return message  # the client left: pass that on
        body = message.get("body", b"")
        size += len(body)
        if size > limit:
            return None
        chunks.append(body)
        if not message.get("more_body", False):
            return {"type": "http.request", "body": b"".join(chunks), "more_body": False}


def raw_response(status: int, reason: str, kind: str, message: str) -> bytes:
    """A complete HTTP/1.1 response with the service's JSON error body; closes."""
    body = json.dumps(error_body(kind, message)).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def protocol_class(base: type[asyncio.Protocol], guard: Guard) -> type[asyncio.Protocol]:
    """Uvicorn's HTTP protocol ``base`` (h11 or httptools) with ``guard``'s limits."""

    class Guarded(base):  # type: ignore[valid-type,misc]
        _memory_pg_counted = False
        _memory_pg_timer: asyncio.TimerHandle | None = None
        _memory_pg_waiting_head = True

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            peer = transport.get_extra_info("peername")
            address = str(peer[0]) if peer else "?"
            settings = guard.settings
            if guard.open >= guard.bound or guard.per_client[address] >= (
                settings.max_connections_per_client
            ):
                whole = guard.open >= guard.bound
                guard.warn(
                    "server" if whole else "client",
                    "memory-pg: connection from %s refused: %s",
                    address,
                    f"{guard.bound} connections are open"
                    if whole
                    else f"it has {settings.max_connections_per_client} open",
                )
                cast(asyncio.WriteTransport, transport).write(
                    raw_response(
                        503,
                        "Service Unavailable",
                        "TooManyConnections",
                        "too many open connections"
                        + ("" if whole else " from this address")
                        + ": close some and retry",
                    )
                )
                transport.close()
                return
            self._memory_pg_counted = True
            self._memory_pg_address = address
            guard.open += 1
            guard.per_client[address] += 1
            super().connection_made(transport)
            if peer:
                self._memory_pg_peer = (str(peer[0]), int(peer[1]))
                guard.by_peer[self._memory_pg_peer] = self
            self._memory_pg_arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if not self._memory_pg_counted:
                return
            self._memory_pg_counted = False
            self._memory_pg_disarm()
            guard.open -= 1
            guard.per_client[self._memory_pg_address] -= 1
            if guard.per_client[self._memory_pg_address] <= 0:
                del guard.per_client[self._memory_pg_address]
            peer = getattr(self, "_memory_pg_peer", None)
            if peer is not None and guard.by_peer.get(peer) is self:
                del guard.by_peer[peer]
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if not self._memory_pg_counted:
                return
            if self._memory_pg_waiting_head and self._memory_pg_timer is None:
                self._memory_pg_arm()  # a kept-alive connection's next request begins
            super().data_received(data)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._memory_pg_waiting_head = True  # the next request's head, when it comes

        def memory_pg_head_read(self) -> None:
            self._memory_pg_waiting_head = False
            self._memory_pg_disarm()

        def _memory_pg_arm(self) -> None:
            self._memory_pg_disarm()
            self._memory_pg_waiting_head = True
            loop = asyncio.get_running_loop()
            self._memory_pg_timer = loop.call_later(
                guard.settings.header_timeout_s, self._memory_pg_late
            )

        def _memory_pg_disarm(self) -> None:
            if self._memory_pg_timer is not None:
                self._memory_pg_timer.cancel()
                self._memory_pg_timer = None

        def _memory_pg_late(self) -> None:
            self._memory_pg_timer = None
            transport = self.transport
            if transport is None or transport.is_closing():
                return
            guard.warn(
                "head",
                "memory-pg: closed a connection from %s: no complete request head in %g s",
                self._memory_pg_address,
                guard.settings.header_timeout_s,
            )
            transport.write(
                raw_response(
                    408,
                    "Request Timeout",
                    "RequestTimeout",
                    f"the request's line and headers did not arrive within "
                    f"{guard.settings.header_timeout_s:g} s",
                )
            )
            transport.close()

        def send_400_response(self, msg: str) -> None:
            # The service's JSON error body, as for every other error.
            self.transport.write(raw_response(400, "Bad Request", "BadRequest", msg))
            self.transport.close()

    Guarded.__name__ = Guarded.__qualname__ = "MemoryPg" + base.__name__
    return Guarded
