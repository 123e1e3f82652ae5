"""One fact must not replace or swallow another (review 9).

A review reproduced each case of ``write_path_review.json`` through ``add_memory``:
a Chinese fact about another subject replaced ("支付模块已上线" retired "登录模块已上线":
the bundled model reads neither, and three words of four agree); a number written as
a word merged the new memory into the old one ("three appointments" was nowhere); a
statement that something stopped replaced a memory naming part of it ("I don't like
Italian wine" retired "I like Italian food"); and an LLM's topic key for a backup
decision replaced the database decision.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memory_pg.compaction import MemoryCompactor
from memory_pg.config import LLMSettings
from memory_pg.llm import OpenAICompatibleLLM
from memory_pg.wrapper import MemoryWrapper
from memory_pg.write_evaluation import evaluate_write_path, load_write_path_set
from tests.fake_openai import (
    FakeOpenAI,
    fake_openai_fixture,  # noqa: F401
    reply,
)


def test_the_review_write_path_set_has_no_false_supersession(make_store: Any) -> None:
    # `memory-pg eval --write-path tests/integration/write_path_review.json`
    path = Path(__file__).with_name("write_path_review.json")
    report = evaluate_write_path(make_store(), load_write_path_set(path))
    assert report["failures"] == []
    assert report["overall"]["false_supersessions"] == 0
    assert report["overall"]["supersessions_made"] == report["overall"]["supersessions_expected"]


def test_a_number_word_makes_a_new_memory_not_a_repeat(store: Any) -> None:
    said = "Call the dentist on Monday morning to book {} appointments for the kids next week"
    two = store.add_memory(said.format("two"), "todo")
    three = store.add_memory(said.format("three"), "todo")
    assert three != two  # a merge returned the old memory's id, the new text gone
    assert {m["text"] for m in store.list_memories()} == {said.format("two"), said.format("three")}


class _Agent:
    def chat(self, prompt: str) -> str:
        return "ok"


def _decision(text: str, topic: str) -> str:
    return json.dumps(
        {
            "user_profile": [],
            "project_status": [],
            "key_decisions": [{"decision": text, "topic": topic}],
            "todos": [],
        }
    )


def test_an_llms_backup_topic_leaves_the_database_decision(store, fake_openai: FakeOpenAI):
    fake_openai.script(
        reply(_decision("Use PostgreSQL as the main database", "database")),
        reply(_decision("Back up the database every night", "database_backup")),
        reply(_decision("Use MySQL as the main database", "db")),
    )
    llm = OpenAICompatibleLLM(
        LLMSettings(base_url=fake_openai.base_url, api_key="k", model="m", max_retries=0)
    )
    bot = MemoryWrapper(_Agent(), store, compactor=MemoryCompactor(llm), compact_threshold=2)
    bot.chat("We picked PostgreSQL.")
    bot.chat("Nightly backups, please.")
    current = {m["text"]: m["topic"] for m in store.list_memories()}
    assert current == {
        "Use PostgreSQL as the main database": "database",
        "Back up the database every night": "database_backup",
    }
    # A topic that is the role and nothing more is the role's key: it replaces.
    bot.chat("Actually, MySQL.")
    current = {m["text"]: m["topic"] for m in store.list_memories()}
    assert current == {
        "Use MySQL as the main database": "database",
        "Back up the database every night": "database_backup",
    }
