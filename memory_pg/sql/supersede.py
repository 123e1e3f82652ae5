"""Statements of supersession on write: candidates, replaced and repeated rows, history events."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np
from sqlalchemy import (
    Float,
    Insert,
    Text,
    TextClause,
    Update,
    Uuid,
    bindparam,
    func,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import JSONB

from memory_pg.sql import named
from memory_pg.sql.core import Bound, array_param, unnest_rows, vector_array
from memory_pg.sql.memories import log_events
from memory_pg.tables import memories

logger = logging.getLogger(__name__)

m = memories


#: A statement of change also meets up to this many memories sharing its words ...
CHANGE_CANDIDATES = 20
#: ... found among this many of the user's most recent current memories of its type
#: (a heavy user's memories sharing a word of it are counted in thousands).
CHANGE_SCAN_MAX = 2000


def candidates_statement(
    user_id: str,
    vectors: Sequence[np.ndarray[Any, Any]],
    memory_types: Sequence[str],
    topics: Sequence[str | None],
    k: int,
    word_queries: Sequence[tuple[str, str] | None] | None = None,
    privates: Sequence[bool] | None = None,
    agent_id: str | None = None,
) -> TextClause:
    """Current memories near each new one (and those sharing its topic), in one statement,
    each in the new memory's scope (shared, or private to ``agent_id``).

    ``word_queries`` (one per new memory, or None) are the English and Chinese
    tsquery texts of a statement of change (:func:`memory_pg.text.changes.word_queries`): its
    candidates also include up to :data:`CHANGE_CANDIDATES` memories sharing its words.
    """
    queries_ = list(word_queries) if word_queries is not None else [None] * len(vectors)
    return text(named("insert_candidates")).bindparams(
        idx=list(range(len(vectors))),
        vecs=vector_array(vectors),
        types=list(memory_types),
        topics=list(topics),
        tq_en=[q[0] if q else None for q in queries_],
        tq_zh=[q[1] if q else None for q in queries_],
        privates=list(privates) if privates is not None else [False] * len(vectors),
        user_id=user_id,
        agent_id=agent_id,
        k=k,
        k_words=CHANGE_CANDIDATES,
        words_scan=CHANGE_SCAN_MAX,
    )


def supersede_many(user_id: str, replaced: Mapping[uuid.UUID, uuid.UUID | None]) -> Bound:
    """Mark current memories as replaced (``{old id: new id}``, None: by nothing);
    returns the ids marked.

    One statement for a whole batch; a row already replaced is left as it was.
    """
    values = {"of_user": user_id, "old_ids": list(replaced), "new_ids": list(replaced.values())}
    return Bound(_supersede_many(), values)


def refresh_merged(user_id: str, importance: Mapping[uuid.UUID, float]) -> Bound:
    """Repeated memories (``{id: importance of the repeat}``): refresh ``updated_at`` and
    keep the higher importance, in one statement. Returns the ids refreshed: those
    still there and current."""
    values = {"of_user": user_id, "ids": list(importance), "importances": list(importance.values())}
    return Bound(_refresh_merged(), values)


def history_events(user_id: str, events: Iterable[tuple[uuid.UUID, str, dict[str, Any]]]) -> Bound:
    """Append lifecycle events ``(memory_id, event, detail)``; details never hold user text.

    ``conn.execute(*history_events(...))``: the events travel as arrays.
    """
    listed = list(events)
    values = {
        "of_user": user_id,
        "memory_ids": [memory_id for memory_id, _, _ in listed],
        "events": [event for _, event, _ in listed],
        "details": [detail for _, _, detail in listed],
    }
    return Bound(_history_events(), values)


# Built once: a statement reused as one object is keyed and compiled once.


@cache
def _supersede_many() -> Update:
    pairs = unnest_rows(
        old_id=array_param("old_ids", Uuid()), new_id=array_param("new_ids", Uuid())
    )
    return (
        update(m)
        .where(
            m.c.user_id == bindparam("of_user", type_=Text()),
            m.c.id == pairs.c.old_id,
            m.c.superseded_at.is_(None),
        )
        .values(superseded_at=func.now(), superseded_by=pairs.c.new_id)
        .returning(m.c.id)
    )


@cache
def _refresh_merged() -> Update:
    given = unnest_rows(
        id=array_param("ids", Uuid()), importance=array_param("importances", Float())
    )
    return (
        update(m)
        .where(
            m.c.user_id == bindparam("of_user", type_=Text()),
            m.c.id == given.c.id,
            # Still current: a repeat of a replaced memory is a new memory again.
            m.c.superseded_at.is_(None),
        )
        .values(updated_at=func.now(), importance=func.greatest(m.c.importance, given.c.importance))
        .returning(m.c.id)
    )


@cache
def _history_events() -> Insert:
    given = unnest_rows(
        memory_id=array_param("memory_ids", Uuid()),
        event=array_param("events", Text()),
        detail=array_param("details", JSONB()),
    )
    user_id = bindparam("of_user", type_=Text())
    return log_events(select(user_id, given.c.memory_id, given.c.event, given.c.detail))
