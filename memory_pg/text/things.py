"""What a statement of change is said of: "X moved to Y", "X换成了Y", "X推迟到Y".

A change that takes a destination names the thing it changes before its verb. Two
readings of that thing, in both languages:

- **Another one of a kind keeps both facts**: the thing is qualified as another
  ("隔壁组的组长" beside "我们组长是老黄", "Project Nova's deadline" beside "Project Atlas
  ships…", "B 项目的交付" beside "A 项目…"), or it is an organisation the older text does
  not speak of ("公司搬到望京了" beside "我住在双井": the company moved, not the home).
- **The same slot by its value**: the thing is named by the attribute's own noun ("日子往后
  挪到…" beside a date, "the location" of an event with a place) or held by the older
  text, and the new value has the shape of the older one (a time for a time, a number
  for a number). A change that names no thing ("We pushed it to April") is no slot:
  it could be said of any dated memory.

A thing the older text holds may be named by a short form ("pg" for PostgreSQL, "BB"
for Bitbucket) or by another ending of one root ("ownership" / "owns"); a Chinese word
only as itself (读书会 and 全员大会 share 会, and are two meetings).

Pure functions, no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memory_pg._segment import EN_STOPWORDS
from memory_pg.entities import has_han
from memory_pg.text import synonyms
from memory_pg.text.attributes import stated, tagged
from memory_pg.text.cues import CUE
from memory_pg.text.subjects import stem

#: Kinds of signal that are verbs taking a destination ("moved to", "换成", "推迟到").
_VERBS = frozenset(
    {"from_to", "stopped", "left", "moved", "postponed", "cancelled", "switched", "value"}
)
_DESTINATION_AFTER = re.compile(
    r"^\s*(?:(?:over|up|back|out|down|forward)\s+)?(?:to|into|until|till)\b|^\s*了?\s*[到成为去至]",
    re.IGNORECASE,
)
#: A signal that holds its destination: "moved to", "换成", "砍到 50" (the number after).
_DESTINATION_IN = re.compile(
    r"(?:\bto|[到成为去至])(?:\s*\$?[\d零一二两三四五六七八九十][\d.,百千万亿]*)?\s*$",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r"[，,。.;；!！?？:：—()（）]|\s-\s|\bbut\b|\band\b|\bso\b|但是|不过|所以")

#: English words between a thing and its verb: auxiliaries and adverbs.
_AUXILIARIES = frozenset(
    "got get gets getting was were is are be been being has have had just already "
    "finally officially also now then recently suddenly apparently basically all went "
    "go goes gone come came 's".split()
)
#: English words that are no thing: the speaker, pronouns, determiners.
_NOT_THINGS = frozenset(
    "i we you he she it they me us him them everyone everybody everything all "
    "i've we've i'm we're it's they're he's she's you're "
    "the a an my our your his her their its this that these those".split()
)
_TIME = re.compile(
    r"^(?:last|next|this|yesterday|today|tonight|tomorrow|week|month|year|monday|tuesday"
    r"|wednesday|thursday|friday|saturday|sunday|morning|evening|ago|after|before|since)$",
    re.IGNORECASE,
)
#: jieba's tags of words that name a thing (nouns, places, foreign words).
_NOUNS = ("n", "s", "eng", "x")
_SKIP = ("d", "t", "c", "r", "m", "u", "p", "f", "a", "q", "y", "e", "o", "z")
#: Tags of words that name no thing at all: adverbs, times, particles, conjunctions.
_FILLERS = ("d", "t", "c", "u", "p", "f", "y", "e", "o", "z")

#: Nouns that name an attribute itself, not one thing that has it: "the location", "日子",
#: "金额" (not "rent", "deadline", "工资": one thing of that attribute among several).
#: A thing named by one of them is the attribute the older text states.
ATTRIBUTE_NOUNS: dict[str, frozenset[str]] = {
    "place": frozenset(
        "location venue place spot site address room 地点 场地 地址 位置 地方".split()
    ),
    "time": frozenset("date time day schedule 日期 时间 日子 时间点".split()),
    "price": frozenset("amount price cost 金额 价格 费用 价钱 钱".split()),
    "count": frozenset("number count size 人数 数量 规模".split()),
}
#: Words that name another one of a kind: "隔壁组的组长", "the other team's lead".
_OTHER = frozenset("隔壁 别的 其他 另一个 另外 对面 other another next-door neighbouring".split())


@lru_cache(maxsize=4096)
def said_of(new: str) -> tuple[str, tuple[str, ...]] | None:
    """``(head, qualifiers)`` of the thing ``new``'s first change takes a destination
    for: "Project Nova's deadline moved to August" → ("deadline", ["project", "nova"]);
    None when its first change verb takes none, or the thing is the speaker, a
    pronoun or a time ("Last week we moved to…", "上个月搬到了…")."""
    for m in CUE.finditer(new):
        if m.lastgroup not in _VERBS:
            continue
        if m.lastgroup != "from_to" and not (
            _DESTINATION_IN.search(m.group(0)) or _DESTINATION_AFTER.match(new[m.end() :])
        ):
            return None  # "raised the rent to…", "换了个号码": the thing follows the verb
        clause = _CLAUSE.split(new[: m.start()])[-1]
        # "医生让我把降压药加到…": the thing follows 把; "金额从这个月起加到…": 从 opens a time.
        phrase = clause.rsplit("把", 1)[-1].split("从")[0]
        if not has_han(phrase):
            return _latin_head(phrase)
        # Cut with the verb, so a word the signal starts inside ("晋升到") is the verb's.
        tokens, at = [], len(new[: m.start()]) - len(clause) + clause.find(phrase)
        for word, flag in tagged(new[at : m.end()]):
            at += len(word)
            if at <= m.start():
                tokens.append((word, flag))
        return _han_head([(w, f) for w, f in tokens if w.strip()])
    return None


def _latin_head(phrase: str) -> tuple[str, tuple[str, ...]] | None:
    words = re.findall(r"[A-Za-z][\w'.+-]*", phrase)
    while words and words[-1].lower() in _AUXILIARIES:
        words.pop()
    if not words or words[-1].lower() in _NOT_THINGS or _TIME.match(words[-1]):
        return None  # "After the layoffs we're down to 8": the speaker's own
    head = stem(re.sub(r"'s$", "", words[-1]))  # "costs" names a cost
    if not re.fullmatch(r"[a-z][a-z0-9-]+", head):
        return None  # "'s moved to…": no word
    # The words before it qualify it: "Project Nova's deadline", "parking spot fee".
    owner = [w for w in words[:-1] if w.lower() not in _NOT_THINGS]
    return head, tuple(re.sub(r"'s$", "", w).lower() for w in owner)


def _han_head(tokens: list[tuple[str, str]]) -> tuple[str, tuple[str, ...]] | None:
    words = [w for w, _ in tokens]
    text = "".join(words)
    for attribute in ATTRIBUTE_NOUNS.values():  # "会员年费", "给爸妈的钱": the attribute
        named = max((n for n in attribute if has_han(n) and text.endswith(n)), key=len, default="")
        if named and "的" not in text[: -len(named)][-1:]:
            owner = [w for w, f in tokens[:-1] if f.startswith(_NOUNS) and _qualifier_ok(w)]
            # "截止日期", "会议时间": the word joined before it qualifies the attribute.
            prefix = words[-1][: -len(named)]
            if not prefix and len(tokens) > 1 and not tokens[-2][1].startswith(_SKIP):
                prefix = tokens[-2][0] if len(tokens[-2][0]) > 1 else ""
            return named, tuple(([prefix] if prefix else []) + (owner if "的" in words else []))
    if "的" in words:
        at = len(words) - 1 - words[::-1].index("的")
        if at + 1 < len(tokens):
            owner = [w.lower() for w, f in tokens[:at] if f.startswith(_NOUNS)]
            return words[at + 1].lower(), tuple(w for w in owner if _qualifier_ok(w))
    nouns = [w for w, f in tokens if f.startswith(_NOUNS) and not _speaker(w)]
    if nouns:
        return nouns[-1].lower(), ()
    # jieba cut the name apart ("年会" → 年/m 会/v; "团建"/a): what is left of the phrase,
    # past adverbs, times, particles and the speaker, is the thing.
    rest = [w for w, f in tokens if not f.startswith(_FILLERS) and not _speaker(w)]
    return ("".join(rest), ()) if rest else None


def _qualifier_ok(word: str) -> bool:
    """Whether a Chinese qualifier word can name another thing: not a pronoun or function
    character ("我们", "的"), not a number."""
    return not _speaker(word) and not re.fullmatch(r"[\d零一二两三四五六七八九十]+", word)


def _speaker(word: str) -> bool:
    return word in ("我", "我们", "咱们", "咱", "大家", "你", "你们", "他", "她", "他们", "它")


#: Organisations and their premises: what they do ("the office moved") is theirs,
#: not the speaker's, unless the older text speaks of them.
_ORGANISATIONS = frozenset(
    "company office team firm employer department org startup school 公司 办公室 单位 团队 "
    "部门 组 学校 工作室 门店 店".split()
)


def other_thing(old: str, new: str, kinds_shared: bool = False, moved: bool = False) -> str:
    """The word naming what ``new`` changes when that is not what ``old`` states (so
    both facts stand), or "": another one of a kind ("隔壁组的组长", "Project Nova's
    deadline" beside "Project Atlas…"), or an organisation ``old`` does not name.
    ``kinds_shared``: the new value is a product of a kind ``old`` names, which
    makes one slot whoever chose it. ``moved``: the change is a move (an
    organisation that moved leaves the job stated at it). A thing ``old`` does not
    name at all is not enough: a change often names its subject by another word
    ("the servers moved…" beside "we host on…"; measured in docs/measurements.md)."""
    found = said_of(new)
    if found is None or kinds_shared:
        return ""  # "公司统一换成飞书了" beside "团队沟通用钉钉": one slot, whoever chose
    head, owner = found
    missing = [w for w in owner if w and not _held(old, w)]
    if any(w in _OTHER for w in missing):
        return missing[0]
    if missing and _own_qualifier(old, new, [head, *owner]):
        return missing[0]  # "B 项目的交付" beside "A 项目…": each its own
    if head in _ORGANISATIONS and (not _held(old, head) or (moved and "occupation" in stated(old))):
        # "公司搬到望京了" beside "我住在双井": the company's place, not the home; beside
        # "在一家设计公司当设计师", not the job either.
        return head
    if _another_attribute(old, head):
        return head  # "发布会场地换成了…" beside "发布会在 4 月 18 日": the date stands
    return ""


def _another_attribute(old: str, head: str) -> bool:
    """Whether ``head`` is an attribute's own noun ("场地", "room", "date") and ``old``
    gives a value of another shape only: a time where a place or an amount changes,
    an amount where a time changes. An old text that names the noun itself ("in room
    301") or states the attribute gives that attribute's value."""
    for name, nouns_ in ATTRIBUTE_NOUNS.items():
        if head in nouns_:
            if _held(old, head) or _attribute_named(old, head):
                return False
            shapes = _shapes(old)
            return (shapes == {"time"} and name != "time") or (
                shapes == {"number"} and name == "time"
            )
    return False


def _own_qualifier(old: str, new: str, anchors: list[str]) -> bool:
    """Whether ``old`` qualifies one of ``anchors`` (the new thing's words it holds) by a
    word of its own that ``new`` lacks: "Project Atlas" beside "Project Nova's", "A 项目"
    beside "B 项目的". "The launch" or "my rent" have none: the new qualifier
    ("monthly rent", "Project Orion's launch") then only describes."""
    if has_han(old):
        words = [w.lower() for w, _ in tagged(old) if w.strip() and w not in "，。、；：！？"]
    else:  # "Project A": one capital letter names which one, as "Atlas" does
        words = [
            w if len(w) == 1 and w.isupper() else w.lower()
            for w in re.findall(r"[A-Za-z0-9][\w'.+-]*", old)
        ]
    for i, word in enumerate(words):
        if not any(a and (word == a or stem(word) == stem(a)) for a in anchors):
            continue
        for j in (i - 1, i + 1):
            if 0 <= j < len(words):
                other = words[j]
                if _is_qualifier(other) and not _held(new, other):
                    return True
    return False


def _is_qualifier(word: str) -> bool:
    """Whether ``word`` can name which one of a kind: a name, a letter or a number, or a
    Chinese noun of two characters that is not the speaker's ("测试组", not "我们")."""
    if len(word) == 1 and word.isupper():
        return True
    if word.lower() in _NOT_THINGS or word.lower() in EN_STOPWORDS or _speaker(word):
        return False
    if has_han(word):
        return len(word) > 1 and not _TIME_SHAPE.search(word)
    return bool(re.fullmatch(r"[a-z]|\d+|[a-z][\w'-]*", word)) and not _TIME.match(word)


def _attribute_named(old: str, head: str) -> str:
    """The attribute ``head`` names by its own noun ("日子", "location", "金额") when
    ``old`` states that attribute (a time, for a time: any date it gives), or ""."""
    for name, nouns in ATTRIBUTE_NOUNS.items():
        if head in nouns:
            held = "time" in _shapes(old) if name == "time" else name in stated(old)
            return name if held else ""
    return ""


def _held(old: str, word: str) -> bool:
    """Whether ``old`` names ``word``: as a word (by its stem; a Chinese word as
    itself), or as a short form of one of its words ("pg" for
    PostgreSQL, "BB" for Bitbucket: the first letter, then the others in order)."""
    if synonyms.held_by(old, word):
        return True  # "发布" of "上线", "DDL" of "截止日期": one thing, another word
    if has_han(word):
        return word in old
    base = stem(word)
    if re.search(r"(?<![A-Za-z0-9])" + re.escape(base), old, re.IGNORECASE):
        return True
    # "owns" / "ownership", "pay" / "payment": one root, another ending.
    if any(len(r) >= 3 and word.startswith(r) for r in _roots(old)):
        return True
    if len(word) <= 4 and word.isalpha():
        for other in re.findall(r"[A-Za-z][A-Za-z]+", old):
            if other[0].lower() == word[0] and _subsequence(word, other.lower()):
                return True
    return False


def gives_up(clause: str, word: str, giving_up: re.Pattern[str]) -> bool:
    """Whether ``clause`` gives ``word`` up by a word of ``giving_up``: "from" (从) only
    what follows it ("My bus changed from the 7:15…" gives up the 7:15, not the bus)."""
    at = clause.lower().find(word.lower())
    return any(
        m.group(0).lower() not in ("from", "从") or at > m.start()
        for m in giving_up.finditer(clause)
    )


@lru_cache(maxsize=1024)
def _roots(text: str) -> frozenset[str]:
    """The stems of ``text``'s English words of three letters or more, function words out."""
    return frozenset(
        stem(w) for w in re.findall(r"[A-Za-z]{3,}", text) if w.lower() not in EN_STOPWORDS
    )


def _subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


#: A time, a date or a day, in both languages ("June 8", "周三下午", "12 月 15 号", "春节").
_TIME_SHAPE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)\.?\s+\d|\b(?:january"
    r"|february|march|april|june|july|august|september|october|november|december|monday"
    r"|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|tomorrow|tonight)s?\b"
    r"|\b\d{1,2}(?::\d\d)?\s*(?:am|pm)\b|\bnext (?:week|month|year|quarter)\b|\bend of\b"
    r"|\d+\s*[月号日]|[一二三四五六七八九十]+月|周[一二三四五六日天末]|星期|礼拜|月底|月初|月中|年底"
    r"|年初|下周|下个月|明年|春节|国庆|元旦|中秋|端午|寒假|暑假",
    re.IGNORECASE,
)
_NUMBER_SHAPE = re.compile(r"\d|[一二两三四五六七八九十百千万]+(?:[块元个人万千百岁]|块钱)")


def _shapes(text: str) -> set[str]:
    """The shapes of value ``text`` gives: a ``time`` (a date, a day, an hour) and a
    ``number`` (an amount, a count); a time's digits are not also a number."""
    if _TIME_SHAPE.search(text):
        return {"time"}
    return {"number"} if _NUMBER_SHAPE.search(text) else set()


def destination(new: str) -> str:
    """The words after ``new``'s first change verb that takes a destination, to the end
    of its clause ("pushed back to September" → "September"), or ""."""
    for m in CUE.finditer(new):
        if m.lastgroup not in _VERBS:
            continue
        inner = re.search(r"\bto\b|[到成为去至]", m.group(0), re.IGNORECASE)
        rest = new[m.start() + inner.end() :] if inner else new[m.end() :]
        to = _DESTINATION_AFTER.match(rest)
        if to is None and not _DESTINATION_IN.search(m.group(0)):
            return ""
        rest = rest[to.end() :] if to else rest
        return _CLAUSE.split(rest, maxsplit=1)[0][:24]
    return ""


def same_slot(old: str, new: str) -> str:
    """The attribute both texts give a value of, where ``new`` changes it to a value of
    the shape ``old``'s has, the thing changed held by ``old`` ("库已经升级到 8.0" beside
    "数据库是 MySQL 5.7") or named by the attribute's own noun ("日子往后挪到…" beside a
    date); "" when the thing is another (:func:`other_thing`), named by a word ``old``
    does not hold, or not named ("We pushed it to April" could be any dated memory)."""
    found = said_of(new)
    if found is None:
        return ""  # "We pushed it to April": of every dated memory, which one?
    head, owner = found
    if owner and any(not _held(old, w) for w in owner):
        return ""
    named = _attribute_named(old, head)
    if named or not _held(old, head):
        return named
    both = _shapes(destination(new)) & _shapes(old)
    return sorted(both)[0] if both else ""


#: Verbs that take anything, or say nothing of what is done: "用 Jenkins 做持续集成" /
#: "监控告警改用 Prometheus" are two uses.
_LIGHT_VERBS = frozenset("用做搞弄是在有了我你他她它的")
#: "改喝", "换学", "改坐": a switch to doing one thing, the verb's object the new value.
#: Not "改到", "换成": a value moved, not a verb ("改到3月15号" is no "到").
_SWITCHED_VERB = re.compile(r"[改换](?![到成为掉了个期])([\u4e00-\u9fff])(?![了成到为掉个])")


def verb_slot(old: str, new: str) -> str:
    """ "verb" where ``new`` switches what a verb of ``old`` is done to: "我喜欢喝美式咖啡"
    / "现在改喝拿铁了", "打算去云南" / "改去厦门了". Not 用 or 做, which take anything
    ("用 Jenkins 做持续集成" / "监控告警改用 Prometheus": two uses)."""
    m = _SWITCHED_VERB.search(new)
    verb = m.group(1) if m else ""
    if not verb or verb in _LIGHT_VERBS:
        return ""
    # A verb of the old text as a word of its own ("喜欢 喝 美式"), not 天 of 每天.
    return "verb" if any(w == verb and f.startswith("v") for w, f in tagged(old)) else ""
