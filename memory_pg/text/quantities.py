"""What kind of quantity a text gives, in Chinese and English: money, a percentage, a
size, a time of day, a length of time, or a count of some named thing.

"Redis is capped at 4GB" and "redis hit rate is around 92% now" both give a number
about Redis; a size and a percentage are two attributes, so the second does not
change the first. "Kafka 有 3 个 broker" and "Kafka 每天处理 2 亿条消息" count two
things. "I've been at Figma about 3 years now" gives how long a state has lasted,
which says it continues. The change decision reads these kinds where the new text's
only signal is a weak one ("now", "现在", a number reached).

Pure functions, no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memory_pg._segment import EN_STOPWORDS

#: A number in digits or Chinese numerals, with a magnitude after it ("2亿", "15万", "108k").
_NUM = (
    # Only where a number starts: tried inside a run of digits, every position would
    # match to the run's end and back off (quadratic in the run's length).
    r"(?<![\d.,零〇一二两三四五六七八九十百千几半])"
    r"(?:\d+(?:[.,]\d+)*|[零〇一二两三四五六七八九十百千几半]+)"
    r"\s*(?:[万亿千百]|[kK](?![A-Za-z]))?"
)
_EN_NUM = (
    r"(?:\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|a few|few|several"
    r"|a couple of|couple of)"
)

_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("percent", re.compile(rf"{_NUM}\s*%|百分之|(?<![\d.])\d+\s*percent\b", re.IGNORECASE)),
    (
        "size",
        re.compile(r"(?<![\d.])\d+(?:\.\d+)?\s*(?:[KMGTP]i?B|[GT]\b|兆|个?G(?![A-Za-z]))", re.I),
    ),
    (
        "money",
        re.compile(
            rf"[$¥￥€£]\s*\d|{_NUM}\s*(?:元|块|刀|美元|美金|人民币|欧|英镑|bucks\b|dollars\b|usd\b|rmb\b)"
            # "108k now", not "5k subs": a noun after it is what is counted.
            r"|(?<![\d.])\d+(?:\.\d+)?\s*[kK]\b(?!\s+(?!(?:now|per|this|last|next|and|for|from|after"
            r"|before|since|so|already|total|gross|net|base|salary|a)\b)[a-z]{3,})"
            r"|(?:薪|资|租|费|价|钱|预算|贷|月供|存款|收入|花了|花费|budget|salary|rent|price|cost|pay)"
            rf"[^，,。；;\d]{{0,4}}{_NUM}",
            re.IGNORECASE,
        ),
    ),
    (
        "clock",
        re.compile(
            r"(?<!\d)\d{1,2}[:：]\d{2}(?!\d)|\b\d{1,2}\s*(?:am|pm)\b|(?<![\d一二两三四五六七八九十])[\d一二两三四五六七八九十]+\s*点(?:半|钟|[\d一二三四五]+分?)?"
            r"|\bnoon\b|\bmidnight\b|\bat\s+\d{1,2}(?:[:.]\d{2})?\b(?!\s*(?:%|[A-Za-z]))",
            re.IGNORECASE,
        ),
    ),
    (
        "duration",
        re.compile(
            rf"\b{_EN_NUM}\s+(?:years?|months?|weeks?|days?|hours?|hrs?|minutes?|mins?)\b"
            r"(?!\s+(?:a|per|each|every)\b)"
            r"|(?<![\d年])[\d一二两三四五六七八九十几半]{1,3}\s*(?:个多?)?(?:年(?![级前后底初])|个月|多月|周(?![一二三四五六日末])"
            r"|星期(?![一二三四五六日天])|天|小时|分钟)(?![里内一早晚])(?=[了啦多左右]|$|[，。,.\s])",
            re.IGNORECASE,
        ),
    ),
)

#: A count of a named thing: "3个broker", "2亿条消息", "3 coffees", "4 servers".
_COUNT_ZH = re.compile(
    rf"{_NUM}\s*(个|条|台|家|位|名|次|本|杯|只|套|辆|间|块|张|节|门|篇|份|瓶|支)"
)
_COUNT_EN = re.compile(r"(?<![:：.\d])\b\d+(?:[.,]\d+)*\+?\s+([a-z]{3,})\b", re.IGNORECASE)
_NOT_A_THING = re.compile(
    r"^(?:years?|months?|weeks?|days?|hours?|hrs?|minutes?|mins?|times?|am|pm|percent|k"
    r"|bucks|dollars|usd|rmb|a|an|the|per|of|to|and|or|in|on|at|with|for|these|those|more|less"
    r"|than|from|by|now|today|ago|each|every|max|min)$",
    re.IGNORECASE,
)
#: Classifiers that already say the kind: "块" after a number is money, not a count.
_MONEY_CLASSIFIER = "块"
_ANY_NUMBER = re.compile(
    r"\d|[一二两三四五六七八九十]+[十百千万亿][一二两三四五六七八九十百千万亿]*"
    r"|[一二两三四五六七八九十百千万亿]+(?=[个条台家位名次本杯只套辆间块张点岁年月周天元])"
)


@lru_cache(maxsize=4096)
def kinds(text: str) -> frozenset[str]:
    """The kinds of quantity ``text`` gives: ``money``, ``percent``, ``size``,
    ``clock``, ``duration``, and ``count:<thing>`` for a count of a named thing (in
    Chinese, by its classifier: "3个broker" / "2亿条消息" count two kinds of thing).

    Example:
        >>> sorted(kinds("Kafka现在每天大概处理2亿条消息"))
        ['count:条']
        >>> sorted(kinds("Redis cache is capped at 4GB max memory"))
        ['size']
    """
    found = {name for name, pattern in _KINDS if pattern.search(text)}
    for m in _COUNT_ZH.finditer(text):
        if m.group(1) != _MONEY_CLASSIFIER:
            found.add("count:" + m.group(1))  # the classifier says what is counted
    for m in _COUNT_EN.finditer(text):
        thing = m.group(1).lower()
        if not _NOT_A_THING.match(thing) and thing not in EN_STOPWORDS:
            found.add("count:" + thing.rstrip("s"))
    return frozenset(found)


_COUNTED_ZH = re.compile(_COUNT_ZH.pattern + r"([\u4e00-\u9fff])")


@lru_cache(maxsize=4096)
def counted(text: str) -> frozenset[str]:
    """The things ``text`` counts, each by its noun: "两只猫" and "三只猫" count one thing
    (``只猫``), "三个项目" and "两个孩子" two; "2 dogs" is ``dog``. Two texts that count
    one thing with two numbers give two values of one attribute.

    Example:
        >>> sorted(counted("家里三只猫了"))
        ['只猫']
    """
    found = {m.group(1) + m.group(2) for m in _COUNTED_ZH.finditer(text)}
    found |= {k[6:] for k in kinds(text) if k.startswith("count:") and k[6:].isascii()}
    return frozenset(found)


def same_kind(a: str, b: str) -> bool:
    """Whether two kinds of :func:`kinds` are one: equal, or counts of one thing named
    in full and short ("subscribers" / "subs")."""
    if a == b:
        return True
    if a.startswith("count:") and b.startswith("count:"):
        x, y = a[6:], b[6:]
        return len(min(x, y, key=len)) >= 3 and (x.startswith(y) or y.startswith(x))
    return False


def has_number(text: str) -> bool:
    """Whether ``text`` gives any number (digits, or Chinese numerals with a unit)."""
    return _ANY_NUMBER.search(text) is not None


__all__ = ["has_number", "kinds", "same_kind"]
