"""The prompt a wrapper sends its agent: the memories recalled, the recent turns, the input.

Headed in Chinese and English like the users, so any agent reads where each part
starts. :mod:`memory_pg.wrapper` builds it before every turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memory_pg.retrieval import without_header

#: The headers of the prompt's sections, in Chinese and English like the users.
MEMORY_HEADER = "【相关记忆 Relevant memories】"
RECENT_HEADER = "【最近对话 Recent conversation】"
INPUT_HEADER = "【当前输入 Current input】"


def build_prompt(context: str, recent: Sequence[Mapping[str, str]], user_input: str) -> str:
    """The enhanced prompt: relevant memories, the recent turns, then the new input.

    ``context`` is the memory lines (:func:`~memory_pg.retrieval.format_memories`) or
    a retriever's block: the block's own header is dropped, so the prompt heads
    the memories once.

    Example:
        >>> print(build_prompt("1. [key_decision] Use PostgreSQL", [], "数据库选型？"))
        【相关记忆 Relevant memories】
        1. [key_decision] Use PostgreSQL
        <BLANKLINE>
        【当前输入 Current input】
        user: 数据库选型？
    """
    parts = []
    memories = without_header(context)
    if memories:
        parts.append(f"{MEMORY_HEADER}\n{memories}")
    if recent:
        lines = "\n".join(f"{t['role']}: {t['content']}" for t in recent)
        parts.append(f"{RECENT_HEADER}\n{lines}")
    parts.append(f"{INPUT_HEADER}\nuser: {user_input}")
    return "\n\n".join(parts)


__all__ = ["INPUT_HEADER", "MEMORY_HEADER", "RECENT_HEADER", "build_prompt"]
