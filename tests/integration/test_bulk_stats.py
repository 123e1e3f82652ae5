"""A user loaded in bulk is planned for their size (migration 0009).

The planner reads how many memories a user holds from the table's statistics,
and autovacuum refreshes them only once 10% of the table changed. A store that
wrote or imported many rows asks the database, through a ``SECURITY DEFINER``
function the application role may call, to analyze the memories table when
enough of it changed; the statistics then name the new user among the table's
most common ones, and their searches and writes are planned for their size.
"""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import psycopg
import pytest

from memory_pg.config import StoreSettings
from memory_pg.store import MemoryStore


@pytest.fixture(autouse=True)
def no_autovacuum(raw: psycopg.Connection[Any]) -> None:
    """Only the store's requests analyze the table here (autovacuum could at any time)."""
    raw.execute("ALTER TABLE memory_pg_memories SET (autovacuum_enabled = false)")


def _analyzed(raw: psycopg.Connection[Any]) -> bool:
    row = raw.execute(
        "SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'memory_pg_memories'"
    ).fetchone()
    return row is not None and row[0] is not None


def _known_users(raw: psycopg.Connection[Any]) -> set[str]:
    """The users the planner's statistics hold a row count for."""
    row = raw.execute(
        "SELECT most_common_vals::text::text[] FROM pg_stats "
        "WHERE tablename = 'memory_pg_memories' AND attname = 'user_id'"
    ).fetchone()
    return set(row[0]) if row and row[0] else set()


def _notes(n: int, who: str) -> list[dict[str, Any]]:
    return [
        {"text": f"{who} note {i}: ticket {i} is assigned", "memory_type": "todo"} for i in range(n)
    ]


def test_a_bulk_write_by_the_application_role_has_the_new_user_planned_for_their_size(
    app_url: str, raw: psycopg.Connection[Any], embedder: Any
) -> None:
    with MemoryStore(app_url, embedder=embedder) as store:
        for i in range(30):  # light users, written one small batch at a time
            store.add_memories(_notes(3, f"light-{i}"), user_id=f"light-{i}")
        assert not _analyzed(raw)  # small writes ask nothing

        ids = store.add_memories(_notes(600, "bulk"), user_id="bulk")
        assert len(ids) == 600 and len(store.list_memories(user_id="bulk", limit=1000)) == 600
        assert _analyzed(raw)
        assert "bulk" in _known_users(raw)


def test_an_import_has_the_table_analyzed_and_a_second_one_right_after_does_not(
    app_url: str, raw: psycopg.Connection[Any], embedder: Any
) -> None:
    with MemoryStore(app_url, embedder=embedder) as store:
        store.add_memories(_notes(3, "light"), user_id="light")
        vector = [float(x) for x in embedder.embed_documents(["x"])[0]]
        lines = [
            json.dumps({"text": f"imported note {i}", "memory_type": "todo", "embedding": vector})
            for i in range(600)
        ]
        assert store.import_user_memory(io.StringIO("\n".join(lines)), user_id="moved") == 600
        assert "moved" in _known_users(raw)
        first = raw.execute(
            "SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'memory_pg_memories'"
        ).fetchone()[0]
        lines = [
            json.dumps({"text": f"second batch {i}", "memory_type": "todo"}) for i in range(600)
        ]
        assert store.import_user_memory(io.StringIO("\n".join(lines)), user_id="moved") == 600
        # Within ten seconds of the last analyze the function leaves the table alone.
        again = raw.execute(
            "SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'memory_pg_memories'"
        ).fetchone()[0]
        assert again == first
        assert len(store.list_memories(user_id="moved", limit=2000)) == 1200


def test_a_bulk_write_returns_its_ids_while_another_session_holds_the_table(
    app_url: str, raw: psycopg.Connection[Any], embedder: Any
) -> None:
    # A reembed building an index (or a VACUUM) holds the table against ANALYZE: the
    # analyze is skipped, and the write, committed before it, is not reported as failed.
    settings = StoreSettings(statement_timeout_ms=5000)
    info = raw.info
    with (
        MemoryStore(app_url, embedder=embedder, settings=settings) as store,
        psycopg.connect(
            host=info.host, port=info.port, dbname=info.dbname, user=info.user,
            password=info.password,
        ) as holder,
    ):  # fmt: skip
        holder.execute("LOCK TABLE memory_pg_memories IN SHARE UPDATE EXCLUSIVE MODE")
        ids = store.add_memories(_notes(600, "bulk"), user_id="bulk")
        holder.rollback()
        assert len(ids) == 600 and len(store.list_memories(user_id="bulk", limit=1000)) == 600
    assert not _analyzed(raw)


def test_the_async_store_asks_for_the_analyze_and_never_fails_a_write_over_it(
    app_url: str, raw: psycopg.Connection[Any], embedder: Any
) -> None:
    from memory_pg.async_store import AsyncMemoryStore

    async def scenario() -> tuple[int, bool, int]:
        settings = StoreSettings(statement_timeout_ms=5000)
        async with AsyncMemoryStore(app_url, embedder=embedder, settings=settings) as store:
            info = raw.info
            with psycopg.connect(
                host=info.host, port=info.port, dbname=info.dbname, user=info.user,
                password=info.password,
            ) as holder:  # fmt: skip
                holder.execute("LOCK TABLE memory_pg_memories IN SHARE UPDATE EXCLUSIVE MODE")
                held = await store.add_memories(_notes(600, "held"), user_id="held")
                holder.rollback()
            skipped = _analyzed(raw)
            free = await store.add_memories(_notes(600, "free"), user_id="free")
        return len(held), skipped, len(free)

    held, analyzed_while_held, free = asyncio.run(scenario())
    assert (held, analyzed_while_held, free) == (600, False, 600)
    assert _analyzed(raw) and {"held", "free"} <= _known_users(raw)
