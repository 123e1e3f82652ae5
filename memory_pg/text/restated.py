"""One attribute said again with another value, with no word of change: people restate
a fact as they would first state it ("My dentist is Dr. Patel." / "Dentist — Dr. Kim.";
"团建预算定为一万二。" / "团建预算：一万五千元。"). What a statement is about is the *key*
before its copula or colon (``is``, ``:``, ``—``, 是, 叫, ：); what it states is the
*value* after. The same key with another value is a change of one attribute, where
the key names one slot: not a qualified one ("work phone" beside "phone", 测试组组长
beside 后端组组长), not a key that holds several values at once (allergies, hobbies),
not a pronoun ("I'm a PM" says one of many things of the speaker). Numbers are
compared by what they are worth: "$2,000" and "two grand", "三千" and "3000" are
one value said again.

Read by :func:`memory_pg.text.changes.judge` as a weak signal, one that the rest of
the decision still has to find the same subject for. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memory_pg._segment import EN_STOPWORDS, ordered_words
from memory_pg.entities import has_han
from memory_pg.text.attributes import stated, tagged
from memory_pg.text.quantities import counted
from memory_pg.text.subjects import EN_TITLES, ZH_TITLES, stem
from memory_pg.text.values import (
    CONTACT,
    EN_NUMBER_WORDS,
    FIRST_CLAUSE,
    NUMBER,
    QUANTITY,
    after_key,
    digits,
    measures,
    numbers,
    plain,
    shortened,
    value_kind,
)

#: A separator between key and value, in the order it is looked for.
_MARK = re.compile(r"(?<!\d):(?!\d)|[：=]|—|–|(?<!\s)\s-\s")  # not a time's "9:30"
_COPULA_EN = re.compile(r"(?<!\s)\s+(?:is|are|was)\s", re.IGNORECASE)
#: "zip's 10027", "HR's around 58": a copula only where no "is" follows (else a
#: possessive: "Dad's work line is…").
_CONTRACTED = re.compile(r"['’]s\s+", re.IGNORECASE)
#: A statement of one key and its value is short: longer texts are not read as one.
_LONGEST = 300
#: What opens a key before the thing it names: "我的", "我们", "这个" ("这个项目的负责人" is
#: the 项目负责人; "我最爱的书" the 最爱的书).
_POSSESSIVE_ZH = re.compile(
    r"^(?:我们的|我的|你的|咱们的|我们|咱们|这个|那个|我(?=最|常|平时|家的|家))"
)
_COPULA_ZH = frozenset("是 叫 为 姓".split())
_PRONOUNS = frozenset(
    "i i'm we you he she they it it's this that there here these those "
    "我 我们 你 你们 他 她 它 他们 她们 这 那 这个 那个 咱们".split()
)
_FILLER = EN_STOPWORDS | frozenset(
    "the a an my our your his her their its about around roughly approx approximately "
    "currently usually typically basically just also still only per "
    "的 了 离 我 我们 我的 我们的 在 是 也 就 都 一般 大概 大约 左右 目前".split()
)
#: Keys that hold several values at once: a second one adds to the first. Among them
#: the lists of things to do, buy or take ("Todo:", "Grocery run:", "Packing for
#: Iceland:", 待办, 购物): an item is added to one, not put in place of the last.
_SEVERAL = re.compile(
    r"allerg|hobb|language|pet\b|pets|friend|skill|interest|kid|child|sibling|hotel|flight|"
    # What one pays for or collects one of many: subscriptions, expenses, loyalty points.
    r"subscription|expense|loyalty|"
    r"过敏|爱好|兴趣|语言|宠物|朋友|技能|孩子|特长|订阅|支出|开销|花销|积分|酒店|航班",
    re.IGNORECASE,
)
_LISTS = re.compile(
    r"to-?do|task|errand|grocer|shopping|packing|wish|reminder|decision|idea|note|goal|"
    r"\bwant(?:s|ed)? to\b|\bwanna\b|"
    # What one wants to read, see or buy ("想看的书", "想去的地方") is a list of them.
    r"待办|任务|购物|要买|采购|行李|提醒|备忘|决定|决策|想法|笔记|备注|目标|想[\u4e00-\u9fff]{1,2}的",
    re.IGNORECASE,
)
_EVENTS = re.compile(
    r"(?:a |an |the )?(?:meeting|appointment|event|call)|会议|会|活动|约会|安排|日程", re.I
)
#: A list's own attributes are single ("Grocery budget: $600", 购物预算).
_LIST_ATTRIBUTE = re.compile(r"(?:budget|cost|day|time|date|预算|费用|时间|日期)\s*$", re.I)

#: Nouns that name an attribute of the thing before them: "office" / "office address",
#: "物业" / "物业电话" are one slot named more or less fully.
_ATTRIBUTE_HEADS = frozenset(
    "address number code id name location date time day fee price cost rate amount level title "
    "地址 号码 电话 名字 名称 时间 日期 费用 价格 金额 级别".split()
)
#: Words before a key that say when or how often its one value holds, not which of
#: several slots it is ("monthly rent" is the rent; "work phone" is another phone).
_OF_ANY_TIME = frozenset(
    "current monthly yearly annual weekly daily total overall usual "
    "目前 当前 现在 每月 每个月 每年 每周 每天 平时".split()
)
#: What follows a key in a statement with no copula: a verb of it ("CI runs on…",
#: "Netflix costs…", "团建预算定为…") or a number ("体重75公斤").
_ZH_FOLLOWING = ("v", "m", "p", "d", "r", "t", "e")  # "e": "eng", a Latin value

#: A word that adds a value to the ones before: "Spotify too", "还有芹菜".
_ADDED = re.compile(r"\b(?:too|also|as well|another|plus)\b|还有|也|另外|再加", re.IGNORECASE)
#: A unit after a number ("82 kg", "180 pounds", "一百四十斤"): two units, two scales.
_UNIT = re.compile(
    r"(?<![A-Za-z])\d[\d,.]*\s*([a-z]+)|[\d零〇一二两三四五六七八九十百千万]\s*([\u4e00-\u9fff])",
    re.IGNORECASE,
)


def _tokens(text: str) -> list[str]:
    return [
        stem(w) if not has_han(w) else w
        for w in ordered_words(text)
        if w.lower() not in _FILLER and not NUMBER.fullmatch(w)
    ]


@lru_cache(maxsize=4096)
def key_value(text: str) -> tuple[tuple[str, ...], str] | None:
    """``(key words, value text)`` of a statement shaped "KEY: VALUE" or "KEY is VALUE"
    in its first clause, or None.

    Example:
        >>> key_value("支付项目负责人：赵敏")
        (('支付', '项目', '负责人'), '赵敏')
    """
    if len(text) > _LONGEST:
        return None
    clause = FIRST_CLAUSE.split(text.strip(), maxsplit=1)[0]
    m = _MARK.search(clause)
    if m is None and not has_han(clause):
        m = _COPULA_EN.search(clause) or _CONTRACTED.search(clause)
    if m is not None:
        key, value = clause[: m.start()].strip(), clause[m.end() :].strip()
    elif has_han(clause):
        words = ordered_words(clause)
        at = next((i for i, w in enumerate(words) if w in _COPULA_ZH), -1)
        if at <= 0:
            return None
        # "后端数据库用的是MySQL": what a thing uses is its value.
        key, value = "".join(words[:at]).removesuffix("用的"), "".join(words[at + 1 :])
        if words[at] not in key:  # the value as written ("《围城》", "MacBook Air")
            value = clause[clause.find(words[at]) + len(words[at]) :].strip() or value
    else:
        return None
    key = _POSSESSIVE_ZH.sub("", key.strip())
    words = ordered_words(key)
    if not words or words[0] in _PRONOUNS or _several(key):
        return None
    tokens = tuple(_tokens(key))
    if not 1 <= len(tokens) <= 4 or not value.strip():
        return None
    # A number in a key names its slot: "第1个需求" / "第2个需求", "Q3 budget" / "Q4 budget".
    return tokens + tuple(f"#{n:g}" for n in sorted(numbers(key))), value


_ONE_KIND = ({"name", "thing"}, {"name", "person"})
#: What makes a value said again a second one, not the one in place of the first: a
#: second number or address for work, a backup, a stand-in, a share, a trip.
_SECOND_SLOT = re.compile(
    r"\b(?:work|office|business|backup|spare|second|secondary|personal|connecting|half|share|"
    r"locum|temp|temporary|interim|acting|for now|this month|this week|when|while|for \w+|"
    r"family|kids?|savings|side|travel)\b|"
    r"备用|工作用|公司用|临时|代班|一半|副卡|小号|出差|暂时|这个月|这周",
    re.IGNORECASE,
)


def _marked(text: str) -> bool:
    """Whether the first clause of ``text`` has a key's mark (":", "—", "="): a key
    of its own, even one :func:`key_value` does not read as one slot."""
    return _MARK.search(FIRST_CLAUSE.split(text.strip(), maxsplit=1)[0]) is not None


def _several(key: str) -> bool:
    """Whether a key holds several values at once: by its meaning (allergies, hobbies),
    by its form (a plural, a list, "foods I hate"), as a nominal clause ("要准备的"), or
    a bare label of events ("会议：…", "Meeting: …": one of many, not the one)."""
    if _EVENTS.fullmatch(_POSSESSIVE_ZH.sub("", key.strip()).strip()):
        return True
    words = [w for w in re.findall(r"[A-Za-z]+(?:['’][a-z]+)?", key) if w.lower() not in _FILLER]
    plural = any(re.search(r"[^sui'’]s$", w) for w in words[:1] + words[-1:])
    return bool(
        _SEVERAL.search(key)
        or (_LISTS.search(key) and not _LIST_ATTRIBUTE.search(key))
        or plural
        or re.search(r"\b(?:list|items|things)\b|清单|列表", key, re.IGNORECASE)
        or key.strip().endswith("的")
    )


#: Titles after a Chinese name (李大夫, 王老师): the name is what comes before.
_TITLE_ZH = re.compile(rf"(?:{ZH_TITLES}|教授|先生|女士|小姐|阿姨|师傅)$")
#: One scale in two languages' units ("50mg" / "100 毫克", "kg" / 公斤).
_SCALES = (
    frozenset({"mg", "毫"}),
    frozenset({"ml", "毫"}),
    frozenset({"kg", "公", "千"}),
    frozenset({"km", "公"}),
    frozenset({"g", "gr", "克"}),
    frozenset({"lb", "po", "磅"}),
    frozenset({"cm", "厘"}),
)


def _one_scale(a: set[str], b: set[str]) -> bool:
    """Whether two sets of units share one scale (the same unit, or its other name)."""
    return bool(a & b) or any(x in scale and y in scale for scale in _SCALES for x in a for y in b)


def _units(text: str) -> set[str]:
    # (A magnitude or a particle after a number is no unit: "八千", "一万二的".)
    return {(a or b).lower()[:2] for a, b in _UNIT.findall(text) if a or (b and b not in _NOT_UNIT)}


_NOT_UNIT = frozenset("十百千万亿的了吧啊呢左")


def _holds(text: str, token: str) -> bool:
    if has_han(token):
        return token in text
    return token in {stem(w) for w in ordered_words(text)}


def _same_key(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """One slot: the same words, or one key that names the other's attribute after it
    ("office" / "office address"); a word before ("work phone" / "phone", 测试组组长 /
    组长) or any other after ("lunch" / "lunch budget") names another slot."""
    if "".join(a) == "".join(b):
        return True
    short, long = (a, b) if len(a) < len(b) else (b, a)
    if long[len(long) - len(short) :] == short and all(
        w in _OF_ANY_TIME for w in long[: len(long) - len(short)]
    ):
        return True  # "monthly rent" / "rent", "目前体重" / "体重": one slot, its period said
    return long[: len(short)] == short and all(w in _ATTRIBUTE_HEADS for w in long[len(short) :])


def _leads(text: str, key: tuple[str, ...]) -> bool:
    """Whether ``text`` opens with ``key`` as its subject, a verb or a number after it
    ("Our CI runs on Jenkins", "我体重75公斤"), not as a word of another noun ("My phone
    plan has…") or after another subject ("今年的年终奖还没发")."""
    if has_han(text):
        tags = _tags(text)
        joined, at = "", 0
        while at < len(tags) and len(joined) < len("".join(key)):
            joined += tags[at][0]
            at += 1
        return joined == "".join(key) and at < len(tags) and tags[at][1][0] in _ZH_FOLLOWING
    words = [w for w in ordered_words(text) if w.lower() not in _FILLER or w.isdigit()]
    n = len(key)
    if tuple(stem(w) for w in words[:n]) != key or len(words) <= n:
        return False
    after = words[n]
    return after[0].isdigit() or (after.endswith("s") and not after.endswith("ss"))


@lru_cache(maxsize=4096)
def _tags(text: str) -> tuple[tuple[str, str], ...]:
    """The words of a Chinese text with their tags, without the function words before
    its subject ("我的手机…" opens with 手机)."""
    tags = tagged(_POSSESSIVE_ZH.sub("", text.strip()))
    return tuple((w, f) for w, f in tags if w.strip() and (w not in _FILLER or f == "m"))


_COUNT_NOUN = re.compile(
    r"(?:\d[\d,.]*|\b(?:" + "|".join(EN_NUMBER_WORDS) + r"))\s+([a-z]{3,})", re.IGNORECASE
)


def _counts_other(old: str, new: str) -> bool:
    """Whether the old value counts a thing the new text does not count: "三个卧室" /
    "一百平", "three bedrooms" / "1,800 square feet" (a plural noun after its number)."""
    if has_han(old):
        return bool(counted(old) and counted(new) and not counted(old) & counted(new))
    nouns = {stem(w) for w in _COUNT_NOUN.findall(old) if w.lower().endswith("s")}
    return bool(nouns) and not nouns & {stem(w) for w in _COUNT_NOUN.findall(new)}


#: (No ``\b`` after 在: between two Han characters there is none.)
_PREPOSITION = re.compile(r"^\s*(?:(in|at|on|near|from|with|by|due|until|till)\b|(在|于|由))", re.I)


def _shape(value: str, parsed: bool) -> tuple[frozenset[str], str]:
    """What kind of value a text states, as far as a time, a job or a place tell, and
    the word that introduces it: "on June 3" and "in Napa", "a nurse" and "in Chengdu"
    are values of two attributes of one key."""
    # "our tech lead" / "allergic to cats": two attributes of Tom.
    said = set(stated(value)) & {"time", "occupation", "place", "diet"}
    if "time" in said:
        return frozenset({"time"}), ""
    m = _PREPOSITION.match(value) if parsed else None
    return frozenset(said), (m.group(1) or m.group(2)).lower() if m else ""


def _same_shape(a: tuple[frozenset[str], str], b: tuple[frozenset[str], str]) -> bool:
    """One attribute's values: the same kind, and the same word before both where both
    have one ("on Hetzner" / "DigitalOcean"; "due on the 1st" is a deadline)."""
    if a[0] != b[0]:
        return False
    return a[1] == b[1] or (not (a[1] and b[1]) and "due" not in (a[1], b[1]))


def restated(old: str, new: str, typed: bool = False) -> str:
    """The key ``new`` gives another value of, where ``old`` gives one with no word of
    change; or "".

    ``typed``: only where both values are values, of one kind (:func:`value_kind`: two
    names, two numbers of one scale, two dates, two addresses), not a description
    ("My dentist is Dr. Patel." / "My dentist is really gentle.").

    Example:
        >>> restated("My dentist is Dr. Patel.", "Dentist — Dr. Kim, over on 5th Ave.")
        'dentist'
        >>> restated("My home address is 14 Elm Road.", "Work address is 9 Park Row.")
        ''
        >>> restated("My car is a Tesla.", "My car is white.", typed=True)
        ''
    """
    if len(old) > _LONGEST or len(new) > _LONGEST:
        return ""
    parsed_old, parsed_new = key_value(old), key_value(new)
    if parsed_old and parsed_new:
        if not _same_key(parsed_old[0], parsed_new[0]):
            return ""
        key, value_old, value_new = parsed_new[0], parsed_old[1], parsed_new[1]
    elif parsed_new and _leads(old, parsed_new[0]) and not _marked(old):
        key, value_old, value_new = parsed_new[0], old, parsed_new[1]
    elif parsed_old and _leads(new, parsed_old[0]) and not _marked(new):
        key, value_old, value_new = parsed_old[0], parsed_old[1], new
    else:
        return ""  # (a key of its own that is no slot: "Email for newsletters: …")
    both = value_old != old and value_new != new
    shape_old = _shape(value_old, value_old != old)
    if not _same_shape(shape_old, _shape(value_new, value_new != new)):
        return ""  # "The wedding is on June 3" / "…is in Napa": another attribute
    if _ADDED.search(new) or _counts_other(value_old, new):
        return ""  # "Spotify too"; "three bedrooms" / "1,800 square feet"
    said_old, said_new = numbers(value_old), numbers(new)
    contact = value_kind(value_old) in CONTACT and value_kind(value_new) in CONTACT
    if not both and not (said_old and said_new) and not contact:
        return ""  # said with a verb ("Netflix costs…"): a quantity's value only
    if both and bool(QUANTITY.match(value_old)) != bool(QUANTITY.match(value_new)):
        return ""  # "pescatarian" / "about 120 g of protein": another attribute
    units_old, units_new = _units(value_old), _units(value_new)
    if units_old and units_new and not _one_scale(units_old, units_new):
        return ""  # "82 kg" / "180 pounds": one weight on two scales, maybe the same
    # The old value is gone from the new text: a number it is not worth, or a word of it
    # (or, where it has neither, all of it: "A+" / "O-"). Words of a quantity ("两杯",
    # "一天") go with its number.
    words = [t for t in _tokens(value_old) if t not in key and not _UNIT.search(t)]
    words = [t for t in words if not re.search(r"[\d零〇一二两三四五六七八九十]", t)]
    lost = [t for t in words if not _holds(new, t)]
    if both and said_old and said_new and units_old and lost and "time" not in shape_old[0]:
        return ""  # "左眼450度" / "右眼500度": the number of another thing
    gone = (said_old and not said_old & said_new) or bool(lost)
    if value_kind(value_old) == "phone":  # "07700 900412" / "07700 900855": one prefix
        a, b = digits(value_old), digits(value_new if value_new != new else new)
        gone = a not in b and b not in a  # "+86 138 0013 4567" / "13800134567": one
    names, names_new = _names(value_old), _names(value_new)
    if names and names_new and (names <= names_new or (typed and names_new & names)):
        # "Mrs. Okonkwo, goes by Ada" / "Ada Okonkwo": one person named again; offline,
        # "MacBook Pro 14-inch" / "the 14-inch MacBook" too.
        gone = False
    core = _TITLE_ZH.sub("", value_old).strip("。 ，")
    if has_han(core) and len(core) <= 4 and core in new:
        gone = False  # "李大夫" / "社区医院的李建华大夫": one person named more fully
    if not (said_old or words):
        gone = plain(value_old) not in plain(new)
    if gone and typed:
        # A value read from a whole text ("我体重 65 公斤") is what follows its key.
        a = value_old if value_old != old else after_key(old, key)
        b = value_new if value_new != new else after_key(new, key)
        kind, other = value_kind(a), value_kind(b)
        # A name in lower case ("east of eden") is read as a thing, a person's name
        # with or without a title as a name: the two are one kind.
        if not kind or ({kind, other} != {kind} and {kind, other} not in _ONE_KIND):
            return ""
        if _SECOND_SLOT.search(new) and not _SECOND_SLOT.search(old):
            return ""  # "Phone: 555-987-6543 (work)", "Gym: … when I travel": a second one
        if kind == "quantity" and measures(a) != measures(b):
            return ""  # "5'11\"" / "180 cm": one height, maybe, on two scales
        if shortened(a, b):
            return ""  # "Name: Alexander" / "Name: Alex": one value, said shorter
    return " ".join(key) if gone else ""


def _names(text: str) -> frozenset[str]:
    """The capitalised words of a value that are not titles ("Dr.", "Mrs."): its names."""
    return frozenset(
        w.casefold()
        for w in re.findall(r"\b[A-Z][A-Za-z]*[a-z][A-Za-z]*\b", text)
        if w not in EN_TITLES and w.lower() not in _FILLER
    )


def value_stands(old: str, new: str) -> str:
    """The person or name ``old`` gives its key ("组长是老王": 老王), where ``new`` names
    it whole and not the key, or "": what ``new`` says may be another fact of that
    person, who stays the key's."""
    parsed = key_value(old)
    if parsed is None:
        return ""
    value = parsed[1].strip(" 。.，,!！")
    if value_kind(value) not in ("person", "name") or any(_holds(new, k) for k in parsed[0]):
        return ""
    if has_han(value):
        return value if value in new else ""
    found = re.search(r"(?<!\w)" + re.escape(value) + r"(?!\w)", new, re.IGNORECASE)
    return value if found else ""


def may_restate(text: str) -> bool:
    """Whether ``text`` may say a key again with a new value (:func:`restated` needs the
    older text): it is shaped "KEY: VALUE" or opens with a key and its verb or number."""
    if len(text) > _LONGEST:
        return False
    if key_value(text) is not None:
        return True
    tokens = tuple(_tokens(text))
    return any(_leads(text, tokens[:n]) for n in range(1, min(3, len(tokens)) + 1))


__all__ = ["key_value", "may_restate", "numbers", "restated", "value_stands"]
