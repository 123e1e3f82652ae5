"""cap_summary: a consolidated summary over the text limit is cut where a reader expects."""

from __future__ import annotations

from memory_pg.jobs.consolidate import cap_summary


def test_short_text_is_kept_whole() -> None:
    assert cap_summary("  Buy milk.  ", 100) == "Buy milk."


def test_cut_after_the_last_sentence_end_within_the_limit() -> None:
    text = "First fact. Second fact! Third fact that runs long"
    assert cap_summary(text, 30) == "First fact. Second fact!"


def test_chinese_sentences_are_cut_at_their_own_punctuation() -> None:
    text = "使用 PostgreSQL 作为数据库。下周完成支付模块。" * 50
    capped = cap_summary(text, 100)
    assert len(capped) <= 100 and capped.endswith("。")


def test_no_sentence_end_falls_back_to_a_space_then_to_the_limit() -> None:
    assert cap_summary("word " * 30, 22) == "word word word word"
    assert cap_summary("x" * 50, 20) == "x" * 20


def test_a_sentence_end_too_early_does_not_throw_most_of_the_text_away() -> None:
    text = "Hi. " + "a long clause without an end " * 10
    capped = cap_summary(text, 100)
    assert len(capped) > 50 and not capped.endswith(" ")
