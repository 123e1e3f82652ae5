"""Words that name one thing a person has one of at a time, in Chinese and English:
"月供" and "房贷", "base pay" and "salary", "bedtime" and "go to bed". Two texts that
name one of these name one subject, though they share no word.

A concept lexicon, like :mod:`memory_pg.text.topics` for products: each group is one
attribute of a person's life, never a sentence. Pure data and a lookup, no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache

#: One group per thing; the first word is its name.
GROUPS: tuple[tuple[str, ...], ...] = (
    (
        "salary",
        "salary",
        "paycheck",
        "income",
        "wage",
        "wages",
        "base pay",
        "工资",
        "月薪",
        "年薪",
        "薪水",
        "薪资",
        "收入",
        "涨薪",
        "底薪",
        "税后",
        "a raise",
        "pay raise",
        "pay rise",
        "base salary",
        "加薪",
    ),
    ("rent", "rent", "房租", "租金"),
    ("mortgage", "mortgage", "house payment", "房贷", "月供"),
    ("bedtime", "bedtime", "go to bed", "goes to bed", "sleep at", "睡觉", "入睡", "上床"),
    ("wake", "wake up", "wakes up", "get up", "gets up", "起床"),
    ("weight", "weight", "weigh", "weighs", "体重"),
    ("budget", "budget", "预算"),
    ("address", "address", "mailing address", "mail should go", "地址", "住址", "收件地址"),
    ("school", "kindergarten", "preschool", "grade", "幼儿园", "年级", "小学", "初中", "高中"),
    ("commute", "commute", "通勤"),
    ("breakfast", "breakfast", "早餐", "早饭", "早点"),
    ("lunch", "lunch", "午餐", "午饭", "中饭", "中午饭"),
    ("dinner", "dinner", "supper", "晚餐", "晚饭"),
    (
        "diet",
        "diet",
        "keto",
        "vegan",
        "vegetarian",
        "pescatarian",
        "paleo",
        "mediterranean",
        "intermittent fasting",
        "饮食",
        "生酮",
        "吃素",
        "素食",
        "低碳水",
        "轻断食",
    ),
    ("eyesight", "glasses", "contacts", "nearsighted", "近视", "眼镜", "隐形眼镜"),
)
GROUPS = tuple((g[0], *sorted(set(g[1:]), key=len, reverse=True)) for g in GROUPS)


def _pattern(word: str) -> str:
    if re.search(r"[\u4e00-\u9fff]", word):
        return re.escape(word)
    return r"(?<![A-Za-z])" + re.escape(word).replace(r"\ ", r"\s+") + r"(?![A-Za-z])"


_FINDERS = tuple(
    (group[0], re.compile("|".join(_pattern(w) for w in group[1:]), re.IGNORECASE))
    for group in GROUPS
)


@lru_cache(maxsize=4096)
def concepts(text: str) -> frozenset[str]:
    """The things of :data:`GROUPS` that ``text`` names, by their names."""
    return frozenset(name for name, finder in _FINDERS if finder.search(text))


def concept_of(word: str) -> str | None:
    """The thing ``word`` alone names, if it is one of a group's words."""
    found = concepts(word)
    return next(iter(found)) if len(found) == 1 else None


__all__ = ["GROUPS", "concept_of", "concepts"]
