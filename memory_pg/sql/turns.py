"""Statements of a user's conversations: the newest current turn of each session.

A turn's conversation is ``metadata["session_id"]``; ``follows`` links chain its turns.
The lookups read the index of migration 0008 (``memory_pg_memories_user_session_idx``).
Pure builders (SQLAlchemy Core), no I/O.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Text, and_, literal, literal_column, or_, select
from sqlalchemy.sql.elements import ColumnElement

from memory_pg.sql.core import array_param, unnest_rows
from memory_pg.sql.memories import visible_to
from memory_pg.tables import memories, memory_links

m = memories
ml = memory_links


def last_turns(user_id: str, sessions: Sequence[str], exclude: Sequence[uuid.UUID]) -> Any:
    """The newest current memory of each conversation (``metadata.session_id``), not one of
    ``exclude``: the turn the first new turn of that conversation follows."""
    latest = _newest_turn(user_id, [m.c.id.not_in(list(exclude))], [])
    return select(_SESSIONS.c.session, latest.c.id).select_from(
        _SESSIONS.join(latest, literal(True))
    ), {"sessions": list(sessions)}


def session_tails(user_id: str, sessions: Sequence[str], agent_id: str | None) -> Any:
    """The newest current ``dialogue`` memory of each conversation that ``agent_id`` may
    see: its text and whether it is private (the context of the next turn, before it
    is written)."""
    turn = [m.c.memory_type == "dialogue", visible_to(agent_id)]
    follower = [_m2.c.memory_type == "dialogue", _m2.c.superseded_at.is_(None)]
    follower.append(
        _m2.c.private.is_(False)
        if agent_id is None
        else or_(_m2.c.private.is_(False), _m2.c.agent_id == agent_id)
    )
    latest = _newest_turn(user_id, turn, follower)
    return select(
        _SESSIONS.c.session, latest.c.text, latest.c.private, latest.c.event_time
    ).select_from(_SESSIONS.join(latest, literal(True))), {"sessions": list(sessions)}


_SESSIONS = unnest_rows(session=array_param("sessions", Text()))
#: A memory's conversation, written as the expression of the index on it (migration
#: 0008): a constant key, not a parameter, so the planner always matches the index.
SESSION_OF = m.c.metadata.op("->>", return_type=Text)(literal_column("'session_id'"))
_m2 = m.alias("follower")


def _newest_turn(
    user_id: str, conditions: list[ColumnElement[bool]], follower: list[ColumnElement[bool]]
) -> Any:
    """The newest memory of a session meeting ``conditions``: the end of its chain of
    ``follows`` links (one batch's turns share created_at), counting only followers
    that meet ``follower`` (conditions on the alias ``_m2``)."""
    followed = select(ml.c.src).where(
        ml.c.user_id == user_id, ml.c.dst == m.c.id, ml.c.relation == "follows"
    )
    if follower:
        followed = followed.join(
            _m2, and_(_m2.c.user_id == ml.c.user_id, _m2.c.id == ml.c.src)
        ).where(*follower)
    return (
        select(m.c.id, m.c.text, m.c.private, m.c.event_time)
        .where(
            m.c.user_id == user_id,
            m.c.superseded_at.is_(None),
            SESSION_OF == _SESSIONS.c.session,
            ~followed.exists(),
            *conditions,
        )
        .order_by(m.c.created_at.desc(), m.c.event_time.desc(), m.c.id.desc())
        .limit(1)
        .lateral("latest")
    )


__all__ = ["SESSION_OF", "last_turns", "session_tails"]
