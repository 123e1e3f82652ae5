"""Pure parts of the access layer: the prompt, the memory lines, the buffer's input checks."""

from __future__ import annotations

import pytest

from memory_pg.buffer import SOURCE_TURNS_KEY, as_memory_input, check_role, check_turn_ids
from memory_pg.compaction import CompactedMemory
from memory_pg.errors import InvalidArgument
from memory_pg.retrieval import format_block
from memory_pg.store import MemoryInput
from memory_pg.wrapper import build_prompt, format_memories


def test_prompt_holds_memories_then_recent_turns_then_the_input():
    prompt = build_prompt(
        "- [key_decision] 使用 PostgreSQL",
        [{"role": "user", "content": "你好"}, {"role": "assistant", "content": "你好！"}],
        "数据库选型？",
    )
    assert prompt == (
        "【相关记忆 Relevant memories】\n- [key_decision] 使用 PostgreSQL\n\n"
        "【最近对话 Recent conversation】\nuser: 你好\nassistant: 你好！\n\n"
        "【当前输入 Current input】\nuser: 数据库选型？"
    )


def test_prompt_without_memories_or_history_is_just_the_input():
    assert build_prompt("  ", [], "hi") == "【当前输入 Current input】\nuser: hi"


def test_memory_lines_name_the_type():
    lines = format_memories([{"memory_type": "todo", "text": "ship it"}, {"text": "plain"}])
    assert lines == "1. [待办事项 todo] ship it\n2. [memory] plain"


def test_a_retrievers_block_is_headed_once_in_the_prompt():
    block = format_block([{"memory_type": "key_decision", "text": "使用 PostgreSQL"}])
    assert build_prompt(block, [], "数据库选型？") == (
        "【相关记忆 Relevant memories】\n1. [关键决策 key_decision] 使用 PostgreSQL\n\n"
        "【当前输入 Current input】\nuser: 数据库选型？"
    )


def test_compacted_memories_become_store_input_tagged_with_their_turns():
    item = CompactedMemory("key_decision", "Use PostgreSQL", "database", 0.8, {"compaction": "x"})
    converted = as_memory_input(item, [3, 9])
    assert converted == MemoryInput(
        text="Use PostgreSQL",
        memory_type="key_decision",
        metadata={"compaction": "x", SOURCE_TURNS_KEY: [3, 9]},
        topic="database",
        importance=0.8,
    )
    assert item.metadata == {"compaction": "x"}  # the caller's object is untouched
    assert as_memory_input({"text": "t"}, [1])["metadata"] == {SOURCE_TURNS_KEY: [1, 1]}
    assert as_memory_input("plain", [2]).metadata == {SOURCE_TURNS_KEY: [2, 2]}


def test_turn_ids_are_deduplicated_and_sorted():
    assert check_turn_ids([5, 2, 5]) == [2, 5]


@pytest.mark.parametrize("bad", [[], [0], [-1], ["3"], [1.0], [None], "12", 7])
def test_bad_turn_ids_are_refused(bad):
    with pytest.raises(InvalidArgument):
        check_turn_ids(bad)


@pytest.mark.parametrize("bad", ["User", "robot", "", None, 1])
def test_unknown_roles_are_refused(bad):
    with pytest.raises(InvalidArgument):
        check_role(bad)
