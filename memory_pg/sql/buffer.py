"""Statements of the dialogue buffer: append, read and consume turns (pure, no I/O)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Insert, Select, Update, func, insert, select, update

from memory_pg.tables import dialogue_buffer

b = dialogue_buffer

#: Columns a caller sees for a buffered turn.
TURN_COLUMNS = (b.c.id, b.c.session_id, b.c.role, b.c.content, b.c.created_at)


def insert_turn(user_id: str, session_id: str | None, role: str, content: str) -> Insert:
    """Buffer one turn; returns its id."""
    return (
        insert(b)
        .values(user_id=user_id, session_id=session_id, role=role, content=content)
        .returning(b.c.id)
    )


def select_pending(user_id: str, session_id: str | None, limit: int | None) -> Select[Any]:
    """Unconsumed turns of a user (optionally one session), oldest first."""
    stmt = select(*TURN_COLUMNS).where(b.c.user_id == user_id, b.c.consumed_at.is_(None))
    if session_id is not None:
        stmt = stmt.where(b.c.session_id == session_id)
    stmt = stmt.order_by(b.c.id)
    if limit is not None:
        stmt = stmt.limit(limit)
    return stmt


def lock_unconsumed(user_id: str, turn_ids: Sequence[int]) -> Select[Any]:
    """Lock the given turns that are still unconsumed.

    A second worker committing the same turns waits here; when the first commits,
    PostgreSQL re-checks ``consumed_at IS NULL`` on the new row version and the
    second worker sees the turns gone.
    """
    return (
        select(b.c.id)
        .where(b.c.user_id == user_id, b.c.id.in_(list(turn_ids)), b.c.consumed_at.is_(None))
        .order_by(b.c.id)
        .with_for_update()
    )


def consume_turns(user_id: str, turn_ids: Sequence[int]) -> Update:
    """Mark turns consumed, only those still unconsumed; returns the ids marked."""
    return (
        update(b)
        .where(b.c.user_id == user_id, b.c.id.in_(list(turn_ids)), b.c.consumed_at.is_(None))
        .values(consumed_at=func.now())
        .returning(b.c.id)
    )
