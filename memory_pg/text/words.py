"""The words a statement is about and the values it gives, as the change decision
reads them: content words (English by their stem, no function words, numbers, words
of change or of time) and values (numbers; names, handles and addresses in Latin
letters). Shared by :mod:`.changes` and :mod:`.contacts`.

Pure functions, no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memory_pg._segment import EN_STOPWORDS, segment
from memory_pg.entities import has_han
from memory_pg.text import subjects
from memory_pg.text.concepts import concepts
from memory_pg.text.cues import CUE
from memory_pg.text.subjects import stem

NUMBER = re.compile(r"\d+(?:[.,]\d+)*|[零〇一二两三四五六七八九十百千万亿]+")
#: Words that say when or how a change happened, not what it is about.
FILLER = frozenset(
    "last week month year yesterday today ago just recently finally already since ago "
    "officially entirely fully completely totally all everything everyone so too very "
    "really got get gets been have has had did do does done am be being new now old "
    "上周 上个月 去年 今年 昨天 今天 最近 刚 刚刚 终于 已经 全部 彻底 基本 正式 都 了 上 这周 本周 "
    "下个月 下周 开始 现在 以后 一下 一直 还是 就 也 又 再 才".split()
) | {t.lower() for t in subjects.EN_TITLES}  # "Dr." on both sides says nothing of who


@lru_cache(maxsize=4096)
def content(text: str) -> frozenset[str]:
    """The words of ``text`` that can say what it is about or what it states, English
    ones by their stem ("logs", "logging" → "log"): no function words, numbers,
    signals of change or words of time."""
    stripped = CUE.sub(" ", text)
    seg = segment(stripped)
    words = {stem(w) for w in seg.words if w not in EN_STOPWORDS and w not in FILLER}
    cjk = {w for w in seg.cjk if len(w) > 1 and w not in FILLER}
    # One thing named by two words ("月供" / "房贷") is one word of both.
    named = {"§" + name for name in concepts(stripped)}
    return frozenset(w for w in words | cjk | named if w and not NUMBER.fullmatch(w))


def values(text: str) -> set[str]:
    """Values a text gives: numbers, and names written in Latin letters (products,
    handles, addresses: "MySQL", "jake@acme.io", "4B"). In English, a word is a name
    when it is capitalised past the sentence's first word, or holds a digit or a mark."""
    numbers = {n.replace(",", "") for n in NUMBER.findall(text)}
    han = has_han(text)
    names: set[str] = set()
    for m in _LATIN_VALUE.finditer(text):
        word = m.group(0)
        first = not text[: m.start()].strip(" \"'“(")
        if han or re.search(r"[\d@.+#_]", word) or (not first and word[0].isupper()):
            if word.lower() not in EN_STOPWORDS and word.lower() not in FILLER:
                names.add(word.lower())
    return numbers | names


_LATIN_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+#@'-]*[A-Za-z0-9_+#]|[A-Za-z]")


def beyond(old: str, new: str, text: str | None = None) -> frozenset[str]:
    """The words ``new`` (or the part of it ``text``) names that ``old`` does not, its
    values left out: what may make it a fact of its own scope."""
    part = new if text is None else text
    return content(part) - content(old) - frozenset(values(part))


__all__ = ["FILLER", "NUMBER", "beyond", "content", "values"]
