"""Chinese full text as people write it: names jieba does not know, question words."""

from __future__ import annotations

from memory_pg._segment import segment, term_queries


def test_part_of_a_name_jieba_does_not_know_still_meets_the_whole() -> None:
    # jieba keeps "林晓雨" whole; a question says "晓雨".
    memory = set(segment("我女朋友叫林晓雨，她是小学语文老师").cjk)
    query = set(segment("晓雨的生日是哪天").cjk)
    assert "林晓雨" in memory
    assert "晓雨" in memory & query


def test_question_words_are_not_content_words() -> None:
    for question in (
        "李明住在哪里？",
        "项目进展怎么样？",
        "我们用的是 PostgreSQL 对吗",
        "什么时候开会？",
    ):
        cjk = segment(question).cjk
        for word in ("哪里", "怎么样", "对吗", "什么时候", "时候", "什么"):
            assert word not in cjk, (question, word)
    assert "开会" in segment("什么时候开会？").cjk
    assert term_queries("是不是？怎么样？")[2] == []


def test_full_width_letters_and_digits_meet_their_ascii_forms() -> None:
    assert segment("ＰｏｓｔｇｒｅＳＱＬ　１６").words == segment("PostgreSQL 16").words
