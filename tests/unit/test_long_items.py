"""An LLM item over the store's text limit becomes memories the store takes: split when
it is a profile, status or todo item (nothing lost), cut when it is a decision."""

from __future__ import annotations

from memory_pg.compaction import CompactionResult, raw_memories, split_text, to_memories

LIMIT = 8000
PASTE = "用户贴了一份文档：" + "内容。" * 3000  # 9,009 characters


def result(**items: list) -> CompactionResult:
    empty: CompactionResult = {
        "user_profile": [],
        "project_status": [],
        "key_decisions": [],
        "todos": [],
    }
    return {**empty, **items}  # type: ignore[typeddict-item]


def test_long_profile_status_and_todo_items_are_split_whole():
    for key, kind in (
        ("user_profile", "user_profile"),
        ("project_status", "project_status"),
        ("todos", "todo"),
    ):
        memories = to_memories(result(**{key: [PASTE]}), source="llm", max_text_chars=LIMIT)
        assert [m.memory_type for m in memories] == [kind, kind]
        assert all(len(m.text) <= LIMIT for m in memories)
        assert "".join(m.text for m in memories) == PASTE


def test_a_long_decision_is_cut_at_a_sentence_end_and_keeps_its_topic():
    decision = {"decision": PASTE, "topic": "database"}
    [memory] = to_memories(result(key_decisions=[decision]), source="llm", max_text_chars=LIMIT)
    assert memory.topic == "database" and len(memory.text) <= LIMIT
    assert PASTE.startswith(memory.text) and memory.text.endswith("。")


def test_split_text_keeps_short_text_and_drops_blank_text():
    assert split_text("  下周要完成支付模块  ", LIMIT) == ["下周要完成支付模块"]
    assert split_text(" \n ", LIMIT) == []


def test_raw_memories_keep_every_turn_within_the_limit():
    turns = [{"role": "user", "content": PASTE}, {"role": "assistant", "content": "好的"}]
    memories = raw_memories(turns, reason="TextTooLong", max_text_chars=LIMIT)
    assert {m.memory_type for m in memories} == {"dialogue"}
    assert all(len(m.text) <= LIMIT for m in memories)
    assert memories[0].metadata == {"compaction": "failed", "reason": "TextTooLong"}
    assert PASTE[:100] in memories[0].text and "好的" in memories[-1].text
