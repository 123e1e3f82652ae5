"""The offline compactor ends a sentence at the marks Chinese chat uses as full stops:
…, ……, ～, the full-width ． and the half-width ｡, so a todo glued to a decision by one of
them is its own memory (and outlives the decision when that is replaced)."""

from __future__ import annotations

import pytest

from memory_pg.compaction import MemoryCompactor


@pytest.mark.parametrize("mark", ["…", "……", "～", "．", "｡"])
def test_a_todo_after_the_mark_is_its_own_memory(mark):
    result = MemoryCompactor().compact(
        [f"我们决定使用 PostgreSQL 作为数据库{mark}下周要完成支付模块{mark}"]
    )
    assert result["key_decisions"] == [
        {"decision": "我们决定使用 PostgreSQL 作为数据库", "topic": "database"}
    ]
    assert result["todos"] == ["下周要完成支付模块"]


@pytest.mark.parametrize("mark", ["……", "～～", "．"])
def test_the_mark_is_not_kept_in_the_memory(mark):
    result = MemoryCompactor().compact([f"下周要完成支付模块{mark}"])
    assert result["todos"] == ["下周要完成支付模块"]
