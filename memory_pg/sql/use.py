"""Recording the use of memories a search returned: ``access_count`` and ``last_accessed_at``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ARRAY, BigInteger, DateTime, Select, Update, bindparam, func, select, update
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.sql.elements import BindParameter

from memory_pg.sql.memories import MAX_ACCESS_COUNT
from memory_pg.tables import memories as m


def record_use(user_id: str | BindParameter[Any], ids: Select[Any] | Sequence[Any]) -> Update:
    """Count one use of the user's memories ``ids`` (``access_count + 1``,
    ``last_accessed_at = now()``).

    Only the rows no other transaction holds: a search never waits to count a use,
    so two searches (or a search and a write) touching the same memories in
    different orders cannot deadlock; a memory locked at that moment goes uncounted.
    The use changes no key (FOR NO KEY UPDATE): a write that links to the memory (a
    foreign key's KEY SHARE) does not keep it from being counted, nor waits. In a
    search's statement (a data-modifying CTE), PostgreSQL runs it whether or not
    the query reads it.
    """
    mine = m.alias("mine")
    chosen = ids if isinstance(ids, Select) else list(ids)
    free = (
        select(mine.c.id)
        .where(mine.c.user_id == user_id, mine.c.id.in_(chosen))
        .with_for_update(skip_locked=True, key_share=True)
    )
    return (
        update(m)
        .where(m.c.user_id == user_id, m.c.id.in_(free))
        # The count stops at the column's maximum rather than failing every later search.
        .values(
            access_count=func.least(m.c.access_count, MAX_ACCESS_COUNT - 1) + 1,
            last_accessed_at=func.now(),
        )
    )


def record_uses(
    user_id: str, ids: Sequence[Any], counts: Sequence[int], last: Sequence[datetime]
) -> Update:
    """Count the uses a store collected of the user's memories (:mod:`memory_pg.usage`):
    ``ids[i]`` was returned ``counts[i]`` times, last at ``last[i]``. One statement for
    them all, taking only the rows no other transaction holds, as :func:`record_use`
    does; returns the ids it counted.

    ``last_accessed_at`` only moves forward (and never past the server's clock), so a
    batch applied late, or twice, never dates a use back.
    """
    uses = (
        func.unnest(
            bindparam("ids", list(ids), type_=ARRAY(UUID(as_uuid=True))),
            bindparam("counts", list(counts), type_=ARRAY(BigInteger)),
            bindparam("last", list(last), type_=ARRAY(DateTime(timezone=True))),
        )
        .table_valued("id", "n", "at")
        .render_derived(name="uses")
    )
    mine = m.alias("mine")
    free = (
        select(mine.c.id)
        .where(mine.c.user_id == user_id, mine.c.id.in_(select(uses.c.id)))
        .with_for_update(skip_locked=True, key_share=True)
    )
    return (
        update(m)
        .where(m.c.user_id == user_id, m.c.id == uses.c.id, m.c.id.in_(free))
        .values(
            access_count=func.least(m.c.access_count + uses.c.n, MAX_ACCESS_COUNT),
            last_accessed_at=func.greatest(m.c.last_accessed_at, func.least(uses.c.at, func.now())),
        )
        .returning(m.c.id)
    )


__all__ = ["record_use", "record_uses"]
