"""The wrapper recalls what the user said before it is compacted (in-process cases;
two real processes: ``test_wrapper_new_process.py``)."""

from __future__ import annotations

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.retrieval import MemoryRetriever
from memory_pg.wrapper import INPUT_HEADER, RECENT_HEADER, AsyncMemoryWrapper, MemoryWrapper

DECISION = "我们决定使用 PostgreSQL 作为数据库"


class Agent:
    def __init__(self) -> None:
        self.prompts: list[str] = []

    def chat(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return "好的"


class AsyncAgent(Agent):
    async def chat(self, prompt: str) -> str:  # type: ignore[override]
        return super().chat(prompt)


def memories_of(prompt: str) -> str:
    return prompt.split(RECENT_HEADER)[0].split(INPUT_HEADER)[0]


def test_a_new_session_recalls_a_turn_still_in_the_buffer_after_the_retrievers_block(store):
    store.add_memory("数据库每天凌晨备份", "project_status")
    MemoryWrapper(Agent(), store).chat(DECISION)
    agent = Agent()
    MemoryWrapper(agent, store, retriever=MemoryRetriever(store)).chat("数据库选型？")
    lines = memories_of(agent.prompts[0]).strip().splitlines()
    assert lines[1].startswith("1. [项目状态 project_status] 数据库每天凌晨备份")
    assert lines[2].startswith(f"2. [对话 dialogue] {DECISION}")


def test_a_turn_out_of_the_recent_window_is_recalled_and_one_inside_it_is_not_repeated(store):
    agent = Agent()
    bot = MemoryWrapper(agent, store, recent_window=2)
    bot.chat(DECISION)
    bot.chat("我住在杭州")
    bot.chat("我在杭州哪个区？")
    assert "我住在杭州" not in memories_of(agent.prompts[-1])  # in the window already
    bot.chat("数据库选型？")
    # The decision left the window (2 turns: the last question and its reply): recalled.
    assert DECISION in memories_of(agent.prompts[-1])
    assert store.pending_turns() != []  # nothing was compacted: all from the buffer


async def test_the_async_wrapper_recalls_what_another_session_left_in_the_buffer(db_url, embedder):
    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
        await AsyncMemoryWrapper(AsyncAgent(), store).chat(DECISION)
        agent = AsyncAgent()
        await AsyncMemoryWrapper(agent, store).chat("数据库选型？")
        assert DECISION in memories_of(agent.prompts[0])
