"""The thesaurus and what a query or a change reads from it (memory_pg.text.synonyms)."""

from __future__ import annotations

import re

import pytest

from memory_pg.text import synonyms
from memory_pg.text.changes import judge
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


def test_a_word_meets_its_groups_words_of_its_script_and_adds_no_term() -> None:
    asked = analyse("When is the deadline?")
    assert any("'ddl'" in t and "'deadline'" in t for t in asked.en_any)
    # No Chinese term for an English query: one no memory holds would change which
    # words pull a large user's candidates.
    assert asked.cjk_any == []
    assert len(asked.en_any) == len(analyse("When is the meeting?").en_any)


def test_two_texts_bridge_a_group_only_by_different_words() -> None:
    assert synonyms.bridged("部门预算 80 万", "经费被砍到 50 万") == {"~budget"}
    assert synonyms.bridged("部门预算 80 万", "预算被砍到 50 万") == frozenset()


def test_a_chinese_word_is_read_where_jieba_cuts_it_or_ends_a_compound() -> None:
    assert dict(synonyms.named("今年的科研经费是 30 万")) == {"budget": frozenset({"经费"})}
    assert dict(synonyms.named("我拿到手机了")) == {"phone": frozenset({"手机"})}  # not 到手
    assert dict(synonyms.named("楼下老太太搬走了")) == {}  # no 太太 (wife)
    assert "release" not in synonyms.named("公司发布会改到 6 月 1 日了")  # no 发布
    assert dict(synonyms.named("Mr Chen waits; a 3 hr call")) == {}  # not MR, not HR


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A word inside another word, or one with a second sense, is not the thing.
        ("我老婆在银行工作", "楼下老太太搬走了"),
        ("新版本上线时间定在 5 月 10 日", "公司发布会改到 6 月 1 日了"),
        ("我老板住在望京", "我家老大搬到学校宿舍住了"),
        ("今年的业绩目标是 500 万", "血糖指标降到 6.1 了"),
        ("The PR for the auth fix is waiting on review", "Mr Chen now waits on legal review"),
        ("我爱人在医院上班", "老两口搬到海南住了"),
    ],
)
def test_a_word_of_another_sense_bridges_nothing(old: str, new: str) -> None:
    assert judge(old, new) is None


def test_a_broad_word_covers_its_kinds_in_both_scripts() -> None:
    assert "金镯子" in synonyms.kinds_of("首饰")
    assert "iPad" in synonyms.kinds_of("平板")
    assert synonyms.kinds_of("金镯子") == ()  # a kind covers nothing
    latin = synonyms.latin_kinds("平板")
    assert latin is not None and "'ipad'" in latin[0] and "'ipad':D" in latin[1]
    assert synonyms.latin_kinds("tablet") is None  # an English word widens its own term


def test_a_question_with_a_broad_word_widens_its_term_and_adds_one_of_latin_kinds() -> None:
    plain = analyse("我妈今年多大了？")
    broad = analyse("我给老婆买过什么首饰？")
    assert any("'金镯子'" in t for t in broad.cjk_any)
    assert len(analyse("平板多少钱").en_any) == 1  # iPad …, where the query had no English
    assert not plain.en_any
