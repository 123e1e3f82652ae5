"""The Hermes Agent provider, driven by Hermes' own MemoryManager and plugin loader.

Skipped where hermes-agent is not installed: it pins its own versions of openai,
pydantic and others, so it lives in a separate environment (see the README).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

memory_manager = pytest.importorskip(
    "agent.memory_manager",
    reason="hermes-agent is not installed (pip install 'memory-pg[hermes]')",
)

from memory_pg import _cli_hermes  # noqa: E402
from memory_pg.integrations.hermes import PROVIDER_NAME, MemoryPgProvider  # noqa: E402
from tests.fake_openai import (  # noqa: E402
    FakeOpenAI,
    fake_openai_fixture,  # noqa: F401
    reply,
)


@pytest.fixture(autouse=True)
def no_llm_from_the_host(monkeypatch):
    """The offline extractor unless a test configures an LLM."""
    for name in ("MEMORY_PG_LLM_BASE_URL", "MEMORY_PG_LLM_API_KEY", "MEMORY_PG_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def manager_for(store, **init) -> memory_manager.MemoryManager:
    manager = memory_manager.MemoryManager()
    manager.add_provider(MemoryPgProvider(store, compact_threshold=4))
    manager.initialize_all("session-1", platform="cli", **init)
    return manager


def turn(manager, user: str, assistant: str) -> None:
    manager.sync_all(user, assistant, session_id="session-1")
    assert manager.flush_pending(timeout=60)


def test_turns_are_buffered_compacted_and_recalled(make_store):
    store = make_store()
    manager = manager_for(store, user_id="alice")
    turn(manager, "我是做跨境电商的", "好的")
    pending = store.pending_turns(user_id="alice")
    assert [(t["role"], t["session_id"]) for t in pending] == [
        ("user", "session-1"),
        ("assistant", "session-1"),
    ]
    turn(manager, "我们决定使用 PostgreSQL 作为数据库", "明白")
    assert store.pending_turns(user_id="alice") == []

    context = manager.prefetch_all("数据库选型")
    assert "PostgreSQL" in context
    assert "PostgreSQL" in memory_manager.build_memory_context_block(context)


def test_session_end_compacts_what_is_pending(make_store):
    store = make_store()
    manager = manager_for(store, user_id="alice")
    turn(manager, "下周要完成支付模块", "好")
    manager.on_session_end([])
    assert store.pending_turns(user_id="alice") == []
    assert any(m["memory_type"] == "todo" for m in store.list_memories(user_id="alice"))


def test_pre_compress_saves_and_reports_the_memories(make_store):
    store = make_store()
    manager = manager_for(store, user_id="alice")
    turn(manager, "我们决定使用 PostgreSQL 作为数据库", "好")
    summary = manager.on_pre_compress([{"role": "user", "content": "..."}])
    assert "PostgreSQL" in summary
    assert store.pending_turns(user_id="alice") == []


def test_tools_search_add_and_forget(make_store):
    manager = manager_for(make_store(), user_id="alice")
    names = {s["name"] for s in manager.get_all_tool_schemas()}
    assert {"memory_pg_search", "memory_pg_add", "memory_pg_forget"} <= names

    added = json.loads(
        manager.handle_tool_call(
            "memory_pg_add",
            {"text": "Payments go through Stripe", "memory_type": "key_decision", "topic": "pay"},
        )
    )
    found = json.loads(manager.handle_tool_call("memory_pg_search", {"query": "payments"}))
    assert found["results"][0]["id"] == added["id"]
    assert json.loads(manager.handle_tool_call("memory_pg_forget", {"memory_id": added["id"]})) == {
        "forgotten": True
    }
    found = json.loads(manager.handle_tool_call("memory_pg_search", {"query": "payments"}))
    assert found["results"] == []
    refused = json.loads(manager.handle_tool_call("memory_pg_add", {"text": "  "}))
    assert "EmptyText" in refused["error"]


def test_users_are_scoped_by_hermes_user_id(make_store):
    store = make_store()
    alice = manager_for(store, user_id="alice")
    alice.handle_tool_call("memory_pg_add", {"text": "Alice uses PostgreSQL"})
    bob = manager_for(store, user_id="bob")
    assert bob.prefetch_all("PostgreSQL") == ""
    assert "PostgreSQL" in alice.prefetch_all("PostgreSQL")


def test_cron_and_subagent_contexts_write_nothing(make_store):
    store = make_store()
    manager = manager_for(store, user_id="alice", agent_context="cron")
    turn(manager, "system prompt of a cron job", "done")
    assert store.pending_turns(user_id="alice") == []


def test_install_puts_a_plugin_hermes_loads(tmp_path: Path, monkeypatch, make_store):
    from memory_pg.cli import main

    out_file = tmp_path / "out.txt"
    with out_file.open("w", encoding="utf-8") as out:
        code = main(["hermes", "install", "--hermes-home", str(tmp_path)], out=out)
    assert code == 0
    printed = out_file.read_text(encoding="utf-8")
    assert f"hermes config set memory.provider {PROVIDER_NAME}" in printed

    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    from plugins.memory import discover_memory_providers, load_memory_provider

    assert PROVIDER_NAME in [name for name, _, _ in discover_memory_providers()]
    provider = load_memory_provider(PROVIDER_NAME)
    assert type(provider).__name__ == "MemoryPgProvider"
    assert provider.name == PROVIDER_NAME
    # Re-running the installer is harmless.
    assert _cli_hermes.install(tmp_path) == tmp_path / "plugins" / PROVIDER_NAME


def test_an_llm_from_the_environment_compacts(make_store, monkeypatch, fake_openai: FakeOpenAI):
    monkeypatch.setenv("MEMORY_PG_LLM_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("MEMORY_PG_LLM_API_KEY", "k")
    monkeypatch.setenv("MEMORY_PG_LLM_MODEL", "qwen-plus")
    fake_openai.script(
        reply(
            '```json\n{"user_profile": [], "project_status": [], "todos": [], '
            '"key_decisions": [{"decision": "数据库用 PostgreSQL", "topic": "database"}]}\n```'
        )
    )
    store = make_store()
    manager = manager_for(store, user_id="alice")
    turn(manager, "数据库就定 PostgreSQL 吧", "好")
    manager.on_session_end([])
    assert "数据库就定 PostgreSQL 吧" in fake_openai.prompts[0]
    [memory] = store.list_memories(user_id="alice")
    assert (memory["memory_type"], memory["text"], memory["topic"]) == (
        "key_decision",
        "数据库用 PostgreSQL",
        "database",
    )
