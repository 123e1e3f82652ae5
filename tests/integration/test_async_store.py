"""The native async store: its own engine and pool, and every method of the sync store."""

from __future__ import annotations

import io
import json

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from memory_pg import errors
from memory_pg.async_store import AsyncMemoryStore
from memory_pg.store import MemoryStore


async def test_it_holds_one_async_pool_and_no_sync_store(db_url, embedder):
    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
        assert isinstance(store.engine, AsyncEngine)
        assert not any(isinstance(v, MemoryStore) for v in vars(store).values())
        await store.add_memory("we chose PostgreSQL", "key_decision")
        # One pool: the async engine's; a sync store would hold a second one.
        assert store.engine.pool.checkedin() >= 1


async def test_list_health_export_and_import_round_trip(db_url, embedder):
    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
        first = await store.add_memory("使用 PostgreSQL 作为数据库", "key_decision", topic="db")
        await store.add_memory("改用 MySQL 作为数据库", "key_decision", topic="db")
        current = await store.list_memories()
        assert [m["text"] for m in current] == ["改用 MySQL 作为数据库"]
        assert len(await store.list_memories(include_inactive=True)) == 2
        health = await store.healthcheck()
        assert health["ok"] is True and health["revision"] == health["head_revision"]
        assert health["embedding_model"] == embedder.model_name
        out = io.StringIO()
        assert await store.export_user_memory(out) == 2
        lines = [json.loads(line) for line in out.getvalue().splitlines()]
        assert {line["id"] for line in lines} >= {first}
        assert all(len(line["embedding"]) == embedder.dimension for line in lines)
        assert await store.clear_user_memory() == 2
        assert await store.import_user_memory(io.StringIO(out.getvalue())) == 2
        found = await store.search("数据库", top_k=1)
        assert found[0]["text"] == "改用 MySQL 作为数据库"
        assert (await store.get(first))["superseded_by"] is not None


async def test_from_env_reads_the_same_variables(db_url, embedder, monkeypatch):
    monkeypatch.setenv("MEMORY_PG_DATABASE_URL", db_url)
    monkeypatch.setenv("MEMORY_PG_USER_ID", "carol")
    store = AsyncMemoryStore.from_env(embedder=embedder)
    try:
        assert store.user_id == "carol"
        await store.add_memory("tea, not coffee", "user_profile")
        assert (await store.stats())["memories"] == 1
    finally:
        await store.close()


async def test_bad_input_fails_before_the_database_is_opened(db_url, embedder):
    store = AsyncMemoryStore(db_url, user_id="alice", embedder=embedder)
    with pytest.raises(errors.InvalidInput):
        await store.add_memory("", "key_decision")
    with pytest.raises(errors.TenantMismatch):
        await store.list_memories(user_id="bob")
    assert store.engine is None  # nothing was opened for a refused call
    await store.close()


def test_an_async_stores_uses_are_written_when_its_event_loop_ends(db_url, embedder):
    """A script that never closes its store (``asyncio.run(main())``) still has its
    searches counted: the loop's end cancels the writer task, which writes them first."""
    import asyncio

    async def main():
        store = AsyncMemoryStore(db_url, user_id="alice", embedder=embedder)
        memory_id = await store.add_memory("The office wifi password is on the fridge")
        await store.search("wifi password")
        assert store.pending_uses == 1
        return store, memory_id

    store, memory_id = asyncio.run(main())  # ends with the store open
    try:
        with MemoryStore(db_url, user_id="alice", embedder=embedder) as check:
            assert check.get(memory_id)["access_count"] == 1
    finally:
        asyncio.run(store.close())  # its pool, left open by the script


async def test_an_async_store_writes_its_uses_within_use_flush_s(db_url, embedder):
    import asyncio

    from memory_pg.config import StoreSettings

    store = AsyncMemoryStore(
        db_url, user_id="alice", embedder=embedder, settings=StoreSettings(use_flush_s=0.2)
    )
    try:
        memory_id = await store.add_memory("The office wifi password is on the fridge")
        await store.search("wifi password")
        for _ in range(50):
            if (await store.get(memory_id))["access_count"] == 1:
                break
            await asyncio.sleep(0.1)
        assert (await store.get(memory_id))["access_count"] == 1
        assert store.pending_uses == 0
    finally:
        await store.close()
