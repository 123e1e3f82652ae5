"""The HTTP API (``memory-pg serve``): FastAPI over the async store, tokens bound to tenants.

Every ``/v1`` route needs ``Authorization: Bearer mpg_...`` (``memory-pg token
create``). The token fixes the user (and agent) of the request: a body or query
parameter that names another user or agent is refused (403), a query parameter a
route does not take is refused (400), a read-only token cannot write (403), a
read-only admin token cannot erase (403); :mod:`memory_pg.service.http_auth`.
Errors, unknown routes and methods included, come back as
``{"error": {"type": ..., "message": ...}}`` with the status of :data:`STATUS`
(:mod:`memory_pg.service.responses`). Logs carry the route, status, duration and
token id, never a memory's text. OpenAPI at ``/docs``; ``/healthz`` (the process)
and ``/readyz`` (the database) need no token.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Response
from fastapi.responses import JSONResponse
from sqlalchemy import text as sql_text

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.errors import (
    DatabaseUnavailable,
    InvalidInput,
    MemoryNotFound,
    PermissionDenied,
)
from memory_pg.service import http_relations, metrics, schemas, warm
from memory_pg.service.apidocs import add_pages
from memory_pg.service.bodies import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    AddBody,
    BatchBody,
    EraseBody,
    MemoryIn,
    ReplaceBody,
    SearchBody,
)
from memory_pg.service.guard import Draining, Guard, GuardSettings
from memory_pg.service.http_auth import (
    AdminToken,
    AdminWriterToken,
    UserToken,
    WholeUserToken,
    WriterToken,
    check_names,
    check_query,
)
from memory_pg.service.metrics import route_template
from memory_pg.service.responses import (
    STATUS,
    RequestTooLarge,
    add_handlers,
    error_body,
    json_response,
    status_of,
)
from memory_pg.service.schemas import TOKEN_ERRORS, NDJSONResponse, answers, errors
from memory_pg.service.tokens import TokenInfo

logger = logging.getLogger(__name__)
#: One line per request (route, status, time, token id; never a query string or a
#: memory's text): ``memory-pg serve`` shows it at its default level.
request_log = logging.getLogger(__name__ + ".requests")

__all__ = [
    "STATUS",
    "ServiceSettings",
    "create_app",
    "error_body",
    "request_log",
    "status_of",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class ServiceSettings:
    """Limits of the HTTP service.

    Attributes:
        max_body_bytes: largest request body accepted (413 above it).
        max_batch: most memories in one batch request.
        max_batch_chars: most characters of text (and context) in one batch request
            (413 above it): a batch is one transaction whose embedding and checks take
            the CPU from other users' searches meanwhile, about 6,500 characters a
            second on 2 shared cores (issue 38: 500 items of 1 KB took 77 s).
        mcp: mount the MCP server (streamable HTTP) at ``/mcp``.
        graceful_timeout_s: on SIGTERM, how long in-flight requests may finish.
        guard: read timeouts and connection bounds (:mod:`memory_pg.service.guard`).
        metrics: who may read ``/metrics``: ``open``, ``admin`` (an admin token) or
            ``off`` (:mod:`memory_pg.service.metrics`).
    """

    max_body_bytes: int = 1024 * 1024
    max_batch: int = 500
    max_batch_chars: int = 64_000
    mcp: bool = True
    graceful_timeout_s: float = 30.0
    guard: GuardSettings = field(default_factory=GuardSettings)
    metrics: str = "open"


# -- the app -------------------------------------------------------------------------


class _Limits:
    """ASGI middleware: bodies within their size and time (413, 408), /mcp routed, a log
    line per request.

    A declared ``Content-Length`` over the limit is refused before reading; any other
    body is read whole first, up to the limit and within the guard's body timeout
    (:mod:`memory_pg.service.guard`), before the app sees any of it. A request cancelled
    by the end of the graceful timeout gets a 503 and one log line, not a traceback.
    """

    def __init__(
        self,
        app: ASGIApp,
        max_body_bytes: int,
        mcp: ASGIApp | None = None,
        guard: Guard | None = None,
    ) -> None:
        self.app = app
        self.max = max_body_bytes
        self.mcp = mcp
        self.guard = guard or Guard()

    def _target(self, scope: Scope) -> ASGIApp | None:
        # /mcp goes to the MCP SDK's app as it is (a Mount would strip the prefix).
        path = str(scope.get("path", ""))
        if self.mcp is not None and (path == "/mcp" or path.startswith("/mcp/")):
            # Stateless: nothing to send outside a reply, so no event stream to hold.
            return None if scope.get("method") == "GET" else self.mcp
        return self.app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.guard.head_read(scope)
        started = time.perf_counter()
        status = {"code": 0}

        async def send_status(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self._serve(scope, receive, send_status)
        except asyncio.CancelledError:
            # The graceful timeout ran out: one line, and an answer if none began.
            logger.warning(
                "%s %s cancelled: the service stopped before it finished",
                scope.get("method"),
                route_template(scope),
            )
            if status["code"] == 0:
                with contextlib.suppress(Exception):  # the client may be gone too
                    await _send_error(
                        send_status, 503, "ShuttingDown", "the service stopped before it finished"
                    )
        state = scope.get("state") or {}
        request_log.info(
            "%s",
            json.dumps(
                {
                    "event": "request",
                    "method": scope.get("method"),
                    "path": route_template(scope),
                    "status": status["code"],
                    "ms": round((time.perf_counter() - started) * 1000, 1),
                    "token_id": state.get("token_id"),
                }
            ),
        )

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        declared: int | None = None
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = self.max + 1
        target = self._target(scope)
        if target is None:
            await _send_error(
                send,
                405,
                "MethodNotAllowed",
                "GET is not allowed on /mcp (allowed: POST): this server is stateless "
                "and opens no event stream",
                [(b"allow", b"POST")],
            )
            return
        if declared is not None and declared > self.max:
            await _send_413(send, self.max)
            return
        if scope.get("method") in ("GET", "HEAD", "OPTIONS") and not declared:
            await target(scope, receive, send)
            return
        try:
            first = await self.guard.read_body(receive, self.max)
        except TimeoutError:
            self.guard.warn(
                "body",
                "memory-pg: a request body from %s did not arrive within %g s",
                (scope.get("client") or ("?",))[0],
                self.guard.settings.body_timeout_s,
            )
            await _send_error(
                send,
                408,
                "RequestTimeout",
                f"the request body did not arrive within {self.guard.settings.body_timeout_s:g} s",
            )
            return
        except Draining:
            await _send_error(
                send, 503, "ShuttingDown", "the service is stopping: send the request again"
            )
            return
        if first is None:
            await _send_413(send, self.max)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return first
            return await receive()

        await target(scope, replay, send)


async def _send_error(
    send: Send,
    status: int,
    kind: str,
    message: str,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """An error response with the service's JSON body; the connection is closed after."""
    body = json.dumps(error_body(kind, message)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _send_413(send: Send, limit: int) -> None:
    await _send_error(send, 413, "RequestTooLarge", f"request body is larger than {limit} bytes")


def create_app(store: AsyncMemoryStore, settings: ServiceSettings | None = None) -> FastAPI:
    """The FastAPI app over ``store`` (opened on start-up, closed on shutdown).

    Example::

        app = create_app(AsyncMemoryStore("postgresql://..."))
        # uvicorn.run(app)
    """
    cfg = settings or ServiceSettings()
    mcp_app: Any = None
    if cfg.mcp:
        from memory_pg.service.mcp import http_app

        mcp_app = http_app(store)

    guard = Guard(cfg.guard)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        guard.draining = asyncio.Event()  # of this loop
        await store.open()
        # Load the model before the first request (it loads lazily): otherwise the
        # first requests all wait for it, and /readyz would answer before it is ready.
        # Both: a search's query and a write's texts may run on different models
        # (memory_pg.onnx_embedding: int8 queries).
        await asyncio.to_thread(store.embedder.embed_query, "ready")
        await asyncio.to_thread(store.embedder.embed_documents, ["ready"])
        async with contextlib.AsyncExitStack() as stack:
            if mcp_app is not None:
                await stack.enter_async_context(mcp_app.lifespan())
            # Tokens may name an agent or none: both scopes' statements.
            warming = asyncio.create_task(
                warm.warm_up(store, (None, warm.SOME_AGENT), guard.draining)
            )
            stack.push_async_callback(warm.stop, warming)
            logger.info("memory-pg service ready")
            yield
        # Uvicorn has finished the in-flight requests (or given up after the graceful
        # timeout) before the lifespan ends: only then is the pool closed.
        await store.close()
        logger.info("memory-pg service stopped")

    app = FastAPI(
        title="memory-pg",
        summary="Long-term memory for LLM agents, in PostgreSQL with pgvector.",
        version="1",
        lifespan=lifespan,
        # The pages come from the package (apidocs), not from a CDN.
        docs_url=None,
        redoc_url=None,
        # A query parameter a route does not take is refused, not ignored (http_auth).
        dependencies=[Depends(check_query)],
    )
    app.state.store = store
    app.state.settings = cfg
    app.state.guard = guard
    add_handlers(app)
    add_pages(app)
    _routes(app, store, cfg)
    http_relations.add_routes(app, store)
    app.add_middleware(
        _Limits,
        max_body_bytes=cfg.max_body_bytes,
        mcp=None if mcp_app is None else mcp_app.asgi,
        guard=guard,
    )
    metrics.install(app, store, guard, cfg.metrics)  # last: it counts the limits' answers too
    return app


def _memory_item(info: TokenInfo, item: MemoryIn) -> dict[str, Any]:
    check_names(info, item.user_id, item.agent_id)
    return item.model_dump(exclude={"user_id", "agent_id"})


def _routes(app: FastAPI, store: AsyncMemoryStore, cfg: ServiceSettings) -> None:
    @app.get("/healthz", tags=["health"], response_model=schemas.Ok)
    async def healthz() -> dict[str, bool]:
        """The process is up."""
        return {"ok": True}

    @app.get("/readyz", tags=["health"], response_model=schemas.Ok, responses=errors(503))
    async def readyz() -> JSONResponse:
        """The database answers (503 otherwise)."""
        try:
            engine = store.engine
            if engine is None:
                raise DatabaseUnavailable("the store is not open yet")
            async with engine.connect() as conn:
                await conn.execute(sql_text("SELECT 1"))
        except Exception as exc:
            return JSONResponse(
                error_body("NotReady", f"database unavailable: {type(exc).__name__}"),
                status_code=503,
            )
        return JSONResponse({"ok": True})

    @app.post("/v1/memories", status_code=201, tags=["memories"], **answers(schemas.Created, 413))
    async def add(body: AddBody, info: WriterToken) -> JSONResponse:
        """Store one memory; returns its id (an existing one for a repeat)."""
        fields = _memory_item(info, body)
        memory_id = await store.add_memory(user_id=info.user_id, agent_id=info.agent_id, **fields)
        return json_response({"id": memory_id}, 201)

    @app.post(
        "/v1/memories/batch",
        status_code=201,
        tags=["memories"],
        **answers(schemas.CreatedMany, 413),
    )
    async def add_batch(body: BatchBody, info: WriterToken) -> JSONResponse:
        """Store many memories in one transaction: all, or none."""
        check_names(info, body.user_id, body.agent_id)
        if len(body.items) > cfg.max_batch:
            raise InvalidInputTooMany(f"a batch holds at most {cfg.max_batch} memories")
        chars = sum(len(item.text) + len(item.context or "") for item in body.items)
        if chars > cfg.max_batch_chars:
            raise RequestTooLarge(
                f"a batch holds at most {cfg.max_batch_chars} characters of text, this one "
                f"{chars}: send it as smaller batches (each is all or nothing)"
            )
        items = [_memory_item(info, item) for item in body.items]
        ids = await store.add_memories(items, user_id=info.user_id, agent_id=info.agent_id)
        return json_response({"ids": ids}, 201)

    @app.post("/v1/search", tags=["memories"], **answers(schemas.Results, 413))
    async def search(body: SearchBody, info: UserToken) -> JSONResponse:
        """The memories that best match a query, best first, with their score parts."""
        check_names(info, body.user_id, body.agent_id)
        results = await store.search(
            body.query,
            body.top_k,
            user_id=info.user_id,
            memory_types=body.memory_types,
            since=body.since,
            until=body.until,
            metadata_filter=body.metadata_filter,
            as_of=body.as_of,
            min_similarity=body.min_similarity,
            min_lexical=body.min_lexical,
            agent_id=info.agent_id,
            agent_ids=body.agent_ids,
            expand=body.expand,
        )
        return json_response({"results": results})

    @app.get("/v1/memories", tags=["memories"], **answers(schemas.Memories))
    async def recent(
        info: UserToken,
        limit: Annotated[int, Query(description="How many, 1..1000.")] = DEFAULT_LIMIT,
        memory_type: Annotated[str | None, Query(description="Only this type.")] = None,
        include_inactive: Annotated[
            bool, Query(description="Replaced and expired memories too.")
        ] = False,
    ) -> JSONResponse:
        """The user's memories, newest first."""
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidInputTooMany(f"limit must be between 1 and {MAX_LIMIT}")
        rows = await store.list_memories(
            user_id=info.user_id,
            memory_types=[memory_type] if memory_type else None,
            include_inactive=include_inactive,
            limit=limit,
            agent_id=info.agent_id,
        )
        return json_response({"memories": rows})

    @app.get("/v1/memories/{memory_id}", tags=["memories"], **answers(schemas.Memory, 404))
    async def get(memory_id: str, info: UserToken) -> JSONResponse:
        """One memory by id (404 if the token's user has none with that id)."""
        row = await store.get(memory_id, user_id=info.user_id, agent_id=info.agent_id)
        if row is None:
            raise MemoryNotFound(f"no memory {memory_id} for this user")
        return json_response(row)

    @app.put(
        "/v1/memories/{memory_id}", tags=["memories"], **answers(schemas.Replaced, 404, 409, 413)
    )
    async def replace(memory_id: str, body: ReplaceBody, info: WriterToken) -> JSONResponse:
        """Update by replacement: a new memory replaces this one (kept in history)."""
        check_names(info, body.user_id, body.agent_id)
        new_id = await store.replace_memory(
            memory_id,
            body.text,
            user_id=info.user_id,
            metadata=body.metadata,
            importance=body.importance,
            agent_id=info.agent_id,
        )
        return json_response({"id": new_id, "replaced": memory_id})

    @app.post(
        "/v1/memories/{memory_id}/restore", tags=["memories"], **answers(schemas.Restored, 404, 409)
    )
    async def restore(memory_id: str, info: WriterToken) -> JSONResponse:
        """Undo a wrong replacement: this replaced memory is current again.

        The memory that replaced it stays current too; a merge into a summary is undone.
        404 if the token's user (and agent) has no such memory, 409 if it is current or
        expired. The history records a ``restored`` event naming the token's agent.
        """
        report = await store.restore(memory_id, user_id=info.user_id, agent_id=info.agent_id)
        return json_response(report)

    @app.delete(
        "/v1/memories/{memory_id}", status_code=204, tags=["memories"], **answers(None, 404)
    )
    async def delete(memory_id: str, info: WriterToken, body: EraseBody | None = None) -> Response:
        """Erase one memory and its history for good."""
        _check_erase(info, body)
        if not await store.delete_memory(memory_id, user_id=info.user_id, agent_id=info.agent_id):
            raise MemoryNotFound(f"no memory {memory_id} for this user")
        return Response(status_code=204)

    @app.get("/v1/memories/{memory_id}/history", tags=["memories"], **answers(schemas.Events))
    async def memory_history(memory_id: str, info: UserToken) -> JSONResponse:
        """Lifecycle events of one memory, oldest first."""
        events = await store.history(memory_id, user_id=info.user_id, agent_id=info.agent_id)
        return json_response({"events": events})

    @app.get("/v1/history", tags=["memories"], **answers(schemas.Events))
    async def user_history(
        info: UserToken,
        limit: Annotated[int, Query(description="How many events, 1..1000.")] = DEFAULT_LIMIT,
    ) -> JSONResponse:
        """The user's latest ``limit`` lifecycle events (1..1000, default 20), oldest first."""
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidInputTooMany(f"limit must be between 1 and {MAX_LIMIT}")
        events = await store.history(user_id=info.user_id, agent_id=info.agent_id, limit=limit)
        return json_response({"events": events})

    @app.get(
        "/v1/export",
        tags=["user"],
        response_class=NDJSONResponse,
        responses=errors(*TOKEN_ERRORS, beside=NDJSONResponse.media_type),
    )
    async def export(info: WholeUserToken) -> NDJSONResponse:
        """The user's memories as JSON lines (no vectors)."""
        out = io.StringIO()
        await store.export_user_memory(out, user_id=info.user_id, with_embeddings=False)
        return NDJSONResponse(out.getvalue())

    @app.delete("/v1/user", tags=["user"], **answers(schemas.Deleted))
    async def erase(info: WholeUserToken, body: EraseBody | None = None) -> JSONResponse:
        """Erase everything of the token's own user: memories, buffer, history."""
        _check_erase(info, body)
        if info.read_only:
            raise PermissionDenied("this token is read-only")
        return json_response({"deleted": await store.clear_user_memory(info.user_id)})

    @app.get("/v1/stats", tags=["user"], **answers(schemas.Stats))
    async def stats(info: UserToken) -> JSONResponse:
        """Counts per memory type of the token's user."""
        return json_response(await store.stats(user_id=info.user_id, agent_id=info.agent_id))

    @app.get("/v1/admin/stats", tags=["admin"], **answers(schemas.Stats))
    async def admin_stats(info: AdminToken) -> JSONResponse:
        """Counts of the whole database (the service's role must see every user)."""
        return json_response(await store.stats())

    @app.delete("/v1/admin/users/{user_id}", tags=["admin"], **answers(schemas.Deleted))
    async def admin_erase(
        user_id: str, info: AdminWriterToken, body: EraseBody | None = None
    ) -> JSONResponse:
        """Erase everything of one user (an admin token that is not read-only)."""
        if body is not None:
            if (body.user_id is not None and body.user_id != user_id) or body.agent_id:
                raise PermissionDenied("an admin erase acts on the user of its path only")
            _no_dry_run(body)
        logger.warning("admin token %s erased a user", info.id)
        return json_response({"deleted": await store.clear_user_memory(user_id)})


def _check_erase(info: TokenInfo, body: EraseBody | None) -> None:
    """An erase's optional body may repeat the token's names, nothing else."""
    if body is not None:
        check_names(info, body.user_id, body.agent_id)
        _no_dry_run(body)


def _no_dry_run(body: EraseBody) -> None:
    if body.dry_run:
        raise InvalidInput(
            "an erase over HTTP has no dry run: GET /v1/stats (or /v1/export) shows what "
            "it would remove; `memory-pg erase` without --yes previews it"
        )


class InvalidInputTooMany(InvalidInput):
    """A batch or page larger than the service allows."""
