"""A store bound to one user refuses every call for another user, and writes nothing.

Row-level security cannot tell Bob's store from Alice's (both connect as the same
application role and set the tenant themselves), so the library refuses the
other user's id before any statement runs.
"""

from __future__ import annotations

import asyncio
import io
import json

import pytest

from memory_pg import AsyncMemoryStore, MemoryRetriever, MemoryWrapper
from memory_pg.errors import TenantMismatch, TenantViolation
from tests.integration._security_support import row_counts

ALICE = "alice"


class EchoAgent:
    def chat(self, text: str) -> str:
        return text


@pytest.fixture
def alice_data(make_store, raw):
    """Alice's memories, one buffered turn and history, written by an unbound store."""
    store = make_store()
    ids = store.add_memories(["Alice's secret: the vault code is 4711"], user_id=ALICE)
    store.append_turn("user", "Alice's buffered turn", user_id=ALICE)
    return {"memory_id": ids[0], "counts": row_counts(raw)}


def sync_calls(bob, memory_id):
    """Every public method of the sync store that takes a user, asked for Alice."""
    export = io.StringIO()
    line = json.dumps({"text": "planted into Alice", "memory_type": "dialogue"})
    return {
        "add_memory": lambda: bob.add_memory("planted", user_id=ALICE),
        "add_memories": lambda: bob.add_memories(["planted"], user_id=ALICE),
        "delete_memory": lambda: bob.delete_memory(memory_id, user_id=ALICE),
        "clear_user_memory": lambda: bob.clear_user_memory(ALICE),
        "append_turn": lambda: bob.append_turn("user", "planted", user_id=ALICE),
        "pending_turns": lambda: bob.pending_turns(user_id=ALICE),
        "commit_compaction": lambda: bob.commit_compaction([1], ["planted"], user_id=ALICE),
        "search": lambda: bob.search("vault code", user_id=ALICE),
        "get": lambda: bob.get(memory_id, user_id=ALICE),
        "list_memories": lambda: bob.list_memories(user_id=ALICE),
        "history": lambda: bob.history(user_id=ALICE),
        "stats": lambda: bob.stats(user_id=ALICE),
        "export_user_memory": lambda: (bob.export_user_memory(export, user_id=ALICE), export)[1],
        "import_user_memory": lambda: bob.import_user_memory(io.StringIO(line), user_id=ALICE),
    }


def test_a_bound_store_refuses_every_call_for_another_user(make_store, raw, alice_data):
    bob = make_store(user_id="bob")
    for name, call in sync_calls(bob, alice_data["memory_id"]).items():
        with pytest.raises(TenantMismatch, match="bound to user 'bob'"):
            call()
        assert row_counts(raw) == alice_data["counts"], name
    # The refusal is a TenantViolation: code that catches that catches this too.
    assert issubclass(TenantMismatch, TenantViolation)
    # Its own user, named or not, still works.
    assert bob.add_memory("Bob's note", user_id="bob")
    assert [m["text"] for m in bob.list_memories()] == ["Bob's note"]


def test_export_for_another_user_writes_no_file(make_store, alice_data, tmp_path):
    bob = make_store(user_id="bob")
    target = tmp_path / "alice.jsonl"
    with pytest.raises(TenantMismatch):
        bob.export_user_memory(str(target), user_id=ALICE)
    assert not target.exists()


def test_retriever_and_wrapper_over_a_bound_store_refuse_another_user(make_store, alice_data):
    bob = make_store(user_id="bob")
    with pytest.raises(TenantMismatch):
        MemoryRetriever(bob).retrieve_context("vault code", user_id=ALICE)
    with pytest.raises(TenantMismatch):
        MemoryWrapper(EchoAgent(), bob, user_id=ALICE)


def test_an_async_bound_store_refuses_every_call_for_another_user(
    db_url, embedder, raw, alice_data
):
    memory_id = alice_data["memory_id"]

    async def main() -> list[str]:
        refused = []
        async with AsyncMemoryStore(db_url, user_id="bob", embedder=embedder) as bob:
            calls = {
                "add_memory": lambda: bob.add_memory("planted", user_id=ALICE),
                "add_memories": lambda: bob.add_memories(["planted"], user_id=ALICE),
                "delete_memory": lambda: bob.delete_memory(memory_id, user_id=ALICE),
                "clear_user_memory": lambda: bob.clear_user_memory(ALICE),
                "append_turn": lambda: bob.append_turn("user", "planted", user_id=ALICE),
                "pending_turns": lambda: bob.pending_turns(user_id=ALICE),
                "commit_compaction": lambda: bob.commit_compaction([1], ["planted"], user_id=ALICE),
                "search": lambda: bob.search("vault code", user_id=ALICE),
                "get": lambda: bob.get(memory_id, user_id=ALICE),
                "history": lambda: bob.history(user_id=ALICE),
                "stats": lambda: bob.stats(user_id=ALICE),
            }
            for name, call in calls.items():
                with pytest.raises(TenantMismatch):
                    await call()
                refused.append(name)
            assert await bob.search("vault code") == []
        return refused

    assert len(asyncio.run(main())) == 11
    assert row_counts(raw) == alice_data["counts"]
