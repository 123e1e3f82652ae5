"""Recording a search's use keeps each memory on its page (migration 0008).

A search adds one to ``access_count`` of everything it returns. For a light user
that is every memory they hold. With too little room on a page, the new row
version moves to another page and writes a new entry into every index, the HNSW
graph included (benchmarks/search_use_cost.py: half the searches' time). With
``fillfactor = 70`` each page keeps room for its rows' next versions, so each
stays on its page (where PostgreSQL can make the update HOT); at 80 two of the
three rows on a page moved.
"""

from __future__ import annotations

from typing import Any

import psycopg

from memory_pg.store import MemoryStore


def _pages(raw: psycopg.Connection[Any], user: str) -> dict[str, int]:
    rows = raw.execute(
        "SELECT id::text, (ctid::text::point)[0]::int FROM memory_pg_memories WHERE user_id = %s",
        [user],
    ).fetchall()
    return dict(rows)


def test_a_light_users_uses_are_recorded_where_their_memories_are(
    store: MemoryStore, raw: psycopg.Connection[Any]
) -> None:
    notes = [f"Deploy note {i}: the release train leaves on day {i}" for i in range(10)]
    store.add_memories([{"text": n, "memory_type": "project_status"} for n in notes])
    before = _pages(raw, "alice")
    assert len(set(before.values())) >= 4  # two or three to a page, as a table grows

    for _ in range(3):  # each search returns, and counts, all ten
        assert len(store.search("release train deploy", top_k=10)) == 10
        store.flush_uses()

    counts = raw.execute(
        "SELECT count(*) FILTER (WHERE access_count = 3) FROM memory_pg_memories"
    ).fetchone()
    assert counts == (10,)
    assert _pages(raw, "alice") == before
