"""A question or a change that names a thing by another word (issues 35 and 36).

Through the public store: a memory written with one word ("退休金", "书法", "due
date") is found by a question asked with another word for the same thing ("养老钱",
"毛笔字", "deadline"), ahead of memories that share the question's other words; a
change said with another word ("经费" for "预算") replaces the old value, and the
history says why. The words come from the thesaurus
(``memory_pg/data/synonyms.tsv``), written apart from these cases.
"""

from __future__ import annotations

from typing import Any

import pytest

NOTES = [
    "每个月退休金四千八，老伴的多一点",
    "每个月给外孙女两百块零花钱，她一个月能花完",
    "书法课在周二下午，老年大学三楼",
    "周四下午去老年大学上国画课",
    "小区物业换了，新来的经理姓孙",
    "The thesis due date is June 12, no extensions.",
    "My thesis is about soil bacteria and it has six chapters.",
]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("我们一个月的养老钱有多少？", "退休金"),
        ("我学毛笔字是星期几？", "书法"),
        ("What's the deadline for my thesis?", "due date"),
    ],
)
def test_a_question_in_other_words_finds_the_memory(
    make_store: Any, question: str, answer: str
) -> None:
    assert answer in top_answer(make_store, NOTES, question)


def top_answer(make_store: Any, notes: list[str], question: str, kind: str = "user_profile") -> str:
    """The text of the first result for ``question`` over a fresh user's ``notes``."""
    store = make_store(user_id="alice")
    store.add_memories([{"text": t, "memory_type": kind} for t in notes])
    return str(store.search(question, top_k=1, track_access=False)[0]["text"])


KINDS = [
    "给媳妇买了条珍珠项链，一千二",
    "媳妇说今年想去云南旅游",
    "闲鱼上收了个二手 iPad Air，一千九",
    "单位发了台新电脑，配置一般",
    "Picked up a pair of hiking boots for the trip, $140",
    "The trip to Banff is booked for August",
]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("我给老婆买过什么首饰？", "项链"),  # a kind of the broad word, in Chinese
        ("我那台平板多少钱收的？", "iPad"),  # a kind written in Latin letters
        ("How much were the shoes I bought?", "boots"),
    ],
)
def test_a_question_with_a_broad_word_finds_the_kind_a_memory_names(
    make_store: Any, question: str, answer: str
) -> None:
    # The kinds come from memory_pg/data/kinds.tsv, a lexicon written apart from these.
    assert answer in top_answer(make_store, KINDS, question, "dialogue")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("今年的科研经费是 30 万", "预算被砍到 20 万了"),
        ("我每个月的退休金是四千八", "养老金涨到五千一了"),
        ("The paper's due date is March 3.", "Deadline got pushed to March 17."),
    ],
)
def test_a_change_named_with_another_word_replaces_the_old(store: Any, old: str, new: str) -> None:
    old_id = store.add_memory(old, "user_profile")
    new_id = store.add_memory(new, "user_profile")
    assert store.get(old_id)["superseded_by"] == new_id
    change = [e for e in store.history(old_id) if e["event"] == "superseded"]
    assert change and change[0]["detail"]["evidence"]["same"] == "words"  # why, in the history


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # Another budget, another person's pay: one word for the thing, two holders.
        ("旅行预算定在一万块", "部门经费被砍到 50 万了"),
        ("我的工资是一万二", "我老婆薪水涨到一万五了"),
    ],
)
def test_the_same_thing_of_another_holder_keeps_both(store: Any, old: str, new: str) -> None:
    old_id = store.add_memory(old, "user_profile")
    new_id = store.add_memory(new, "user_profile")
    assert {r["id"] for r in store.list_memories()} == {old_id, new_id}
