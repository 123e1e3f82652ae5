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


def name_seen(ent: Any, agent_id: str | None) -> Any:
    """The name an entity (``ent``: the entities table or an alias) is shown by to
    ``agent_id``: its recorded name when a memory the agent may see (current or not)
    spells it so, else the first spelling such a memory gave (the oldest memory's).
    The recorded name is the first writer's: it may come from another agent's
    private memory. A correlated subquery of ``ent``."""
    spellings = (
        func.unnest(me.c.spellings)
        .table_valued("spelling")
        .render_derived(name="spellings")
        .lateral("spellings")
    )
    spelling = spellings.c.spelling
    given = (
        select(spelling)
        .select_from(me.join(m, same_user(m.c.id, me.c.memory_id)).join(spellings, literal(True)))
        .where(me.c.user_id == ent.c.user_id, me.c.entity_id == ent.c.id, visible_to(agent_id))
        .order_by((spelling == ent.c.name).desc(), m.c.created_at, m.c.id, spelling)
        .limit(1)
        .correlate(ent)
        .scalar_subquery()
    )
    # Mentions recorded before migration 0013 may have no spellings: the name, then.
    return func.coalesce(given, ent.c.name)


def aliases_seen(agent_id: str | None, shown: Any = None) -> Any:
    """An entity's other spellings than ``shown`` (its name by default), as the
    memories ``agent_id`` may see gave them (current or not), sorted: a correlated
    subquery of ``memory_pg_entities``.

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
            spelling != (e.c.name if shown is None else shown),
        )
        .correlate(e)
        .scalar_subquery()
    )


def _shown(agent_id: str | None) -> list[Any]:
    """An entity's columns as ``agent_id`` is shown them: id, name, kind, aliases,
    created_at (:func:`name_seen`, :func:`aliases_seen`)."""
    shown = name_seen(e, agent_id)
    aliases = aliases_seen(agent_id, shown)
    return [e.c.id, shown.label("name"), e.c.kind, aliases.label("aliases"), e.c.created_at]


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
        select(*_shown(agent_id))
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
    counted = (
        select(
            e.c.id,
            e.c.user_id,
            e.c.kind,
            e.c.created_at,
            func.count(m.c.id).label("mentions"),
            func.max(m.c.event_time).label("last_mentioned_at"),
        )
        .select_from(
            e.join(me, same_user(me.c.entity_id, e.c.id)).join(m, same_user(m.c.id, me.c.memory_id))
        )
        .where(e.c.user_id == user_id, visible_to(agent_id), *current_conditions(None))
        .group_by(e.c.user_id, e.c.id, e.c.kind, e.c.created_at)
        .order_by(func.count(m.c.id).desc(), e.c.created_at, e.c.id)
        .limit(limit)
    )
    if kinds:
        counted = counted.where(e.c.kind.in_(list(kinds)))
    top = counted.subquery("top")
    columns = _shown(agent_id)
    return (
        select(*columns, top.c.mentions, top.c.last_mentioned_at)
        .select_from(top.join(e, same_user(e.c.id, top.c.id)))
        .order_by(top.c.mentions.desc(), columns[1], e.c.id)
    )


def co_mentioned(
    user_id: str, entity_id: uuid.UUID, agent_id: str | None, limit: int
) -> Select[Any]:
    """Entities named in the same current memories as ``entity_id``, most shared first."""
    me1, me2, e2 = me.alias("me1"), me.alias("me2"), e.alias("e2")
    counted = (
        select(e2.c.id, e2.c.user_id, func.count().label("shared"))
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
        .group_by(e2.c.user_id, e2.c.id)
        .order_by(func.count().desc(), e2.c.id)
        .limit(limit)
    ).subquery("top")
    shown = name_seen(e, agent_id)
    return (
        select(e.c.id, shown.label("name"), e.c.kind, counted.c.shared)
        .select_from(counted.join(e, same_user(e.c.id, counted.c.id)))
        .order_by(counted.c.shared.desc(), shown, e.c.id)
    )


__all__ = [
    "aliases_seen",
    "co_mentioned",
    "entity_memories",
    "find_entity",
    "list_entities",
    "name_seen",
]
