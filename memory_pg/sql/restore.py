"""Statements that undo a replacement: the memory and its replacement, its fragments, unmarking."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Delete, Select, Update, and_, delete, func, or_, select, update

from memory_pg.sql.memories import owned_by
from memory_pg.sql.relations import CONSOLIDATED_FROM
from memory_pg.tables import memories, memory_links

m = memories


def _expired(table: Any) -> Any:
    return and_(table.c.expires_at.is_not(None), table.c.expires_at <= func.now())


def replaced_memory(
    user_id: str, memory_id: uuid.UUID, agent_id: str | None, *, lock: bool = True
) -> Select[Any]:
    """The memory to restore (with an agent: one it may see), locked unless ``lock`` is
    false, and what replaced it.

    Beside the memory's scope and state: ``expired``; ``newer_id``, the replacing
    memory if it still exists; ``newer_current``; and ``summary``, whether the
    replacement is a consolidation's summary (its metadata holds ``consolidated_from``).
    """
    newer = m.alias("newer")
    on = m.c.superseded_by
    stmt = (
        select(
            m.c.id,
            m.c.memory_type,
            m.c.content_hash,
            m.c.private,
            m.c.agent_id,
            m.c.superseded_at,
            m.c.superseded_by,
            m.c.expires_at,
            _expired(m).label("expired"),
            newer.c.id.label("newer_id"),
            and_(newer.c.superseded_at.is_(None), ~_expired(newer)).label("newer_current"),
            newer.c.metadata.has_key(CONSOLIDATED_FROM).label("summary"),
        )
        .select_from(m.outerjoin(newer, and_(newer.c.user_id == m.c.user_id, newer.c.id == on)))
        .where(m.c.user_id == user_id, m.c.id == memory_id, *owned_by(agent_id))
    )
    return stmt.with_for_update(of=m) if lock else stmt


def fragments_of(user_id: str, summary_id: uuid.UUID) -> Select[Any]:
    """The memories a consolidation merged into ``summary_id`` that have not expired since,
    locked, oldest first (consolidation merges shared memories only)."""
    return (
        select(m.c.id, m.c.memory_type, m.c.content_hash)
        .where(
            m.c.user_id == user_id,
            m.c.superseded_by == summary_id,
            m.c.private.is_(False),
            or_(m.c.expires_at.is_(None), m.c.expires_at > func.now()),
        )
        .order_by(m.c.created_at, m.c.id)
        .with_for_update()
    )


def unmark(user_id: str, ids: Sequence[uuid.UUID]) -> Update:
    """Make replaced memories current again (no longer superseded); returns the ids changed.

    ``valid_from`` stays: a restored memory was never rightly replaced, so a search
    ``as_of`` a time in between finds it too.
    """
    return (
        update(m)
        .where(m.c.user_id == user_id, m.c.id.in_(list(ids)), m.c.superseded_at.is_not(None))
        .values(superseded_at=None, superseded_by=None, updated_at=func.now())
        .returning(m.c.id)
    )


def drop_supersedes_link(user_id: str, newer_id: uuid.UUID, older_id: uuid.UUID) -> Delete:
    """Remove the link ``newer supersedes older`` that the undone replacement made."""
    ml = memory_links
    return delete(ml).where(
        ml.c.user_id == user_id,
        ml.c.src == newer_id,
        ml.c.relation == "supersedes",
        ml.c.dst == older_id,
    )


__all__ = ["drop_supersedes_link", "fragments_of", "replaced_memory", "unmark"]
