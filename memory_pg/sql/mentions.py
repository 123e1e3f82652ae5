"""A search's entity part: whether a candidate names an entity the query names (a
pure builder, no I/O; see :func:`memory_pg.scoring.entity_boost`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Float, any_, case, exists, func, literal, or_, select

from memory_pg.config import RankingSettings
from memory_pg.tables import entities, memory_entities

e = entities
me = memory_entities


def names_entity(
    memory_id: ColumnElement[Any],
    text: ColumnElement[Any],
    user_id: ColumnElement[Any],
    keys: ColumnElement[Any],
    pattern: ColumnElement[Any],
) -> ColumnElement[bool]:
    """Whether a memory names one of the entities a search's query names: its text
    holds one of their names as the query wrote it (``pattern``:
    :func:`memory_pg.text.query.name_pattern`), or it mentions one of the user's
    entities with such a key (an LLM's name for it that the text lacks, "王伟" for
    "小王 joined").

    The text decides for memories written before mentions were kept (migration
    0007). The entities are looked up once per statement (an uncorrelated
    ``ARRAY(...)``, by the ``(user_id, key)`` index); each memory then by its
    mentions' primary key. The memory is one the search may already show: the
    answer says nothing of others.
    """
    named = func.array(
        select(e.c.id).where(e.c.user_id == user_id, e.c.key == any_(keys)).scalar_subquery()
    )
    mentioned = exists(
        select(literal(1)).where(
            me.c.user_id == user_id, me.c.memory_id == memory_id, me.c.entity_id == any_(named)
        )
    )
    return or_(text.op("~", is_comparison=True)(pattern), mentioned)


def entity_factor(
    named: ColumnElement[Any], rs: RankingSettings
) -> tuple[ColumnElement[Any], ColumnElement[Any]]:
    """``(factor, entity_match)``: :func:`memory_pg.scoring.entity_boost` in SQL.

    ``entity_match`` is 1.0 for a candidate that names one of the query's entities
    and 0.0 for the rest. The factor is 1 for those and ``1 / (1 + entity_weight)``
    for the rest, but only when some candidate of the search names one: otherwise
    every score stays as it was (a capitalised word of the query that names nothing
    lowers nothing), and ``entity_match`` is NULL, so a result says whether the
    factor was applied.
    """
    applies = func.bool_or(named).over()
    match = case((named, literal(1.0, Float)), else_=literal(0.0, Float))
    weight = literal(rs.entity_weight, Float)
    factor = case(((applies, (1.0 + weight * match) / (1.0 + weight))), else_=literal(1.0, Float))
    return factor, case((applies, match))


__all__ = ["entity_factor", "names_entity"]
