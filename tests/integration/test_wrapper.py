"""MemoryWrapper around a small deterministic agent: recall, buffering, compaction, async."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.compaction import MemoryCompactor
from memory_pg.errors import InvalidArgument, MissingUserScope
from memory_pg.retrieval import AsyncMemoryRetriever, MemoryRetriever
from memory_pg.wrapper import (
    INPUT_HEADER,
    MEMORY_HEADER,
    RECENT_HEADER,
    AsyncMemoryWrapper,
    MemoryWrapper,
)


class RuleAgent:
    """Answers from the prompt it was given, and keeps every prompt for the test to read."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def chat(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if "PostgreSQL" in prompt.split(INPUT_HEADER)[0]:
            return "你们用的是 PostgreSQL。"
        return "好的。"


class FailingAgent:
    def chat(self, prompt: str) -> str:
        raise RuntimeError("model down")


def test_recall_before_and_buffer_after_each_turn(store):
    store.add_memory("使用 PostgreSQL 作为数据库", "key_decision", topic="database")
    agent = RuleAgent()
    bot = MemoryWrapper(agent, store, recent_window=2, compact_threshold=100)

    assert bot.chat("我们的数据库选型是什么？") == "你们用的是 PostgreSQL。"
    bot.chat("第二个问题")
    bot.chat("第三个问题")

    first, _, third = agent.prompts
    assert first.startswith(MEMORY_HEADER)
    assert "1. [关键决策 key_decision] 使用 PostgreSQL 作为数据库" in first
    assert RECENT_HEADER not in first
    assert first.endswith(f"{INPUT_HEADER}\nuser: 我们的数据库选型是什么？")
    # Only the last two turns of the conversation are quoted.
    recent = third.split(RECENT_HEADER)[1].split(INPUT_HEADER)[0]
    assert "第二个问题" in recent and "我们的数据库选型" not in recent
    turns = store.pending_turns()
    assert [(t["role"], t["content"]) for t in turns[:2]] == [
        ("user", "我们的数据库选型是什么？"),
        ("assistant", "你们用的是 PostgreSQL。"),
    ]
    assert len(turns) == 6 and {t["session_id"] for t in turns} == {bot.session_id}


def test_the_user_turn_survives_an_agent_failure(store):
    bot = MemoryWrapper(FailingAgent(), store)
    with pytest.raises(RuntimeError):
        bot.chat("remember that I prefer Go for the backend")
    assert [(t["role"], t["content"]) for t in store.pending_turns()] == [
        ("user", "remember that I prefer Go for the backend")
    ]


def test_compaction_at_the_threshold_feeds_a_new_session(make_store):
    store = make_store(user_id="alice")
    bot = MemoryWrapper(RuleAgent(), store, compact_threshold=4)
    bot.chat("我是做跨境电商的")
    assert len(store.pending_turns()) == 2 and store.list_memories() == []
    bot.chat("我们决定使用 PostgreSQL 作为数据库")

    assert store.pending_turns() == []
    kinds = {m["memory_type"] for m in store.list_memories()}
    assert {"user_profile", "key_decision"} <= kinds

    # A new store and wrapper: the decision reaches the agent's prompt.
    agent = RuleAgent()
    later = MemoryWrapper(agent, make_store(user_id="alice"))
    assert later.chat("数据库选型") == "你们用的是 PostgreSQL。"


def test_memories_of_one_user_never_reach_another(make_store):
    alice = MemoryWrapper(RuleAgent(), make_store(user_id="alice"), compact_threshold=2)
    alice.chat("我们决定使用 PostgreSQL 作为数据库")
    agent = RuleAgent()
    bob = MemoryWrapper(agent, make_store(), user_id="bob")
    assert bob.chat("数据库选型") == "好的。"
    assert MEMORY_HEADER not in agent.prompts[0]


def test_resuming_a_session_quotes_its_buffered_turns(make_store):
    store = make_store(user_id="alice")
    MemoryWrapper(RuleAgent(), store, session_id="s1").chat("my cat is called Miso")
    agent = RuleAgent()
    MemoryWrapper(agent, make_store(user_id="alice"), session_id="s1").chat("what is her name?")
    assert "user: my cat is called Miso" in agent.prompts[0].split(INPUT_HEADER)[0]


def test_a_retriever_supplies_the_memory_block(store):
    class Retriever:
        def __init__(self) -> None:
            self.calls: list[tuple[str, str | None]] = []

        def retrieve_context(self, text: str, *, user_id: str | None = None) -> str:
            self.calls.append((text, user_id))
            return "- the user likes tea"

    retriever, agent = Retriever(), RuleAgent()
    MemoryWrapper(agent, store, retriever=retriever).chat("drink?")
    assert retriever.calls == [("drink?", "alice")]
    assert "- the user likes tea" in agent.prompts[0]


def test_the_librarys_retriever_gives_the_prompt_one_memory_header(store):
    store.add_memory("使用 PostgreSQL 作为数据库", "key_decision", topic="database")
    agent = RuleAgent()
    bot = MemoryWrapper(agent, store, retriever=MemoryRetriever(store, top_k=5))
    assert bot.chat("我们的数据库选型是什么？") == "你们用的是 PostgreSQL。"
    prompt = agent.prompts[0]
    assert prompt.startswith(
        f"{MEMORY_HEADER}\n1. [关键决策 key_decision] 使用 PostgreSQL 作为数据库"
    )
    assert prompt.count("相关记忆") == 1 and prompt.count("Relevant memories") == 1


async def test_the_async_retriever_gives_the_prompt_one_memory_header(db_url, embedder):
    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
        await store.add_memory("使用 PostgreSQL 作为数据库", "key_decision", topic="database")
        agent = AsyncRuleAgent()
        bot = AsyncMemoryWrapper(agent, store, retriever=AsyncMemoryRetriever(store))
        assert await bot.chat("数据库选型") == "PostgreSQL"
        assert agent.prompts[0].count("相关记忆") == 1


class BlockingCompactor(MemoryCompactor):
    """The offline compactor, held until the test releases it."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.release = threading.Event()

    def compact_to_memories(self, texts: Any) -> Any:
        self.started.set()
        assert self.release.wait(60), "never released"
        return super().compact_to_memories(texts)


def test_background_compaction_does_not_hold_the_reply(store):
    compactor = BlockingCompactor()
    with MemoryWrapper(
        RuleAgent(), store, compactor=compactor, compact_threshold=2, background=True
    ) as bot:
        reply = bot.chat("我们决定使用 PostgreSQL 作为数据库")
        # The reply is back while the compactor is still held.
        assert reply == "好的。"
        assert compactor.started.wait(60)
        assert store.list_memories() == []
        compactor.release.set()
        bot.flush()
        assert store.pending_turns() == []
        assert any(m["memory_type"] == "key_decision" for m in store.list_memories())


def test_a_background_failure_surfaces_on_flush(store):
    class Broken:
        def compact_to_memories(self, texts: Any) -> Any:
            raise RuntimeError("compactor down")

    bot = MemoryWrapper(
        RuleAgent(), store, compactor=Broken(), compact_threshold=2, background=True
    )
    bot.chat("hello")
    with pytest.raises(RuntimeError, match="compactor down"):
        bot.close()
    assert len(store.pending_turns()) == 2  # kept for the next try


@pytest.mark.parametrize(
    "kwargs",
    [{"recent_window": -1}, {"compact_threshold": 0}, {"top_k": 0}, {"compact_threshold": True}],
)
def test_bad_settings_are_refused(store, kwargs):
    with pytest.raises(InvalidArgument):
        MemoryWrapper(RuleAgent(), store, **kwargs)


def test_an_agent_without_chat_or_a_user_is_refused(make_store):
    with pytest.raises(InvalidArgument):
        MemoryWrapper(object(), make_store(user_id="alice"))  # type: ignore[arg-type]
    with pytest.raises(MissingUserScope):
        MemoryWrapper(RuleAgent(), make_store())


class AsyncRuleAgent:
    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def chat(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return "PostgreSQL" if "PostgreSQL" in prompt.split(INPUT_HEADER)[0] else "ok"


async def test_async_wrapper_compacts_and_recalls(db_url, embedder):
    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
        async with AsyncMemoryWrapper(
            AsyncRuleAgent(), store, compact_threshold=2, background=True
        ) as bot:
            await bot.chat("我们决定使用 PostgreSQL 作为数据库")
            await bot.flush()
        assert await store.pending_turns() == []
        agent = AsyncRuleAgent()
        assert await AsyncMemoryWrapper(agent, store).chat("数据库选型") == "PostgreSQL"
