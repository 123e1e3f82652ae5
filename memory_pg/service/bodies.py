"""The HTTP API's request bodies (pydantic models; see :mod:`memory_pg.service.http`).

Numbers and flags are strict: ``top_k: true`` or ``top_k: 2.0`` is a 422, not a
quiet 1 or 2 (a float field still takes a whole number).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt

#: A listing or a history: a page of 20 unless asked, never over 1000.
DEFAULT_LIMIT = 20
MAX_LIMIT = 1000


#: The optional names a body may carry: a request never names another user or agent.
_USER = "Optional; must equal the token's user (a request never names another: 403)."
_AGENT = "Optional; must equal the token's agent, if it has one (403 otherwise)."


class Body(BaseModel):
    # Unknown fields are refused: a typo must not silently drop a filter.
    model_config = ConfigDict(extra="forbid")

    user_id: str | None = Field(default=None, description=_USER)
    agent_id: str | None = Field(default=None, description=_AGENT)


class MemoryIn(BaseModel):
    """One memory to store."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="The memory, in any language; what searches find.")
    memory_type: str = Field(
        default="dialogue",
        description="user_profile, project_status, key_decision, todo, dialogue, or a "
        "type of your own; decides how fast it fades in the ranking.",
    )
    metadata: dict[str, Any] | None = Field(
        default=None, description="Any JSON object kept with it; searches can filter on it."
    )
    topic: str | None = Field(
        default=None,
        description="A topic key: a later memory of the same type and topic replaces this one.",
    )
    importance: StrictFloat | None = Field(
        default=None, description="0..1 (default 0.5): weighs in the ranking and in expiry."
    )
    event_time: datetime | None = Field(
        default=None,
        description="When what it says happened (ISO 8601, with offset); default: now. "
        "Questions naming a time (last Friday, 5月2号) rank by it.",
    )
    expires_at: datetime | None = Field(
        default=None, description="Forgotten after this time (ISO 8601); default: never."
    )
    context: str | None = Field(
        default=None,
        description="Surrounding text embedded with it to help search find it, not shown.",
    )
    user_id: str | None = Field(default=None, description=_USER)
    agent_id: str | None = Field(default=None, description=_AGENT)
    private: StrictBool = Field(
        default=False,
        description="Only the token's agent sees it, not the user's other agents "
        "(needs a token with an agent).",
    )


class AddBody(MemoryIn):
    """``POST /v1/memories``."""


class BatchBody(Body):
    """``POST /v1/memories/batch``: all stored, or none."""

    items: list[MemoryIn] = Field(
        min_length=1, description="The memories, 1..500, in one transaction: all or none."
    )


class SearchBody(Body):
    """``POST /v1/search``."""

    query: str = Field(description="What to look for, in any language.")
    top_k: StrictInt = Field(default=5, description="How many results, 1..1000.")
    memory_types: list[str] | None = Field(default=None, description="Only these types.")
    since: datetime | None = Field(
        default=None, description="Only memories whose event time is at or after this."
    )
    until: datetime | None = Field(
        default=None, description="Only memories whose event time is before this."
    )
    metadata_filter: dict[str, Any] | None = Field(
        default=None, description="Only memories whose metadata contains this JSON object."
    )
    as_of: datetime | None = Field(
        default=None,
        description="What was current at that past time (replaced memories included).",
    )
    agent_ids: list[str] | None = Field(
        default=None, description="Only memories these agents wrote (the user's own: null)."
    )
    min_similarity: StrictFloat | None = Field(
        default=None,
        description="Drop results whose cosine similarity is below this, unless "
        "min_lexical keeps them.",
    )
    min_lexical: StrictFloat | None = Field(
        default=None,
        description="Drop results whose full-text score (0..1) is below this, unless "
        "min_similarity keeps them.",
    )
    expand: StrictInt = Field(
        default=0,
        description="Also the memories this many links (0..3) from the best hits, marked `via`.",
    )


class ReplaceBody(Body):
    """``PUT /v1/memories/{id}``: update by replacement."""

    text: str = Field(description="The new memory; the old one is kept in history.")
    metadata: dict[str, Any] | None = Field(default=None, description="The new memory's metadata.")
    importance: StrictFloat | None = Field(default=None, description="The new memory's, 0..1.")


class EraseBody(Body):
    """The optional body of an erase (``DELETE``): it may repeat the token's names.

    ``dry_run: true`` is refused (422) rather than ignored: an erase that was meant
    as a preview must not erase.
    """

    dry_run: StrictBool = Field(
        default=False,
        description="Refused when true (422): an erase over HTTP has no preview; "
        "GET /v1/stats shows what it would remove.",
    )
