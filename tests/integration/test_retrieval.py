"""MemoryRetriever: the prompt block a user's agent sees."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from memory_pg.errors import InvalidArgument, InvalidEvalSet
from memory_pg.evaluation import evaluate, load_eval_set
from memory_pg.retrieval import AsyncMemoryRetriever, MemoryRetriever, RetrievalSettings


def test_context_block_is_numbered_typed_and_dated(store: Any) -> None:
    store.add_memory(
        "使用 PostgreSQL 作为数据库",
        "key_decision",
        event_time=datetime(2026, 11, 2, 12, tzinfo=timezone.utc),
    )
    store.add_memory("Alex's cat is called Miso", "user_profile")
    block = MemoryRetriever(store, top_k=5).retrieve_context("数据库选型用的是什么？")
    lines = block.splitlines()
    assert lines[0] == "相关记忆 / Relevant memories:"
    assert lines[1] == "1. [关键决策 key_decision] 使用 PostgreSQL 作为数据库 (2026-11-02)"
    assert len(lines) == 2  # the cat shares no word and no meaning: dropped


def test_nothing_relevant_gives_an_empty_string(store: Any) -> None:
    store.add_memory("Alex's cat is called Miso", "user_profile")
    retriever = MemoryRetriever(store, top_k=5)
    assert retriever.retrieve_context("quarterly tax filing deadline") == ""
    assert retriever.retrieve_as_list("quarterly tax filing deadline") == []
    row = store.list_memories()[0]
    assert row["access_count"] == 0  # what was dropped does not count as used


def test_list_takes_type_time_and_user_filters(make_store: Any) -> None:
    store = make_store()
    now = datetime.now(timezone.utc)
    store.add_memory(
        "Deploy the API on Kubernetes",
        "key_decision",
        user_id="alice",
        event_time=now - timedelta(days=40),
    )
    store.add_memory("Deploy the API before Friday", "todo", user_id="alice")
    store.add_memory("Deploy the blog on Netlify", "key_decision", user_id="bob")
    retriever = MemoryRetriever(store, top_k=3)
    hits = retriever.retrieve_as_list("deploy the API", user_id="alice")
    assert {h["text"] for h in hits} == {
        "Deploy the API on Kubernetes",
        "Deploy the API before Friday",
    }
    assert all("relevance" in h and "recency" in h for h in hits)
    todo = retriever.retrieve_as_list("deploy", user_id="alice", memory_types=["todo"])
    assert [h["memory_type"] for h in todo] == ["todo"]
    recent = retriever.retrieve_as_list("deploy", user_id="alice", since=now - timedelta(days=7))
    assert [h["text"] for h in recent] == ["Deploy the API before Friday"]
    assert "Netlify" in retriever.retrieve_context("deploy", user_id="bob")
    assert "Kubernetes" not in retriever.retrieve_context("deploy", user_id="bob")


def test_the_gate_is_configurable(store: Any) -> None:
    store.add_memory("Alex's cat is called Miso")
    open_gate = MemoryRetriever(store, settings=RetrievalSettings(min_similarity=-1.0))
    assert len(open_gate.retrieve_as_list("quarterly tax filing deadline")) == 1


def test_top_k_is_checked(store: Any) -> None:
    with pytest.raises(InvalidArgument):
        MemoryRetriever(store, top_k=0)


async def test_async_retriever_has_the_same_methods(db_url: str, embedder: Any) -> None:
    from memory_pg.async_store import AsyncMemoryStore

    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
        await store.add_memory("使用 PostgreSQL 作为数据库", "key_decision")
        retriever = AsyncMemoryRetriever(store, top_k=2)
        block = await retriever.retrieve_context("数据库")
        assert block.startswith("相关记忆 / Relevant memories:\n1. [关键决策 key_decision]")
        assert len(await retriever.retrieve_as_list("数据库")) == 1
        assert await retriever.retrieve_context("quarterly tax filing") == ""


def test_evaluation_reports_recall_and_erases_its_user(make_store: Any, tmp_path: Path) -> None:
    store = make_store()  # unbound: the evaluation writes as its own scratch user
    doc = {
        "name": "tiny",
        "memories": [
            {
                "key": "db_old",
                "type": "key_decision",
                "text": "We use MySQL",
                "topic": "db",
                "superseded": True,
                "age_days": 100,
            },
            {
                "key": "db",
                "type": "key_decision",
                "text": "We use PostgreSQL",
                "topic": "db",
                "age_days": 1,
            },
            {"key": "cat", "type": "user_profile", "text": "Alex's cat is Miso"},
            {"key": "zh", "type": "todo", "text": "下周一之前补充中文分词的单元测试"},
        ],
        "questions": [
            {"question": "which database do we use?", "expected": ["db"], "category": "sup"},
            {"question": "What is the cat's name?", "expected": ["cat"], "lang": "en"},
            {"question": "中文分词测试什么时候完成？", "expected": ["zh"], "lang": "zh"},
        ],
    }
    path = tmp_path / "set.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    report = evaluate(store, load_eval_set(path), top_k=(1, 3), user_id="eval-scratch")
    assert report["overall"]["recall@3"] == 1.0
    assert report["overall"]["superseded_returned"] == 0
    assert set(report["by_lang"]) == {"?", "en", "zh"}
    assert store.list_memories(user_id="eval-scratch") == []


def test_bundled_set_is_bilingual_and_large_enough() -> None:
    s = load_eval_set()
    assert len(s.questions) >= 60
    assert {q.lang for q in s.questions} >= {"en", "zh"}
    assert any(m.superseded for m in s.memories)


def test_a_malformed_set_is_a_typed_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"memories": [{"key": "a", "text": "x"}], "questions": '
        '[{"question": "q", "expected": ["nope"]}]}',
        encoding="utf-8",
    )
    with pytest.raises(InvalidEvalSet):
        load_eval_set(bad)
    with pytest.raises(InvalidEvalSet):
        load_eval_set(tmp_path / "missing.json")
