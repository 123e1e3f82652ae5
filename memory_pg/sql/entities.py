"""Statements that read a user's entities as one agent sees them (pure builders, no I/O).

An entity is shown to an agent only through memories it may see
(:func:`memory_pg.sql.memories.visible_to`): one named only in another agent's
private memories is not found, listed, counted, nor named beside another.
The statements that write entities and walk links are in :mod:`memory_pg.sql.relations`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, Text, any_, cast, exists, func, literal, or_, select
from sqlalchemy.dialects.postgresql import ARRAY

from memory_pg.sql.memories import MEMORY_COLUMNS, current_conditions, visible_to
from memory_pg.sql.relations import same_user
from memory_pg.tables import entities, memories, memory_entities

m = memories
e = entities
me = memory_entities


def aliases_seen(agent_id: str | None) -> Any:
    """An entity's other spellings, as the memories ``agent_id`` may see gave them
    (current or not), sorted: a correlated subquery of ``memory_pg_entities``.

    Each mention keeps its own memory's spellings (migration 0013): an alias that
    only another agent's private memory gave is not shown.
    """
    spelling = func.unnest(me.c.spellings).column_valued("spelling")
    return (
        select(func.coalesce(func.array_agg(spelling.distinct()), cast([], ARRAY(Text))))
        .select_from(me.join(m, same_user(m.c.id, me.c.memory_id)))
        .where(
            me.c.user_id == e.c.user_id,
            me.c.entity_id == e.c.id,
            visible_to(agent_id),
            spelling != e.c.name,
        )
        .correlate(e)
        .scalar_subquery()
    )


def find_entity(user_id: str, key: str, name: str, agent_id: str | None) -> Select[Any]:
    """The entity whose key is ``key``, or that a memory gave ``name`` as a spelling,
    of those that a memory ``agent_id`` may see names so (current or not)."""
    seen = exists(
        select(literal(1))
        .select_from(me.join(m, same_user(m.c.id, me.c.memory_id)))
        .where(
            me.c.user_id == e.c.user_id,
            me.c.entity_id == e.c.id,
            visible_to(agent_id),
            or_(e.c.key == key, literal(name, Text) == any_(me.c.spellings)),
        )
    )
    return (
        select(e.c.id, e.c.name, e.c.kind, aliases_seen(agent_id).label("aliases"), e.c.created_at)
        .where(
            e.c.user_id == user_id,
            # Every spelling any memory gave is among the entity's aliases: the
            # (user_id, key) index or one pass over the user's entities picks the
            # candidates, and ``seen`` checks them against the visible memories.
            or_(e.c.key == key, literal(name, Text) == any_(e.c.aliases)),
            seen,
        )
        .order_by((e.c.key == key).desc(), e.c.created_at)
        .limit(1)
    )


def entity_memories(
    user_id: str,
    entity_id: uuid.UUID,
    agent_id: str | None,
    include_inactive: bool,
    limit: int,
) -> Select[Any]:
    """Memories naming an entity, newest first (by event time)."""
    stmt = (
        select(*MEMORY_COLUMNS)
        .select_from(me.join(m, same_user(m.c.id, me.c.memory_id)))
        .where(me.c.user_id == user_id, me.c.entity_id == entity_id, visible_to(agent_id))
    )
    if not include_inactive:
        stmt = stmt.where(*current_conditions(None))
    return stmt.order_by(m.c.event_time.desc(), m.c.created_at.desc(), m.c.id).limit(limit)


def list_entities(
    user_id: str, agent_id: str | None, kinds: Sequence[str] | None, limit: int
) -> Select[Any]:
    """A user's entities with how many current memories (that ``agent_id`` sees) name
    each, most named first."""
    stmt = (
        select(
            e.c.id,
            e.c.name,
            e.c.kind,
            aliases_seen(agent_id).label("aliases"),
            e.c.created_at,
            func.count(m.c.id).label("mentions"),
            func.max(m.c.event_time).label("last_mentioned_at"),
        )
        .select_from(
            e.join(me, same_user(me.c.entity_id, e.c.id)).join(m, same_user(m.c.id, me.c.memory_id))
        )
        .where(e.c.user_id == user_id, visible_to(agent_id), *current_conditions(None))
        .group_by(e.c.user_id, e.c.id, e.c.name, e.c.kind, e.c.created_at)
        .order_by(func.count(m.c.id).desc(), e.c.name)
        .limit(limit)
    )
    if kinds:
        stmt = stmt.where(e.c.kind.in_(list(kinds)))
    return stmt


def co_mentioned(
    user_id: str, entity_id: uuid.UUID, agent_id: str | None, limit: int
) -> Select[Any]:
    """Entities named in the same current memories as ``entity_id``, most shared first."""
    me1, me2, e2 = me.alias("me1"), me.alias("me2"), e.alias("e2")
    return (
        select(e2.c.id, e2.c.name, e2.c.kind, func.count().label("shared"))
        .select_from(
            me1.join(m, same_user(m.c.id, me1.c.memory_id))
            .join(me2, same_user(me2.c.memory_id, me1.c.memory_id))
            .join(e2, same_user(e2.c.id, me2.c.entity_id))
        )
        .where(
            me1.c.user_id == user_id,
            me1.c.entity_id == entity_id,
            me2.c.entity_id != entity_id,
            visible_to(agent_id),
            *current_conditions(None),
        )
        .group_by(e2.c.id, e2.c.name, e2.c.kind)
        .order_by(func.count().desc(), e2.c.name)
        .limit(limit)
    )


__all__ = ["aliases_seen", "co_mentioned", "entity_memories", "find_entity", "list_entities"]
