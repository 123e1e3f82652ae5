"""A Hermes session that ended without compacting (killed, or its 10 s shutdown ran out)
left its turns buffered: the next session recalls what the user said in them.

Skipped where hermes-agent is not installed.
"""

from __future__ import annotations

import pytest

memory_manager = pytest.importorskip(
    "agent.memory_manager",
    reason="hermes-agent is not installed (pip install 'memory-pg[hermes]')",
)

from memory_pg.integrations.hermes import MemoryPgProvider  # noqa: E402


@pytest.fixture(autouse=True)
def no_llm_from_the_host(monkeypatch):
    for name in ("MEMORY_PG_LLM_BASE_URL", "MEMORY_PG_LLM_API_KEY", "MEMORY_PG_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)


def manager_for(store, session: str) -> memory_manager.MemoryManager:
    manager = memory_manager.MemoryManager()
    manager.add_provider(MemoryPgProvider(store, compact_threshold=20))
    manager.initialize_all(session, platform="cli", user_id="alice")
    return manager


def test_the_next_session_recalls_turns_a_killed_one_left_buffered(make_store):
    store = make_store()
    first = manager_for(store, "session-1")
    first.sync_all("我们决定使用 PostgreSQL 作为数据库", "明白", session_id="session-1")
    assert first.flush_pending(timeout=60)
    # No shutdown, no session end: the process was killed.
    assert len(store.pending_turns(user_id="alice")) == 2

    second = manager_for(store, "session-2")
    context = second.prefetch_all("数据库选型？")
    assert "我们决定使用 PostgreSQL 作为数据库" in context
    assert "明白" not in context  # the assistant's reply is not what the user said
    # This session's own turns are in Hermes' context already: not repeated.
    second.sync_all("我住在杭州", "好", session_id="session-2")
    assert second.flush_pending(timeout=60)
    assert "杭州" not in second.prefetch_all("我住在杭州吗？")
