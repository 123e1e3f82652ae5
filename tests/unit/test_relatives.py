"""Who a partner or a child is when the memories only ever name them (pure rules)."""

from __future__ import annotations

from memory_pg.text.relatives import known_as, relation_of


def test_the_relation_a_query_asks_of() -> None:
    assert relation_of(("男朋友",)) == "partner"
    assert relation_of(("闺女",)) == "child"
    assert relation_of(("孩子", "爸"), "孩子她爸多高？") == "partner"  # by the child
    assert relation_of(("同事",)) == ""


def test_the_one_named_beside_what_is_said_of_a_partner_is_the_partner() -> None:
    texts = [
        "阿俊跑的是丽江线，开大巴",
        "阿俊比我大三岁，他妈催我们结婚",
        "七夕跟阿俊去看了电影",
        "老马也开大巴，五十八了",
    ]
    found = known_as("partner", ("男朋友",), texts)
    assert found is not None and found.text == "阿俊"


def test_no_guess_where_the_memories_use_the_word_or_two_are_as_likely() -> None:
    # The memories call him 老公: the query finds him by the word, no guess is made.
    assert known_as("partner", ("老公",), ["老公在银行上班", "婚礼那天阿杰喝多了"]) is None
    # Two people, each once beside a wedding: no one more likely.
    assert known_as("partner", ("老公",), ["参加了阿杰的婚礼", "小武的婚礼在五月"]) is None
    # A name right after a relative's word is that relative's (我岳父林建国).
    assert known_as("partner", ("老婆",), ["我岳父林建国七十大寿，婚礼照片都翻出来了"]) is None
