"""An LLM confirms or refuses the change the rules found, with the cue in its prompt (issue 36).

The real OpenAI-compatible client against the local stand-in: a change it
confirms replaces the old memory and the history records the confirmation; a
change it refuses keeps both.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memory_pg.config import LLMSettings
from memory_pg.llm import OpenAICompatibleLLM
from tests.fake_openai import (
    FakeOpenAI,
    fake_openai_fixture,  # noqa: F401
    reply,
)


@pytest.fixture
def llm(fake_openai: FakeOpenAI) -> Iterator[OpenAICompatibleLLM]:
    settings = LLMSettings(base_url=fake_openai.base_url, api_key="k", model="m", timeout_s=5)
    with OpenAICompatibleLLM(settings, backoff_base_s=0.01, backoff_max_s=0.02) as client:
        yield client


def test_a_confirmed_change_replaces_and_says_so(
    make_store: Any, fake_openai: FakeOpenAI, llm: OpenAICompatibleLLM
) -> None:
    store = make_store(user_id="alice", judge=llm)
    old = store.add_memory("The offsite is in Lisbon", "key_decision")
    fake_openai.script(reply("CONTRADICTS"))
    new = store.add_memory("The offsite moved to Porto", "key_decision")
    assert store.get(old)["superseded_by"] == new
    event = next(e for e in store.history(old) if e["event"] == "superseded")
    assert event["detail"]["evidence"]["confirmed_by"] == "judge"
    # The judge saw both texts and the signal the rules found.
    asked = [p for p in fake_openai.prompts if "The offsite moved to Porto" in p]
    assert asked and "signals a change with: moved" in asked[-1]


def test_a_refused_change_keeps_both(
    make_store: Any, fake_openai: FakeOpenAI, llm: OpenAICompatibleLLM
) -> None:
    store = make_store(user_id="alice", judge=llm)
    store.add_memory("The offsite is in Lisbon", "key_decision")
    fake_openai.script(reply("DIFFERENT"), reply("DIFFERENT"))
    store.add_memory("The offsite moved to Porto", "key_decision")
    assert len(store.list_memories()) == 2


def test_a_key_said_again_with_an_untyped_value_is_replaced_only_when_the_llm_confirms(
    make_store: Any, fake_openai: FakeOpenAI, llm: OpenAICompatibleLLM
) -> None:
    offline = make_store(user_id="bob")
    kept = offline.add_memory("My favorite color is green.", "user_profile")
    offline.add_memory("Favorite color: navy blue", "user_profile")
    # A word that may describe as well as name ("green", "gentle"): offline, both kept.
    assert offline.get(kept)["superseded_by"] is None
    # Two names are two values of one key: offline too, the new one replaces.
    dentist = offline.add_memory("My dentist is Dr. Patel.", "user_profile")
    offline.add_memory("Dentist — Dr. Kim, over on 5th Ave.", "user_profile")
    assert offline.get(dentist)["superseded_by"] is not None

    store = make_store(user_id="alice", judge=llm)
    old = store.add_memory("My favorite color is green.", "user_profile")
    fake_openai.script(reply("CONTRADICTS"))
    new = store.add_memory("Favorite color: navy blue", "user_profile")
    assert store.get(old)["superseded_by"] == new
    event = next(e for e in store.history(old) if e["event"] == "superseded")
    assert event["detail"]["evidence"]["cue_kind"] == "restated"
    assert event["detail"]["evidence"]["confirmed_by"] == "judge"
    assert "green" in fake_openai.requests[-1]["messages"][-1]["content"]
