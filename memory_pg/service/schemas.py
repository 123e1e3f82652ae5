"""What the HTTP API answers, as OpenAPI schemas: the 200s of every route and the error body.

The routes build their JSON themselves (:mod:`memory_pg.service.http`); these models
document it for ``/docs`` and for client generators, and the service's tests check
real answers against them. A memory carries more keys than listed where a feature
adds them (``time_match``, ``via`` ...): the models allow extra keys.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "TOKEN_ERRORS",
    "ErrorBody",
    "NDJSONResponse",
    "answers",
    "errors",
]


class NDJSONResponse(PlainTextResponse):
    """JSON lines, one memory a line (``GET /v1/export``)."""

    media_type = "application/x-ndjson"


class ErrorDetail(BaseModel):
    """What went wrong."""

    type: str = Field(
        description="The kind of error, stable for a client to test: InvalidRequest, "
        "MalformedJSON, UnknownParameter, AuthenticationFailed, PermissionDenied, "
        "MemoryNotFound, MemoryConflict, RequestTooLarge, DatabaseUnavailable ...",
        examples=["MemoryNotFound"],
    )
    message: str = Field(
        description="What went wrong and what to do about it, for a person to read.",
        examples=["no memory 01a2... for this user"],
    )


class ErrorBody(BaseModel):
    """The body of every error response, whatever its status."""

    error: ErrorDetail


#: Why a route answers each error status.
_WHY = {
    400: "Malformed JSON, or a query parameter the route does not take.",
    401: "No bearer token, or one that is unknown, revoked or expired.",
    403: "The token may not do this: read-only, an admin token on a user's route (or "
    "the reverse), or a body or query parameter naming another user or agent.",
    404: "The token's user (and agent) has no such memory or entity.",
    409: "The memory is not in a state for this: already replaced, or current.",
    413: "The body is larger than the service takes (--max-body-bytes, --max-batch-chars).",
    422: "A field or parameter with a wrong type or value.",
    503: "The database is unavailable, or the service is shutting down: try again.",
}


def errors(*codes: int, beside: str | None = None) -> dict[int | str, dict[str, Any]]:
    """The ``responses=`` of a route that answers these error statuses, each with
    :class:`ErrorBody` (instead of FastAPI's validation error, which it never sends).

    ``beside``: the media type of a route whose answers are not JSON; its errors still
    are (FastAPI would list them under the route's media type).
    """
    if beside is None:
        return {code: {"model": ErrorBody, "description": _WHY[code]} for code in codes}
    ref = {"schema": {"$ref": "#/components/schemas/ErrorBody"}}
    return {
        code: {"description": _WHY[code], "content": {"application/json": ref}} for code in codes
    }


#: The errors of any route that acts for a token (a query or body may be wrong too).
TOKEN_ERRORS = (400, 401, 403, 422, 503)


def answers(model: type[BaseModel] | None, *more_errors: int) -> dict[str, Any]:
    """The OpenAPI of a route that acts for a token: its 200's ``model`` (None: no
    body, or not JSON) and its errors, those of :data:`TOKEN_ERRORS` and ``more_errors``."""
    return {"response_model": model, "responses": errors(*TOKEN_ERRORS, *more_errors)}


class _Open(BaseModel):
    # Rows carry more keys where a feature adds them; the schema names the usual ones.
    model_config = ConfigDict(extra="allow")


class Ok(BaseModel):
    """The process is up (or the database answers)."""

    ok: bool = Field(description="Always true in a 200.")


class Created(BaseModel):
    """A stored memory."""

    id: str = Field(description="The memory's id (an existing one when the text is a repeat).")


class CreatedMany(BaseModel):
    """A stored batch, in the order of its items."""

    ids: list[str] = Field(description="The memories' ids, one per item.")


class Memory(_Open):
    """One memory, as stored."""

    id: str
    user_id: str = Field(description="The token's user: every row a token sees is its own.")
    memory_type: str = Field(
        description="user_profile, project_status, key_decision, todo, "
        "dialogue, or a type of the team's own."
    )
    text: str
    metadata: dict[str, Any] = Field(description="What the writer attached (JSON object).")
    topic: str | None = Field(description="The topic key a later decision replaces it by.")
    importance: float = Field(description="0..1, part of the ranking.")
    created_at: datetime
    updated_at: datetime
    event_time: datetime = Field(description="When what it says happened (default: written).")
    last_accessed_at: datetime | None = Field(description="Last returned by a search.")
    access_count: int = Field(description="How often searches returned it.")
    valid_from: datetime
    superseded_at: datetime | None = Field(description="When a newer memory replaced it.")
    superseded_by: str | None = Field(description="The id of the memory that replaced it.")
    expires_at: datetime | None
    embedding_model: str = Field(description="The model that made its vector.")
    context: str | None = Field(description="Text that was embedded with it, not shown.")
    agent_id: str | None = Field(description="The agent that wrote it (none: the user).")
    private: bool = Field(description="Seen by its agent only, not by the user's other agents.")


class SearchHit(Memory):
    """A memory that matched a query, with the parts of its score."""

    score: float = Field(description="The final score: results come best first.")
    distance: float | None = Field(default=None, description="Cosine distance to the query.")
    similarity: float | None = Field(default=None, description="1 - distance.")
    lexical: float | None = Field(default=None, description="Full-text score, 0..1.")
    rrf: float | None = Field(default=None, description="Rank fusion of the two legs.")
    relevance: float | None = Field(default=None, description="Relevance before recency.")
    recency: float | None = Field(default=None, description="Decay by age, per memory type.")
    reinforcement: float | None = Field(default=None, description="Boost by earlier use.")
    full_text_only: bool = Field(default=False, description="Ranked without the vector leg.")


class Results(BaseModel):
    """Search results, best first."""

    results: list[SearchHit]


class Memories(BaseModel):
    """A page of the user's memories, newest first."""

    memories: list[Memory]


class Replaced(BaseModel):
    """An update by replacement."""

    id: str = Field(description="The new memory, now current.")
    replaced: str = Field(description="The memory it replaced (kept in history).")


class Restored(_Open):
    """An undone replacement."""

    id: str = Field(description="The memory that is current again.")
    restored: list[str] = Field(description="Every memory made current again.")
    replaced_by: str | None = Field(description="The memory that had replaced it.")
    replacement: str = Field(description="What became of that one: kept (still current).")


class Event(_Open):
    """A lifecycle event: added, superseded, merged, restored, expired ..."""

    memory_id: str
    event: str
    at: datetime
    detail: dict[str, Any] = Field(description="Why: e.g. the replacing id and the reason.")


class Events(BaseModel):
    """Lifecycle events, oldest first."""

    events: list[Event]


class Deleted(BaseModel):
    """An erase."""

    deleted: int = Field(description="How many memories were erased (history and buffer too).")


class TypeCount(BaseModel):
    """Memories of one type."""

    current: int
    superseded: int


class Stats(_Open):
    """Counts of memories."""

    user_id: str | None = Field(description="The token's user (none: the whole database).")
    memories: int = Field(description="Current memories.")
    superseded: int = Field(description="Replaced memories kept for history.")
    by_type: dict[str, TypeCount]


class RelatedMemory(Memory):
    """A memory linked to another."""

    hops: int = Field(description="Links away from the memory asked about.")
    relation: str = Field(description="next_turn, replaced, summary, mentions ...")
    entity: str | None = Field(default=None, description="The entity both mention, if any.")


class Related(BaseModel):
    """Memories linked to one memory, nearest first."""

    related: list[RelatedMemory]


class EntityRow(_Open):
    """A person, place, organisation, project or thing the user's memories name."""

    id: str
    name: str
    kind: str
    aliases: list[str]
    mentions: int = Field(description="How many current memories name it.")
    last_mentioned_at: datetime | None


class Entities(BaseModel):
    """The user's entities, most mentioned first."""

    entities: list[EntityRow]
    kinds: list[str] = Field(description="Every kind an entity may have (the kind filter).")


class Entity(_Open):
    """One entity and the memories that name it, newest first."""

    id: str
    name: str
    kind: str
    aliases: list[str]
    memories: list[Memory]


class Neighbour(_Open):
    """An entity named in the same memories."""

    id: str
    name: str
    kind: str
    shared: int = Field(description="Memories that name both.")


class Graph(Entity):
    """An entity's neighbourhood: its memories and the entities they also name."""

    related_entities: list[Neighbour]
