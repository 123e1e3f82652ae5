"""Words that make a new text stand beside an old one rather than replace it: an
addition ("also", "另外"), a hedge ("maybe", "考虑", "if we take…", "如果…的话"), a
value of the past ("back when…", "那是之前…"), an exception for a while
("temporarily", "这周临时"). Used by :func:`memory_pg.text.changes.judge`."""

from __future__ import annotations

import re

from memory_pg.text.cues import CHANGING, CUE, changed_apart

#: Words that add a fact beside the old one rather than replace it.
_ADDITION = re.compile(
    r"\balso\b|\bas well\b|\bin addition\b|\badditionally\b|\bone more\b"
    r"|另外|还加了|也(?!不)|又(?:领养|买|加|添|多)|额外|再加",
    re.IGNORECASE,
)

#: "too" after what is added ("…shellfish too"), not before a word ("too expensive").
_TOO = re.compile(r"\btoo\b(?!\s+[a-z])", re.IGNORECASE)

#: Hedges: a plan or a guess is no change ("maybe we should", "要不要").
_HEDGE = re.compile(
    r"\bmaybe\b|\bperhaps\b|\bshould\b|\bmight\b|\bcould\b|\bthinking (?:about|of)\b"
    r"|\bconsidering\b|要不要|考虑|也许|或许|可能"
    # A value if something were so: "Rent would be $2,650, if we take the two-bedroom",
    # "月薪3万，如果跳槽去那家的话".
    r"|\bif (?:we|i|you|they|he|she)\b|\bwould be\b|如果|要是|假如"
    r"|(?<![说讲听])的话(?=[，,。！!]|$)"
    # A value of the past: "…, back when I lived out in the suburbs", "那是之前住城郊的时候".
    r"|\bback when\b|\b(?:at|in) my (?:previous|old|last|former)\b|那是(?:之前|以前|原来)"
    r"|上家公司|上一家公司|前公司",
    re.IGNORECASE,
)

#: A plan ("打算今年在嘉定买房"): beside a fact it changes nothing, in place of another
#: plan it is the new one ("准备五一去成都" / "成都取消了，五一打算回老家"). Not a plan
#: given up or of the past ("不打算", "本来打算"), nor a schedule issued ("计划下周出").
#: Chinese only, as :func:`memory_pg.text.cues.changed_apart` reads its clauses.
_PLAN = re.compile(
    r"(?<![的不没来本原])打算|(?<![不没来本原])计划(?=[去在把要明今])"
    r"|(?<![不没来本原])准备(?=[去在把要买搬换考])"
)
#: A single occasion, or a fact that recurs: a change said beside "这周", "今天", or of
#: "每周…", is for a while whatever clause its 临时 is in.
_ONCE = re.compile(r"这(?:一)?(?:周|次|回|个?月|个?星期|个?礼拜)|今天|明天|本周|这周末")
_RECURS = re.compile(r"每(?:周|天|日|次|月|个|星期|礼拜|年)|\b(?:every|each|weekly|daily)\b", re.I)

#: A new text that says it holds for a while only: an exception to the old fact,
#: which stands again after it ("this Sunday grandma is away, we eat at home
#: instead" beside "every Sunday we eat at grandma's"). Said in both, it is one event.
_ONE_OFF = re.compile(
    r"\btemporar(?:y|ily)\b|\bfor the (?:holidays?|weekend|summer|winter|trip|week)\b"
    r"|\bthen (?:going|go|goes|heading|head) back\b|\bjust (?:this|for) (?:once|week|time|today)\b"
    r"|\b(?:this|that) (?:week|time|once) only\b|\bonly (?:this|for) (?:week|time|once|today)\b"
    r"|临时|暂时(?!不)|暂且|先凑合|先将就|(?:只是|就|仅)这(?:一?次|周|回|一天)"
    # A stand-in while the holder is away: "while marcus is on leave", "他休假期间".
    r"|\bwhile\s+(?:\w+\s+){1,2}(?:is|are)\s+(?:on\s+(?:\w+\s+)?leave|away|out|off)\b"
    r"|(?:休假|请假|出差|不在)(?:期间|的时候)"
    r"|过(?:几|两)天(?:就|再)(?:回|换回|改回)|(?:之后|回头|以后)再?(?:换|改|搬)回",
    re.IGNORECASE,
)


def beside(old: str, new: str) -> bool:
    """Whether ``new`` says it adds to, wonders about, or makes a passing exception to
    what ``old`` says: both stay."""
    if _HEDGE.search(new):
        return True
    if _PLAN.search(new) and not _PLAN.search(old) and not changed_apart(new, _PLAN):
        return True
    if _ADDITION.search(new) and not changed_apart(new, _ADDITION):
        return True  # (a change in a clause of its own is one: "改期了！时间也提前了")
    if _TOO.search(new) and not any(m.lastgroup in CHANGING for m in CUE.finditer(new)):
        return True  # "allergic to shellfish too"; not "switched to VS Code, the team did too"
    # An exception for a while, after which the old fact stands; said in both, the
    # two texts are of one event ("这次团建去杭州" / "这次团建改去苏州了").
    # A while said in a clause of its own is why, not for how long: "临时接了个急活，
    # 看腰改到27号了" moved the visit.
    if not _ONE_OFF.search(new) or _ONE_OFF.search(old):
        return False
    return not changed_apart(new, _ONE_OFF) or bool(_ONCE.search(new) or _RECURS.search(old))


__all__ = ["beside"]
