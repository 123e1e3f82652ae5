"""Statements of expiry: which rows each reason forgets, and the batched delete that logs them."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Insert,
    and_,
    case,
    func,
    literal,
    literal_column,
    or_,
    select,
    tuple_,
    update,
)
from sqlalchemy import delete as sa_delete

from memory_pg.config import ForgetPolicy
from memory_pg.sql.memories import PRIVATE_TO, log_events
from memory_pg.tables import dialogue_buffer, history, memories

logger = logging.getLogger(__name__)

m = memories


# -- expiry ---------------------------------------------------------------------------

#: Reasons a memory is forgotten, in the order they are applied (each excludes the earlier).
FORGET_REASONS = ("expired", "superseded", "stale")

#: The session advisory lock that one ``forget`` run holds.
FORGET_LOCK = "memory_pg:job:forget"


def _not_expired(now: ColumnElement[Any]) -> ColumnElement[bool]:
    return or_(m.c.expires_at.is_(None), m.c.expires_at > now)


def forget_condition(reason: str, policy: ForgetPolicy) -> ColumnElement[bool]:
    """The rows ``reason`` removes; the three reasons never overlap."""
    now = func.now()
    if reason == "expired":
        return and_(m.c.expires_at.is_not(None), m.c.expires_at <= now)
    if reason == "superseded":
        cutoff = now - timedelta(days=policy.superseded_retention_days)
        return and_(m.c.superseded_at.is_not(None), m.c.superseded_at < cutoff, _not_expired(now))
    if reason != "stale":
        raise ValueError(reason)
    by_age: list[ColumnElement[bool]] = []
    listed = list(policy.max_age_days_by_type)
    for memory_type, days in policy.max_age_days_by_type.items():
        if days is not None:
            by_age.append(
                and_(m.c.memory_type == memory_type, m.c.created_at < now - timedelta(days=days))
            )
    by_age.append(
        and_(
            m.c.memory_type.not_in(listed) if listed else literal(True),
            m.c.created_at < now - timedelta(days=policy.max_age_days),
        )
    )
    return and_(
        m.c.superseded_at.is_(None),
        _not_expired(now),
        m.c.access_count == 0,
        m.c.importance < policy.importance_below,
        or_(*by_age),
    )


def forget_batch(
    reason: str, policy: ForgetPolicy, batch_size: int, run_id: str, user_id: str | None
) -> Insert:
    """Delete up to ``batch_size`` rows of ``reason`` and log an ``expired`` event for each.

    Rows another transaction holds are skipped (``SKIP LOCKED``), so the batch never
    waits on a writer. Returns one row per deleted memory with its type.
    """
    conds = [forget_condition(reason, policy)]
    if user_id is not None:
        conds.insert(0, m.c.user_id == user_id)
    gone = _delete_some(
        m, conds, batch_size, m.c.user_id, m.c.id, m.c.memory_type, m.c.private, m.c.agent_id
    )
    detail = func.jsonb_build_object(
        "reason", reason, "memory_type", gone.c.memory_type, "job_run", run_id
    ).op("||")(
        # The memory is gone, and with it what kept its events from other agents: the
        # event says whose private memory it was (memories.history_of reads it).
        case(
            (gone.c.private, func.jsonb_build_object(PRIVATE_TO, gone.c.agent_id)),
            else_=literal_column("'{}'::jsonb"),
        )
    )
    # Its earlier events (added, superseded...) are tagged the same way.
    tagged = (
        update(history)
        .where(
            history.c.user_id == gone.c.user_id,
            history.c.memory_id == gone.c.id,
            gone.c.private,
        )
        .values(
            detail=history.c.detail.op("||")(func.jsonb_build_object(PRIVATE_TO, gone.c.agent_id))
        )
        .returning(history.c.id)
        .cte("tagged")
    )
    return (
        log_events(select(gone.c.user_id, gone.c.id, literal("expired"), detail))
        .returning(history.c.detail["memory_type"].astext.label("memory_type"))
        .add_cte(tagged)
    )


def _delete_some(
    table: Any,
    conds: list[ColumnElement[bool]],
    batch_size: int,
    *returning: Any,
    by_key: bool = False,
) -> Any:
    """A CTE deleting up to ``batch_size`` rows of ``table`` that meet ``conds`` and no
    other transaction holds (``SKIP LOCKED``: a batch never waits on a writer), the
    first in key order when ``by_key``; it returns ``returning``."""
    key = (table.c.user_id, table.c.id)
    victims = select(*key).where(*conds)
    if by_key:
        victims = victims.order_by(*key)
    locked = victims.limit(batch_size).with_for_update(skip_locked=True).cte("victims")
    return (
        sa_delete(table)
        .where(tuple_(*key).in_(select(locked.c.user_id, locked.c.id)))
        .returning(*returning)
        .cte("gone")
    )


def forget_counts(reason: str, policy: ForgetPolicy, user_id: str | None) -> Any:
    """How many rows ``reason`` would remove, per type (the dry run)."""
    stmt = select(m.c.memory_type, func.count().label("n")).where(forget_condition(reason, policy))
    if user_id is not None:
        stmt = stmt.where(m.c.user_id == user_id)
    return stmt.group_by(m.c.memory_type)


# -- compacted turns ------------------------------------------------------------------

b = dialogue_buffer


def _compacted(policy: ForgetPolicy, user_id: str | None) -> list[ColumnElement[bool]]:
    days = policy.consumed_turn_retention_days
    conds = [b.c.consumed_at < func.now() - timedelta(days=days or 0)]
    if user_id is not None:
        conds.insert(0, b.c.user_id == user_id)
    return conds


def purge_turns_batch(
    policy: ForgetPolicy, batch_size: int, user_id: str | None, after: tuple[str, int] | None
) -> Any:
    """Delete up to ``batch_size`` buffered turns compacted before the retention, the
    first in key order after ``after`` (the last key of the batch before: each batch
    walks on along the primary key instead of scanning again from the start); returns
    their ``user_id`` and ``id`` in key order (rows another transaction holds are
    skipped)."""
    conds = _compacted(policy, user_id)
    if after is not None:
        conds.append(tuple_(b.c.user_id, b.c.id) > tuple_(literal(after[0]), literal(after[1])))
    gone = _delete_some(b, conds, batch_size, b.c.user_id, b.c.id, by_key=True)
    # In the database's order (its collation), so the last row is where the next
    # batch starts.
    return select(gone.c.user_id, gone.c.id).order_by(gone.c.user_id, gone.c.id)


def purge_turns_count(policy: ForgetPolicy, user_id: str | None) -> Any:
    """How many buffered turns :func:`purge_turns_batch` would remove (the dry run)."""
    return select(func.count()).select_from(b).where(*_compacted(policy, user_id))
