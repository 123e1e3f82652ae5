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


def test_a_word_is_also_indexed_and_asked_by_its_sound() -> None:
    from memory_pg._segment import index_words, sound

    assert sound("游泳") == "youyong" and sound("绿地") == "ludi"
    _, cjk, sounds, _, _ = index_words("女儿周三下午学游泳", None)
    assert "游泳" in cjk.split() and "youyong" in sounds.split()
    # A typo by sound ("游勇") asks by characters or sound, as one term.
    assert "'游勇' | 'youyong'" in term_queries("女儿的游勇课几点")[2]
    assert "'游勇':D | 'youyong':B" in term_queries("女儿的游勇课几点")[3]


def test_pinyin_typed_in_a_chinese_question_is_asked_by_sound() -> None:
    spaced = term_queries("我那个 gang qin 老师姓什么")[2]
    assert "'gangqin':BC" in spaced
    together = term_queries("明天的weijing要空腹吗")[2]
    assert "'weijing':BC" in together
    three = term_queries("hu shi zhang 是谁")[2]
    assert {"'hushi':BC", "'shizhang':BC", "'hushizhang':BC"} <= set(three)


def test_a_word_typed_as_one_stays_english_and_is_also_a_sound() -> None:
    # "Alice" and "Nike" in a Chinese question are English words (an English memory's,
    # stemmed), and may be pinyin: the sound term meets only sounds (B, C), so the two
    # terms are never one another's twin.
    for question, word in (("Alice 上周说了什么", "alice"), ("我的Nike跑鞋多少钱", "nike")):
        en_any, _, cjk_any, cjk_own = term_queries(question)
        assert f"'{word}'" in en_any
        assert f"'{word}':BC" in cjk_any and f"'{word}':B" in cjk_own
    # English function words are not pinyin: "she can" is not "shecan".
    assert not any("shecan" in t for t in term_queries("小明说 she can come")[2])


def test_english_has_no_sounds() -> None:
    # "he", "long", "man" are pinyin syllables too; in English they are English.
    assert term_queries("he has been a long time a man of his word")[2] == []
    assert term_queries("Weijing Li joined the team")[2] == []


def test_a_wrong_join_around_a_function_word_is_not_asked_by_its_sound() -> None:
    # jieba joins "课是" in "游泳课是几点"; its sound (keshi) is 科室's.
    asked = term_queries("游泳课是几点")[2]
    assert "'课是'" in asked
    assert not any("keshi" in t for t in asked)
    # A pair across such a join still is: "学为旗" is cut 学为 / 旗, "为旗" is 围棋's.
    asked = term_queries("女儿学为旗是星期几")[2]
    assert "'weiqi'" in asked and not any("xuewei" in t for t in asked)
    # Question words hold no pair: "是不是" asks nothing.
    assert term_queries("是不是？怎么样？")[2] == []


def test_a_word_also_meets_its_kin_by_a_character() -> None:
    from memory_pg._segment import index_words

    # 租金 / 月租 share 租; a numeral is a value, not a topic.
    _, _, alike, _, _ = index_words("店面四十平，月租一万一", None)
    assert "租" in alike.split() and "四" not in alike.split()
    asked = term_queries("店铺的租金是多少？")[3]
    assert "'租':BD" in asked and "'铺':BD" in asked
    # A character in thousands of words says little of this one: 金 (黄金, 金融,
    # 资金…) is not asked alone, the word 租金 and its 租 are.
    assert "'金':BD" not in asked
