"""Dates and relative times named in a query ("5月2号", "上周", "last Friday", "in May").

A pure function: :func:`find_timespan` reads the time a query names, resolves it
against a reference time, and returns the span with the query's other words. The
search ranks memories whose ``event_time`` falls in the span first (a soft boost,
not a filter) and leaves the time words out of the full-text query: "五月" is not
a topic. Nothing is guessed when a query names no time.

A date without a year ("5月2号", "in May", "last Friday") means the latest such
date that has begun by the reference time: memories are mostly of the past.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo

from memory_pg._segment import fold_traditional

__all__ = ["TimeSpan", "find_timespan", "without_recurring"]


@dataclass(frozen=True)
class TimeSpan:
    """A span of time a query names, and the query without the words that named it.

    Attributes:
        start: the first instant of the span (inclusive).
        end: the instant after the span (exclusive).
        phrases: the phrases of the query that named it, in order.
        rest: the query with those phrases removed.
    """

    start: datetime
    end: datetime
    phrases: tuple[str, ...]
    rest: str

    @property
    def days(self) -> float:
        """The span's length in days."""
        return (self.end - self.start).total_seconds() / 86400.0


_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5}
_CN_DIGITS.update({"六": 6, "七": 7, "八": 8, "九": 9})
_CN_NUM = "[零〇一二两三四五六七八九十]{1,3}"
_NUM = rf"(?:\d{{1,2}}|{_CN_NUM})"

_EN_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
}
_MONTHS = {
    name: i
    for i, names in enumerate(
        (
            (),
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sept", "sep"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        )
    )
    for name in names
}
_WEEKDAYS_EN = {
    name: i
    for i, names in enumerate(
        (
            ("monday", "mon"),
            ("tuesday", "tue", "tues"),
            ("wednesday", "wed"),
            ("thursday", "thu", "thur", "thurs"),
            ("friday", "fri"),
            ("saturday", "sat"),
            ("sunday", "sun"),
        )
    )
    for name in names
}
_WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}


def _cn_int(text: str) -> int:
    """``"12"``, ``"十二"``, ``"二十三"``, ``"五"`` as an int."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_CN_DIGITS[tens] if tens else 1) * 10 + (_CN_DIGITS[ones] if ones else 0)
    value = 0
    for ch in text:
        value = value * 10 + _CN_DIGITS[ch]
    return value


def _en_int(text: str) -> int:
    text = " ".join(text.lower().split())
    return int(text) if text.isdigit() else _EN_NUMBERS[text]


# -- spans ---------------------------------------------------------------------------


class _Ref:
    """The reference time and its calendar helpers."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.tz: tzinfo | None = now.tzinfo
        self.today = now.date()

    def at(self, day: date) -> datetime:
        return datetime(day.year, day.month, day.day, tzinfo=self.tz)

    def days(self, first: date, count: int) -> tuple[datetime, datetime]:
        return self.at(first), self.at(first + timedelta(days=count))

    def day(self, day: date) -> tuple[datetime, datetime]:
        return self.days(day, 1)

    def week_of(self, day: date) -> tuple[datetime, datetime]:
        return self.days(day - timedelta(days=day.weekday()), 7)

    def month(self, year: int, month: int) -> tuple[datetime, datetime]:
        year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
        nxt = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
        return self.at(date(year, month, 1)), self.at(nxt)

    def year(self, year: int) -> tuple[datetime, datetime]:
        return self.at(date(year, 1, 1)), self.at(date(year + 1, 1, 1))

    def latest_month(self, month: int) -> tuple[datetime, datetime]:
        """The latest ``month`` that has begun by now."""
        year = self.today.year if month <= self.today.month else self.today.year - 1
        return self.month(year, month)

    def latest_date(self, month: int, day: int) -> tuple[datetime, datetime]:
        """The latest ``month``/``day`` on or before today (a valid date)."""
        for year in range(self.today.year, self.today.year - 8, -1):
            try:
                d = date(year, month, day)
            except ValueError:
                continue
            if d <= self.today:
                return self.day(d)
        raise ValueError("no such date")

    def date(self, year: int, month: int, day: int) -> tuple[datetime, datetime]:
        return self.day(date(year, month, day))

    def weekday_back(self, weekday: int, strictly_before: bool) -> tuple[datetime, datetime]:
        """The latest ``weekday`` on or before today (before today if ``strictly_before``)."""
        back = (self.today.weekday() - weekday) % 7
        if back == 0 and strictly_before:
            back = 7
        return self.day(self.today - timedelta(days=back))

    def weekday_of_week(self, weeks: int, weekday: int) -> tuple[datetime, datetime]:
        """``weekday`` of the week ``weeks`` from this one (-1: last week)."""
        monday = self.today - timedelta(days=self.today.weekday()) + timedelta(weeks=weeks)
        return self.day(monday + timedelta(days=weekday))

    def weekend_of_week(self, weeks: int) -> tuple[datetime, datetime]:
        monday = self.today - timedelta(days=self.today.weekday()) + timedelta(weeks=weeks)
        return self.days(monday + timedelta(days=5), 2)

    def months_back(self, count: int) -> tuple[datetime, datetime]:
        return self.month(self.today.year, self.today.month - count)


_Span = tuple[datetime, datetime]
_Rule = tuple[re.Pattern[str], Callable[[re.Match[str], _Ref], _Span]]


def _years_back(r: _Ref, n: int) -> _Span:
    return r.year(r.today.year - n)


def _ago(unit: str, n: int, r: _Ref) -> _Span:
    unit = unit.lower()
    if unit.startswith(("day", "天", "日")):
        return r.day(r.today - timedelta(days=n))
    if unit.startswith(("week", "周", "星期", "个星期", "礼拜", "个礼拜")):
        return r.week_of(r.today - timedelta(weeks=n))
    if unit.startswith(("month", "个月", "月")):
        return r.months_back(n)
    return _years_back(r, n)


def _zh_year(text: str, r: _Ref) -> int:
    rel = {"今年": 0, "去年": 1, "前年": 2, "明年": -1}
    if text in rel:
        return r.today.year - rel[text]
    return int(text.rstrip("年"))


def _zh_weekday(text: str) -> int:
    return _WEEKDAYS_ZH[text[-1]]


def _week_offset(text: str) -> int:
    if text.startswith(("上上",)):
        return -2
    if text.startswith("上"):
        return -1
    if text.startswith("下"):
        return 1
    return 0


_WEEK_ZH = r"(?:周|星期|礼拜)"
_YEAR_ZH = r"(?:\d{4}年|今年|去年|前年|明年)"
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WEEKDAY_NAMES = "|".join(sorted(_WEEKDAYS_EN, key=len, reverse=True))
_EN_COUNT = (
    r"(?:\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|(?:a )?couple of|(?:a )?few)"
)
_DAY_OF_MONTH = r"\b(?:on )?(?:the )?(\d{1,2})(?:st|nd|rd|th)? (?:of )?"

#: Most specific first: a rule's match is removed from the text before the next runs.
_RULES: list[_Rule] = [
    # -- Chinese ---------------------------------------------------------------
    (
        re.compile(r"(\d{4})[年\-/.](\d{1,2})[月\-/.](\d{1,2})[日号]?"),
        lambda m, r: r.date(int(m[1]), int(m[2]), int(m[3])),
    ),
    (
        re.compile(rf"({_YEAR_ZH})的?({_NUM})月(?:份)?({_NUM})[日号]"),
        lambda m, r: r.date(_zh_year(m[1], r), _cn_int(m[2]), _cn_int(m[3])),
    ),
    (
        re.compile(rf"({_YEAR_ZH})的?({_NUM})月份?"),
        lambda m, r: r.month(_zh_year(m[1], r), _cn_int(m[2])),
    ),
    (
        re.compile(rf"(?<![\d个])({_NUM})月份?({_NUM})[日号]"),
        lambda m, r: r.latest_date(_cn_int(m[1]), _cn_int(m[2])),
    ),
    (
        re.compile(rf"({_NUM}|几|好几)(天|周|个星期|星期|个礼拜|礼拜|个月|年)(?:以)?前"),
        lambda m, r: _ago(m[2], 3 if "几" in m[1] else _cn_int(m[1]), r),
    ),
    (re.compile(r"大前天"), lambda m, r: r.day(r.today - timedelta(days=3))),
    (re.compile(r"前天"), lambda m, r: r.day(r.today - timedelta(days=2))),
    (re.compile(r"昨天|昨日|昨晚"), lambda m, r: r.day(r.today - timedelta(days=1))),
    (re.compile(r"今天|今日|今晚|今早"), lambda m, r: r.day(r.today)),
    (re.compile(r"明天|明日|明晚"), lambda m, r: r.day(r.today + timedelta(days=1))),
    (re.compile(r"后天"), lambda m, r: r.day(r.today + timedelta(days=2))),
    (
        re.compile(rf"(上上|上个?|下个?|这个?|本)({_WEEK_ZH})([一二三四五六日天末])"),
        lambda m, r: (
            r.weekend_of_week(_week_offset(m[1]))
            if m[3] == "末"
            else r.weekday_of_week(_week_offset(m[1]), _zh_weekday(m[3]))
        ),
    ),
    (
        re.compile(rf"(上上|上个?|下个?|这个?|本)({_WEEK_ZH})"),
        lambda m, r: r.week_of(r.today + timedelta(weeks=_week_offset(m[1]))),
    ),
    (
        re.compile(rf"(?<![上下这本个]){_WEEK_ZH}([一二三四五六日天])"),
        lambda m, r: r.weekday_back(_zh_weekday(m[1]), strictly_before=False),
    ),
    (re.compile(r"周末"), lambda m, r: r.weekend_of_week(-1 if r.today.weekday() < 5 else 0)),
    (re.compile(r"上上个?月"), lambda m, r: r.months_back(2)),
    (re.compile(r"上个?月"), lambda m, r: r.months_back(1)),
    (re.compile(r"这个月|本月"), lambda m, r: r.months_back(0)),
    (re.compile(r"下个?月"), lambda m, r: r.months_back(-1)),
    (
        re.compile(
            rf"(?<![\d个几上下])(\d{{1,2}}|十[一二]?|[一二三四五六七八九])月份?(?!{_NUM}[日号])"
        ),
        lambda m, r: r.latest_month(_cn_int(m[1])),
    ),
    (re.compile(r"(\d{4})年|今年|去年|前年|明年"), lambda m, r: r.year(_zh_year(m[0], r))),
    # -- English -----------------------------------------------------------------
    (
        re.compile(
            rf"\b(?:on |in )?({_MONTH_NAMES})\.? (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b", re.I
        ),
        lambda m, r: r.date(int(m[3]), _MONTHS[m[1].lower()], int(m[2])),
    ),
    (
        re.compile(
            _DAY_OF_MONTH + rf"({_MONTH_NAMES})\.?,? (\d{{4}})\b",
            re.I,
        ),
        lambda m, r: r.date(int(m[3]), _MONTHS[m[2].lower()], int(m[1])),
    ),
    (
        re.compile(rf"\b(?:in |during )?({_MONTH_NAMES}),? (\d{{4}})\b", re.I),
        lambda m, r: r.month(int(m[2]), _MONTHS[m[1].lower()]),
    ),
    (
        re.compile(rf"\b(?:on )?({_MONTH_NAMES})\.? (\d{{1,2}})(?:st|nd|rd|th)?\b(?! ?\d)", re.I),
        lambda m, r: r.latest_date(_MONTHS[m[1].lower()], int(m[2])),
    ),
    (
        re.compile(_DAY_OF_MONTH + rf"({_MONTH_NAMES})\b", re.I),
        lambda m, r: r.latest_date(_MONTHS[m[2].lower()], int(m[1])),
    ),
    (
        re.compile(rf"\b({_EN_COUNT}) (days?|weeks?|months?|years?) ago\b", re.I),
        lambda m, r: _ago(m[2], _en_int(m[1]), r),
    ),
    (re.compile(r"\bthe day before yesterday\b", re.I), lambda m, r: r.day(r.today - timedelta(2))),
    (re.compile(r"\byesterday\b", re.I), lambda m, r: r.day(r.today - timedelta(days=1))),
    (re.compile(r"\b(?:today|tonight|this morning)\b", re.I), lambda m, r: r.day(r.today)),
    (re.compile(r"\btomorrow\b", re.I), lambda m, r: r.day(r.today + timedelta(days=1))),
    (
        re.compile(rf"\b(?:on )?(last|this|next) ({_WEEKDAY_NAMES})\b", re.I),
        lambda m, r: (
            r.weekday_back(_WEEKDAYS_EN[m[2].lower()], strictly_before=True)
            if m[1].lower() == "last"
            else r.weekday_of_week(1 if m[1].lower() == "next" else 0, _WEEKDAYS_EN[m[2].lower()])
        ),
    ),
    (
        re.compile(r"\b(last|this|next|the) weekend\b", re.I),
        lambda m, r: r.weekend_of_week(
            {"last": -1, "next": 1}.get(m[1].lower(), -1 if r.today.weekday() < 5 else 0)
        ),
    ),
    (
        re.compile(r"\b(?:in |during )?(last|this|next) (week|month|year)\b", re.I),
        lambda m, r: _this_unit(m[2].lower(), {"last": -1, "this": 0, "next": 1}[m[1].lower()], r),
    ),
    (
        re.compile(r"\b(?:on )?(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.I),
        lambda m, r: r.weekday_back(_WEEKDAYS_EN[m[1].lower()], strictly_before=False),
    ),
    (
        # A bare "may" or "march" is a verb far more often than a month: a cue is needed.
        re.compile(
            r"\b(?:in|during|since|early|late|mid|of|until|before|after) "
            rf"(?:early |late |mid-?)?({_MONTH_NAMES})\b"
            r"|\b(january|february|april|june|july|august|september|october|november|december)\b",
            re.I,
        ),
        lambda m, r: r.latest_month(_MONTHS[(m[1] or m[2]).lower()]),
    ),
    (
        re.compile(r"\b(?:in |during |since )?((?:19|20)\d\d)\b", re.I),
        lambda m, r: r.year(int(m[1])),
    ),
]


def _this_unit(unit: str, offset: int, r: _Ref) -> _Span:
    if unit == "week":
        return r.week_of(r.today + timedelta(weeks=offset))
    if unit == "month":
        return r.months_back(-offset)
    return r.year(r.today.year + offset)


#: A day or a weekend that recurs: after 每 / every, a plural English day, or a
#: Chinese weekend said with a word of habit ("周末一般…", "周末喜欢…").
_RECURRING = re.compile(
    r"每(?:个|逢)?(?:周|星期|礼拜)[一二三四五六日天末]?|每个?周末"
    r"|(?<![上下这本今])周末(?=(?:一般|通常|经常|常常|总是|喜欢|习惯|平时|基本上))"
    r"|\bevery (?:other )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|weekend|week)\b"
    r"|\b(?:on )?(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekends)\b",
    re.IGNORECASE,
)


def without_recurring(text: str) -> str:
    """``text`` less the days it names as recurring ("小王周末喜欢做什么" → "小王
    喜欢做什么"): words of time, not of what the question is about."""
    return re.sub(r"\s{2,}", " ", _RECURRING.sub(" ", fold_traditional(text))).strip()


def find_timespan(text: str, now: datetime) -> TimeSpan | None:
    """The span of time ``text`` names, resolved against ``now``; None if it names none.

    Several phrases ("in May or June") give the span that covers them all. Days,
    weeks and months are calendar ones in ``now``'s time zone (weeks start on
    Monday). A phrase that names no valid date ("2月30号") is left in the text.

    >>> from datetime import timezone
    >>> span = find_timespan("我上周五去了哪里", datetime(2026, 12, 3, tzinfo=timezone.utc))
    >>> span.start.date(), span.end.date(), span.rest
    (datetime.date(2026, 11, 27), datetime.date(2026, 11, 28), '我 去了哪里')
    """
    ref = _Ref(now)
    spans: list[_Span] = []
    phrases: list[str] = []
    # "上週", "兩週前", "禮拜五" read as their simplified forms.
    rest = fold_traditional(text)
    # A day that recurs ("每个周末", "周末一般", "every Saturday", "on Sundays") names no
    # span, and leaves the query as a time would (:func:`without_recurring`).
    rest = _RECURRING.sub(" ", rest)
    for pattern, resolve in _RULES:
        pieces: list[str] = []
        pos = 0
        for match in pattern.finditer(rest):
            try:
                span = resolve(match, ref)
            except (ValueError, KeyError, OverflowError):
                continue
            spans.append(span)
            phrases.append(match.group().strip())
            pieces.append(rest[pos : match.start()])
            # A space keeps the words on either side apart ("in May at" -> "at").
            pieces.append(" ")
            pos = match.end()
        if pieces:
            rest = "".join(pieces) + rest[pos:]
    if not spans:
        return None
    start = min(s for s, _ in spans)
    end = max(e for _, e in spans)
    cleaned = re.sub(r"\s{2,}", " ", rest).strip()
    return TimeSpan(start, end, tuple(phrases), cleaned)
