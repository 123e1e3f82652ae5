"""What a statement says of a state, beside a word of change: a named thing with another
number ("Windows 10" / "Windows 11"), a thing to do finished
("要交这个月的物业费" / "物业费交了"), a negation lifted or put on ("我不吃辣" / "最近开始能吃
辣了"), progress towards a target ("预算15万" / "已经花了8万多"), and a quantity of another
kind ("capped at 4GB" / "hit rate is 92% now"). Read by
:func:`memory_pg.text.changes.judge`.

Pure functions, no I/O.
"""

from __future__ import annotations

import re

from memory_pg._segment import EN_STOPWORDS
from memory_pg.entities import has_han
from memory_pg.text import quantities
from memory_pg.text.attributes import LOOSE, stated
from memory_pg.text.cues import changed_apart
from memory_pg.text.subjects import stem

#: A thing to do, by the verb that opens it: "pay the credit card bill", "need to renew
#: my passport", "要交这个月的物业费", "记得给妈妈打电话".
_TODO_EN = re.compile(
    r"^\s*(?:todo:?\s*|to-?do:?\s*|need to\s+|have to\s+|gotta\s+|must\s+|remember to\s+"
    r"|(?:i|we)\s+(?:need|have|ought)\s+to\s+|(?:i|we)\s+should\s+|to\s+)?([a-z]{3,})\b"
    # A verb, not a subject: "Rent is 2000" states a fact, it sets nothing to do.
    r"(?!\s+(?:is|are|was|were|has|have)\b|'s\b)",
    re.IGNORECASE,
)
_TODO_ZH = re.compile(
    r"(?:(?<![重主只想还])要|(?<![记懂晓觉获值])得|需要|记得|别忘了|(?<![应活])该|准备|待|打算)"
    r"([\u4e00-\u9fff]{1,2})"
)
#: English verbs whose past is not "-ed" (the verbs of things to do).
_IRREGULAR_PAST = {
    "pay": ("paid",),
    "send": ("sent",),
    "buy": ("bought",),
    "get": ("got", "gotten"),
    "do": ("done", "did"),
    "make": ("made",),
    "take": ("took", "taken"),
    "write": ("wrote", "written"),
    "sell": ("sold",),
    "find": ("found",),
    "bring": ("brought",),
    "give": ("gave", "given"),
    "tell": ("told",),
    "meet": ("met",),
    "see": ("saw", "seen"),
    "go": ("went", "gone"),
    "pick": ("picked",),
    "put": ("put",),
    "set": ("set",),
    "read": ("read",),
    "hold": ("held",),
    "build": ("built",),
    "choose": ("chose", "chosen"),
    "sign": ("signed",),
    "run": ("ran",),
}
#: A thing to do said to be done, or not yet: the verb with its ending of completion.
_ZH_DONE = "了|完|好|掉|过"
_NOT_YET = re.compile(r"\bnot\b|n't\b|\byet\b|\bstill\b|还没|没有|未|尚未|还得|还要", re.IGNORECASE)


def done(old: str, new: str) -> str:
    """The words of ``new`` that say the thing ``old`` set out to do is done: "pay the
    credit card bill" / "CC bill paid in full", "要交这个月的物业费" / "物业费交了";
    or "". The old text opens with (or, in Chinese, holds) a verb of doing, the new
    one has that verb finished, and says nothing of it being undone or still to do."""
    if _NOT_YET.search(new):
        return ""
    m = _TODO_EN.match(old)
    if m and not has_han(old):
        verb = m.group(1).lower()
        forms = {verb + "ed", verb + "d", verb[:-1] + "ied" if verb.endswith("y") else ""}
        forms |= set(_IRREGULAR_PAST.get(verb, ()))
        if verb[-1] not in "aeiouwxy" and verb[-2] in "aeiou" and verb[-3] not in "aeiou":
            forms.add(verb + verb[-1] + "ed")  # "submit" / "submitted"
        words: list[str] = re.findall(r"[a-z]+", new.lower())
        return next((word for word in words if word in forms - {""}), "")
    for m in _TODO_ZH.finditer(old):
        for verb in (m.group(1), m.group(1)[:1]):
            done = re.search(re.escape(verb) + f"(?:{_ZH_DONE})", new)
            if done and not re.search(r"[没未]\S{0,2}$", new[: done.start()]):
                return done.group(0)
    return ""


#: A predicate said with a negation before it: "不吃辣", "不控碳水了", "没有车".
_NEGATED = re.compile(
    # Not the words where 不 or 没 negates nothing: "不错", "不少", "不过", "没想到".
    r"(?:不再|不(?![错少过到同久断仅管然如太是只光论住得])|没有|没(?![想准事关错]))"
    r"([\u4e00-\u9fff]{2,4})"
)
#: What marks the new text as a change of state, not a second statement.
_NOW_STATE = re.compile(r"了|开始|现在|最近|已经|如今|重新|又")


def flipped(old: str, new: str) -> str:
    """The predicate that one text negates and the other affirms, when the new text
    says its state changed: "我不吃辣" / "最近开始能吃辣了", "晚饭不吃主食，在控碳水" /
    "不控碳水了"; or "". Chinese only."""
    if not has_han(new) or not _NOW_STATE.search(new):
        return ""
    for negated, plain in ((old, new), (new, old)):
        for m in _NEGATED.finditer(negated):
            predicate = m.group(1).removesuffix("了")
            for size in (len(predicate), 3, 2):
                head = predicate[:size]
                if len(head) < 2:
                    continue
                for at in (i.start() for i in re.finditer(re.escape(head), plain)):
                    if not re.search("[不没]", plain[max(0, at - 2) : at]):
                        return head
            # The thing alone, after a verb of taking it up: "我不吃香菜" / "能接受香菜了".
            thing = predicate[1:]
            if len(_NEGATED.findall(negated)) > 1:
                continue  # "不吃香菜，也不吃葱": one taken up, the other still not
            for at in (i.start() for i in re.finditer(re.escape(thing), plain)):
                before = plain[max(0, at - 4) : at]
                if len(thing) >= 2 and _TAKEN_UP.search(before) and not re.search("[不没]", before):
                    return thing
    return ""


#: Verbs of taking something up: "能接受", "爱上了", "喜欢上".
_TAKEN_UP = re.compile(r"接受|爱上|喜欢上|迷上|能吃|敢吃|能喝")


#: A clause that ends in 了 after what it states (not after a verb of finishing,
#: "搭好了", "做完了", which :func:`done` reads): Chinese grammar's mark of a new
#: situation, "儿子上一年级了", "家里三只猫了", "眼镜摘了".
_NEW_SITUATION = re.compile(
    r"[\u4e00-\u9fff](?<![好完过])了(?:吧|啊|呀|哦|啦)?\s*(?:[，,。！!；;…]|$)"
)


#: A day or an occasion: "今天喝了三杯咖啡了" tells of one day, not of a new habit.
_OCCASION = re.compile(r"今天|昨天|前天|刚才|刚刚|今早|今晚|昨晚|这次|上次|那天|这周|上周")


def new_situation(old: str, new: str) -> str:
    """ "了" where a clause-final 了 says the new text's state is a new one, where the old
    text says its own state with none, of the same thing: one thing counted ("两只猫" /
    "三只猫了") or an attribute one has one value of ("上幼儿园" / "上一年级了"); or "".
    Not of an occasion ("今天吃了花生了") and not of another attribute ("我妈在医院当
    护士" / "我妈感冒了"). Chinese only: English says it with a word ("now", "these
    days") that :mod:`memory_pg.text.cues` lists."""
    m = _NEW_SITUATION.search(new)
    if m is None or _NEW_SITUATION.search(old) or _OCCASION.search(new):
        return ""
    one = (set(stated(old)) & set(stated(new))) - LOOSE
    if not (one or quantities.counted(old) & quantities.counted(new)):
        return ""
    return "了"  # the mark, not the words before it: a history event holds no user text


#: Words that say nothing changed: "计划照旧", "still Sam's team".
_UNCHANGED = re.compile(
    r"\bstill\b|\bas before\b|\bas usual\b|\b(?:like|as) always\b|\bnothing new\b"
    r"|\bsame as\b|\bunchanged\b"
    r"|照旧|依旧|仍旧|仍然|还是老样子|没变|不变",
    re.IGNORECASE,
)


def unchanged(text: str) -> bool:
    """Whether ``text`` says that nothing changed ("like always", "计划照旧"): it
    restates a fact, and replaces nothing. Not where another clause says a change
    ("考级改到6月21号了，地点不变": the place stands, the day moved)."""
    return _UNCHANGED.search(text) is not None and not changed_apart(text, _UNCHANGED)


def other_quantity(old: str, new: str) -> bool:
    """Whether the two texts give quantities of different kinds (a size and a
    percentage; three brokers and 200 million messages), the old one gives a
    quantity the new one has no number for ("晚饭一般七点吃" / "现在晚饭经常吃凉面"), or
    the new one gives only how long a state has lasted ("吃素已经五年了"), which says
    it continues."""
    said_old, said_new = quantities.kinds(old), quantities.kinds(new)
    if said_old and said_new:
        return not any(quantities.same_kind(a, b) for a in said_old for b in said_new)
    if said_old and not quantities.has_number(new):
        return True
    return not quantities.has_number(old) and said_new == {"duration"}


#: A target or a limit ("budget", "预算", "goal"), and how far one has come towards
#: one ("spent … so far", "已经花了", "存了"): the second is a fact of its own.
_TARGET = re.compile(
    r"\b(?:budget|target|goal|limit|cap|quota|allowance)\b|预算|目标|上限|额度|计划",
    re.IGNORECASE,
)
_SO_FAR = re.compile(
    r"\bso far\b|\bspent\b|\bused up\b|\bsaved up\b|\balready\b|\bto date\b"
    # How far toward it, or past it: "hit 6000 steps toward my step goal", "预算超了5万".
    r"|\btowards?\b|\bover (?:budget|by)\b|还差|超了|超出|超支"
    r"|花了|花掉|用了|用掉|已用|存了|攒了|完成了|已经[\u4e00-\u9fff]{0,2}了?[\d一二两三四五六七八九十]",
    re.IGNORECASE,
)


def progress(old: str, new: str) -> bool:
    """Whether ``old`` sets a target or a limit and ``new`` tells how far one has come
    towards it ("装修预算15万" / "目前已经花了8万多", "budget is 5k" / "spent 1.2k so far"):
    progress, not a new target."""
    return _TARGET.search(old) is not None and _SO_FAR.search(new) is not None


def may_finish_or_flip(text: str) -> bool:
    """Whether ``text`` has a verb finished or a negation: it may say a thing to do is
    done or a state turned (:func:`done`, :func:`flipped`; the older text decides)."""
    return (
        _NEGATED.search(text) is not None
        or _ZH_FINISHED.search(text) is not None
        or _EN_FINISHED.search(text) is not None
    )


_ZH_FINISHED = re.compile(r"[\u4e00-\u9fff](?:" + _ZH_DONE + ")")
_EN_FINISHED = re.compile(
    r"\b[a-z]{3,}ed\b|\b(?:"
    + "|".join(sorted({f for forms in _IRREGULAR_PAST.values() for f in forms}))
    + r")\b",
    re.IGNORECASE,
)

#: A name with a number after it: "Windows 10", "iPhone 12", "Python 3.9", "N4".
_VERSIONED = re.compile(
    r"(?<![A-Za-z0-9_.])([A-Za-z][A-Za-z+#-]*[A-Z][A-Za-z+#-]*|[A-Z][A-Za-z+#-]*)\s?v?(\d+(?:\.\d+)*)(?!\.?\d)"
)


_MONTH_NAME = re.compile(
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?",
    re.IGNORECASE,
)


def versioned(text: str) -> bool:
    """Whether ``text`` names a thing with a number after it, which a text naming it
    with another number changes (:func:`judge`), with or without a word of change."""
    return any(not _MONTH_NAME.fullmatch(name) for name, _ in _VERSIONED.findall(text))


def new_version(old: str, new: str) -> str | None:
    """The name the new text gives another number than the old one gives it ("My
    laptop runs Windows 10" / "The laptop is on Windows 11"), said with no word of
    change: a new version, level or model of one named thing. A name that carries
    both numbers in the old text is not changed by one of them."""
    before: dict[str, set[str]] = {}
    for name, number in _VERSIONED.findall(old):
        if not _MONTH_NAME.fullmatch(name):  # "March 10" is a date: the time logic's
            before.setdefault(name.lower(), set()).add(number)
    for m in _VERSIONED.finditer(new):
        numbers = before.get(m.group(1).lower())
        if numbers and m.group(2) not in numbers:
            return m.group(0)
    return None


#: A negation in a statement: "I don't drink coffee", "我不吃香菜".
_NEGATIVE = re.compile(r"\b(?:don't|doesn't|do not|does not|never|not)\b|不|没", re.IGNORECASE)
#: Words that say part of a thing is still to do: "文字还没写", "the slides aren't done yet".
_PARTLY = re.compile(
    r"\bnot yet\b|\byet to\b|\bstill (?:need|have|to)\b|还没|还差|还剩|没写|没做", re.I
)


def partly(new: str) -> bool:
    """Whether ``new`` says part of a thing is still to do ("文字还没写", "not yet")."""
    return _PARTLY.search(new) is not None


def negation_stands(old: str, new: str) -> bool:
    """Whether ``old`` says something is not done and ``new`` does not say it is now
    done: it names neither the predicate ("我不吃香菜" / "我现在吃辣很厉害了") nor, in
    English, what was not done ("I don't drink coffee" / "I drink a lot of tea now")."""
    m = _NEGATIVE.search(old)
    if m is None or flipped(old, new):
        return False
    if has_han(old):
        return True
    what = [
        w for w in re.findall(r"[A-Za-z]+", old[m.end() :])[1:] if w.lower() not in EN_STOPWORDS
    ]
    return not any(re.search(r"(?<![A-Za-z])" + re.escape(stem(w)), new, re.I) for w in what)


__all__ = [
    "done",
    "flipped",
    "may_finish_or_flip",
    "negation_stands",
    "new_version",
    "other_quantity",
    "partly",
    "progress",
    "versioned",
]
