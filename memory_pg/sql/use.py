"""Recording the use of memories a search returned: ``access_count`` and ``last_accessed_at``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, Update, func, select, update
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


__all__ = ["record_use"]
