"""No user text leaves the machine unless memory-pg itself was configured to send it.

The environment of an agent often holds ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` for
the agent's own model. memory-pg reads only ``MEMORY_PG_LLM_*`` (or explicit
``LLMSettings``): a local OpenAI-compatible stand-in set as ``OPENAI_BASE_URL`` must
receive nothing from the CLI jobs, the Hermes provider or an ``LLMSettings`` without
``base_url``, and an OpenAI key never goes to a ``MEMORY_PG_LLM_BASE_URL`` host.
"""

from __future__ import annotations

import json

import pytest

from memory_pg import LLMSettings, OpenAICompatibleLLM
from memory_pg.errors import LLMError
from memory_pg.integrations.hermes import MemoryPgProvider
from tests.acceptance.test_cli import run
from tests.fake_openai import FakeOpenAI, fake_openai_fixture, reply  # noqa: F401

OPENAI_KEY = "sk-agent-own-key-0123456789"
FRAGMENTS = ["Buy milk tomorrow", "Pick up milk at the store tomorrow"]


def openai_env(fake: FakeOpenAI) -> dict[str, str]:
    """What an agent's environment holds for its own model: the stand-in as OpenAI."""
    return {
        "OPENAI_BASE_URL": fake.base_url,
        "OPENAI_API_KEY": OPENAI_KEY,
        "OPENAI_ORG_ID": "org-agent-own",
    }


@pytest.fixture
def only_openai_env(monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAI) -> FakeOpenAI:
    for name in ("MEMORY_PG_LLM_BASE_URL", "MEMORY_PG_LLM_API_KEY", "MEMORY_PG_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in openai_env(fake_openai).items():
        monkeypatch.setenv(name, value)
    fake_openai.script(*[reply("LEAKED SUMMARY")] * 10)
    return fake_openai


def test_consolidate_with_only_openai_env_sends_nothing(store, db_url, fake_openai):
    store.add_memories(FRAGMENTS)
    fake_openai.script(*[reply("LEAKED SUMMARY")] * 5)
    env = {"MEMORY_PG_DATABASE_URL": db_url, **openai_env(fake_openai)}
    report = json.loads(run(["consolidate", "--user", "alice", "--json"], env).stdout)

    assert fake_openai.requests == []
    assert report["clusters"] == 1  # merged offline
    texts = [m["text"] for m in store.list_memories()]
    assert len(texts) == 1 and "milk" in texts[0] and "LEAKED" not in texts[0]


def test_memory_pg_llm_url_with_only_an_openai_key_never_sends_that_key(store, db_url, fake_openai):
    store.add_memories(FRAGMENTS)
    fake_openai.script(reply("Buy milk at the store tomorrow"))
    env = {
        "MEMORY_PG_DATABASE_URL": db_url,
        "MEMORY_PG_LLM_BASE_URL": fake_openai.base_url,
        "OPENAI_API_KEY": OPENAI_KEY,
        "OPENAI_ORG_ID": "org-agent-own",
    }
    report = json.loads(run(["consolidate", "--user", "alice", "--json"], env).stdout)

    assert report["clusters"] == 1 and len(fake_openai.requests) == 1
    sent = " ".join(fake_openai.headers[0].values())
    assert OPENAI_KEY not in sent and "org-agent-own" not in sent
    assert [m["text"] for m in store.list_memories()] == ["Buy milk at the store tomorrow"]


def test_settings_from_env_ignore_openai_variables(only_openai_env):
    assert LLMSettings.from_env() is None


def test_a_key_without_base_url_never_goes_to_openai_base_url(only_openai_env):
    llm = OpenAICompatibleLLM(LLMSettings(api_key="sk-explicit", max_retries=0, timeout_s=3))
    with llm, pytest.raises(LLMError):  # api.openai.com: unreachable here, or 401
        llm("Alice's private note")
    assert only_openai_env.requests == []


def test_hermes_provider_with_only_openai_env_compacts_offline(make_store, only_openai_env):
    store = make_store()
    provider = MemoryPgProvider(store, compact_threshold=2)
    provider.initialize("session-1", user_id="alice", agent_context="primary")
    provider.sync_turn("我们决定使用 PostgreSQL 作为数据库", "好的")
    provider.on_session_end([])

    assert only_openai_env.requests == []
    assert store.pending_turns(user_id="alice") == []
    texts = [m["text"] for m in store.list_memories(user_id="alice")]
    assert any("PostgreSQL" in t for t in texts)
    assert not any("LEAKED" in t for t in texts)
