"""Times named in a query, in Chinese and English, resolved against a reference time."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from memory_pg.timespan import find_timespan, without_recurring

#: A Thursday.
NOW = datetime(2026, 12, 3, 15, 30, tzinfo=timezone.utc)


def _span(text: str, now: datetime = NOW) -> tuple[date, date]:
    found = find_timespan(text, now)
    assert found is not None, text
    return found.start.date(), found.end.date()


@pytest.mark.parametrize(
    ("text", "first", "after"),
    [
        ("我5月2号去了哪里", date(2026, 5, 2), date(2026, 5, 3)),
        ("五月二号吃了什么", date(2026, 5, 2), date(2026, 5, 3)),
        ("2023年5月做了什么", date(2023, 5, 1), date(2023, 6, 1)),
        ("2023年5月2日的会议", date(2023, 5, 2), date(2023, 5, 3)),
        ("去年三月买了什么", date(2025, 3, 1), date(2025, 4, 1)),
        ("上周我们讨论了什么", date(2026, 11, 23), date(2026, 11, 30)),
        ("这周的计划", date(2026, 11, 30), date(2026, 12, 7)),
        ("昨天吃了什么", date(2026, 12, 2), date(2026, 12, 3)),
        ("前天", date(2026, 12, 1), date(2026, 12, 2)),
        ("上周五的会议", date(2026, 11, 27), date(2026, 11, 28)),
        ("周一做了什么", date(2026, 11, 30), date(2026, 12, 1)),
        ("三天前说的事", date(2026, 11, 30), date(2026, 12, 1)),
        ("两个月前买的", date(2026, 10, 1), date(2026, 11, 1)),
        ("上个月", date(2026, 11, 1), date(2026, 12, 1)),
        ("十二月份的计划", date(2026, 12, 1), date(2027, 1, 1)),
        ("7月去了哪里", date(2026, 7, 1), date(2026, 8, 1)),
        ("What did I do yesterday?", date(2026, 12, 2), date(2026, 12, 3)),
        ("What did I do last Friday?", date(2026, 11, 27), date(2026, 11, 28)),
        ("last Thursday", date(2026, 11, 26), date(2026, 11, 27)),
        ("What happened in May?", date(2026, 5, 1), date(2026, 6, 1)),
        ("in May 2023", date(2023, 5, 1), date(2023, 6, 1)),
        ("on 8 May 2023", date(2023, 5, 8), date(2023, 5, 9)),
        ("May 8th", date(2026, 5, 8), date(2026, 5, 9)),
        ("two weeks ago I met Bob", date(2026, 11, 16), date(2026, 11, 23)),
        ("3 days ago", date(2026, 11, 30), date(2026, 12, 1)),
        ("What did we decide last week?", date(2026, 11, 23), date(2026, 11, 30)),
        ("last month", date(2026, 11, 1), date(2026, 12, 1)),
        ("When did Melanie go camping in June?", date(2026, 6, 1), date(2026, 7, 1)),
        ("the trip in 2022", date(2022, 1, 1), date(2023, 1, 1)),
        ("2023-05-02 meeting", date(2023, 5, 2), date(2023, 5, 3)),
    ],
)
def test_a_named_time_resolves_to_its_span(text: str, first: date, after: date) -> None:
    assert _span(text) == (first, after)


@pytest.mark.parametrize(
    "text",
    [
        "数据库选型",
        "May I ask which database we use?",
        "3个月的计划",
        "When did Caroline go to the LGBTQ support group?",
        "李明是做什么工作的？",
        "we march on",
        "2月30号",
    ],
)
def test_text_that_names_no_time_gives_none(text: str) -> None:
    assert find_timespan(text, NOW) is None


def test_a_date_without_a_year_is_the_latest_that_has_begun() -> None:
    # Asked in February, "in May" is last May, not the coming one.
    assert _span("in May", datetime(2027, 2, 1, tzinfo=timezone.utc))[0] == date(2026, 5, 1)
    assert _span("12月25号", datetime(2027, 2, 1, tzinfo=timezone.utc))[0] == date(2026, 12, 25)


def test_the_words_that_named_the_time_leave_the_query() -> None:
    found = find_timespan("上周五和张伟开会讨论了什么", NOW)
    assert found is not None
    assert found.phrases == ("上周五",)
    assert "上周" not in found.rest and "张伟开会讨论了什么" in found.rest
    found = find_timespan("What did Alex cook last Friday for dinner?", NOW)
    assert found is not None
    assert found.rest == "What did Alex cook for dinner?"


def test_spans_are_in_the_reference_times_zone() -> None:
    shanghai = timezone(timedelta(hours=8))
    # 23:30 UTC on the 2nd is already the 3rd in Shanghai: "yesterday" is the 2nd there.
    found = find_timespan(
        "昨天", datetime(2026, 12, 2, 23, 30, tzinfo=timezone.utc).astimezone(shanghai)
    )
    assert found is not None
    assert found.start == datetime(2026, 12, 2, tzinfo=shanghai)
    assert found.end == datetime(2026, 12, 3, tzinfo=shanghai)


def test_several_times_give_the_span_that_covers_them() -> None:
    assert _span("5月或6月") == (date(2026, 5, 1), date(2026, 7, 1))


@pytest.mark.parametrize(
    "text",
    [
        "朵朵每个周末都上哪些课？",
        "他周末一般干啥",
        "每周六上午学什么",
        "What do I do every Saturday?",
        "Where does she go on weekends?",
    ],
)
def test_a_day_that_recurs_names_no_span(text: str) -> None:
    # A habit is asked of every week, not of last weekend: no memory is pushed
    # down for its date; its words leave the query as a time's do.
    assert find_timespan(text, NOW) is None
    assert without_recurring(text) != text


def test_a_recurring_day_beside_a_named_one_is_no_part_of_the_span() -> None:
    found = find_timespan("我每周六上午学画画，上周六没去", NOW)
    assert found is not None and found.phrases == ("上周六",)
    assert "周六" not in found.rest and "学画画" in found.rest
