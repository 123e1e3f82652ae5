"""Traditional and simplified Chinese meet: full text and times fold 繁體 to 简体."""

from __future__ import annotations

from datetime import datetime, timezone

from memory_pg._segment import fold_traditional, segment, term_queries
from memory_pg.timespan import find_timespan


def test_a_traditional_text_is_cut_into_the_words_of_its_simplified_form() -> None:
    assert segment("我們上週去台北吃了牛肉麵") == segment("我们上周去台北吃了牛肉面")
    assert term_queries("我對什麼過敏？") == term_queries("我对什么过敏？")


def test_text_without_chinese_is_left_as_it_is() -> None:
    assert fold_traditional("Ünïcode café") == "Ünïcode café"
    # Simplified text is already folded.
    assert fold_traditional("我们的数据库") == "我们的数据库"


def test_a_traditional_relative_time_is_recognised() -> None:
    now = datetime(2026, 12, 3, 15, tzinfo=timezone.utc)  # a Thursday
    span = find_timespan("我上週五去了哪裡", now)
    assert span is not None
    assert (span.start.date().isoformat(), span.end.date().isoformat()) == (
        "2026-11-27",
        "2026-11-28",
    )
    two_weeks = find_timespan("兩週前我們吃了什麼", now)
    assert two_weeks is not None and two_weeks.phrases == ("两周前",)
