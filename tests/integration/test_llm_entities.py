"""Entities an LLM finds while it compacts a dialogue: written with the memories, one call."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from memory_pg.compaction import MemoryCompactor
from memory_pg.config import LLMSettings
from memory_pg.errors import InvalidArgument
from memory_pg.llm import OpenAICompatibleLLM
from tests.fake_openai import (
    FakeOpenAI,
    fake_openai_fixture,  # noqa: F401
    reply,
)

TEXT = "小王说他下个月去北京出差"


@pytest.fixture
def llm(fake_openai: FakeOpenAI) -> Iterator[OpenAICompatibleLLM]:
    settings = LLMSettings(base_url=fake_openai.base_url, api_key="k", model="m", timeout_s=5)
    with OpenAICompatibleLLM(settings, backoff_base_s=0.01, backoff_max_s=0.02) as client:
        yield client


def compact(store: Any, fake_openai: FakeOpenAI, llm: Any, entities: object) -> list[str]:
    answer = {"user_profile": [], "project_status": [TEXT], "key_decisions": [], "todos": []}
    fake_openai.script(reply(json.dumps({**answer, "entities": entities}, ensure_ascii=False)))
    turn = store.append_turn("user", "小王（就是王伟）下个月去北京出差")
    memories = MemoryCompactor(llm).compact_to_memories([{"role": "user", "content": TEXT}])
    return list(store.commit_compaction([turn], memories))


def test_the_llms_entities_and_aliases_are_written_with_its_memories(store, fake_openai, llm):
    listed = [
        {"name": "小王", "kind": "person", "aliases": ["王伟"]},
        {"name": "Acme", "kind": "organization"},  # named by no memory: no entity
    ]
    [memory_id] = compact(store, fake_openai, llm, listed)

    assert len(fake_openai.requests) == 1  # the compaction call, nothing more
    assert '"entities"' in fake_openai.prompts[0]
    by_alias = store.entity("王伟")
    assert by_alias is not None and by_alias["name"] == "小王" and by_alias["kind"] == "person"
    assert [m["id"] for m in by_alias["memories"]] == [memory_id]
    # The rules still add what the LLM did not list; one entity per name, no duplicate.
    names = sorted(e["name"] for e in store.entities())
    assert names == ["北京", "小王"]


@pytest.mark.parametrize(
    "entities", ["小王 is a person", [{"name": 5}, "小王", {"kind": "person"}], None]
)
def test_a_malformed_entity_list_keeps_the_memory_and_the_rules_entities(
    store, fake_openai, llm, entities
):
    [memory_id] = compact(store, fake_openai, llm, entities)

    assert store.get(memory_id)["text"] == TEXT
    about = store.entity("小王")
    assert about is not None and [m["id"] for m in about["memories"]] == [memory_id]
    assert store.entity("王伟") is None


def test_entities_given_with_a_memory_are_checked_and_used(store):
    [memory_id] = store.add_memories(
        [{"text": TEXT, "entities": [{"name": "小王", "kind": "person", "aliases": ["王伟"]}]}]
    )
    assert [m["id"] for m in store.entity("王伟")["memories"]] == [memory_id]
    for bad in ("小王", [{"name": "小王", "kind": "friend"}], [{"name": "", "kind": "person"}]):
        with pytest.raises(InvalidArgument):
            store.add_memories([{"text": "another memory", "entities": bad}])
    assert len(store.list_memories()) == 1


def test_one_memory_listing_an_entity_twice_keeps_every_spelling(store: Any) -> None:
    # Two entries of one key (OpenAI, openai): both spellings are the memory's own.
    [memory_id] = store.add_memories(
        [
            {
                "text": "We signed the OpenAI contract",
                "entities": [
                    {"name": "OpenAI", "kind": "organisation", "aliases": []},
                    {"name": "openai", "kind": "organisation", "aliases": ["oai"]},
                ],
            }
        ]
    )
    found = store.entity("oai")
    assert found is not None and found["name"] == "OpenAI"
    assert [m["id"] for m in found["memories"]] == [memory_id]
    assert set(found["aliases"]) == {"openai", "oai"}
