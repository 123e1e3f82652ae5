"""The seed article's name for the wrapper: kept, deprecated, pointing to the Hermes provider."""

from __future__ import annotations

import pytest

from memory_pg import HermesMemoryWrapper, MemoryWrapper


class EchoAgent:
    def chat(self, prompt: str) -> str:
        return "ok"


def test_hermes_memory_wrapper_warns_and_still_wraps(store):
    with pytest.warns(DeprecationWarning, match="memory-pg hermes install") as caught:
        bot = HermesMemoryWrapper(EchoAgent(), store)
    assert "MemoryWrapper" in str(caught[0].message)
    assert isinstance(bot, MemoryWrapper)
    assert bot.chat("我们决定使用 PostgreSQL 作为数据库") == "ok"
    assert [t["role"] for t in store.pending_turns()] == ["user", "assistant"]


def test_memory_wrapper_itself_does_not_warn(store):
    # pytest turns warnings into errors: constructing it must stay silent.
    MemoryWrapper(EchoAgent(), store)
