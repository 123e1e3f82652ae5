"""MemoryWrapper answers whatever memory meets: long or empty turns, a database that is
down, compacted memories the store refuses, a background compaction that failed.

The agent's reply is what the user waits for: memory is logged when it fails, never
the reason a turn goes unanswered, and what the store refuses is kept in another form.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.compaction import CompactedMemory, MemoryCompactor
from memory_pg.config import LLMSettings
from memory_pg.llm import OpenAICompatibleLLM
from memory_pg.wrapper import MEMORY_HEADER, AsyncMemoryWrapper, MemoryWrapper
from tests.fake_openai import (
    FakeOpenAI,
    fake_openai_fixture,  # noqa: F401
    reply,
)
from tests.integration._security_support import database_closed

LONG_REPLY = "这是一个很长的回答。" * 1000  # 10,000 characters, over max_text_chars
LONG_PASTE = "请看这段日志：" + "x" * 9000


class Agent:
    """Replies with what it is told to, and keeps the prompts it was sent."""

    def __init__(self, answer: str = "好的") -> None:
        self.answer = answer
        self.prompts: list[str] = []

    def chat(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.answer


def rows(store: Any, role: str) -> list[str]:
    return [t["content"] for t in store.pending_turns() if t["role"] == role]


def test_a_reply_over_the_text_limit_is_returned_and_buffered_whole(store):
    bot = MemoryWrapper(Agent(LONG_REPLY), store)
    assert bot.chat("写一篇长文") == LONG_REPLY
    pieces = rows(store, "assistant")
    assert len(pieces) == 2 and "".join(pieces) == LONG_REPLY
    assert all(len(p) <= store.settings.max_text_chars for p in pieces)


def test_a_long_paste_reaches_the_agent_and_is_buffered_whole(store):
    agent = Agent("ok")
    bot = MemoryWrapper(agent, store)
    assert bot.chat(LONG_PASTE) == "ok"
    assert agent.prompts and LONG_PASTE in agent.prompts[0]
    assert "".join(rows(store, "user")) == LONG_PASTE


def test_empty_turns_are_answered_and_not_buffered(store):
    assert MemoryWrapper(Agent(""), store).chat("hi") == ""
    assert MemoryWrapper(Agent("ok"), store).chat("   ") == "ok"
    buffered = [(t["role"], t["content"]) for t in store.pending_turns()]
    assert buffered == [("user", "hi"), ("assistant", "ok")]


def test_the_agent_answers_while_the_database_is_down(store, postgresql, pg_server, caplog):
    store.add_memory("使用 PostgreSQL 作为数据库", "key_decision", topic="database")
    agent = Agent("answer")
    bot = MemoryWrapper(agent, store)
    with database_closed(pg_server, postgresql.info.dbname):
        with caplog.at_level(logging.WARNING, logger="memory_pg.wrapper"):
            assert bot.chat("数据库选型？") == "answer"
    assert len(agent.prompts) == 1 and MEMORY_HEADER not in agent.prompts[0]
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "DatabaseUnavailable" in logged and "数据库选型" not in logged
    # Back up: the next turn recalls and is buffered again.
    assert bot.chat("数据库选型？") == "answer"
    assert "PostgreSQL" in agent.prompts[1]
    assert rows(store, "user") == ["数据库选型？"]


def test_an_over_long_llm_item_no_longer_blocks_compaction(store, fake_openai: FakeOpenAI):
    echoed = "用户贴了一份文档：" + "内容" * 4100
    answer = {"user_profile": [echoed], "project_status": [], "key_decisions": [], "todos": []}
    fake_openai.script(*[reply(json.dumps(answer, ensure_ascii=False))] * 3)
    llm = OpenAICompatibleLLM(
        LLMSettings(base_url=fake_openai.base_url, api_key="k", model="m", max_retries=0)
    )
    bot = MemoryWrapper(Agent("收到"), store, compactor=MemoryCompactor(llm), compact_threshold=2)
    assert bot.chat("第0条消息") == "收到"
    assert store.pending_turns() == []
    texts = [m["text"] for m in store.list_memories()]
    pieces = sorted(texts, key=lambda text: not text.startswith("用户贴了一份文档"))
    assert "".join(pieces) == echoed  # split at the limit, nothing lost
    assert bot.chat("第1条消息") == "收到"
    assert store.pending_turns() == []


def test_a_reply_cut_off_at_the_models_limit_keeps_the_turns(store, fake_openai: FakeOpenAI):
    """A reply that stopped at the model's output limit parses once its JSON is closed;
    storing it would keep a half-written fact and lose the rest (a review found it)."""
    cut = '{"user_profile": ["I live in Paris", "I am allergic to pen'
    fake_openai.script(reply(cut, finish_reason="length"))
    llm = OpenAICompatibleLLM(
        LLMSettings(base_url=fake_openai.base_url, api_key="k", model="m", max_retries=0)
    )
    bot = MemoryWrapper(Agent("ok"), store, compactor=MemoryCompactor(llm), compact_threshold=2)
    bot.chat("I live in Paris and I am allergic to penicillin.")
    texts = [m["text"] for m in store.list_memories()]
    assert "I am allergic to pen" not in texts
    # The turns are kept whole, as raw dialogue, not lost.
    assert any("allergic to penicillin" in t for t in texts)


def test_memories_the_store_refuses_are_kept_as_raw_dialogue(store):
    class WrongType:
        def compact_to_memories(self, turns: Any) -> list[CompactedMemory]:
            return [CompactedMemory("no_such_type", "我们决定使用 PostgreSQL")]

    bot = MemoryWrapper(Agent("好的"), store, compactor=WrongType(), compact_threshold=2)
    assert bot.chat("我们决定使用 PostgreSQL 作为数据库") == "好的"
    assert store.pending_turns() == []
    [kept] = store.list_memories()
    assert kept["memory_type"] == "dialogue"
    assert "我们决定使用 PostgreSQL 作为数据库" in kept["text"]
    assert kept["metadata"]["compaction"] == "failed"


def test_a_todo_after_an_ellipsis_outlives_the_decision_it_followed(store):
    bot = MemoryWrapper(Agent("好的"), store, compact_threshold=2)
    bot.chat("我们决定使用 PostgreSQL 作为数据库……下周要完成支付模块")
    bot.chat("数据库改用 MySQL，不再使用 PostgreSQL。")
    current = {(m["memory_type"], m["text"]) for m in store.list_memories()}
    assert ("todo", "下周要完成支付模块") in current
    decisions = [t for kind, t in current if kind == "key_decision"]
    assert decisions and all("MySQL" in t and "支付" not in t for t in decisions)


async def test_async_wrapper_answers_a_long_reply(db_url, embedder):
    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:

        class LongAgent:
            async def chat(self, prompt: str) -> str:
                return LONG_REPLY

        assert await AsyncMemoryWrapper(LongAgent(), store).chat("写一篇长文") == LONG_REPLY
        turns = await store.pending_turns()
        assert "".join(t["content"] for t in turns if t["role"] == "assistant") == LONG_REPLY


async def test_async_background_failure_surfaces_on_flush_after_a_later_turn(db_url, embedder):
    class Flaky:
        def __init__(self) -> None:
            self.calls = 0
            self.failed = asyncio.Event()

        async def compact_to_memories(self, turns: Any) -> list[Any]:
            self.calls += 1
            if self.calls == 1:
                self.failed.set()
                raise RuntimeError("compactor down")
            return []

    class Ok:
        async def chat(self, prompt: str) -> str:
            return "好的"

    compactor = Flaky()
    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
        bot = AsyncMemoryWrapper(
            Ok(), store, compactor=compactor, compact_threshold=1, background=True
        )
        await bot.chat("一")
        await compactor.failed.wait()
        await bot.chat("二")  # its compaction replaces the failed one
        with pytest.raises(RuntimeError, match="compactor down"):
            await bot.flush()
        assert compactor.calls == 2
        await bot.flush()  # raised once


def test_a_turn_with_a_character_postgresql_cannot_store_is_kept(store):
    agent = Agent("ok, noted")
    bot = MemoryWrapper(agent, store)
    assert bot.chat("my code is 12\x003 and \ud800 here") == "ok, noted"
    buffered = [(t["role"], t["content"]) for t in store.pending_turns()]
    assert buffered == [
        ("user", "my code is 12\ufffd3 and \ufffd here"),
        ("assistant", "ok, noted"),
    ]
