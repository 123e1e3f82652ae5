"""The dialogue buffer: turns wait in Postgres, a compaction consumes them exactly once."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import pytest

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.errors import (
    EmptyText,
    InvalidArgument,
    InvalidMetadata,
    MissingUserScope,
    UnknownMemoryType,
)


@dataclass(frozen=True)
class Compacted:
    """The shape of the compactor's CompactedMemory."""

    memory_type: str
    text: str
    topic: str | None = None
    importance: float = 0.5
    metadata: dict[str, Any] = field(default_factory=dict)


def _pending_ids(raw: Any, user: str) -> list[int]:
    rows = raw.execute(
        "SELECT id FROM memory_pg_dialogue_buffer WHERE user_id = %s AND consumed_at IS NULL "
        "ORDER BY id",
        (user,),
    ).fetchall()
    return [r[0] for r in rows]


def test_turns_wait_in_order_until_committed(store, raw):
    first = store.append_turn("user", "我做跨境电商，数据库选了 PostgreSQL", session_id="s1")
    second = store.append_turn("assistant", "好的，记住了", session_id="s1")
    store.append_turn("user", "other session", session_id="s2")

    pending = store.pending_turns()
    assert [t["role"] for t in pending] == ["user", "assistant", "user"]
    assert [t["id"] for t in store.pending_turns(session_id="s1")] == [first, second]
    assert [t["id"] for t in store.pending_turns(limit=1)] == [first]

    decision = Compacted("key_decision", "使用 PostgreSQL 作为数据库", "database", 0.8)
    ids = store.commit_compaction([first, second], [decision])

    assert len(ids) == 1
    assert [t["content"] for t in store.pending_turns()] == ["other session"]
    memory = store.get(ids[0])
    assert memory["topic"] == "database"
    assert memory["metadata"]["source_turns"] == [first, second]
    assert store.search("数据库选型", top_k=1)[0]["id"] == ids[0]


def test_a_second_commit_of_the_same_turns_writes_nothing(store):
    turn = store.append_turn("user", "I plan to launch in Japan next month")
    assert store.commit_compaction([turn], ["Launch in Japan next month"])
    assert store.commit_compaction([turn], ["Launch in Japan, written twice"]) == []
    texts = [m["text"] for m in store.list_memories()]
    assert texts == ["Launch in Japan next month"]


def test_overlapping_commit_is_all_or_nothing(store):
    a = store.append_turn("user", "turn a")
    b = store.append_turn("user", "turn b")
    store.commit_compaction([a], ["from a"])
    # b overlaps a consumed turn: nothing is written, and b stays pending.
    assert store.commit_compaction([a, b], ["from a and b"]) == []
    assert [t["id"] for t in store.pending_turns()] == [b]
    assert [m["text"] for m in store.list_memories()] == ["from a"]


def test_concurrent_commits_write_the_memories_once(make_store, raw):
    stores = [make_store(user_id="alice") for _ in range(4)]
    turns = [stores[0].append_turn("user", f"turn {i}") for i in range(3)]
    barrier = threading.Barrier(len(stores))
    results: list[list[str]] = []

    def worker(i: int) -> None:
        barrier.wait()
        results.append(stores[i].commit_compaction(turns, [f"memory from worker {i}"]))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert sorted(len(r) for r in results) == [0, 0, 0, 1]
    count = raw.execute("SELECT count(*) FROM memory_pg_memories WHERE user_id = 'alice'")
    assert count.fetchone()[0] == 1
    assert _pending_ids(raw, "alice") == []


def test_turns_of_another_user_cannot_be_consumed(make_store, raw):
    alice = make_store(user_id="alice")
    bob = make_store(user_id="bob")
    turn = alice.append_turn("user", "alice's secret plan")
    assert bob.pending_turns() == []
    assert bob.commit_compaction([turn], ["stolen"]) == []
    assert _pending_ids(raw, "alice") == [turn]
    assert bob.list_memories() == []


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda s: s.append_turn("robot", "hi"), InvalidArgument),
        (lambda s: s.append_turn("user", "   "), EmptyText),
        (lambda s: s.append_turn("user", "hi", session_id=""), InvalidArgument),
        (lambda s: s.pending_turns(limit=0), InvalidArgument),
        (lambda s: s.commit_compaction([], ["x"]), InvalidArgument),
        (lambda s: s.commit_compaction(["1"], ["x"]), InvalidArgument),
        (lambda s: s.commit_compaction([True], ["x"]), InvalidArgument),
    ],
)
def test_bad_turn_input_is_refused(store, raw, call, error):
    with pytest.raises(error):
        call(store)
    assert raw.execute("SELECT count(*) FROM memory_pg_dialogue_buffer").fetchone()[0] == 0


@pytest.mark.parametrize(
    ("memories", "error"),
    [
        ([Compacted("mood", "sad")], UnknownMemoryType),
        (["ok", Compacted("todo", "")], EmptyText),
        ([{"text": "x", "metadata": {"bad": float("nan")}}], InvalidMetadata),
        ([42], InvalidArgument),
    ],
)
def test_a_bad_memory_consumes_no_turn(store, raw, memories, error):
    turn = store.append_turn("user", "hello")
    with pytest.raises(error):
        store.commit_compaction([turn], memories)
    assert _pending_ids(raw, "alice") == [turn]
    assert raw.execute("SELECT count(*) FROM memory_pg_memories").fetchone()[0] == 0


def test_unscoped_buffer_calls_are_refused(make_store):
    unscoped = make_store()
    with pytest.raises(MissingUserScope):
        unscoped.append_turn("user", "hi")
    assert unscoped.append_turn("user", "hi", user_id="carol") > 0
    assert len(unscoped.pending_turns(user_id="carol")) == 1


async def test_async_store_buffers_and_commits(db_url, embedder, raw):
    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
        turn = await store.append_turn("user", "We ship with Stripe for payments")
        assert [t["id"] for t in await store.pending_turns()] == [turn]
        ids = await store.commit_compaction([turn], [Compacted("key_decision", "Use Stripe")])
        assert len(ids) == 1
        assert await store.commit_compaction([turn], ["again"]) == []
        assert await store.pending_turns() == []
    assert _pending_ids(raw, "alice") == []
