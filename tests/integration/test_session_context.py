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


def test_the_turn_before_is_the_last_of_the_chain_whatever_lies_between(make_store):
    store = make_store(user_id="alice")
    store.add_memories(
        [
            {"text": QUESTION, "metadata": {"session_id": "s1"}},
            {"text": "Buy clay", "memory_type": "todo", "metadata": {"session_id": "s1"}},
            {"text": ANSWER, "metadata": {"session_id": "s1"}},
        ]
    )
    store.add_memories(
        [
            {"text": "Where shall we eat?", "metadata": {"session_id": "s2"}},
            {"text": "My PIN is 4711", "metadata": {"session_id": "s2"}, "private": True},
            {"text": "The noodle bar on Main Street.", "metadata": {"session_id": "s2"}},
        ],
        agent_id="coder",
    )
    # Turns of one write share their times: the chain of the write decides, every time.
    for _ in range(3):
        nxt = store.add_memory("I made a bowl.", metadata={"session_id": "s1"}, context=None)
        assert store.get(nxt)["context"] == ANSWER
        store.delete_memory(nxt)
        other = store.add_memory("Sounds good.", metadata={"session_id": "s2"}, agent_id="planner")
        assert store.get(other)["context"] == "The noodle bar on Main Street."
        store.delete_memory(other)


def test_a_long_or_odd_session_id_is_stored_like_any_metadata(store):
    long_id = "x" * 5000
    first = store.add_memory(QUESTION, metadata={"session_id": long_id})
    second = store.add_memory(ANSWER, metadata={"session_id": long_id})
    assert store.get(second)["context"] == QUESTION
    numeric = store.add_memory("Hello.", metadata={"session_id": 42})
    assert store.get(numeric)["context"] is None  # not a conversation id: no frame
    assert store.get(first)["text"] == QUESTION


def test_an_erased_turn_leaves_no_trace_in_the_next_ones_context(store):
    secret = "My door code is 8812-alpha, do you remember it?"
    first, second = store.add_memories(
        [
            {"text": secret, "metadata": {"session_id": "s1"}},
            {"text": "Yes, I wrote it down.", "metadata": {"session_id": "s1"}},
        ]
    )
    assert store.get(second)["context"] == secret
    hits = store.search("door code 8812-alpha", top_k=5, min_lexical=0.01, min_similarity=0.99)
    assert second in [h["id"] for h in hits]

    assert store.delete_memory(first) is True
    after = store.get(second)
    assert after["context"] is None and after["text"] == "Yes, I wrote it down."
    hits = store.search("door code 8812-alpha", top_k=5, min_lexical=0.01, min_similarity=0.99)
    assert hits == []
    # Its vector no longer carries the erased words either: it is the turn's own.
    import io
    import json

    out = io.StringIO()
    store.export_user_memory(out)
    (line,) = [json.loads(x) for x in out.getvalue().splitlines()]
    own = store.embedder.embed_documents(["Yes, I wrote it down."])[0]
    assert sum(a * b for a, b in zip(line["embedding"], own, strict=True)) > 0.999


def test_an_expired_turn_frames_nothing(store):
    from datetime import datetime, timedelta, timezone

    soon = datetime.now(timezone.utc) + timedelta(milliseconds=300)
    store.add_memory(
        "The wifi password is blue-otter-9", metadata={"session_id": "s1"}, expires_at=soon
    )
    import time

    time.sleep(0.5)
    later = store.add_memory("Thanks!", metadata={"session_id": "s1"})
    assert store.get(later)["context"] is None


def test_a_replacement_keeps_the_frame_and_the_setting_is_checked(store):
    import pytest

    from memory_pg.errors import InvalidArgument

    _, answer = store.add_memories(_turns())
    new = store.replace_memory(answer, "Yes, last Saturday, and I loved it.")
    assert store.get(new)["context"] == QUESTION
    with pytest.raises(InvalidArgument):
        StoreSettings(session_context="false")  # type: ignore[arg-type]


async def test_the_async_store_erases_the_frame_too(db_url, embedder):
    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
        first, second = await store.add_memories(_turns())
        assert await store.delete_memory(first) is True
        assert (await store.get(second))["context"] is None
