"""What kind of value a text gives, and what it is worth: a name, an amount, a date, an
address; "$2,000" and "two grand", "三千" and "3000" are one number. A value is told
from a description ("Dr. Kim" from "really gentle", "特斯拉" from "白色的"), so that a
key said again with another *value* can be read as a change with no LLM to confirm
it (:mod:`.restated`).

Pure functions, no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memory_pg.entities import has_han
from memory_pg.text.attributes import tagged
from memory_pg.text.subjects import EN_TITLES, ZH_TITLES

#: Where a quantity starts a value ("about 72", "$15", "大概120/80"): a value of size.
QUANTITY = re.compile(
    r"^\s*(?:about|around|roughly|approx\.?|~|约|大概|大约)?\s*[$¥￥€£]?\s*[\d零〇一二两三四五六七八九十百千]",
    re.IGNORECASE,
)

_ZH_DIGIT = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
_ZH_UNIT = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG = {"万": 10_000, "亿": 100_000_000}
EN_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80}
_EN_SCALE = {"hundred": 100, "thousand": 1000, "grand": 1000, "k": 1000, "million": 10**6}
NUMBER = re.compile(
    # A number with thousands separators and one decimal point; "10.0.0.5" and
    # "18.2.0" are read as the numbers they hold, not as one.
    r"(?<![A-Za-z\d.,])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\d.]*\.\d)"
    r"\s*([kKmM](?![A-Za-z])|万|千|亿)?"
    r"|([零〇一二两三四五六七八九十百千万亿]+)"
    r"|\b((?:(?:" + "|".join(sorted(EN_NUMBER_WORDS, key=len, reverse=True)) + r")\b[\s-]?)+)"
    r"(?:\s*(hundred|thousand|grand|million)\b)?",
    re.IGNORECASE,
)


def zh_value(text: str) -> float | None:
    """三千 → 3000, 五千二 → 5200, 一万五千 → 15000, 三百六 → 360, 十八万 → 180000."""
    total, section, digit, last_unit = 0, 0, -1, 1
    for ch in text:
        if ch in _ZH_DIGIT:
            digit = _ZH_DIGIT[ch]
        elif ch in _ZH_UNIT:
            section += (1 if digit < 0 else digit) * _ZH_UNIT[ch]
            digit, last_unit = -1, _ZH_UNIT[ch]
        elif ch in _ZH_BIG:
            section += max(digit, 0)
            total += (section or 1) * _ZH_BIG[ch]
            section, digit, last_unit = 0, -1, _ZH_BIG[ch]
        else:
            return None
    if digit >= 0:  # "五千二": the digit after the last unit is of the next one down
        section += digit * (last_unit // 10 if last_unit >= 10 else 1)
    return float(total + section)


@lru_cache(maxsize=4096)
def numbers(text: str) -> frozenset[float]:
    """The numbers ``text`` gives, by value: "$2,100" and "2100", "6.5k" and "6500",
    "两千" and "2000", "two grand" and "2,000" are one number.

    Example:
        >>> sorted(numbers("房租一个月五千二，押金 1.2万"))
        [1.0, 5200.0, 12000.0]
    """
    found: set[float] = set()
    for m in NUMBER.finditer(text):
        digits, scale, han, words, word_scale = m.groups()
        if digits:
            value = float(digits.replace(",", ""))
            scale = (scale or "").lower()
            value *= {"k": 1000, "m": 10**6, "万": 10_000, "千": 1000, "亿": 10**8}.get(scale, 1)
        elif han:
            parsed = zh_value(han)
            if parsed is None:
                continue
            value = parsed
        else:
            parts = [
                EN_NUMBER_WORDS.get(w.lower(), 0) for w in re.split(r"[\s-]+", words.strip()) if w
            ]
            value = float(sum(parts)) * _EN_SCALE.get((word_scale or "").lower(), 1)
        found.add(value)
    return frozenset(found)


#: Kinds of value (:func:`value_kind`).
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_DIGIT_RUN = re.compile(r"\+?\d[\d\s().-]*\d")
_CLOCK = re.compile(
    r"\d{1,2}[:：]\d\d|\d\s*(?:a\.?m|p\.?m)\b|\b(?:noon|midnight|o'clock)\b|"
    r"[\d零一二两三四五六七八九十][点时]|上午|下午|中午|晚上|早上|凌晨|傍晚",
    re.IGNORECASE,
)
_DAY = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|\b(?:weekend|tomorrow|tonight)\b|"
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b|"
    r"\b\d{1,2}(?:st|nd|rd|th)\b|\b\d{1,2}/\d{1,2}\b|"
    r"周[一二三四五六日天末]|星期|礼拜|[\d一二三四五六七八九十]+月|[\d一二三四五六七八九十]+[号日]|"
    r"明天|后天|国庆|五一|春节|元旦|端午|中秋",
    re.IGNORECASE,
)
#: A description, not a value: said with a word of degree or a negation, as a state
#: ("really gentle", "挺好的", "不太靠谱"), or an origin ("上海人").
_DESCRIBED_EN = re.compile(
    r"^(?:really|very|so|too|pretty|quite|kinda|kind of|sort of|super|rather|a bit|"
    r"a little|always|never|not|no longer|still|getting|more|less|extremely|way|totally|"
    r"such|how|being|doing|going)\b",
    re.IGNORECASE,
)
_DESCRIBED_ZH = re.compile(
    r"^(?:挺|很|太|特别|非常|比较|超|蛮|有点|有些|不|没|贼|可|真|巨|还|也|都|老是|一直)"
    r"|[\u4e00-\u9fff]{2,3}人$"
)
#: How often a quantity is given, before it: "每月5200元", "a month: $40".
_PER = re.compile(
    r"^\s*(?:每(?:个)?[月天周年日]|一个月|per\s+\w+|an?\s+(?:month|year|week|day))\s*"
)
#: A preposition before a value ("在中关村", "at 9:15", "定在莫干山"): the value follows.
_BEFORE_VALUE = re.compile(r"^\s*(?:(?:定|改|安排)?[在为成]|于|是|(?:at|in|on)\s+)", re.IGNORECASE)
#: Words that describe rather than name: common adjectives of people and things, and
#: the endings of most others ("helpful", "nervous", "expensive", "reliable").
_ADJECTIVES = frozenset(
    "good bad nice great fine ok okay old new big small cheap expensive far close near late "
    "early busy free white black red blue green grey gray silver brown yellow pink purple "
    "strict kind mean rude slow fast loud quiet young tall short hot cold clean dirty safe "
    "tiny huge fun cool awesome terrible awful amazing lovely friendly weird strange boring "
    "cute smart rich poor full empty open closed done sick ill well happy sad tired fat thin "
    "gentle nice-ish decent solid meh fancy pricey cozy cosy rough tough easy hard".split()
)
_ADJECTIVE_ENDING = re.compile(r"(?:ful|ous|ive|ible|able|less|ish|ed|ing)$", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:an?|the|my|our|his|her|their)\s+", re.IGNORECASE)
CONTACT = frozenset({"email", "phone"})
_NAME_TAGS = frozenset({"nr", "nrfg", "nrt", "ns", "nt", "nz", "eng"})


_WEEKDAY = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|周[一二三四五六日天末]|星期|礼拜", re.I
)
_DATE = re.compile(r"\d|[一二三四五六七八九十]+[月号日]", re.I)
_DEMONYM = re.compile(r"[A-Z][a-z]{2,}(?:ese|ian|ish|ean|ch|i)")
_ORG_EN = re.compile(
    r"\b(?:hospital|clinic|dental|partners|associates|llc|inc|ltd|bank|center|centre|group|"
    r"practice|firm|office)\b|&",
    re.IGNORECASE,
)
_ORG_ZH = re.compile(r"(?:事务所|医院|诊所|公司|银行|中心|学校|大学|机构|集团)$")


def value_kind(value: str) -> str:
    """What kind of value ``value`` is: "email", "phone", "time" (with "day" and/or
    "clock"), "quantity", "name" (a person, place, product or organisation by its
    name), "thing" (a short noun phrase), or "" for a description or a clause.

    Example:
        >>> value_kind("Dr. Kim, over on 5th Ave."), value_kind("really gentle")
        ('name', '')
        >>> value_kind("每月18号"), value_kind("周二下午两点")
        ('time:day', 'time:day+clock')
    """
    text = value.strip(" \t.。,，!！;；")
    if not text:
        return ""
    if _EMAIL.search(text):
        return "email"
    if any(len(re.sub(r"\D", "", run)) >= 7 for run in _DIGIT_RUN.findall(text)):
        return "phone"
    first = re.split(r"[,，(（]", text, maxsplit=1)[0].strip()  # "Dr. Kim, over on 5th"
    first = _BEFORE_VALUE.sub("", first)
    if re.search(r"《[^》]+》", first):
        return "name"  # a title: 《围城》
    if has_han(first):
        if _DESCRIBED_ZH.search(first) or (first.endswith("的") and not _latin_or_named(first)):
            return ""
    elif _DESCRIBED_EN.match(first):
        return ""
    day, clock = bool(_DAY.search(first)), bool(_CLOCK.search(first))
    if day or clock:
        weekday = bool(_WEEKDAY.search(first)) and not _DATE.search(first)
        grain = "weekday" if weekday else "day"  # "June 12" / "Saturday": two grains
        return "time:" + "+".join(k for k, on in ((grain, day), ("clock", clock)) if on)
    if numbers(first) and QUANTITY.match(_PER.sub("", first)):
        return "quantity"
    if has_han(first):
        if first.endswith("色"):
            return ""  # "白色": a colour describes
        if _ORG_ZH.search(first):
            return "org"  # "金诚律师事务所": a firm, not the person who works there
        if PERSON_ZH.fullmatch(first):
            return "person"
        if re.match(_TITLED_ZH, first):
            return ""  # "王主任会诊": a person doing something, not a value
        if _latin_or_named(first):
            return "name"
        tags = [f for w, f in tagged(first) if w.strip()]
        return "thing" if tags and tags[0][0] == "n" else ""
    bare = _ARTICLE.sub("", first)
    words = bare.split()
    if not words:
        return ""
    if re.match(rf"(?:{'|'.join(EN_TITLES)})\b", bare):
        return "person"  # "Ms. Gray": a title names a person, whatever the name means
    if any(w.lower().strip(".") in _ADJECTIVES for w in words) or _DEMONYM.fullmatch(bare):
        return ""  # "Silver", "Indian", "British": it describes
    if _ORG_EN.search(bare):
        return "org"  # "Greenway Animal Hospital", "Cohen & Partners"
    if bare[0].isupper():
        return "name"
    if any(re.search(r"[a-z]\d|\d[a-z]", w, re.IGNORECASE) for w in words):
        return "name"  # "x1 carbon", "m2"
    if len(words) > 3 or len(words) == 1:
        return ""  # one word in lower case may describe as well as name ("remote")
    return "thing"


def _latin_or_named(text: str) -> bool:
    """Whether a Chinese value names something: Latin letters (a product, "TP-Link"), a
    person as addressed (老刘, 王医生), or a word jieba knows as a name or place."""
    if re.search(r"[A-Za-z]", text) or PERSON_ZH.fullmatch(re.split(r"[，,。]", text)[0]):
        return True
    return any(f in _NAME_TAGS for w, f in tagged(text))


#: A Chinese person as addressed or named by a title: 老刘, 小韩, 王姐, 周总, 李医生.
_TITLED_ZH = rf"[\u4e00-\u9fff]{{1,2}}(?:{ZH_TITLES}|姐|哥|工|教授|师傅)"
PERSON_ZH = re.compile(rf"[小老阿][\u4e00-\u9fff]|{_TITLED_ZH}")
#: Where a first clause ends: not at a thousands separator ("$2,000") or a title's dot
#: ("Dr. Kim", "mr. haddad").
FIRST_CLAUSE = re.compile(
    r"[，。；;！!？?（）()\n]|,(?!\d{3})"
    r"|(?<![Dd]r)(?<![Mm]r)(?<![Mm]s)(?<![Mm]rs)(?<![Ss]t)(?<![Jj]r)\.(?:\s|$)"
)


def after_key(value: str, key: tuple[str, ...]) -> str:
    """A value read with its key still in front ("我体重 65 公斤" for the key 体重): what
    comes after the key's last word."""
    words = [w for w in key if not w.startswith("#")]
    if not words:
        return value
    low = value.lower()
    at = max((low.find(w.lower()) + len(w) for w in words if w.lower() in low), default=0)
    return value[at:] if at < len(value) else value


_MEASURE = (
    ("kg", re.compile(r"\d\s*(?:kg\b|公斤|千克)", re.I)),
    ("jin", re.compile(r"[\d一二两三四五六七八九十百]\s*斤")),
    ("lb", re.compile(r"\d\s*(?:lbs?|pounds?)\b", re.I)),
    ("m", re.compile(r"\d\s*(?:cm\b|厘米|公分)|\d\s*米(?![饭粉线])", re.I)),
    ("ft", re.compile(r"\d\s*(?:ft\b|feet\b|foot\b|inch(?:es)?\b)|\d['′]\s*\d|\d[\"″]", re.I)),
    ("mg", re.compile(r"\d\s*(?:mg\b|毫克)", re.I)),
    ("ml", re.compile(r"\d\s*(?:ml\b|毫升)", re.I)),
)


def measures(text: str) -> frozenset[str]:
    """The units a quantity is given in (kg and 公斤 are one; kg and 斤 are two)."""
    return frozenset(name for name, pattern in _MEASURE if pattern.search(text))


def same_measure(old: str, new: str) -> str:
    """The unit both texts give one amount in, where the new amount is another ("taking
    50mg sertraline" / "dose went up to 100mg"), or "": a value of one measure."""
    units = measures(old)
    if len(units) != 1 or units != measures(new):
        return ""
    a, b = numbers(old), numbers(new)
    return next(iter(units)) if len(a) == 1 and len(b) == 1 and a != b else ""


def digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def shortened(a: str, b: str) -> bool:
    """Whether one value is the other said shorter ("Alexander" / "Alex", "Alexander
    Brandt" / "Alex Brandt": each word the start of the other's)."""
    pa, pb = (plain(re.split(r",\s|[，(（]", v, maxsplit=1)[0]).split() for v in (a, b))
    short, long = (pa, pb) if len(pa) <= len(pb) else (pb, pa)
    if not short or len(" ".join(short)) < 2:
        return False
    # "Crunch" / "Crunch Fitness": the shorter one begins the longer.
    return all(x.startswith(y) or y.startswith(x) for x, y in zip(short, long, strict=False))


def plain(text: str) -> str:
    return re.sub(r"[\s.。,，!！]+", " ", text.casefold()).strip()


__all__ = [
    "CONTACT",
    "EN_NUMBER_WORDS",
    "FIRST_CLAUSE",
    "NUMBER",
    "PERSON_ZH",
    "QUANTITY",
    "after_key",
    "digits",
    "measures",
    "numbers",
    "plain",
    "same_measure",
    "shortened",
    "value_kind",
]
