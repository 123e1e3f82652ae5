"""What gets written: only facts become memories, and explicit changes replace what they change.

Through the public API only (MemoryStore, MemoryCompactor, MemoryWrapper), offline
(no LLM): the scenarios of issue 14.
"""

from __future__ import annotations

from typing import Any

import pytest

from memory_pg.compaction import MemoryCompactor
from memory_pg.plans import protocol
from memory_pg.sql import supersede
from memory_pg.text import changes
from memory_pg.wrapper import MemoryWrapper


class EchoAgent:
    """Answers with a suggestion of its own: the assistant's words are never the user's facts."""

    def chat(self, prompt: str) -> str:
        return "Maybe you should consider MongoDB? 要不要试试 MongoDB？"


def _current(store: Any) -> list[tuple[str, str]]:
    return sorted((r["memory_type"], r["text"]) for r in store.list_memories())


def test_a_question_in_a_later_session_neither_becomes_a_memory_nor_replaces_the_decision(
    store: Any,
) -> None:
    with MemoryWrapper(EchoAgent(), store, compact_threshold=1) as bot:
        bot.chat("We decided to use PostgreSQL as the database.")
    with MemoryWrapper(EchoAgent(), store, compact_threshold=1) as bot:
        bot.chat("Which database did we decide to use?")
        bot.chat("Do I need to finish the payment module")
        bot.chat("Where do I live?")
        bot.chat("Thanks, got it!")

    assert _current(store) == [("key_decision", "We decided to use PostgreSQL as the database")]
    [decision] = store.list_memories()
    assert [e["event"] for e in store.history(decision["id"])] == ["added"]


@pytest.mark.parametrize(
    "text",
    [
        "要不要换成 MongoDB 呢？",
        "what if we used MongoDB?",
        "如果用 MongoDB 的话会不会更快",
        "我们在考虑换成 MongoDB",
        "Could you switch the examples to MongoDB?",
        "帮我把示例改成 MongoDB",
        "你好！",
        "好的，谢谢",
        "我住在哪里？",
    ],
)
def test_questions_requests_hypotheticals_and_pleasantries_are_not_stored(
    store: Any, text: str
) -> None:
    store.add_memory("数据库使用 PostgreSQL", "key_decision")
    MemoryCompactor()  # the default offline extractor, as the wrapper uses it
    with MemoryWrapper(EchoAgent(), store, compact_threshold=1) as bot:
        bot.chat(text)
    assert _current(store) == [("key_decision", "数据库使用 PostgreSQL")]


def test_a_question_added_directly_replaces_nothing(store: Any) -> None:
    old = store.add_memory("关键决策：数据库使用 MySQL", "key_decision", topic="database")
    store.add_memory("要不要改用 PostgreSQL？", "key_decision", topic="database")
    assert store.get(old)["superseded_at"] is None


def test_seed_article_change_supersedes_without_a_topic_key(store: Any) -> None:
    old = store.add_memory("关键决策：数据库使用 MySQL", "key_decision")
    new = store.add_memory("关键决策：数据库改用 PostgreSQL，不再使用 MySQL", "key_decision")

    assert store.get(old)["superseded_by"] == new
    assert store.history(old)[-1]["detail"]["reason"] == "change"
    texts = [r["text"] for r in store.search("数据库选型", top_k=5)]
    assert texts[0] == "关键决策：数据库改用 PostgreSQL，不再使用 MySQL"
    assert "关键决策：数据库使用 MySQL" not in texts


def test_a_change_finds_its_target_among_many_chinese_memories(store: Any) -> None:
    # With an English-only model every Chinese vector looks alike: the target must be
    # found by its words, not by being among the nearest vectors.
    others = [f"第{i}个需求：页面{i}要支持导出" for i in range(12)]
    store.add_memories([{"text": t, "memory_type": "key_decision"} for t in others])
    old = store.add_memory("前端使用 React", "key_decision")
    store.add_memories(
        [{"text": f"模块{i}由小组{i}负责", "memory_type": "key_decision"} for i in range(8)]
    )
    new = store.add_memory("前端已经换成 Svelte 了", "key_decision")
    assert store.get(old)["superseded_by"] == new
    assert len(store.list_memories()) == 12 + 8 + 1


def test_a_change_looks_for_its_words_among_the_users_recent_memories_of_its_type(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The memories of a heavy user that share a word of a statement of change are
    # counted in thousands: only the most recent of its type are looked at (2000,
    # lowered here to 10); the older ones are still met by the vector branch.
    monkeypatch.setattr(supersede, "CHANGE_SCAN_MAX", 10)
    old = store.add_memory("缓存用 Memcached", "key_decision")
    store.add_memories(
        [{"text": f"第{i}组负责报表 v{i}", "memory_type": "key_decision"} for i in range(10)]
    )
    recent = store.add_memory("缓存集群放在机房二", "key_decision")
    change = "缓存换成 Redis 了"
    vector = store.embedder.embed_documents([change])
    words = [changes.word_queries(change)]
    stmt = supersede.candidates_statement(
        "alice", vector, ["key_decision"], [None], 0, word_queries=words
    )
    met = {str(r["id"]) for r in store.run_plan(protocol.one(stmt), "alice")}
    assert recent in met and old not in met  # k=0: only the words branch answers
    monkeypatch.setattr(supersede, "CHANGE_SCAN_MAX", 2000)
    stmt = supersede.candidates_statement(
        "alice", vector, ["key_decision"], [None], 0, word_queries=words
    )
    assert {recent, old} <= {str(r["id"]) for r in store.run_plan(protocol.one(stmt), "alice")}


@pytest.mark.parametrize(
    ("before", "after", "memory_type"),
    [
        ("我住在北京", "我已经搬到上海了", "user_profile"),
        ("I live in Berlin", "I moved to Munich last month", "user_profile"),
        (
            "Our frontend uses React",
            "We switched the frontend from React to Svelte",
            "key_decision",
        ),
        ("We use MySQL", "We no longer use MySQL; everything is on Postgres now", "key_decision"),
        ("CI runs on Jenkins", "We replaced Jenkins with GitHub Actions", "key_decision"),
        ("周会在周二下午", "周会改成周三了", "key_decision"),
        ("缓存用 Memcached", "缓存换成 Redis 了", "key_decision"),
        # The same subject as the change's (the other-subject cases keep both:
        # tests/integration/test_change_subjects.py).
        ("I drink coffee every morning", "I don't like coffee anymore", "user_profile"),
        (
            "Server B runs on Ubuntu 22.04",
            "Server B switched from Ubuntu to Debian",
            "project_status",
        ),
        ("生产环境使用 MySQL", "生产环境不再使用 MySQL", "key_decision"),
        ("我每周去健身房三次", "我不再去健身房了", "user_profile"),
        # A new time of day as the new value.
        ("The standup is at 9am", "The standup moved to 10am", "key_decision"),
    ],
)
def test_explicit_changes_supersede(store: Any, before: str, after: str, memory_type: str) -> None:
    old = store.add_memory(before, memory_type)
    new = store.add_memory(after, memory_type)
    assert store.get(old)["superseded_by"] == new
    assert store.history(old)[-1]["detail"]["reason"] == "change"


@pytest.mark.parametrize(
    ("first", "second", "change"),
    [
        ("数据库使用 PostgreSQL", "数据库每天凌晨备份", "数据库改用 MySQL"),
        ("We deploy to Singapore", "We deploy on Tuesdays", "We moved deploys to Thursdays"),
        ("前端使用 React", "后端使用 Django", "前端改用 Vue"),
        ("我住在北京", "我在字节跳动工作", "我已经搬到上海了"),
    ],
)
def test_different_facts_about_one_subject_both_stay(
    store: Any, first: str, second: str, change: str
) -> None:
    a = store.add_memory(first, "key_decision")
    b = store.add_memory(second, "key_decision")
    assert {r["id"] for r in store.list_memories()} == {a, b}
    store.add_memory(change, "key_decision")
    # The change replaces at most the one fact it is about: the other stays current.
    current = {r["text"] for r in store.list_memories()}
    assert second in current or first in current
    assert len(current) >= 2


def test_different_fact_survives_a_change_of_the_other(store: Any) -> None:
    pg = store.add_memory("数据库使用 PostgreSQL", "key_decision")
    backup = store.add_memory("数据库每天凌晨备份", "key_decision")
    store.add_memory("数据库改用 MySQL", "key_decision")
    assert store.get(pg)["superseded_at"] is not None
    assert store.get(backup)["superseded_at"] is None


def test_batch_write_applies_changes_in_order(store: Any) -> None:
    ids = store.add_memories(
        [
            {"text": "数据库使用 MySQL", "memory_type": "key_decision"},
            {"text": "数据库每天凌晨备份", "memory_type": "key_decision"},
            {"text": "数据库改用 PostgreSQL，不再使用 MySQL", "memory_type": "key_decision"},
        ]
    )
    assert store.get(ids[0])["superseded_by"] == ids[2]
    assert {r["id"] for r in store.list_memories()} == {ids[1], ids[2]}


def test_compaction_applies_a_change_across_sessions(store: Any) -> None:
    with MemoryWrapper(EchoAgent(), store, compact_threshold=1) as bot:
        bot.chat("我住在北京，前端用 React 开发")
    with MemoryWrapper(EchoAgent(), store, compact_threshold=1) as bot:
        bot.chat("我已经搬到上海了")
        bot.chat("We switched from React to Svelte.")
    texts = {r["text"] for r in store.list_memories()}
    assert "我已经搬到上海了" in texts
    assert "我住在北京" not in texts
    assert any("Svelte" in t for t in texts)
    assert not any("React" in t and "Svelte" not in t for t in texts)


def test_a_judge_still_decides_a_change(make_store: Any) -> None:
    asked: list[str] = []

    def judge(prompt: str) -> str:
        asked.append(prompt)
        return "DIFFERENT"

    store = make_store(user_id="alice", judge=judge)
    old = store.add_memory("关键决策：数据库使用 MySQL", "key_decision")
    store.add_memory("关键决策：数据库改用 PostgreSQL，不再使用 MySQL", "key_decision")
    assert asked, "the judge was asked about the change"
    assert store.get(old)["superseded_at"] is None


def test_write_path_evaluation_counts_false_supersessions_and_erases_its_users(
    make_store: Any, tmp_path: Any
) -> None:
    # The evaluation makes a user per case: a store bound to one user would refuse them.
    store = make_store()
    import json

    from memory_pg.errors import InvalidEvalSet
    from memory_pg.write_evaluation import evaluate_write_path, load_write_path_set

    doc = {
        "cases": [
            {
                "id": "wrongly-expected",
                "kind": "memories",
                "memories": [
                    {"text": "数据库使用 PostgreSQL", "type": "key_decision"},
                    {"text": "数据库改用 MySQL", "type": "key_decision"},
                ],
                # Expecting the replaced memory to stay: a miss and a "false" supersession.
                "expect_current": ["使用 PostgreSQL", "改用 MySQL"],
            }
        ]
    }
    path = tmp_path / "set.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    report = evaluate_write_path(store, load_write_path_set(path), user_prefix="evalw-t")
    assert report["overall"]["fact_recall"] == 0.5
    assert report["overall"]["false_supersessions"] == 1
    assert report["failures"][0]["id"] == "wrongly-expected"
    assert store.list_memories(user_id="evalw-t-0", include_inactive=True) == []

    bundled = load_write_path_set()
    assert len(bundled.cases) >= 40
    assert {c.lang for c in bundled.cases} == {"zh", "en"}
    assert {c.split for c in bundled.cases} == {"dev", "held_out"}
    bad = tmp_path / "bad.json"
    bad.write_text('{"cases": [{"id": "x", "kind": "poem"}]}', encoding="utf-8")
    with pytest.raises(InvalidEvalSet):
        load_write_path_set(bad)
