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
    r"^\s*(?:(?:[A-Za-z'-]+\s+){0,5}?(?:to|until|till|into)\b|[到至成为])", re.IGNORECASE
)
_CLAUSE_END = re.compile(r"[，。；！？]|[,.;!?](?:\s|$)")


def has_time(text: str, parts: bool = False) -> bool:
    """Whether ``text`` gives a time or a month ("周三下午两点", "in May"); with
    ``parts``, a part of the day too ("in the morning")."""
    return (
        "time" in stated(text)
        or _MONTH.search(text) is not None
        or (parts and _PART_OF_DAY.search(text) is not None)
    )


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
    part = _PART_OF_DAY.match(rest)  # "switched my pills to the evening"
    return "time" in stated(rest[:14]) or month is not None or part is not None


#: The parts of a day, in each language (:mod:`.kinds` reads two habits by them too).
DAY_PARTS_EN = "morning|afternoon|evening|night"
DAY_PARTS_ZH = "早上|早晨|上午|中午|下午|晚上|夜里"
#: A part of the day as a new value: "to the evening", "改到晚上".
_PART_OF_DAY = re.compile(
    rf"\s*(?:the\s+)?(?:{DAY_PARTS_EN})s?\b|\s*(?:{DAY_PARTS_ZH})", re.IGNORECASE
)


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


#: What the speaker's own move changes: where they live, or where they work.
_MOVED_HOME = frozenset({"home", "place"})
_MOVED_AT_WORK = frozenset({"employer", "occupation"})

#: A move of the speaker's own, at the opening of a text: the speaker or no one, the
#: verb, and straight after it where to ("transferred over to the sales team", "我们搬到
#: 了望京", "bought a house in the suburbs"). A verb with a thing after it ("moved my
#: 1:1 to Thursday", "transferred $500 to savings", "把书架搬到客厅") is no such move.
_SELF_MOVE = re.compile(
    r"^\s*(?:(?:i|we)(?:'ve| have)?\s+)?(?:(?:just|finally|recently|also)\s+)?"
    r"(?:(?:got|been|was|were)\s+)?(?:moved|relocated|transferred)"
    r"(?:\s+(?:over|back|out|away))?\s+(?:to|into)\b"
    r"|^\s*(?:(?:i|we)\s+)?(?:(?:just|finally)\s+)?(?:bought|got)\s+(?:a|our|my)\s+(?:own\s+)?"
    r"(?:house|home|place|condo|flat|apartment)\b"
    r"|^\s*(?:我们?(?![\u4e00-\u9fff]*把))?(?:已经|刚|终于|也)?(?:搬到|搬去|搬家|调到|调去|买房|买了房)",
    re.IGNORECASE,
)


def speaker_moved(old: str, new: str, signal: tuple[str, str], holders: set[str]) -> str:
    """The attribute a move of the speaker's own changes ("transferred over to the
    sales team" beside "I work in the marketing department", "买房了，在城东" beside
    "我租房住在公司附近"), or "": the new text opens with the move (:data:`_SELF_MOVE`),
    names no one else, and the old text states where the speaker lives or works.
    ``holders``: who else either text names as holding its fact."""
    found = _SELF_MOVE.match(new)
    if signal[0] != "moved" or holders or not found:
        return ""
    # Moved house changes the home; moved within work (transferred, 调到) the job.
    work = re.search(r"transferred|调", found.group(0), re.IGNORECASE) is not None
    said = [a for a in stated(old) if a in (_MOVED_AT_WORK if work else _MOVED_HOME)]
    return said[0] if said else ""


__all__ = [
    "DAY_PARTS_EN",
    "DAY_PARTS_ZH",
    "has_time",
    "other_aspect",
    "signal_end",
    "speaker_moved",
    "time_value",
]
