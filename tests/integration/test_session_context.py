"""A dialogue turn written with its conversation's ``session_id`` is found through the
turn it answers: the store gives it the previous turn as its context."""

from __future__ import annotations

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.config import StoreSettings

QUESTION = "Did you finally go to the pottery class downtown?"
ANSWER = "Yes, last Friday, and I loved it."


def _turns(session: str = "s1") -> list[dict[str, object]]:
    return [
        {"text": QUESTION, "metadata": {"session_id": session}},
        {"text": ANSWER, "metadata": {"session_id": session}},
    ]


def test_an_answer_is_found_through_the_question_it_answers(store):
    _, answer = store.add_memories(_turns())
    store.add_memory("I bought a new bike for the summer.", metadata={"session_id": "s2"})

    assert store.get(answer)["context"] == QUESTION
    found = store.search("pottery class", top_k=2)
    assert answer in [m["id"] for m in found]
    # The context frames the answer; it is not part of its text.
    assert store.get(answer)["text"] == ANSWER


def test_a_turn_written_later_gets_the_stored_turn_before_it(store):
    store.add_memories(_turns())
    store.add_memory("Remember to renew the gym card.", "todo", metadata={"session_id": "s1"})
    later = store.add_memory("I made a bowl for my mother.", metadata={"session_id": "s1"})
    other = store.add_memory("Anything new at work?", metadata={"session_id": "s9"})

    # The previous dialogue turn of the same conversation, not the todo written between.
    assert store.get(later)["context"] == ANSWER
    # The first turn of a conversation has nothing before it.
    assert store.get(other)["context"] is None


def test_an_empty_context_or_the_setting_turns_it_off(store, make_store):
    store.add_memories(_turns())
    bare = store.add_memory("It was fun.", metadata={"session_id": "s1"}, context="")
    assert store.get(bare)["context"] is None

    off = make_store(user_id="bob", settings=StoreSettings(session_context=False))
    _, answer = off.add_memories(_turns())
    assert off.get(answer)["context"] is None


def test_only_dialogue_turns_with_a_session_get_one(store):
    _, answer = store.add_memories(
        [
            {"text": QUESTION},  # no session
            {"text": ANSWER},
        ]
    )
    decision = store.add_memory(
        "We chose PostgreSQL.", "key_decision", metadata={"session_id": "s1"}
    )
    assert store.get(answer)["context"] is None
    assert store.get(decision)["context"] is None
    given = store.add_memory("Yes.", metadata={"session_id": "s1"}, context="Is it raining?")
    assert store.get(given)["context"] == "Is it raining?"


def test_a_long_turn_gives_only_its_end(store):
    long_question = " ".join(["word"] * 200) + " so which city did you pick in the end?"
    _, answer = store.add_memories(
        [
            {"text": long_question, "metadata": {"session_id": "s1"}},
            {"text": "Lisbon.", "metadata": {"session_id": "s1"}},
        ]
    )
    context = store.get(answer)["context"]
    assert context.endswith("which city did you pick in the end?")
    assert len(context) < len(long_question) / 2
    assert not context.startswith("ord")  # starts at a word

    zh_question = "我们上次聊到的" * 30 + "你最后选了哪个城市？"
    _, zh_answer = store.add_memories(
        [
            {"text": zh_question, "metadata": {"session_id": "s3"}},
            {"text": "里斯本。", "metadata": {"session_id": "s3"}},
        ]
    )
    zh_context = store.get(zh_answer)["context"]
    assert zh_context.endswith("你最后选了哪个城市？")
    assert len(zh_context) <= 80


def test_a_private_turn_never_frames_a_shared_one(make_store):
    store = make_store(user_id="alice")
    secret = "My bank PIN is 4711, keep it to yourself."
    store.add_memory(secret, metadata={"session_id": "s1"}, agent_id="coder", private=True)

    shared = store.add_memory("Shall we plan the trip?", metadata={"session_id": "s1"})
    own_private = store.add_memory(
        "Noted.", metadata={"session_id": "s1"}, agent_id="coder", private=True
    )
    by_other_agent = store.add_memory(
        "Which dates?", metadata={"session_id": "s1"}, agent_id="planner"
    )

    assert store.get(shared)["context"] is None
    # A private turn of the same agent frames its next private turn.
    assert store.get(own_private, agent_id="coder")["context"] == "Shall we plan the trip?"
    # Another agent sees neither the private turn nor its text as a context.
    assert store.get(by_other_agent, agent_id="planner")["context"] == "Shall we plan the trip?"
    for m in store.list_memories(limit=50):
        assert secret not in (m.get("context") or "")


def test_one_users_turns_never_frame_anothers(make_store):
    alice = make_store(user_id="alice")
    bob = make_store(user_id="bob")
    alice.add_memories(_turns("shared-id"))
    first_of_bob = bob.add_memory("Hello there.", metadata={"session_id": "shared-id"})
    assert bob.get(first_of_bob)["context"] is None


async def test_the_async_store_does_the_same(db_url, embedder):
    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
        await store.add_memories(_turns())
        later = await store.add_memory("I made a bowl.", metadata={"session_id": "s1"})
        assert (await store.get(later))["context"] == ANSWER


def test_finding_a_conversations_last_turn_is_one_index_probe(store, raw):
    """A new conversation of a user with many memories: the lookup of its last turn
    reads the session index (migration 0008), not every memory of the user."""
    from memory_pg.sql import turns

    store.add_memories(_turns())
    raw.execute(
        "INSERT INTO memory_pg_memories (user_id, memory_type, text, embedding,"
        " embedding_model, search_tsv, content_hash, metadata)"
        " SELECT 'alice', 'dialogue', 'turn ' || i, array_fill(0.1::real, ARRAY[384])::vector,"
        " 'sentence-transformers/all-MiniLM-L6-v2', to_tsvector('simple', 'turn ' || i),"
        " md5(i::text), jsonb_build_object('session_id', 'old-' || (i % 500))"
        " FROM generate_series(1, 20000) AS i"
    )
    raw.execute("ANALYZE memory_pg_memories")
    stmt, values = turns.session_tails("alice", ["a-new-session"], None)
    compiled = stmt.compile(dialect=store.engine.dialect, compile_kwargs={})
    with store.engine.connect() as conn:
        plan = (
            conn.exec_driver_sql("EXPLAIN " + str(compiled), {**compiled.params, **values})
            .scalars()
            .all()
        )
    text = "\n".join(plan)
    assert "memory_pg_memories_user_session_idx" in text, text


def test_after_a_long_pause_a_turn_opens_a_new_exchange(store):
    from datetime import datetime, timedelta, timezone

    monday = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
    at = [monday, monday + timedelta(minutes=5), monday + timedelta(days=3)]
    texts = ["Any plans for the weekend?", "Hiking with my sister.", "Bought new boots today."]
    ids = store.add_memories(
        [
            {"text": t, "metadata": {"session_id": "chat"}, "event_time": when}
            for t, when in zip(texts, at, strict=True)
        ]
    )
    later = store.add_memory(
        "They fit well.",
        metadata={"session_id": "chat"},
        event_time=monday + timedelta(days=3, minutes=2),
    )
    assert store.get(ids[1])["context"] == texts[0]  # minutes apart: one exchange
    assert store.get(ids[2])["context"] is None  # days apart: a new one
    assert store.get(later)["context"] == texts[2]  # the stored turn, minutes before
    much_later = store.add_memory("Hello again.", metadata={"session_id": "chat"})  # now
    assert store.get(much_later)["context"] is None
