"""HTTP routes of the relations between a user's memories: related, entity, entities, graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from fastapi import FastAPI, Path, Query
from fastapi.responses import JSONResponse, PlainTextResponse

from memory_pg.entities import KINDS
from memory_pg.errors import MemoryNotFound
from memory_pg.plans.relations import graph_dot, graph_text
from memory_pg.service import schemas
from memory_pg.service.http_auth import UserToken
from memory_pg.service.responses import json_response
from memory_pg.service.schemas import TOKEN_ERRORS, answers, errors

if TYPE_CHECKING:
    from memory_pg.async_store import AsyncMemoryStore


def add_routes(app: FastAPI, store: AsyncMemoryStore) -> None:
    """``GET /v1/memories/{id}/related``, ``/v1/entities``, ``/v1/entities/{name}`` and
    ``/v1/entities/{name}/graph``, acting for the token's user (and agent) only."""

    @app.get(
        "/v1/memories/{memory_id}/related", tags=["relations"], **answers(schemas.Related, 404)
    )
    async def related(
        memory_id: str,
        info: UserToken,
        depth: Annotated[int, Query(description="Links to follow, 1..3.")] = 2,
        limit: Annotated[int, Query(description="How many, 1..1000.")] = 50,
    ) -> JSONResponse:
        """Memories up to ``depth`` links away: next turn, replaced, summary, same entity."""
        rows = await store.related(
            memory_id, depth, limit=limit, user_id=info.user_id, agent_id=info.agent_id
        )
        return json_response({"related": rows})

    @app.get("/v1/entities", tags=["relations"], **answers(schemas.Entities))
    async def entities(
        info: UserToken,
        kind: Annotated[
            list[str] | None, Query(description="Only these kinds (repeat the parameter).")
        ] = None,
        limit: Annotated[int, Query(description="How many, 1..1000.")] = 100,
    ) -> JSONResponse:
        """The user's entities (people, places, organisations ...), most mentioned first."""
        rows = await store.entities(
            kinds=kind, limit=limit, user_id=info.user_id, agent_id=info.agent_id
        )
        return json_response({"entities": rows, "kinds": list(KINDS)})

    @app.get("/v1/entities/{name}", tags=["relations"], **answers(schemas.Entity, 404))
    async def entity(
        name: Annotated[str, Path(description="The entity's name or one of its aliases.")],
        info: UserToken,
        limit: Annotated[int, Query(description="How many memories, 1..1000.")] = 50,
        include_inactive: Annotated[
            bool, Query(description="Replaced and expired memories too.")
        ] = False,
    ) -> JSONResponse:
        """Everything about one entity (by name or alias), newest first; 404 if none."""
        found = await store.entity(
            name,
            limit=limit,
            include_inactive=include_inactive,
            user_id=info.user_id,
            agent_id=info.agent_id,
        )
        if found is None:
            raise MemoryNotFound(f"no entity {name!r} for this user")
        return json_response(found)

    @app.get(
        "/v1/entities/{name}/graph",
        tags=["relations"],
        response_model=schemas.Graph,
        responses={
            200: {"content": {"text/plain": {}, "text/vnd.graphviz": {}}},
            **errors(*TOKEN_ERRORS, 404),
        },
    )
    async def graph(
        name: Annotated[str, Path(description="The entity's name or one of its aliases.")],
        info: UserToken,
        format: Annotated[
            Literal["json", "text", "dot"],
            Query(description="json, text (a tree to read) or dot (Graphviz)."),
        ] = "json",
        limit: Annotated[int, Query(description="How many memories, 1..1000.")] = 25,
    ) -> JSONResponse | PlainTextResponse:
        """An entity's neighbourhood as JSON, text or Graphviz dot (``format``)."""
        found = await store.graph(name, limit=limit, user_id=info.user_id, agent_id=info.agent_id)
        if found is None:
            raise MemoryNotFound(f"no entity {name!r} for this user")
        if format == "dot":
            return PlainTextResponse(graph_dot(found), media_type="text/vnd.graphviz")
        if format == "text":
            return PlainTextResponse(graph_text(found))
        return json_response(found)


__all__ = ["add_routes"]
