"""Supersession on write: a new fact on the same topic replaces the old one, kept for history."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

from memory_pg.config import SupersedePolicy


def _age(raw, memory_id, days):
    """Move a memory's creation back in time, as if written ``days`` ago."""
    raw.execute(
        "UPDATE memory_pg_memories SET created_at = now() - make_interval(days => %s), "
        "valid_from = now() - make_interval(days => %s), updated_at = now() - "
        "make_interval(days => %s) WHERE id = %s",
        (days, days, days, memory_id),
    )


def test_seed_case_topic_key_replaces_mysql_with_postgresql(store, raw):
    old = store.add_memory("决定使用 MySQL 作为数据库", "key_decision", topic="database")
    _age(raw, old, 14)
    new = store.add_memory("改用 PostgreSQL 作为数据库", "key_decision", topic="database")
    assert new != old

    texts = [r["text"] for r in store.search("数据库选型", top_k=5)]
    assert any("PostgreSQL" in t for t in texts)
    assert not any("MySQL" in t for t in texts)

    week_ago = datetime.now(timezone.utc) - timedelta(days=7)
    then = [r["text"] for r in store.search("数据库选型", top_k=5, as_of=week_ago)]
    assert any("MySQL" in t for t in then)
    assert not any("PostgreSQL" in t for t in then)

    replaced = store.get(old)
    assert replaced["superseded_by"] == new and replaced["superseded_at"] is not None
    events = [(e["event"], e["detail"].get("reason")) for e in store.history(old)]
    assert events == [("added", None), ("superseded", "topic")]
    assert store.history(old)[1]["detail"]["by"] == new


def test_detected_by_similarity_without_topic(store):
    old = store.add_memory("The user prefers dark mode", "user_profile")
    new = store.add_memory("The user prefers light mode", "user_profile")
    assert store.get(old)["superseded_by"] == new
    assert [r["id"] for r in store.list_memories(memory_types=["user_profile"])] == [new]


def test_dialogue_is_never_superseded_by_similarity(store):
    a = store.add_memory("The user prefers dark mode")
    b = store.add_memory("The user prefers light mode")
    assert {r["id"] for r in store.list_memories()} == {a, b}


def test_unrelated_decisions_both_stay(store):
    a = store.add_memory("We will use MySQL as the database", "key_decision")
    b = store.add_memory("We will use Redis for caching", "key_decision")
    assert {r["id"] for r in store.list_memories()} == {a, b}


def test_near_duplicate_is_merged_not_stored_twice(store):
    first = store.add_memory("We will use MySQL as the database", "key_decision", importance=0.4)
    again = store.add_memory("We will use MySQL as our database", "key_decision", importance=0.9)
    assert again == first
    assert len(store.list_memories(include_inactive=True)) == 1
    assert store.get(first)["importance"] > 0.85
    assert [e["event"] for e in store.history(first)] == ["added", "merged"]
    assert store.history(first)[1]["detail"]["reason"] == "near_duplicate"


def test_judge_confirms_contradiction_same_and_different(make_store):
    prompts = []

    def judge(prompt: str) -> str:
        prompts.append(prompt)
        if "PostgreSQL" in prompt and "MySQL" in prompt:
            return "CONTRADICTS"
        if "Postgres 16" in prompt:
            return "SAME"
        return "DIFFERENT"

    store = make_store(user_id="alice", judge=judge)
    mysql = store.add_memory("Decision: use MySQL for the database", "key_decision")
    pg = store.add_memory("Decision: use PostgreSQL for the database", "key_decision")
    assert store.get(mysql)["superseded_by"] == pg
    assert store.history(mysql)[-1]["detail"]["reason"] == "judge"
    same = store.add_memory(
        "Decision: use PostgreSQL 16 (Postgres 16) for the database", "key_decision"
    )
    assert same == pg
    assert prompts, "the judge was asked"


def test_judge_failure_keeps_both(make_store):
    def judge(prompt: str) -> str:
        raise TimeoutError("llm down")

    store = make_store(user_id="alice", judge=judge)
    a = store.add_memory("Decision: use MySQL for the database", "key_decision")
    b = store.add_memory("Decision: use PostgreSQL for the database", "key_decision")
    assert {r["id"] for r in store.list_memories()} == {a, b}


def test_disabled_policy_stores_both(make_store):
    store = make_store(user_id="alice", supersede=SupersedePolicy(enabled=False))
    a = store.add_memory("use MySQL", "key_decision", topic="database")
    b = store.add_memory("use PostgreSQL", "key_decision", topic="database")
    assert {r["id"] for r in store.list_memories()} == {a, b}


def test_same_topic_within_one_batch_keeps_the_last(store):
    ids = store.add_memories(
        [
            {"text": "use MySQL", "memory_type": "key_decision", "topic": "database"},
            {"text": "use PostgreSQL", "memory_type": "key_decision", "topic": "database"},
        ]
    )
    current = store.list_memories()
    assert [r["id"] for r in current] == [ids[1]]
    assert store.get(ids[0])["superseded_by"] == ids[1]


def test_other_users_topic_is_untouched(store, make_store):
    bob_store = make_store(user_id="bob")
    bob = bob_store.add_memory("use MySQL", "key_decision", topic="database")
    store.add_memory("use PostgreSQL", "key_decision", topic="database")
    assert bob_store.get(bob)["superseded_at"] is None


def test_concurrent_writers_on_one_topic_leave_one_current_row(make_store, raw):
    stores = [make_store(user_id="alice") for _ in range(4)]
    texts = ["use MySQL", "use PostgreSQL", "use SQLite", "use CockroachDB"]
    barrier = threading.Barrier(len(stores))
    errors = []

    def write(s, t):
        try:
            barrier.wait()
            for k in range(3):
                s.add_memory(f"{t} (round {k})", "key_decision", topic="database")
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=st) for st in zip(stores, texts, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    current = raw.execute(
        "SELECT count(*) FROM memory_pg_memories WHERE user_id = 'alice' "
        "AND topic = 'database' AND superseded_at IS NULL"
    ).fetchone()[0]
    total = raw.execute("SELECT count(*) FROM memory_pg_memories").fetchone()[0]
    assert current == 1
    assert total == 12


async def test_async_store_supersedes_the_same_way(db_url, embedder):
    from memory_pg.async_store import AsyncMemoryStore

    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
        old = await store.add_memory("use MySQL", "key_decision", topic="database")
        new = await store.add_memory("use PostgreSQL", "key_decision", topic="database")
        assert (await store.get(old))["superseded_by"] == new
        assert [e["event"] for e in await store.history(old)] == ["added", "superseded"]


def test_different_facts_the_model_cannot_tell_apart_are_both_kept(store):
    """The bundled model gives all-[UNK] Chinese the same vector: words must agree too."""
    cat = store.add_memory("我喜欢猫", "user_profile")
    dog = store.add_memory("我讨厌狗", "user_profile")
    three = store.add_memory("meeting at 3pm", "todo")
    four = store.add_memory("meeting at 4pm", "todo")
    assert len({cat, dog}) == 2 and len({three, four}) == 2
    texts = {m["text"] for m in store.list_memories()}
    assert {"我喜欢猫", "我讨厌狗", "meeting at 3pm", "meeting at 4pm"} <= texts


def test_a_reworded_repeat_is_still_merged(store):
    first = store.add_memory("The user prefers green tea in the morning", "user_profile")
    again = store.add_memory("the user prefers green tea in the morning!", "user_profile")
    assert again == first


BATCH = [
    {"text": "We will use MySQL as the database", "memory_type": "key_decision", "importance": 0.4},
    {"text": "The user prefers dark mode", "memory_type": "user_profile"},
    {"text": "use MySQL", "memory_type": "key_decision", "topic": "database"},
    {"text": "The user prefers light mode", "memory_type": "user_profile"},
    {"text": "We will use MySQL as our database", "memory_type": "key_decision", "importance": 0.9},
    {"text": "use PostgreSQL", "memory_type": "key_decision", "topic": "database"},
    {"text": "Buy milk", "memory_type": "todo"},
    {"text": "buy  MILK", "memory_type": "todo"},
    {"text": "我喜欢猫", "memory_type": "user_profile"},
    {"text": "我讨厌狗", "memory_type": "user_profile"},
    {"text": "The user already prefers dark mode", "memory_type": "user_profile"},
]


def _outcome(store, ids, user_id):
    """What a user sees after the writes, by text: ids returned, current and replaced
    rows, importance, and each memory's history."""
    rows = {r["id"]: r for r in store.list_memories(include_inactive=True, user_id=user_id)}
    text = {i: r["text"] for i, r in rows.items()}
    return (
        [text[i] for i in ids],
        sorted(
            (
                r["text"],
                text.get(r["superseded_by"]),
                round(r["importance"], 3),
                tuple(
                    (e["event"], e["detail"].get("reason"), text.get(e["detail"].get("by")))
                    for e in store.history(i, user_id=user_id)
                ),
            )
            for i, r in rows.items()
        ),
    )


def test_one_batch_ends_as_the_same_memories_written_one_by_one(make_store):
    store = make_store()  # unbound: compares two users
    ids = store.add_memories(BATCH, user_id="alice")
    one_by_one = [store.add_memory(**item, user_id="bob") for item in BATCH]
    batch, alone = _outcome(store, ids, "alice"), _outcome(store, one_by_one, "bob")
    assert batch == alone
    returned, rows = batch
    # Replaced within the batch, merged within the batch, kept apart:
    assert returned[3] == "The user prefers light mode"
    assert returned[4] == returned[0] == "We will use MySQL as the database"
    assert returned[7] == "Buy milk"
    assert {"我喜欢猫", "我讨厌狗"} <= set(returned)
    replaced = {text: by for text, by, _, _ in rows if by is not None}
    assert replaced["use MySQL"] == "use PostgreSQL"
    assert replaced["The user prefers dark mode"] == "The user prefers light mode"
    importance = {text: imp for text, _, imp, _ in rows}
    assert importance["We will use MySQL as the database"] == 0.9
