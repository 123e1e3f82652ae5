"""MCP tools of the relations between a user's memories: related, entity, entities."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

if TYPE_CHECKING:
    from memory_pg.async_store import AsyncMemoryStore


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))


def _brief(row: dict[str, Any]) -> dict[str, Any]:
    keep = ("id", "text", "memory_type", "event_time", "hops", "relation", "entity")
    out: dict[str, Any] = _plain({k: row[k] for k in keep if k in row})
    return out


def add_tools(
    server: MCPServer[Any],
    store: AsyncMemoryStore,
    resolve: Callable[[Any], Awaitable[Any]],
    typed_errors: Callable[[], Any],
    read_only: Any,
) -> None:
    """Register ``related_memories``, ``entity_memories`` and ``list_entities``."""

    @server.tool(annotations=read_only)
    async def related_memories(
        memory_id: Annotated[str, Field(description="a memory id from search_memory")],
        ctx: Context,
        depth: Annotated[int, Field(ge=1, le=3, description="links to follow")] = 2,
    ) -> dict[str, Any]:
        """Memories linked to one memory: the turns around it, what it replaced, what a
        summary came from, memories naming the same person, place or project."""
        who = await resolve(ctx)
        async with typed_errors():
            rows = await store.related(memory_id, depth, user_id=who.user_id, agent_id=who.agent_id)
        return {"related": [_brief(r) for r in rows]}

    @server.tool(annotations=read_only)
    async def entity_memories(
        name: Annotated[str, Field(description="a name or alias: Caroline, 小王, Project Atlas")],
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
    ) -> dict[str, Any]:
        """Everything remembered about one person, place, organisation or project,
        newest first. Use for "what do we know about X"."""
        who = await resolve(ctx)
        async with typed_errors():
            found = await store.entity(
                name, limit=limit, user_id=who.user_id, agent_id=who.agent_id
            )
        if found is None:
            return {"entity": None, "memories": []}
        memories = [_brief(m) for m in found.pop("memories")]
        return {"entity": _plain(found), "memories": memories}

    @server.tool(annotations=read_only)
    async def list_entities(
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=200)] = 50,
    ) -> dict[str, Any]:
        """The people, places, organisations, projects and things in the user's memory,
        most mentioned first."""
        who = await resolve(ctx)
        async with typed_errors():
            rows = await store.entities(limit=limit, user_id=who.user_id, agent_id=who.agent_id)
        return {"entities": _plain(rows)}


__all__ = ["add_tools"]
