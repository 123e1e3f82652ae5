"""What the plans share: a memory id, a write's inputs, a row as the dict callers get
(no I/O, no statement)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memory_pg.embedding import embedding_text
from memory_pg.entities import Entity
from memory_pg.errors import InvalidArgument


def parse_memory_id(memory_id: object) -> uuid.UUID:
    """A memory id as a UUID, or :class:`InvalidArgument`."""
    if isinstance(memory_id, uuid.UUID):
        return memory_id
    if isinstance(memory_id, str):
        try:
            return uuid.UUID(memory_id)
        except ValueError:
            pass
    raise InvalidArgument(f"not a memory id: {memory_id!r}")


@dataclass(frozen=True)
class MemoryInput:
    """One memory to write, before validation. ``add_memories`` also takes plain dicts."""

    text: str
    memory_type: str = "dialogue"
    metadata: Mapping[str, Any] | None = None
    topic: str | None = None
    importance: float | None = None
    event_time: datetime | None = None
    expires_at: datetime | None = None
    #: Text that frames the memory, such as the turn a dialogue turn answers: embedded
    #: and indexed with it so a search finds the memory through it; not part of it.
    context: str | None = None
    #: Seen only by the agent that writes it (the write's ``agent_id``), not shared
    #: with the user's other agents.
    private: bool = False
    #: Entities it names, as an LLM found them (:class:`memory_pg.entities.Entity`, or
    #: dicts with ``name``, ``kind``, ``aliases``); None: found by the rules on write.
    entities: Sequence[Any] | None = None


@dataclass
class Prepared:
    """Validated inputs of a write, waiting for their vectors."""

    user_id: str
    items: list[MemoryInput]
    texts: list[str]
    metadata: list[dict[str, Any]]
    topics: list[str | None]
    importances: list[float]
    contexts: list[str | None] = field(default_factory=list)
    overrides: list[dict[str, Any]] = field(default_factory=list)
    #: The agent that writes these memories (None: the user's own write).
    agent_id: str | None = None
    entities: list[tuple[Entity, ...] | None] = field(default_factory=list)

    @property
    def embed_texts(self) -> list[str]:
        """What the model embeds for each memory: its context (if any), then its text."""
        return [
            embedding_text(text, ctx) for text, ctx in zip(self.texts, self.contexts, strict=True)
        ]


def memory_dict(row: Mapping[str, Any]) -> dict[str, Any]:
    """A result row as the dict callers get (ids as str; the seed's keys first)."""
    out = dict(row)
    for key in ("id", "superseded_by", "memory_id"):
        if out.get(key) is not None:
            out[key] = str(out[key])
    if "distance" in out and out["distance"] is not None:
        out["distance"] = float(out["distance"])
        out.setdefault("similarity", 1.0 - out["distance"])
    for key in SCORE_PARTS:
        if out.get(key) is not None:
            out[key] = float(out[key])
    return out


#: Score parts a search result carries beside ``score``, so a user can see why it ranked.
SCORE_PARTS = (
    "score",
    "similarity",
    "lexical",
    "rrf",
    "relevance",
    "recency",
    "importance",
    "reinforcement",
    "readability",
    "answer_score",
    "time_match",
    "entity_match",
    "attribute_match",
)
