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


async def test_a_repeated_query_is_ranked_from_its_cached_vector_without_a_thread(
    db_url, embedder, monkeypatch
):
    from memory_pg import methods

    threaded: list[str] = []
    query = methods._query

    def counted(store, text):
        threaded.append(text)
        return query(store, text)

    monkeypatch.setattr(methods, "_query", counted)
    embedder.query_cache.clear()
    # Not opened yet: the first search validates, opens, then embeds in a thread.
    store = AsyncMemoryStore(db_url, user_id="alice", embedder=embedder)
    try:
        assert await store.search("which database", 3) == []
        await store.add_memory("we chose PostgreSQL for the database", "key_decision")
        await store.add_memory("数据库选型：PostgreSQL", "key_decision")
        runs = [await store.search(q, 3) for q in ("which database", "which database", "数据库")]
        again = await store.search("数据库", 3)
    finally:
        await store.close()
    # Each text went to the model's thread once; its repeats read the cached vector.
    assert threaded == ["which database", "数据库"]
    for before, after in ((runs[0], runs[1]), (runs[2], again)):
        assert [h["id"] for h in before] == [h["id"] for h in after] and before
        for a, b in zip(before, after, strict=True):
            assert a["similarity"] == b["similarity"] and a["readability"] == b["readability"]


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
