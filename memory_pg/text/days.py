"""Days of the calendar a statement names ("June 30", "the 12th", "4月28号"), and one
thing's one day said again as another: "The grant application is due June 30" /
"grant app deadline is july 15, plenty of time"; "二期上线时间定在九月九日" / "二期10月8号
上线". Read by :mod:`memory_pg.text.changes` as a weak signal of change.

Not a day of a recurring thing ("every", 每月), nor a second one ("also", "another",
还有), nor a day of another thing of the same name ("the grant application" /
"progress report for that grant", "Code freeze" / "Code freeze for the mobile app").

Pure functions, no I/O.
"""

from __future__ import annotations

import re

from memory_pg.entities import has_han
from memory_pg.text.subjects import stem
from memory_pg.text.values import zh_value
from memory_pg.text.words import content

_MONTHS = "jan feb mar apr may jun jul aug sep oct nov dec".split()
#: A day of the calendar: "June 30", "oct 11", "the 12th", "6/20", "4月28号", "3月22", "15号".
_CALENDAR = re.compile(
    r"\b(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?P<d1>\d{1,2})(?:st|nd|rd|th)?\b"
    r"|\b(?P<d2>\d{1,2})(?:st|nd|rd|th)\b(?:\s+of\s+(?P<mon2>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))?"
    r"|(?:(?P<zm>\d{1,2}|[一二三四五六七八九十]{1,2})月)(?P<zd>\d{1,2}|[一二三四五六七八九十]{1,3})[号日]?"
    r"|(?<![\d月])(?P<zd2>\d{1,2})[号日]",
    re.IGNORECASE,
)


def _int(word: str) -> int:
    """A number written in digits or in Chinese numerals (九, 二十三)."""
    return int(word) if word.isdigit() else int(zh_value(word) or 0)


def calendar_days(text: str) -> list[tuple[int, int]]:
    """The days of the calendar ``text`` names, as (month, day), month 0 where it is
    not said ("the 12th", "15号").

    Example:
        >>> calendar_days("grant app deadline is july 15, plenty of time")
        [(7, 15)]
        >>> calendar_days("初稿截止4月28号")
        [(4, 28)]
    """
    found = []
    for m in _CALENDAR.finditer(text):
        mon = (m.group("mon") or m.group("mon2") or "").lower()[:3]
        if m.group("zm"):
            found.append((_int(m.group("zm")), _int(m.group("zd"))))
        elif m.group("zd2"):
            found.append((0, int(m.group("zd2"))))
        else:
            found.append(
                (_MONTHS.index(mon) + 1 if mon else 0, int(m.group("d1") or m.group("d2")))
            )
    return [d for d in found if 1 <= d[1] <= 31 and d[0] <= 12]


def without_days(text: str) -> str:
    """``text`` without the days of the calendar it names."""
    return _CALENDAR.sub(" ", text)


def other_day(old: str, new: str) -> str:
    """The one day of the calendar ``new`` names where ``old`` names one other day (the
    month compared where both say it), or "": one date said again as another."""
    a, b = calendar_days(old), calendar_days(new)
    if len(a) != 1 or len(b) != 1:
        return ""
    (ma, da), (mb, db) = a[0], b[0]
    if da == db and (ma == mb or not (ma and mb)):
        return ""
    m = _CALENDAR.search(new)
    return m.group(0) if m else ""


#: What makes a day one of several: a recurring thing ("every", 每月), another one
#: ("also", "another", 还有, 也).
_ANOTHER_OCCASION = re.compile(
    r"\b(?:every|each|also|another|too|as well|plus|next one|second)\b|每|还有|也|另|再"
    # An exception for one time: "rent due the 5th this month because of the holiday".
    r"|\bthis (?:month|week|year|time)\b|这个月|这周|这次|这回|本月",
    re.IGNORECASE,
)
_ASKED = re.compile(r"[?？]|吗|\bis (?:it|the)\b.*\?")
#: What a thing is for, naming which one it is: "Code freeze for the mobile app".
_FOR_SCOPE = re.compile(r"\bfor (?:the |my |our |that |this )?([a-z][\w-]+)", re.IGNORECASE)
#: Words that frame a day rather than name what it is the day of.
_DAY_FRAME = frozenset(
    "due deadline date day by submit need needs set scheduled booked until till ends end "
    "截止 期限 日期 日子 时间 定在 安排 交 到期".split()
)


def _words(text: str) -> frozenset[str]:
    """The words of ``text`` less its days (:func:`memory_pg.text.words.content`)."""
    return content(without_days(text))


def _names_all(old: str, new: str) -> bool:
    """Whether ``new`` names everything ``old`` gives a day to (its words less the day
    and the words that frame one; "app" for "application"), no other thing it is for,
    and gives its day to nothing ``old`` does not name ("visa photos for the interview
    are due May 2" gives it to the photos)."""
    words_old, words_new = _words(old), _words(new)
    wanted = words_old - _DAY_FRAME
    scope = {stem(w) for w in _FOR_SCOPE.findall(new)} - words_old
    m = _CALENDAR.search(new)
    before = _words(new[: m.start()]) - _DAY_FRAME if m else frozenset()
    return (
        bool(wanted)
        and not scope
        and all(_one_of(w, words_new) or (has_han(w) and w in new) for w in wanted)
        and all(_one_of(w, words_old) or (has_han(w) and w in old) for w in before)
    )


def _one_of(word: str, words: frozenset[str]) -> bool:
    """Whether ``word`` is one of ``words``, or one said shorter ("app", "application")."""
    return word in words or any(
        len(n) >= 3 and (word.startswith(n) or n.startswith(word)) for n in words
    )


def said_again(old: str, new: str) -> str:
    """The day ``new`` gives the one thing ``old`` gives another day, or "".

    Example:
        >>> said_again("The project deadline is June 30.", "Project due: July 15.")
        'July 15'
        >>> said_again("Code freeze: Nov 14.", "Code freeze for the mobile app — Nov 21.")
        ''
    """
    day = other_day(old, new)
    if _ASKED.search(new):
        return ""  # "is the tax deadline april 18 this year?": a question
    if day and not _ANOTHER_OCCASION.search(old + " " + new) and _names_all(old, new):
        return day
    return ""


__all__ = ["calendar_days", "other_day", "said_again", "without_days"]
