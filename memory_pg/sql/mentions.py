"""A search's entity part: whether a candidate names an entity the query names (a
pure builder, no I/O; see :func:`memory_pg.scoring.entity_boost`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, any_, exists, func, literal, select

from memory_pg.tables import entities, memory_entities

e = entities
me = memory_entities


def names_entity(
    memory_id: ColumnElement[Any], user_id: ColumnElement[Any], keys: ColumnElement[Any]
) -> ColumnElement[bool]:
    """Whether the memory ``memory_id`` names one of the user's entities whose key is
    in ``keys`` (the entities a search's query names).

    The entities are looked up once per statement (an uncorrelated ``ARRAY(...)``,
    by the ``(user_id, key)`` index); each memory then by its mentions' primary key.
    The memory is one the search may already show: the answer says nothing of others.
    """
    named = func.array(
        select(e.c.id).where(e.c.user_id == user_id, e.c.key == any_(keys)).scalar_subquery()
    )
    return exists(
        select(literal(1)).where(
            me.c.user_id == user_id, me.c.memory_id == memory_id, me.c.entity_id == any_(named)
        )
    )


__all__ = ["names_entity"]
