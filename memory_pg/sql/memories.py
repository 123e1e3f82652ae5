"""Statements on memory rows: insert, read, list, erase, history, stats, export (pure, no I/O).

Every statement on user data filters on ``user_id`` first: with row-level security
on, it is also what the policy checks.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

import numpy as np
from sqlalchemy import (
    ColumnElement,
    Delete,
    Executable,
    Insert,
    Select,
    Text,
    Update,
    and_,
    bindparam,
    cast,
    delete,
    func,
    literal,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, insert
from sqlalchemy.sql.elements import BindParameter

from memory_pg.sql.core import ENGLISH, SIMPLE, Bound, array_param, unnest_rows, vector_array
from memory_pg.tables import dialogue_buffer, history, memories

m = memories


#: Columns a caller sees for a memory (never the vector or the tsvector).
MEMORY_COLUMNS = (
    m.c.id,
    m.c.user_id,
    m.c.memory_type,
    m.c.text,
    m.c.metadata,
    m.c.topic,
    m.c.importance,
    m.c.created_at,
    m.c.updated_at,
    m.c.event_time,
    m.c.last_accessed_at,
    m.c.access_count,
    m.c.valid_from,
    m.c.superseded_at,
    m.c.superseded_by,
    m.c.expires_at,
    m.c.embedding_model,
    m.c.context,
    m.c.agent_id,
    m.c.private,
)


@dataclass(frozen=True)
class NewMemory:
    """One validated memory ready to insert."""

    id: uuid.UUID
    user_id: str
    memory_type: str
    text: str
    embedding: np.ndarray[Any, Any]
    embedding_model: str
    content_hash: str
    metadata: dict[str, Any]
    topic: str | None
    importance: float
    event_time: datetime | None
    expires_at: datetime | None = None
    context: str | None = None
    #: The agent that wrote it; ``private``: seen by that agent only.
    agent_id: str | None = None
    private: bool = False
    #: Columns an import restores as exported (id, timestamps, validity, use).
    overrides: dict[str, Any] = field(default_factory=dict)
    #: Entities an LLM found in it (:class:`memory_pg.entities.Entity`); None: the rules'.
    entities: tuple[Any, ...] | None = None
    #: Every entity it names, found before the write's transaction (the LLM's and the
    #: rules', or an import's as exported); None: found in the transaction.
    found: tuple[Any, ...] | None = None
    #: Its words as the full-text index reads them, in :data:`TSV_INPUTS` order
    #: (:func:`memory_pg._segment.index_words`), and the attributes it states
    #: (:func:`memory_pg.text.attributes.stated`): analysed before the write.
    words: tuple[str, str, str, str, str] = field(kw_only=True)
    attributes: tuple[str, ...] = field(kw_only=True)


_OVERRIDE_DEFAULTS: dict[str, Any] = {
    "created_at": func.now(),
    "updated_at": func.now(),
    "valid_from": func.now(),
    "last_accessed_at": None,
    "access_count": 0,
    "superseded_at": None,
    "superseded_by": None,
}

#: Columns an insert stores as each row gives them (a ``NewMemory`` field of the same
#: name). A new column of that kind is one line here.
_PLAIN_COLUMNS = (
    "id",
    "user_id",
    "memory_type",
    "text",
    "embedding_model",
    "content_hash",
    "metadata",
    "topic",
    "importance",
    "expires_at",
    "context",
    "agent_id",
    "private",
)


TSV_INPUTS = ("tsv_words", "tsv_cjk", "tsv_alike", "tsv_context_words", "tsv_context_cjk")


def attributes_text(attributes: Sequence[str]) -> str:
    """The attributes a text states (:func:`memory_pg.text.attributes.stated`), joined
    by spaces: one text a row, which the insert splits into the ``attributes`` array
    (an array of arrays of unequal lengths cannot travel as one parameter)."""
    return " ".join(attributes)


def attributes_expr(joined: ColumnElement[Any]) -> ColumnElement[Any]:
    """``attributes`` from :func:`attributes_text`'s form; none stated is ``{}``."""
    return func.string_to_array(joined, literal(" "))


def tsvector_words(row: NewMemory) -> dict[str, str]:
    """The words of a memory that :func:`tsvector_expr` indexes, by :data:`TSV_INPUTS` name."""
    return dict(zip(TSV_INPUTS, row.words, strict=True))


def tsvector_expr(words: Mapping[str, ColumnElement[Any]]) -> ColumnElement[Any]:
    """``to_tsvector('english', words) || to_tsvector('simple', chinese words)``, what
    the Chinese words are also found by (sounds, characters) with weight ``B`` (not
    counted in a memory's length, which is its ``D`` words), and the context's words
    after them with weight ``C`` (the memory's own keep ``D``).

    ``words`` maps each name of :data:`TSV_INPUTS` to an SQL expression; an empty
    context adds nothing.
    """
    own = (
        func.to_tsvector(ENGLISH, words["tsv_words"])
        .op("||")(func.to_tsvector(SIMPLE, words["tsv_cjk"]))
        .op("||")(
            func.setweight(
                func.to_tsvector(SIMPLE, words["tsv_alike"]), literal_column("'B'::\"char\"")
            )
        )
    )
    framed = func.to_tsvector(ENGLISH, words["tsv_context_words"]).op("||")(
        func.to_tsvector(SIMPLE, words["tsv_context_cjk"])
    )
    return own.op("||")(func.setweight(framed, literal_column("'C'::\"char\"")))


#: The columns of a lifecycle event, in the order :func:`log_events` takes them.
HISTORY_COLUMNS = ("user_id", "memory_id", "event", "detail")


#: The key of a history event's ``detail`` that names the agent whose private memory
#: it was, once the memory is gone (a ``forget``): only that agent is shown the event.
PRIVATE_TO = "private_to"


def log_events(events: Select[Any]) -> Insert:
    """Append the lifecycle events that ``events`` selects, one per row, as
    :data:`HISTORY_COLUMNS` (user_id, memory_id, event, detail). Details never
    hold user text."""
    return insert(history).from_select(list(HISTORY_COLUMNS), events)


def insert_memories(rows: Sequence[NewMemory], event: str = "added") -> Bound:
    """Insert new memories and their ``added`` history in one statement.

    An exact duplicate of a current memory (same user, type and content hash) is
    skipped by ``ON CONFLICT``; the statement returns the ids actually inserted.
    Each column travels as one array (``unnest``), so the statement is the same for
    any number of rows: built and compiled once, prepared once by the server.
    """
    words = [tsvector_words(r) for r in rows]
    params: dict[str, Any] = {c: [getattr(r, c) for r in rows] for c in _PLAIN_COLUMNS}
    params["embedding"] = vector_array([r.embedding for r in rows])
    params["event_time"] = [r.event_time for r in rows]
    for key in TSV_INPUTS:
        params[key] = [w[key] for w in words]
    params["attributes_text"] = [attributes_text(r.attributes) for r in rows]
    # An import restores some columns as exported; NULL elsewhere, so the default applies.
    for key in _OVERRIDE_DEFAULTS:
        params[key] = [r.overrides.get(key) for r in rows]
    params["event"] = event
    return Bound(_insert_statement(), params)


@cache
def _insert_statement() -> Insert:
    names = (*_PLAIN_COLUMNS, "event_time", *TSV_INPUTS, "attributes_text", *_OVERRIDE_DEFAULTS)
    arrays = {name: _array(name) for name in names}
    # pgvector's text form, made by vector_array(): the Vector type's own is much slower.
    arrays["embedding"] = cast(bindparam("embedding", type_=Text()), ARRAY(m.c.embedding.type))
    u = unnest_rows(**arrays)
    values: dict[str, Any] = {c: u.c[c] for c in _PLAIN_COLUMNS}
    values["embedding"] = u.c.embedding
    values["search_tsv"] = tsvector_expr({key: u.c[key] for key in TSV_INPUTS})
    values["attributes"] = attributes_expr(u.c.attributes_text)
    values["event_time"] = func.coalesce(u.c.event_time, func.now())
    for key, default in _OVERRIDE_DEFAULTS.items():
        values[key] = u.c[key] if default is None else func.coalesce(u.c[key], default)
    ins = (
        insert(m)
        .from_select(list(values), select(*values.values()))
        # Skips an exact duplicate of a current memory (the unique partial index on
        # user, type and content hash) and, on import, an id that is already there.
        .on_conflict_do_nothing()
        .returning(m.c.user_id, m.c.id)
        .cte("inserted")
    )
    event = bindparam("event", type_=Text())
    return log_events(select(ins.c.user_id, ins.c.id, event, literal({}, JSONB))).returning(
        history.c.memory_id
    )


def _array(column: str) -> ColumnElement[Any]:
    """The parameter of one column's values, as an array of the column's type."""
    return array_param(column, m.c[column].type if column in m.c else Text())


def find_current_by_hash(
    user_id: str,
    pairs: Sequence[tuple[str, str]],
    *,
    private: bool = False,
    agent_id: str | None = None,
) -> Select[Any]:
    """Current memories of a user matching (memory_type, content_hash) pairs, in one
    scope: the shared memories, or (``private``) the private ones of ``agent_id``."""
    conditions = [and_(m.c.memory_type == t, m.c.content_hash == h) for t, h in pairs]
    scope = m.c.private.is_(False) if not private else and_(m.c.private, m.c.agent_id == agent_id)
    return select(m.c.id, m.c.memory_type, m.c.content_hash).where(
        m.c.user_id == user_id, m.c.superseded_at.is_(None), scope, or_(*conditions)
    )


def retire_expired(
    user_id: str,
    pairs: Sequence[tuple[str, str]],
    *,
    private: bool = False,
    agent_id: str | None = None,
) -> Update:
    """Mark the user's memories matching (memory_type, content_hash) pairs, in one scope,
    whose expiry has passed as superseded at their expiry; returns their ids.

    Past ``expires_at`` a memory is no longer current, but the unique index of current
    texts (``superseded_at IS NULL``, the expiry cannot be in an index's predicate)
    still holds it until ``forget`` removes it: the same text written again would
    resolve to the expired row and never be current. As of any time, the row reads
    as before (it stopped being current at its expiry either way).
    """
    conditions = [and_(m.c.memory_type == t, m.c.content_hash == h) for t, h in pairs]
    scope = m.c.private.is_(False) if not private else and_(m.c.private, m.c.agent_id == agent_id)
    return (
        update(m)
        .where(
            m.c.user_id == user_id,
            m.c.superseded_at.is_(None),
            m.c.expires_at <= func.now(),
            scope,
            or_(*conditions),
        )
        .values(superseded_at=m.c.expires_at)
        .returning(m.c.id)
    )


def visible_to(agent_id: str | BindParameter[Any] | None) -> ColumnElement[bool]:
    """What an agent sees of its user's memories: the shared ones and its own private
    ones. With no agent, the shared ones only."""
    if agent_id is None:
        return m.c.private.is_(False)
    return or_(m.c.private.is_(False), m.c.agent_id == agent_id)


def owned_by(agent_id: str | None) -> list[ColumnElement[bool]]:
    """By-id access (get, replace, delete, history): an agent may not reach another
    agent's private memory; with no agent, the user reaches all of theirs."""
    return [] if agent_id is None else [visible_to(agent_id)]


def get_memory(user_id: str, memory_id: uuid.UUID, agent_id: str | None = None) -> Select[Any]:
    """One memory of a user, current or not (and, with an agent, one it may see)."""
    return select(*MEMORY_COLUMNS).where(
        m.c.user_id == user_id, m.c.id == memory_id, *owned_by(agent_id)
    )


def list_memories(
    user_id: str,
    *,
    memory_types: Sequence[str] | None = None,
    include_inactive: bool = False,
    limit: int | None = None,
    agent_id: str | None = None,
    agent_ids: Sequence[str] | None = None,
) -> Select[Any]:
    """Memories of a user that ``agent_id`` sees (:func:`visible_to`), newest first."""
    stmt = select(*MEMORY_COLUMNS).where(m.c.user_id == user_id, visible_to(agent_id))
    if agent_ids:
        stmt = stmt.where(m.c.agent_id.in_(list(agent_ids)))
    if memory_types:
        stmt = stmt.where(m.c.memory_type.in_(list(memory_types)))
    if not include_inactive:
        stmt = stmt.where(*current_conditions(None))
    stmt = stmt.order_by(m.c.created_at.desc(), m.c.id)
    if limit is not None:
        stmt = stmt.limit(limit)
    return stmt


def current_conditions(as_of: datetime | BindParameter[Any] | None) -> list[ColumnElement[bool]]:
    """What "current" means: not superseded, not expired; or, ``as_of``, what was then."""
    if as_of is None:
        return [
            m.c.superseded_at.is_(None),
            or_(m.c.expires_at.is_(None), m.c.expires_at > func.now()),
        ]
    return [
        m.c.valid_from <= as_of,
        or_(m.c.superseded_at.is_(None), m.c.superseded_at > as_of),
        or_(m.c.expires_at.is_(None), m.c.expires_at > as_of),
    ]


#: The largest ``access_count`` the integer column holds.
MAX_ACCESS_COUNT = 2**31 - 1


def delete_memory(user_id: str, memory_id: uuid.UUID, agent_id: str | None = None) -> Executable:
    """Erase one memory for good (with an agent: one it may see); returns its id, text,
    metadata, writer, privacy and write time (the turns it framed lose it as their
    context too)."""
    return (
        delete(m)
        .where(m.c.user_id == user_id, m.c.id == memory_id, *owned_by(agent_id))
        .returning(m.c.id, m.c.text, m.c.metadata, m.c.agent_id, m.c.private, m.c.created_at)
    )


def delete_history_of(user_id: str, memory_id: uuid.UUID) -> Delete:
    """Erase the history of one memory (its text may be quoted in ``detail``)."""
    return delete(history).where(history.c.user_id == user_id, history.c.memory_id == memory_id)


def clear_user(user_id: str) -> list[Delete]:
    """Erase everything of a user: memories, buffer and history."""
    return [
        delete(m).where(m.c.user_id == user_id),
        delete(dialogue_buffer).where(dialogue_buffer.c.user_id == user_id),
        delete(history).where(history.c.user_id == user_id),
    ]


def history_of(
    user_id: str,
    memory_id: uuid.UUID | None = None,
    agent_id: str | None = None,
    latest: int | None = None,
) -> Select[Any]:
    """Lifecycle events of a user (or of one memory), oldest first; with an agent,
    none of another agent's private memories. With ``latest``, only that many of the
    newest, newest first (the caller turns them round)."""
    stmt = select(history.c.memory_id, history.c.event, history.c.at, history.c.detail).where(
        history.c.user_id == user_id
    )
    if agent_id is not None:
        others = select(m.c.id).where(m.c.user_id == user_id, m.c.private, m.c.agent_id != agent_id)
        owner = history.c.detail[PRIVATE_TO].astext
        stmt = stmt.where(
            history.c.memory_id.not_in(others),
            # A forgotten memory's events: another agent's private one is not shown.
            or_(owner.is_(None), owner == agent_id),
        )
    if memory_id is not None:
        stmt = stmt.where(history.c.memory_id == memory_id)
    if latest is not None:
        return stmt.order_by(history.c.at.desc(), history.c.id.desc()).limit(latest)
    return stmt.order_by(history.c.at, history.c.id)


def stats(user_id: str | None, agent_id: str | None = None) -> Select[Any]:
    """Counts per memory type (current and superseded), for one user or all; with an
    agent, of the memories it may see (not another agent's private ones)."""
    stmt = select(
        m.c.memory_type,
        func.count().filter(m.c.superseded_at.is_(None)).label("current"),
        func.count().filter(m.c.superseded_at.is_not(None)).label("superseded"),
        func.count(func.distinct(m.c.user_id)).label("users"),
    ).group_by(m.c.memory_type)
    if user_id is not None:
        stmt = stmt.where(m.c.user_id == user_id, *owned_by(agent_id))
    return stmt.order_by(m.c.memory_type)


def export_rows(user_id: str, include_inactive: bool) -> Select[Any]:
    """Every column an export carries, vector included, oldest first."""
    stmt = select(*MEMORY_COLUMNS, m.c.embedding).where(m.c.user_id == user_id)
    if not include_inactive:
        stmt = stmt.where(*current_conditions(None))
    return stmt.order_by(m.c.created_at, m.c.id)


def users_with_current(memory_types: Sequence[str], at_least: int) -> Select[Any]:
    """Users with at least ``at_least`` current memories of ``memory_types`` (a job's list)."""
    return (
        select(m.c.user_id)
        .where(m.c.memory_type.in_(list(memory_types)), m.c.superseded_at.is_(None))
        .group_by(m.c.user_id)
        .having(func.count() >= at_least)
        .order_by(m.c.user_id)
    )


def fragments(user_id: str, memory_type: str, limit: int) -> Select[Any]:
    """A user's current shared memories of one type, oldest first, vectors included:
    what consolidation clusters (an agent's private notes never go into a summary),
    with what a summary carries over (topic, expiry, metadata)."""
    return (
        select(
            m.c.id,
            m.c.text,
            m.c.embedding,
            m.c.importance,
            m.c.event_time,
            m.c.metadata,
            m.c.topic,
            m.c.expires_at,
        )
        .where(
            m.c.user_id == user_id,
            m.c.memory_type == memory_type,
            *current_conditions(None),
            visible_to(None),
        )
        .order_by(m.c.created_at, m.c.id)
        .limit(limit)
    )
