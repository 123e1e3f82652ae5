"""MemoryStore on a real PostgreSQL with pgvector: the seed's calls and what users rely on."""

from __future__ import annotations

import io
import json
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from sqlalchemy import create_engine, text

from memory_pg import errors
from memory_pg.async_store import AsyncMemoryStore
from memory_pg.store import MemoryInput, MemoryStore
from tests.conftest import count_rows


def count(raw, table="memory_pg_memories"):
    return count_rows(raw, table)


def test_seed_calls_add_and_search_return_the_seed_keys(store):
    memory_id = store.add_memory("使用 PostgreSQL 作为数据库", "key_decision", {"source": "chat"})
    store.add_memory("I like hiking in the mountains")
    store.add_memory("明天要去超市买牛奶", "todo")
    results = store.search("数据库选型", top_k=3)
    top = results[0]
    assert top["id"] == memory_id
    assert top["text"] == "使用 PostgreSQL 作为数据库"
    assert top["metadata"] == {"source": "chat"}
    assert top["memory_type"] == "key_decision"
    assert 0.0 <= top["distance"] <= 2.0
    assert top["score"] > 0
    assert isinstance(top["created_at"], datetime)


def test_english_search_ranks_by_meaning(store):
    store.add_memories(
        [
            "The user prefers green tea over coffee",
            "The deployment runs on Kubernetes in Frankfurt",
            "Quarterly revenue grew by twelve percent",
        ]
    )
    results = store.search("what drink does the user like?", top_k=1)
    assert results[0]["text"] == "The user prefers green tea over coffee"


def test_every_call_needs_a_user_scope(make_store):
    store = make_store()
    with pytest.raises(errors.MissingUserScope):
        store.add_memory("no owner")
    with pytest.raises(errors.MissingUserScope):
        store.search("anything")
    with pytest.raises(errors.MissingUserScope):
        store.clear_user_memory()
    memory_id = store.add_memory("owned by bob", user_id="bob")
    assert store.get(memory_id, user_id="bob")["text"] == "owned by bob"


def test_one_users_memories_never_reach_another(make_store):
    alice = make_store(user_id="alice")
    bob = make_store(user_id="bob")
    secret = alice.add_memory("alice's bank PIN hint is the cat's name", "user_profile")
    bob.add_memory("bob likes cats")
    assert all(r["user_id"] == "bob" for r in bob.search("cat's name PIN", top_k=10))
    assert bob.get(secret) is None
    assert bob.delete_memory(secret) is False
    assert alice.get(secret) is not None
    assert bob.search("bank PIN", metadata_filter={"user_id": "alice"}) == []


def test_exact_duplicates_are_stored_once(store, raw):
    first = store.add_memory("使用 PostgreSQL 作为数据库", "key_decision")
    again = store.add_memory("  使用 postgresql   作为数据库 ", "key_decision")
    assert again == first
    ids = store.add_memories(["same thing", "same thing", "other thing"])
    assert ids[0] == ids[1] != ids[2]
    assert count(raw) == 3
    # The same text as another type is a different memory.
    assert store.add_memory("使用 PostgreSQL 作为数据库", "dialogue") != first


def test_batch_is_all_or_nothing(store, raw):
    items = [f"memory number {i}" for i in range(49)] + [""] + ["after the bad one"]
    with pytest.raises(errors.EmptyText):
        store.add_memories(items)
    with pytest.raises(errors.UnknownMemoryType):
        store.add_memories(["fine", {"text": "bad type", "memory_type": "nope"}])
    assert count(raw) == 0
    assert count(raw, "memory_pg_history") == 0


def test_batch_accepts_inputs_dicts_and_text(store):
    ids = store.add_memories(
        [
            "plain text is a dialogue memory",
            {"text": "we chose Redis for caching", "memory_type": "key_decision", "topic": "Cache"},
            MemoryInput("ship the payment module", "todo", importance=0.9),
        ]
    )
    got = [store.get(i) for i in ids]
    assert [g["memory_type"] for g in got] == ["dialogue", "key_decision", "todo"]
    assert got[1]["topic"] == "cache"
    assert got[2]["importance"] == pytest.approx(0.9)


def test_optional_fields_are_stored(store):
    when = datetime(2025, 3, 1, 9, 30, tzinfo=timezone(timedelta(hours=8)))
    memory_id = store.add_memory(
        "launched the shop", "project_status", topic="launch", importance=0.8, event_time=when
    )
    got = store.get(memory_id)
    assert got["event_time"] == when
    assert got["importance"] == pytest.approx(0.8)
    assert got["topic"] == "launch"
    assert got["created_at"] > when


def test_stored_vectors_are_the_models_own_bit_for_bit(store, raw, embedder):
    texts = ["exact vectors", "向量原样保存", "nine digits are enough for a float32"]
    ids = store.add_memories(texts)
    rows = raw.execute(
        "SELECT id::text, embedding::text FROM memory_pg_memories WHERE id = ANY(%s::uuid[])",
        (ids,),
    ).fetchall()
    stored = {i: np.asarray(json.loads(v), dtype=np.float32) for i, v in rows}
    for memory_id, vector in zip(ids, embedder.embed_documents(texts), strict=True):
        assert np.array_equal(stored[memory_id], vector)


def test_bad_input_writes_nothing(store, raw):
    for call in (
        lambda: store.add_memory("   "),
        lambda: store.add_memory("x" * 9000),
        lambda: store.add_memory("nul\x00byte"),
        lambda: store.add_memory("ok", metadata={"when": datetime.now()}),
        lambda: store.add_memory("ok", "not_a_type"),
        lambda: store.add_memory("ok", importance=2),
        lambda: store.add_memory("ok", event_time=datetime(2026, 1, 1)),
    ):
        with pytest.raises(errors.InvalidInput):
            call()
    assert count(raw) == 0


def test_search_filters_by_type_time_and_metadata(store):
    old = datetime.now(timezone.utc) - timedelta(days=30)
    store.add_memory("decided to use PostgreSQL", "key_decision", {"project": "shop"})
    store.add_memory("PostgreSQL upgrade is on the todo list", "todo", {"project": "blog"})
    store.add_memory("PostgreSQL was chosen long ago", "key_decision", event_time=old)
    assert {r["memory_type"] for r in store.search("PostgreSQL", memory_types=["todo"])} == {"todo"}
    recent = store.search("PostgreSQL", since=datetime.now(timezone.utc) - timedelta(days=1))
    assert "PostgreSQL was chosen long ago" not in [r["text"] for r in recent]
    shop = store.search("PostgreSQL", metadata_filter={"project": "shop"})
    assert [r["text"] for r in shop] == ["decided to use PostgreSQL"]


def test_search_uses_are_written_in_a_batch_after_the_search(store):
    """A search only reads: the uses of what it returned wait in the store and are
    written together (every ``use_flush_s`` seconds, at close, or on ``flush_uses``)."""
    memory_id = store.add_memory("the office wifi password is on the fridge")
    store.search("wifi password")
    store.search("wifi password")
    assert store.get(memory_id)["access_count"] == 0  # not written by the search itself
    assert store.pending_uses == 1
    assert store.flush_uses() == 1
    got = store.get(memory_id)
    assert got["access_count"] == 2
    assert got["last_accessed_at"] is not None
    assert store.pending_uses == 0 and store.flush_uses() == 0
    store.search("wifi password", track_access=False)
    store.flush_uses()
    assert store.get(memory_id)["access_count"] == 2


def test_a_closing_store_writes_the_uses_still_waiting(make_store, db_url, embedder):
    from memory_pg import MemoryStore

    store = make_store(user_id="alice")
    memory_id = store.add_memory("the office wifi password is on the fridge")
    store.search("wifi password")
    store.close()
    with MemoryStore(db_url, user_id="alice", embedder=embedder) as again:
        assert again.get(memory_id)["access_count"] == 1


def test_a_search_never_waits_on_a_memory_another_transaction_holds(make_store, db_url):
    """Counting a use never blocks: two searches (or a search and a write) that touch
    the same memories in another order cannot deadlock (seen at 4 concurrent callers)."""
    from memory_pg.config import StoreSettings

    store = make_store(user_id="alice", settings=StoreSettings(statement_timeout_ms=3000))
    held = store.add_memory("the office wifi password is on the fridge")
    free = store.add_memory("the wifi router sits in the hallway")
    other = create_engine(db_url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with other.begin() as conn:
            conn.execute(
                text("SELECT id FROM memory_pg_memories WHERE id = :id FOR UPDATE"), {"id": held}
            )
            found = store.search("wifi password", top_k=5)
            assert {held, free} <= {r["id"] for r in found}
            assert store.flush_uses() == 1  # would wait, then time out
        # The held one went uncounted this time; the other was counted.
        assert store.get(held)["access_count"] == 0
        assert store.get(free)["access_count"] == 1
    finally:
        other.dispose()


def test_a_search_counts_the_use_of_a_memory_a_write_in_progress_links_to(make_store):
    """A write that links a new turn to the one before it (``follows``) holds that
    memory for its key only (the foreign-key check). Counting a use changes no key,
    so it does not need to skip the memory: the use is counted."""
    store = make_store(user_id="alice")
    turn = {"memory_type": "dialogue", "metadata": {"session_id": "trip"}}
    (earlier,) = store.add_memories([{**turn, "text": "We land in Lisbon at noon"}])
    with store.engine.connect() as conn:
        tx = conn.begin()
        store.add_memories([{**turn, "text": "Then a tram to the hotel"}], conn=conn)
        found = store.search("when do we land in Lisbon", top_k=3)
        assert earlier in {r["id"] for r in found}
        store.flush_uses()
        tx.commit()
    assert store.get(earlier)["access_count"] == 1
    # The write went through: the new turn follows the one it held.
    assert [r["relation"] for r in store.related(earlier, depth=1)] == ["followed_by"]


def test_search_rejects_bad_arguments(store):
    with pytest.raises(errors.EmptyText):
        store.search("  ")
    with pytest.raises(errors.InvalidArgument):
        store.search("x", top_k=0)
    with pytest.raises(errors.UnknownMemoryType):
        store.search("x", memory_types=["nope"])


def test_delete_and_clear_erase_rows_buffer_and_history(make_store, raw):
    store = make_store(user_id="alice")
    keep = make_store(user_id="bob").add_memory("bob stays")
    first = store.add_memory("first")
    store.add_memory("second")
    raw.execute(
        "INSERT INTO memory_pg_dialogue_buffer (user_id, role, content)"
        " VALUES ('alice', 'user', 'hi')"
    )
    assert store.delete_memory(first) is True
    assert store.get(first) is None
    assert store.history(first) == []
    assert store.delete_memory(first) is False
    assert store.clear_user_memory() == 1
    for table in ("memory_pg_memories", "memory_pg_dialogue_buffer", "memory_pg_history"):
        assert count_rows(raw, table, "alice") == 0, table
    assert make_store(user_id="bob").get(keep)["text"] == "bob stays"


def test_bad_memory_ids_are_typed_errors(store):
    with pytest.raises(errors.InvalidArgument):
        store.get("not-a-uuid")
    with pytest.raises(errors.InvalidArgument):
        store.delete_memory(12)


def test_history_records_additions(store):
    memory_id = store.add_memory("remember me")
    events = store.history(memory_id)
    assert [e["event"] for e in events] == ["added"]
    assert events[0]["memory_id"] == memory_id


def test_export_then_import_round_trips(make_store):
    alice = make_store(user_id="alice")
    when = datetime(2024, 5, 4, 12, 0, tzinfo=timezone.utc)
    alice.add_memory(
        "使用 PostgreSQL 作为数据库", "key_decision", {"k": [1, "二"]}, topic="database"
    )
    alice.add_memory(
        "an old event", event_time=when, importance=0.2, context="what happened in 2024?"
    )
    alice.search("PostgreSQL")
    buffer = io.StringIO()
    assert alice.export_user_memory(buffer) == 2
    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert {"id", "text", "memory_type", "metadata", "embedding", "created_at"} <= set(lines[0])

    buffer.seek(0)
    carol = make_store(user_id="carol")
    assert carol.import_user_memory(buffer) == 2
    before = {m["id"]: m for m in alice.list_memories()}
    after = {m["id"]: m for m in carol.list_memories()}
    assert before.keys() == after.keys()
    for memory_id, row in before.items():
        for key in (
            "text",
            "memory_type",
            "metadata",
            "topic",
            "importance",
            "created_at",
            "event_time",
            "access_count",
            "last_accessed_at",
            "context",
        ):
            assert after[memory_id][key] == row[key], key
    assert carol.search("数据库选型")[0]["text"] == "使用 PostgreSQL 作为数据库"
    buffer.seek(0)
    assert carol.import_user_memory(buffer) == 0


def test_import_rejects_malformed_lines_and_writes_nothing(store, raw):
    bad = io.StringIO('{"text": "fine"}\nnot json\n')
    with pytest.raises(errors.InvalidArgument, match="line 2"):
        store.import_user_memory(bad)
    assert count(raw) == 0


def test_writes_join_the_callers_transaction(store, db_url):
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            with conn.begin() as tx:
                memory_id = store.add_memory("inside the host's transaction", conn=conn)
                tx.rollback()
        assert store.get(memory_id) is None
        with engine.begin() as conn:
            memory_id = store.add_memory("committed with the host", conn=conn)
        assert store.get(memory_id)["text"] == "committed with the host"
    finally:
        engine.dispose()


def test_store_accepts_the_hosts_engine(db_url, embedder):
    engine = create_engine(db_url)
    try:
        with MemoryStore(engine=engine, user_id="alice", embedder=embedder) as store:
            store.add_memory("through the host engine")
        # The host's engine stays usable: the store did not dispose of it.
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM memory_pg_memories")).scalar() == 1
    finally:
        engine.dispose()


class Projected:
    """A real embedder of another dimension: MiniLM vectors cut to 128 and renormalised."""

    def __init__(self, inner, dim=128, name="test/minilm-128"):
        self.inner, self.dimension, self.model_name = inner, dim, name

    def _cut(self, vectors):
        cut = vectors[..., : self.dimension]
        return (cut / np.linalg.norm(cut, axis=-1, keepdims=True)).astype(np.float32)

    def embed_documents(self, texts):
        return self._cut(self.inner.embed_documents(texts))

    def embed_query(self, text):
        return self._cut(self.inner.embed_query(text))


def test_a_model_of_another_dimension_is_refused_with_the_way_out(make_store, embedder):
    make_store(user_id="alice").add_memory("stored with MiniLM")
    with pytest.raises(errors.EmbeddingDimensionMismatch) as info:
        make_store(embedder=Projected(embedder))
    message = str(info.value)
    assert "384" in message and "128" in message and "memory-pg reembed" in message


def test_a_different_model_of_the_same_dimension_is_refused(make_store, embedder):
    make_store(user_id="alice").add_memory("stored with MiniLM")
    with pytest.raises(errors.EmbeddingModelMismatch, match="reembed"):
        make_store(embedder=Projected(embedder, dim=384, name="other/model"))


def test_a_new_database_takes_the_configured_models_dimension(make_store, embedder):
    store = make_store(user_id="alice", embedder=Projected(embedder))
    assert store.embedding.dimension == 128
    memory_id = store.add_memory("the user prefers green tea")
    assert store.search("green tea")[0]["id"] == memory_id


def test_the_database_keeps_the_model_it_records(make_store):
    first = make_store(user_id="alice")
    recorded = first.embedding.model
    assert make_store(embedder=None).embedder.model_name == recorded


def test_a_url_database_is_not_migrated_behind_the_dbas_back(postgresql, pg_server, embedder):
    with postgresql.cursor() as cur:
        cur.execute("DROP TABLE memory_pg_alembic_version")
    postgresql.commit()
    url = pg_server.url(postgresql.info.dbname)
    with pytest.raises(errors.SchemaNotReady, match="memory-pg migrate"):
        MemoryStore(url, embedder=embedder)


def test_a_closed_server_is_a_typed_error(embedder, tmp_path):
    url = "postgresql+psycopg://nobody@/nowhere?host=" + str(tmp_path)
    with pytest.raises(errors.DatabaseUnavailable):
        MemoryStore(url, embedder=embedder)


async def test_async_store_has_the_same_methods(db_url, embedder):
    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
        memory_id = await store.add_memory("使用 PostgreSQL 作为数据库", "key_decision")
        await store.add_memories(["unrelated chatter about football"])
        results = await store.search("数据库选型", top_k=1)
        assert results[0]["id"] == memory_id
        assert (await store.get(memory_id))["text"] == "使用 PostgreSQL 作为数据库"
        assert [e["event"] for e in await store.history(memory_id)] == ["added"]
        assert (await store.stats())["memories"] == 2
        assert await store.delete_memory(memory_id) is True
        assert await store.clear_user_memory() == 1
    async with AsyncMemoryStore(db_url, embedder=embedder) as unbound:
        with pytest.raises(errors.MissingUserScope):
            await unbound.search("x")


def test_sync_and_async_expose_the_same_public_methods():
    public = {n for n in dir(MemoryStore) if not n.startswith("_")}
    async_public = {n for n in dir(AsyncMemoryStore) if not n.startswith("_")}
    assert public - async_public == set()


def test_stats_and_healthcheck(store):
    store.add_memories(["a", {"text": "b", "memory_type": "todo"}])
    stats = store.stats()
    assert stats["memories"] == 2
    assert stats["by_type"]["todo"]["current"] == 1
    health = store.healthcheck()
    assert health["ok"] is True
    assert health["vector_extension"] == "0.8.5" or health["vector_extension"]
    assert health["revision"] == health["head_revision"]


def test_history_with_a_limit_is_the_latest_events_oldest_first(store):
    from memory_pg.errors import InvalidArgument

    for i in range(4):
        store.add_memory(f"note number {i}", "todo", topic="one")  # each replaces the last
    everything = store.history()
    assert store.history(limit=3) == everything[-3:]
    assert store.history(limit=100) == everything
    one = everything[0]["memory_id"]
    assert store.history(one, limit=1) == store.history(one)[-1:]
    for bad in (0, -1, True, 2.5, "3"):
        with pytest.raises(InvalidArgument):
            store.history(limit=bad)
