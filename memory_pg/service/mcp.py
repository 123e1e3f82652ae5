"""The MCP server: memory tools for agents that speak MCP (Claude Code, Cursor, Hermes).

Two transports, built with the official ``mcp`` SDK:

* ``memory-pg mcp`` (stdio): one local agent; the user (and agent) come from
  ``--user``/``--agent`` or ``MEMORY_PG_USER_ID``/``MEMORY_PG_AGENT_ID``;
* streamable HTTP at ``/mcp`` of ``memory-pg serve``: every request carries
  ``Authorization: Bearer mpg_...``, and the token fixes the user and agent.

No tool takes a user: a tool call can only reach its own user's memories. Errors
come back as MCP tool errors whose text names the problem.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, Icon, InputRequiredResult, ToolAnnotations
from pydantic import ConfigDict, Field, ValidationError

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.compaction import is_fact
from memory_pg.config import BUILTIN_MEMORY_TYPES, StoreSettings
from memory_pg.errors import AuthenticationFailed, MemoryPgError, PermissionDenied
from memory_pg.service import warm
from memory_pg.service.bodies import DEFAULT_LIMIT
from memory_pg.service.tokens import TokenInfo, verify_token

logger = logging.getLogger(__name__)

__all__ = ["Identity", "McpHttpApp", "build_server", "http_app", "run_stdio"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

INSTRUCTIONS = (
    "Long-term memory shared by this user's agents. Search before answering questions "
    "about the user, their projects and past decisions; add durable facts (decisions, "
    "preferences, project status, todos) as they are stated; replace a memory when a "
    "fact changes instead of adding a contradicting one; restore a replaced memory the user "
    "says still holds. Memories are shared with the user's other agents unless added with "
    "private=true."
)

#: Where the HTTP transport leaves the request's verified token for the tools.
STATE_KEY = "memory_pg_token"


class StoreScope(TypedDict):
    """The keyword arguments that bind a store call to an :class:`Identity`."""

    user_id: str
    agent_id: str | None


@dataclass(frozen=True)
class Identity:
    """Who a tool call acts for: fixed by the token (HTTP) or the command line (stdio)."""

    user_id: str
    agent_id: str | None = None
    read_only: bool = False

    @property
    def scope(self) -> StoreScope:
        """``user_id`` and ``agent_id`` for the store: every tool passes them whole."""
        return {"user_id": self.user_id, "agent_id": self.agent_id}

    @classmethod
    def of_token(cls, info: TokenInfo) -> Identity:
        """The identity a user token fixes."""
        if info.is_admin:
            raise PermissionDenied("an admin token has no user: MCP tools need a user token")
        return cls(info.user_id, info.agent_id, info.read_only)


Resolver = Callable[[Context], Awaitable[Identity]]


#: A memory type in a tool's schema: the service's stores know the built-in ones.
MemoryType = Annotated[str, Field(json_schema_extra={"enum": list(BUILTIN_MEMORY_TYPES)})]


class _Server(MCPServer[Any]):
    """The SDK's server with texts an agent reads easily: a tool's description is its
    docstring without the indentation, bad arguments are one line per argument."""

    def add_tool(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
    ) -> None:
        super().add_tool(
            fn,
            name,
            title,
            description or inspect.cleandoc(fn.__doc__ or ""),
            annotations,
            icons,
            meta,
            structured_output,
        )

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            # Pydantic's text spans lines and ends in a documentation URL per error.
            raise ToolError(
                f"Error executing tool {name}: InvalidArgument: {_invalid_arguments(cause)}"
            ) from cause


def _invalid_arguments(exc: ValidationError) -> str:
    """Each refused argument with what was wrong and the value given, on one line."""
    said = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        given = "" if error["type"] == "missing" else f" (got {error['input']!r:.60})"
        said.append(f"{where}: {error['msg']}{given}")
    return "; ".join(said)


def _tool_error(exc: MemoryPgError) -> ToolError:
    return ToolError(f"{type(exc).__name__}: {exc}")


def _compact(row: dict[str, Any]) -> dict[str, Any]:
    keep = (
        "id",
        "text",
        "memory_type",
        "topic",
        "metadata",
        "importance",
        "agent_id",
        "private",
        "created_at",
        "event_time",
        "superseded_at",
        "superseded_by",
        "score",
        "via",
        "via_relation",
        "via_entity",
    )
    out = {k: row[k] for k in keep if k in row}
    return json.loads(json.dumps(out, default=str, ensure_ascii=False))  # type: ignore[no-any-return]


#: The tools that write: a read-only server does not offer them.
WRITE_TOOLS = ("add_memory", "update_memory", "restore_memory", "forget_memory")

#: As for the HTTP routes' pages, with the lower ceiling of MCP's list tool.
HISTORY_LIMIT = 100


def build_server(
    store: AsyncMemoryStore, resolve: Resolver, *, read_only: bool = False
) -> MCPServer[Any]:
    """An MCP server with the memory tools; ``resolve`` says who each call acts for.

    ``read_only``: offer no tool that writes (:data:`WRITE_TOOLS`), for a server
    whose every call is read-only (``memory-pg mcp --read-only``). Over HTTP the
    token decides per call: a read-only token's writes are tool errors.
    """
    server: MCPServer[Any] = _Server(
        name="memory-pg", instructions=INSTRUCTIONS, version="1", log_level="WARNING"
    )
    read_only_hint = ToolAnnotations(read_only_hint=True, destructive_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False)

    async def writer(ctx: Context) -> Identity:
        who = await resolve(ctx)
        if who.read_only:
            raise ToolError("PermissionDenied: this token (or server) is read-only")
        return who

    @contextlib.asynccontextmanager
    async def typed_errors() -> AsyncIterator[None]:
        try:
            yield
        except MemoryPgError as exc:
            raise _tool_error(exc) from exc

    @server.tool(annotations=read_only_hint)
    async def search_memory(
        query: Annotated[str, Field(description="what to look for, in any language")],
        ctx: Context,
        top_k: Annotated[int, Field(ge=1, le=50, description="how many memories")] = 5,
        memory_types: Annotated[
            list[MemoryType] | None,
            Field(
                description="only these types: user_profile, project_status, key_decision, "
                "todo, dialogue"
            ),
        ] = None,
        agent_ids: Annotated[
            list[str] | None, Field(description="only memories written by these agents")
        ] = None,
        expand: Annotated[
            int,
            Field(
                ge=0,
                le=2,
                description="also memories this many links from the best hits (the turn "
                "around it, the same person or project); 0: none",
            ),
        ] = 0,
    ) -> dict[str, Any]:
        """Search the user's long-term memory, best match first.

        Returns current memories only (replaced ones are left out), each with its id,
        text, type and score. Use before answering anything about the user or their work.
        """
        who = await resolve(ctx)
        async with typed_errors():
            hits = await store.search(
                query,
                top_k,
                memory_types=memory_types,
                agent_ids=agent_ids,
                expand=expand,
                **who.scope,
            )
        return {"results": [_compact(h) for h in hits]}

    @server.tool(annotations=writes)
    async def add_memory(
        text: Annotated[str, Field(description="one durable fact, stated on its own")],
        ctx: Context,
        memory_type: Annotated[
            MemoryType,
            Field(
                description="what kind of fact: a decision, the user's profile, a project's "
                "status, a todo, or dialogue (words kept as said)"
            ),
        ] = "key_decision",
        topic: Annotated[
            str | None,
            Field(
                description="a stable key (e.g. 'database'): a later memory with the same "
                "topic and type replaces this one"
            ),
        ] = None,
        importance: Annotated[float | None, Field(ge=0, le=1)] = None,
        private: Annotated[
            bool,
            Field(
                description="keep it to this agent instead of sharing with the user's other agents"
            ),
        ] = False,
    ) -> dict[str, Any]:
        """Remember a fact about the user or their work; returns its id.

        Repeating a current memory returns the existing id; a new decision on the same
        topic replaces the old one, which stays in history.
        """
        who = await writer(ctx)
        if memory_type != "dialogue" and not is_fact(text):
            # As compaction drops it: asked back, a question would rank first as a fact.
            raise ToolError(
                f"InvalidInput: a question or a pleasantry is not a {memory_type} to remember: "
                "add what was decided or said instead (or memory_type='dialogue' to keep "
                "the words as said)"
            )
        async with typed_errors():
            memory_id = await store.add_memory(
                text, memory_type, topic=topic, importance=importance, private=private, **who.scope
            )
        return {"id": memory_id}

    @server.tool(annotations=writes)
    async def update_memory(
        memory_id: Annotated[str, Field(description="id of the current memory to replace")],
        text: Annotated[str, Field(description="the corrected or updated fact")],
        ctx: Context,
    ) -> dict[str, Any]:
        """Replace a memory by a new one (update by replacement); the old one stays in history.

        Returns the new id. Fails if the memory does not exist or was already replaced.
        """
        who = await writer(ctx)
        async with typed_errors():
            new_id = await store.replace_memory(memory_id, text, **who.scope)
        return {"id": new_id, "replaced": memory_id}

    @server.tool(annotations=writes)
    async def restore_memory(
        memory_id: Annotated[
            str, Field(description="id of the replaced memory (see memory_history)")
        ],
        ctx: Context,
    ) -> dict[str, Any]:
        """Undo a wrong replacement: a replaced memory becomes current again.

        Use when the user says an older fact still holds. The memory that replaced it
        stays current too; a merge into a summary is undone. Fails if the memory is
        current already, expired, or not found.
        """
        who = await writer(ctx)
        async with typed_errors():
            report = await store.restore(memory_id, **who.scope)
        return report

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    async def forget_memory(
        memory_id: Annotated[str, Field(description="id of the memory to erase")],
        ctx: Context,
    ) -> dict[str, Any]:
        """Erase one memory and its history for good (the user asked to forget it)."""
        who = await writer(ctx)
        async with typed_errors():
            done = await store.delete_memory(memory_id, **who.scope)
        if not done:
            raise ToolError(f"MemoryNotFound: no memory {memory_id} for this user")
        return {"deleted": memory_id}

    @server.tool(annotations=read_only_hint)
    async def memory_history(
        ctx: Context,
        memory_id: Annotated[
            str | None, Field(description="one memory's events; none: all of the user's")
        ] = None,
        limit: Annotated[
            int, Field(ge=1, le=HISTORY_LIMIT, description="only the latest this many events")
        ] = DEFAULT_LIMIT,
    ) -> dict[str, Any]:
        """Why a memory was added, replaced, merged, restored or forgotten: latest events,
        oldest first, each with a ``detail`` whose ``reason`` says why."""
        who = await resolve(ctx)
        async with typed_errors():
            events = await store.history(
                memory_id, user_id=who.user_id, agent_id=who.agent_id, limit=limit
            )
        return {"events": json.loads(json.dumps(events, default=str, ensure_ascii=False))}

    @server.tool(annotations=read_only_hint)
    async def list_recent_memories(
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
        memory_type: Annotated[MemoryType | None, Field(description="only this type")] = None,
    ) -> dict[str, Any]:
        """The user's most recent current memories, newest first."""
        who = await resolve(ctx)
        async with typed_errors():
            types = [memory_type] if memory_type else None
            rows = await store.list_memories(memory_types=types, limit=limit, **who.scope)
        return {"memories": [_compact(r) for r in rows]}

    from memory_pg.service import mcp_relations  # issue 19

    mcp_relations.add_tools(server, store, resolve, typed_errors, read_only_hint)
    _refuse_unknown_arguments(server)
    _quiet_sdk_log()
    if read_only:
        for name in WRITE_TOOLS:
            server.remove_tool(name)
    return server


class _NoToolText(logging.Filter):
    """The SDK logs a failed tool call with its error's text ("Tool 'entity' failed:
    \"MemoryNotFound: no entity 'Carl' ...\""), which can quote a user's words: keep
    the error's type only."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == "Tool %r failed: %r" and isinstance(record.args, tuple):
            name, text = (*record.args, "", "")[:2]
            record.args = (name, str(text).split(":", 1)[0] + ": (text not logged)")
        return True


_SDK_LOGGER = "mcp.server.mcpserver.server"


def _quiet_sdk_log() -> None:
    sdk = logging.getLogger(_SDK_LOGGER)
    if not any(isinstance(f, _NoToolText) for f in sdk.filters):
        sdk.addFilter(_NoToolText())


def _refuse_unknown_arguments(server: MCPServer[Any]) -> None:
    """Make every tool refuse an argument its schema does not have.

    The SDK's argument models ignore extra arguments: ``search_memory`` called with
    ``user_id="frank"`` searched the token's user as if the argument had been
    heard. Refused instead, a caller learns that no tool takes a user (the token
    or the command line fixes it); the published schemas say
    ``additionalProperties: false`` to match.
    """
    # The SDK offers no public way to a tool's argument model.
    for tool in server._tool_manager.list_tools():
        model = tool.fn_metadata.arg_model
        strict = type(
            model.__name__,
            (model,),
            {
                "model_config": ConfigDict(arbitrary_types_allowed=True, extra="forbid"),
                "__module__": model.__module__,
            },
        )
        tool.fn_metadata.arg_model = strict
        tool.parameters["additionalProperties"] = False


# -- stdio ------------------------------------------------------------------------------


def run_stdio(
    *,
    user_id: str,
    agent_id: str | None = None,
    read_only: bool = False,
    database_url: str | None = None,
    home: str | None = None,
    embedding_model: str | None = None,
    auto_migrate: bool = False,
    pooler: str | None = None,
    read_urls: list[str] | None = None,
) -> None:
    """Serve the tools on stdin/stdout for one user (and agent) until the client leaves."""
    import anyio

    from memory_pg.service.tokens import check_agent_id

    store = AsyncMemoryStore(
        database_url,
        user_id=user_id,
        home=home,
        embedding_model=embedding_model,
        auto_migrate=True if auto_migrate else None,
        settings=StoreSettings(pooler=pooler) if pooler else None,
        read_urls=read_urls,
    )
    assert store.user_id is not None
    identity = Identity(store.user_id, check_agent_id(agent_id), read_only)

    async def resolve(ctx: Context) -> Identity:
        return identity

    async def main() -> None:
        opened = True
        try:
            await store.open()
        except MemoryPgError as exc:
            # The client still gets its session and tools: each call reports the
            # problem as a tool error (and opens again, so a database started or
            # migrated later is used without restarting the client).
            print(f"memory-pg mcp: error: {exc}", file=sys.stderr, flush=True)
            opened = False
        warming = asyncio.create_task(warm.warm_up(store, (identity.agent_id,))) if opened else None
        try:
            await build_server(store, resolve, read_only=read_only).run_stdio_async()
        finally:
            if warming is not None:
                await warm.stop(warming)
            await store.close()

    anyio.run(main)


# -- streamable HTTP ----------------------------------------------------------------------


class McpHttpApp:
    """The streamable-HTTP MCP endpoint for ``/mcp``: bearer tokens checked first.

    ``asgi`` is the ASGI app (it answers 401 with a JSON body before MCP sees a
    request without a live token); ``lifespan()`` runs the SDK's session manager.
    """

    def __init__(self, store: AsyncMemoryStore) -> None:
        self.store = store

        async def resolve(ctx: Context) -> Identity:
            request = ctx.request_context.request
            state = getattr(request, "scope", {}).get("state") or {}
            info = state.get(STATE_KEY)
            if not isinstance(info, TokenInfo):  # pragma: no cover - the wrapper always sets it
                raise ToolError("AuthenticationFailed: no token")
            try:
                return Identity.of_token(info)
            except PermissionDenied as exc:
                raise _tool_error(exc) from exc

        self.server = build_server(store, resolve)
        self._app = self.server.streamable_http_app(
            streamable_http_path="/mcp",
            stateless_http=True,
            json_response=True,
            # Bearer tokens, which a browser never sends by itself, guard this endpoint;
            # the service may be reached under any host name.
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )

    def lifespan(self) -> contextlib.AbstractAsyncContextManager[None]:
        """The session manager's task group, for the host app's lifespan."""
        return self.server.session_manager.run()

    async def asgi(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the bearer token, then hand the request to the SDK."""
        if scope["type"] != "http":  # pragma: no cover
            await self._app(scope, receive, send)
            return
        header = ""
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                header = value.decode("latin-1")
        scheme, _, token = header.partition(" ")
        try:
            if scheme.lower() != "bearer":
                raise AuthenticationFailed(
                    "a bearer token is required (Authorization: Bearer mpg_...)"
                )
            info = await verify_token(self.store.engine, token.strip())  # type: ignore[arg-type]
            if info.is_admin:
                raise PermissionDenied("an admin token has no user: MCP needs a user token")
        except (AuthenticationFailed, PermissionDenied) as exc:
            from memory_pg.service.responses import error_body, status_of

            body = json.dumps(error_body(type(exc).__name__, str(exc))).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": status_of(exc),
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b"Bearer"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        except MemoryPgError as exc:
            from memory_pg.service.responses import error_body, status_of

            body = json.dumps(error_body(type(exc).__name__, str(exc))).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": status_of(exc),
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        scope.setdefault("state", {})[STATE_KEY] = info
        scope["state"]["token_id"] = info.id
        await self._app(scope, receive, send)


def http_app(store: AsyncMemoryStore) -> McpHttpApp:
    """The ``/mcp`` endpoint of the HTTP service over ``store``."""
    return McpHttpApp(store)
