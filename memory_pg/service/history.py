"""A user's latest lifecycle events, bounded, for the HTTP ``/v1/history`` and MCP tool.

The store's ``history`` returns every event of a user: fine for an export, not for
a request that anyone with a token can repeat. The service reads the latest
``limit`` events only, in the database, and hands them back oldest first.
"""

from __future__ import annotations

from typing import Any

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.plans.protocol import Plan, final
from memory_pg.plans.read import memory_dict
from memory_pg.plans.write import parse_memory_id
from memory_pg.sql.memories import history_of
from memory_pg.tables import history

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "plan_recent_history", "recent_history"]

#: As for the HTTP list of memories: a page of 20 unless asked, never over 1000.
DEFAULT_LIMIT = 20
MAX_LIMIT = 1000


def plan_recent_history(
    user_id: str, memory_id: str | None, agent_id: str | None, limit: int
) -> Plan[list[dict[str, Any]]]:
    """The latest ``limit`` events of a user (or of one memory), oldest first."""
    mid = parse_memory_id(memory_id) if memory_id is not None else None
    latest = (
        history_of(user_id, mid, agent_id)
        .order_by(None)
        .order_by(history.c.at.desc(), history.c.id.desc())
        .limit(limit)
    )
    rows = yield final(latest)
    return [memory_dict(r) for r in reversed(rows)]


async def recent_history(
    store: AsyncMemoryStore,
    user_id: str,
    agent_id: str | None,
    limit: int,
    memory_id: str | None = None,
) -> list[dict[str, Any]]:
    """Run :func:`plan_recent_history` as ``user_id`` (row-level security applies)."""
    plan = plan_recent_history(user_id, memory_id, agent_id, limit)
    events: list[dict[str, Any]] = await store.run_plan(plan, user_id)
    return events
