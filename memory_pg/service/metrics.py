"""``GET /metrics``: what an operator watches, in Prometheus' text format (``prometheus-client``).

Series (``memory_pg_`` first):

======================================== =================================================
``http_requests_total``                  answers by ``method``, ``route``, ``status``
``http_request_duration_seconds``        histogram by ``method``, ``route``
``http_errors_total``                    error answers by ``type``, the error body's
                                         (``InvalidRequest``, ``DatabaseUnavailable`` ...)
``http_refused_connections_total``       connections refused or closed before a request
                                         reached the app, by ``reason``: ``too_many``
                                         (``--max-connections``), ``too_many_from_client``,
                                         ``head_timeout``, ``body_timeout``
``http_open_connections``                connections open now
``http_requests_in_progress``            requests whose head has arrived and whose answer
                                         has not ended (this scrape included)
``pool_wait_seconds``                    histogram: how long a call waited for one of the
                                         pool's database connections (a new one's start
                                         included)
``pool_timeouts_total``                  calls that found none free in ``pool_timeout_s``
                                         (each failed with ``DatabaseUnavailable``, 503)
``pool_connections``                     pooled connections now, by ``state``: ``in_use``,
                                         ``idle``; ``pool_capacity``: the most it opens
``memories_written_total``               memories whose write was committed and answered,
                                         by ``via``: ``add``, ``batch``, ``replace`` (HTTP
                                         routes and MCP tools alike)
``process_*``                            CPU, memory, open file descriptors
======================================== =================================================

``route`` is the route's template (``/v1/entities/{name}``), ``/mcp``, or ``(none)``
for a path no route matched: never the path itself, which can carry an entity's
name from a user's memory or a memory id. No series carries a user, a token or a
text. ``memory-pg serve --metrics`` chooses who may read it: ``open`` (the default,
like ``/healthz``), ``admin`` (an admin token, read-only ones included) or ``off``.
"""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Response
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector
from sqlalchemy.exc import TimeoutError as PoolTimeout

from memory_pg.opening import gate_places
from memory_pg.service.http_auth import AdminToken
from memory_pg.service.schemas import errors

if TYPE_CHECKING:
    from memory_pg.async_store import AsyncMemoryStore
    from memory_pg.service.guard import Guard

__all__ = ["ACCESS", "Metrics", "install", "route_template"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Who may read ``/metrics``: anyone, an admin token, or nobody (no route).
ACCESS = ("open", "admin", "off")

#: The text format every Prometheus reads (what generate_latest writes by default).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class PrometheusResponse(Response):
    """Prometheus' text format."""

    media_type = CONTENT_TYPE


#: The guard's refusal kinds (:mod:`memory_pg.service.guard`), as operators read them.
_REASONS = {
    "server": "too_many",
    "client": "too_many_from_client",
    "head": "head_timeout",
    "body": "body_timeout",
}

_ERROR_TYPE = re.compile(r"[A-Za-z][A-Za-z0-9]{0,63}")


def route_template(scope: Scope) -> str:
    """The route's template, never the path: ``/v1/entities/{name}``, not the name of a
    person from a user's memory (nor the query string, which could carry words)."""
    template = getattr(scope.get("route"), "path", None)
    if isinstance(template, str):
        return template
    path = str(scope.get("path", ""))
    if path == "/mcp" or path.startswith("/mcp/"):
        return "/mcp"
    return "(no route)"


class Metrics:
    """The series of one service (a registry of its own, so two apps in one process
    do not mix their counts)."""

    def __init__(self, store: AsyncMemoryStore, guard: Guard) -> None:
        self.store = store
        self.guard = guard
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "memory_pg_http_requests",
            "HTTP answers by method, route template and status.",
            ("method", "route", "status"),
            registry=r,
        )
        self.duration = Histogram(
            "memory_pg_http_request_duration_seconds",
            "Time from a request's head to the end of its answer, by route template.",
            ("method", "route"),
            registry=r,
        )
        self.in_progress = Gauge(
            "memory_pg_http_requests_in_progress",
            "HTTP requests whose head has arrived and whose answer has not ended.",
            registry=r,
        )
        self.errors = Counter(
            "memory_pg_http_errors",
            "Error answers by the type in their body (MCP's own errors: other).",
            ("type",),
            registry=r,
        )
        self.pool_wait = Histogram(
            "memory_pg_pool_wait_seconds",
            "Time a call waited for a pooled database connection.",
            buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=r,
        )
        self.pool_timeouts = Counter(
            "memory_pg_pool_timeouts",
            "Calls that found no pooled connection free within pool_timeout_s (503).",
            registry=r,
        )
        self.written = Counter(
            "memory_pg_memories_written",
            "Memories whose write was committed and answered, by how (HTTP and MCP).",
            ("via",),
            registry=r,
        )
        r.register(_Now(self))
        ProcessCollector(registry=r)
        self._pool: Any = None
        for name, via in (
            ("add_memory", "add"),
            ("add_memories", "batch"),
            ("replace_memory", "replace"),
        ):
            # On the instance: the HTTP routes and the MCP tools call the same store.
            setattr(store, name, self._counted(getattr(store, name), via))

    def _counted(
        self, method: Callable[..., Awaitable[Any]], via: str
    ) -> Callable[..., Awaitable[Any]]:
        counter = self.written.labels(via)

        @functools.wraps(method)
        async def counted(*args: Any, **kwargs: Any) -> Any:
            result = await method(*args, **kwargs)
            counter.inc(len(result) if isinstance(result, list) else 1)
            return result

        return counted

    def watch_pool(self) -> None:
        """Time the waits of the store's pool (again after the pool was recreated)."""
        engine = self.store.engine
        pool = None if engine is None else engine.sync_engine.pool
        if pool is None or pool is self._pool:
            return
        self._pool = pool
        # SQLAlchemy has no event before a checkout waits: _do_get is where a queue
        # pool waits for a returned connection or opens a new one (the method a pool
        # class implements).
        get = pool._do_get
        wait, timeouts = self.pool_wait, self.pool_timeouts

        def timed_get() -> Any:
            started = time.perf_counter()
            try:
                return get()
            except PoolTimeout:
                timeouts.inc()
                raise
            finally:
                wait.observe(time.perf_counter() - started)

        setattr(pool, "_do_get", timed_get)  # noqa: B010 - an instance attribute

    def observe(
        self, method: str, route: str, status: int, seconds: float, error: str | None
    ) -> None:
        """One answered request."""
        self.requests.labels(method, route, str(status)).inc()
        self.duration.labels(method, route).observe(seconds)
        if error is not None:
            self.errors.labels(error).inc()


class _Now(Collector):
    """What is true at the scrape: open connections, the pool, the guard's refusals."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        guard, store = self.metrics.guard, self.metrics.store
        yield GaugeMetricFamily(
            "memory_pg_http_open_connections", "HTTP connections open now.", value=guard.open
        )
        refused = CounterMetricFamily(
            "memory_pg_http_refused_connections",
            "Connections refused or closed before a request reached the app, by reason.",
            labels=("reason",),
        )
        for kind, reason in _REASONS.items():
            refused.add_metric((reason,), guard.refused[kind])
        yield refused
        yield GaugeMetricFamily(
            "memory_pg_pool_capacity",
            "Database connections the pool opens at most (pool_size + max_overflow).",
            value=gate_places(store.settings),
        )
        self.metrics.watch_pool()
        pool = self.metrics._pool
        if pool is not None:
            connections = GaugeMetricFamily(
                "memory_pg_pool_connections", "Pooled database connections now.", labels=("state",)
            )
            connections.add_metric(("in_use",), pool.checkedout())
            connections.add_metric(("idle",), pool.checkedin())
            yield connections


class MetricsMiddleware:
    """ASGI middleware, outermost: every answer counted, those refused by the limits too."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.metrics.watch_pool()
        started = time.perf_counter()
        status = 0
        error: bytearray | None = None

        async def observed(message: Message) -> None:
            nonlocal status, error
            if message["type"] == "http.response.start":
                status = int(message["status"])
                error = bytearray() if status >= 400 else None
            elif message["type"] == "http.response.body" and error is not None:
                if len(error) < 4096:  # an error body is short; a long one is not ours
                    error += message.get("body", b"")
            await send(message)

        self.metrics.in_progress.inc()
        try:
            await self.app(scope, receive, observed)
        except Exception:
            if status == 0:  # the app failed before answering: a 500 InternalError
                status, error = 500, bytearray(b'{"error": {"type": "InternalError"}}')
            raise
        finally:
            self.metrics.in_progress.dec()
            self.metrics.observe(
                str(scope.get("method", "")),
                route_template(scope),
                status,
                time.perf_counter() - started,
                None if error is None else _error_type(bytes(error)),
            )


def _error_type(body: bytes) -> str:
    try:
        kind = json.loads(body)["error"]["type"]
    except (ValueError, KeyError, TypeError):
        return "other"
    return kind if isinstance(kind, str) and _ERROR_TYPE.fullmatch(kind) else "other"


def install(app: FastAPI, store: AsyncMemoryStore, guard: Guard, access: str) -> Metrics | None:
    """``GET /metrics`` on ``app`` and the middleware that counts (None when ``off``).

    Call it after every other middleware is added: it must see their answers too.
    """
    if access not in ACCESS:
        raise ValueError(f"metrics access must be one of {', '.join(ACCESS)}, not {access!r}")
    if access == "off":
        return None
    metrics = Metrics(store, guard)

    async def scrape() -> Response:
        """Counters and gauges in Prometheus' text format: requests and latency per route
        template, errors by type, pool waits and timeouts, memories written. No user
        data: no user, token, path or text."""
        return PrometheusResponse(generate_latest(metrics.registry))

    async def scrape_as_admin(info: AdminToken) -> Response:
        return await scrape()

    scrape_as_admin.__doc__ = (scrape.__doc__ or "") + " Needs an admin token (--metrics admin)."
    app.add_api_route(
        "/metrics",
        scrape if access == "open" else scrape_as_admin,
        methods=["GET"],
        tags=["health"],
        response_class=PrometheusResponse,
        responses=errors(400, *((401, 403) if access == "admin" else ()), beside=CONTENT_TYPE),
    )
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    return metrics
