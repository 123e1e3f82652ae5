"""Which aspect of an event a change gives: a time ("pushed to Thursday", "挪到一月
中旬") or a place ("moved to Portland in March": March says when). A change of one
leaves the other standing ("婚礼在5月" / "婚礼场地换了").

Pure functions, no I/O.
"""

from __future__ import annotations

import re

from memory_pg.text.attributes import stated


def signal_end(text: str, signal: tuple[str, str]) -> int:
    """Where the signal's words end in ``text``."""
    at = text.find(signal[1])
    return at + len(signal[1]) if at >= 0 else 0


#: Words that put a time after a signal as its new value: "moved to Thursdays".
#: A few words may come between: the thing moved ("moved deploys to Thursdays",
#: "pushed the review back to Monday").
_TO_WORD = re.compile(
    r"^\s*(?:(?:[A-Za-z'-]+\s+){0,3}?(?:to|until|till|into)\b|[到至成为])", re.IGNORECASE
)
_CLAUSE_END = re.compile(r"[，。；！？]|[,.;!?](?:\s|$)")


def has_time(text: str) -> bool:
    """Whether ``text`` gives a time or a month ("周三下午两点", "in May")."""
    return "time" in stated(text) or _MONTH.search(text) is not None


def time_value(new: str, signal: tuple[str, str]) -> bool:
    """Whether the value the signal introduces is a time ("pushed to Sunday",
    "挪到周二"), not a time saying when the change came ("since January",
    "下周入职美团", "last Friday")."""
    rest = _CLAUSE_END.split(new[signal_end(new, signal) :], maxsplit=1)[0]
    if not re.search(r"(?:\bto|[到至成为])\s*$", signal[1], re.IGNORECASE):
        to = _TO_WORD.match(rest)
        if to is None:
            return False
        rest = rest[to.end() :]
    # The value ends where a word says when: "moved to York in April" moved to York.
    rest = re.split(r"\s(?:in|on|at|since|last|this|after|before|for)\s", rest, maxsplit=1)[0]
    month = _MONTH.match(
        re.sub(r"^\s*(?:(?:next|this|early|late|mid)\s+|明年|今年|下个?)?", "", rest)
    )
    return "time" in stated(rest[:14]) or month is not None


#: A month alone ("婚礼在5月", "in July") is a time too, for telling a date from a place.
_MONTH = re.compile(
    r"\d{1,2}\s*月|[一二三四五六七八九十]{1,2}月(?!薪|供|租)|\b(?:january|february|march|april"
    r"|june|july|august|september|october|november|december)\b|\bin may\b|\bmay \d",
    re.IGNORECASE,
)

#: Words that name a place as the attribute changed: "venue", "场地".
_PLACE_WORDS = re.compile(r"\bvenue\b|\blocation\b|场地|地点|地方", re.IGNORECASE)


def other_aspect(old: str, new: str, signal: tuple[str, str]) -> bool:
    """Whether the old text gives a time and no place while the new one changes a
    place and gives no time (or the other way round): two attributes of one event.
    A move changes a place ("moved to Portland in March": March is when)."""
    said_old, said_new = set(stated(old)), set(stated(new))
    if _MONTH.search(old):
        said_old.add("time")
    if _MONTH.search(new):
        said_new.add("time")
    moved = signal[0] == "moved"
    place_new = moved or "place" in said_new or _PLACE_WORDS.search(new) is not None
    if moved and not time_value(new, signal):
        said_new.discard("time")
    place_old = "place" in said_old or _PLACE_WORDS.search(old) is not None
    if "time" in said_old and not place_old and place_new and "time" not in said_new:
        return True
    return "time" in said_new and not place_new and place_old and "time" not in said_old


__all__ = ["has_time", "other_aspect", "signal_end", "time_value"]


#: What the speaker's own move changes: where they live or work.
_MOVED_FROM = frozenset({"home", "employer", "occupation", "place"})


def speaker_moved(old: str, new: str, signal: tuple[str, str], holders: set[str]) -> str:
    """The attribute a move said of the speaker changes ("transferred over to the sales
    team" beside "I work in the marketing department", "买房了，在城东" beside "我租房住在
    公司附近"), or "": the new text names no one else and no thing that moved (its
    subject is the speaker or nobody), and the old text states where the speaker lives
    or works. ``holders``: who else either text names as holding its fact."""
    if signal[0] != "moved" or holders:
        return ""
    if re.match(r"\s*(?!(?:i|we|i've|we've|我|我们)\b)[A-Za-z\u4e00-\u9fff]", new, re.I):
        opening = re.match(r"\s*(\S+)", new)
        if opening is None or not _MOVE_FIRST.match(opening.group(1)):
            return ""  # "The office relocated…", "公司搬到…": a thing moved
    said = [a for a in stated(old) if a in _MOVED_FROM]
    return said[0] if said else ""


#: A new text that opens with its verb of moving, the speaker unsaid.
_MOVE_FIRST = re.compile(
    r"moved|moving|relocated|transferred|bought|got|搬|买房|调到|调去|转到", re.IGNORECASE
)
