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


class Body(BaseModel):
    # Unknown fields are refused: a typo must not silently drop a filter.
    model_config = ConfigDict(extra="forbid")

    #: Optional, and must equal the token's: a request never names another user.
    user_id: str | None = None
    #: Optional, and must equal the token's agent (if it has one).
    agent_id: str | None = None


class MemoryIn(BaseModel):
    """One memory to store."""

    model_config = ConfigDict(extra="forbid")

    text: str
    memory_type: str = "dialogue"
    metadata: dict[str, Any] | None = None
    topic: str | None = None
    importance: StrictFloat | None = None
    event_time: datetime | None = None
    expires_at: datetime | None = None
    context: str | None = None
    user_id: str | None = None
    agent_id: str | None = None
    private: StrictBool = False


class AddBody(MemoryIn):
    """``POST /v1/memories``."""


class BatchBody(Body):
    """``POST /v1/memories/batch``: all stored, or none."""

    items: list[MemoryIn] = Field(min_length=1)


class SearchBody(Body):
    """``POST /v1/search``."""

    query: str
    top_k: StrictInt = 5
    memory_types: list[str] | None = None
    since: datetime | None = None
    until: datetime | None = None
    metadata_filter: dict[str, Any] | None = None
    as_of: datetime | None = None
    agent_ids: list[str] | None = None
    min_similarity: StrictFloat | None = None
    min_lexical: StrictFloat | None = None
    #: Also the memories this many links from the best hits (0..3).
    expand: StrictInt = 0


class ReplaceBody(Body):
    """``PUT /v1/memories/{id}``: update by replacement."""

    text: str
    metadata: dict[str, Any] | None = None
    importance: StrictFloat | None = None


class EraseBody(Body):
    """The optional body of an erase (``DELETE``): it may repeat the token's names.

    ``dry_run: true`` is refused (422) rather than ignored: an erase that was meant
    as a preview must not erase.
    """

    dry_run: StrictBool = False
