"""The thesaurus and what a query or a change reads from it (memory_pg.text.synonyms)."""

from __future__ import annotations

import re

from memory_pg.text import synonyms
from memory_pg.text.query import analyse


def test_each_word_names_one_group_and_no_word_is_one_character() -> None:
    ids = [g[0] for g in synonyms.SYNONYMS]
    assert len(ids) == len(set(ids))
    words = [w.lower() for g in synonyms.SYNONYMS for w in g[1:]]
    assert len(words) == len(set(words))
    assert not [w for w in words if re.fullmatch(r"[\u4e00-\u9fff]", w)]


def test_the_longest_word_is_read_and_english_by_whole_words() -> None:
    assert synonyms.named("论文的截止日期") == {"deadline": frozenset({"截止日期"})}
    assert synonyms.named("I cook dinner") == {
        "cooking": frozenset({"cook"}),
        "dinner": frozenset({"dinner"}),
    }
    assert "kids" not in str(synonyms.named("a skidsteer"))


def test_every_term_of_a_word_meets_its_group_and_a_plain_query_is_unchanged() -> None:
    plain = analyse("周末去哪里玩了")
    asked = analyse("我们一个月的养老钱有多少？")
    terms = [t for t in asked.cjk_any if t.startswith(("'养老'", "'钱'"))]
    assert len(terms) == 2 and all("'退休金'" in t for t in terms)
    synonyms.ON = False
    try:
        assert analyse("周末去哪里玩了").cjk_any == plain.cjk_any
        assert not any("退休金" in t for t in analyse("我们一个月的养老钱有多少？").cjk_any)
    finally:
        synonyms.ON = True


def test_an_english_word_asks_the_chinese_words_of_its_group_as_a_term() -> None:
    asked = analyse("When is the deadline?")
    assert any("'ddl'" in t and "'deadline'" in t for t in asked.en_any)
    assert any("'期限'" in t for t in asked.cjk_any)


def test_two_texts_bridge_a_group_only_by_different_words() -> None:
    assert synonyms.bridged("部门预算 80 万", "经费被砍到 50 万") == {"~budget"}
    assert synonyms.bridged("部门预算 80 万", "预算被砍到 50 万") == frozenset()
