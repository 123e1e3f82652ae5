"""One rule for a memory id the user does not have, in the sync and the async store.

A call that must act on the memory (``replace_memory``) raises ``MemoryNotFound``
and writes nothing; a lookup answers: ``get`` gives None, ``delete_memory`` False.
"Not the user's" covers an id that never existed, another user's memory and
another agent's private memory: none of them is told apart from the others.
"""

from __future__ import annotations

import uuid

import pytest

from memory_pg import AsyncMemoryStore, MemoryNotFound, MemoryPgError, MemoryStore
from tests.conftest import count_rows


@pytest.fixture
def ids(make_store):
    alice = make_store(user_id="alice")
    bob = make_store(user_id="bob")
    return {
        "unknown": str(uuid.uuid4()),
        "other user's": bob.add_memory("bob's own note about Rust"),
        "other agent's private": alice.add_memory(
            "the planner's private note", agent_id="planner", private=True
        ),
    }


CASES = ["unknown", "other user's", "other agent's private"]


def test_memory_not_found_is_a_lookup_error_and_a_memory_pg_error():
    assert issubclass(MemoryNotFound, LookupError) and issubclass(MemoryNotFound, MemoryPgError)


@pytest.mark.parametrize("case", CASES)
def test_sync_store(case, ids, db_url, embedder, raw):
    store = MemoryStore(db_url, user_id="alice", embedder=embedder)
    try:
        before = count_rows(raw, "memory_pg_memories")
        with pytest.raises(MemoryNotFound, match=ids[case]):
            store.replace_memory(ids[case], "a new text", agent_id="coder")
        assert store.get(ids[case], agent_id="coder") is None
        assert store.delete_memory(ids[case], agent_id="coder") is False
        assert count_rows(raw, "memory_pg_memories") == before
    finally:
        store.close()


@pytest.mark.parametrize("case", CASES)
async def test_async_store(case, ids, db_url, embedder, raw):
    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
        before = count_rows(raw, "memory_pg_memories")
        with pytest.raises(MemoryNotFound, match=ids[case]):
            await store.replace_memory(ids[case], "a new text", agent_id="coder")
        assert await store.get(ids[case], agent_id="coder") is None
        assert await store.delete_memory(ids[case], agent_id="coder") is False
        assert count_rows(raw, "memory_pg_memories") == before
