"""Who a partner or a child is, when the memories never call them so.

People speak of their partner and their children by name ("阿俊比我大三岁，他妈催我们
结婚", "萱萱期中考了年级第52"), and ask of them by the relation ("我男朋友是干啥的？",
"闺女以后想考啥专业？"). Where no memory joins the two, what is said of each person
does: a wedding, a Valentine's gift, a date are said of a partner; an exam, a class
teacher, a grade of a child ("她爸", "他妈" are not: a child has parents too). The
person named most often beside such words, and by no relative's word of their own,
is the one asked about.

* :func:`relation_of` — the relation ("partner", "child") a query's words ask about;
* :data:`SAID_OF` — the words said of each, as a search text for the memories that
  hold them;
* :func:`known_as` — the name those memories give the relative, or None.

Concepts of a relation, not sentences. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from memory_pg._segment import in_dictionary
from memory_pg.text.attributes import SURNAMES, doubled_name, tagged
from memory_pg.text.references import Name, word_pattern
from memory_pg.text.subjects import KIN, RELATIVE

#: The words of each relation, by their group's first word (:data:`subjects.RELATIVE`).
_RELATIONS = {
    "partner": frozenset(
        {"老婆", "老公", "男朋友", "女朋友", "对象", "爱人", "老伴", "当家的", "那口子", "另一半"}
    ),
    "child": frozenset({"孩子", "儿子", "女儿"}),
}
#: Words beside which a relation is said and no other: a partner's wedding, dates and
#: in-laws; a child's school.
SAID_OF = {
    "partner": "结婚 婚礼 情人节 七夕 约会 恋爱 见家长 彩礼 求婚 纪念日 我们俩 咱俩 公婆 丈母娘",
    "child": "考试 期末 期中 班主任 年级 补课 上学 放学 作业 幼儿园 家长会 开学 这孩子",
}
_SAID = {kind: re.compile("|".join(words.split())) for kind, words in SAID_OF.items()}
#: A relative's word right before a name: the name is that relative's ("我岳父林建国").
_KIN_BEFORE = re.compile(r"(?:爸|妈|哥|姐|弟|妹|父|母|公|婆|叔|姨|舅|姑|事|学|友|板|导)$")


#: A partner named by the child: "孩子她爸", "娃他妈".
_BY_THE_CHILD = re.compile(r"(?:孩子?|娃|孩儿)[他她]?(?:爸|妈)")


def relation_of(words: Sequence[str], query: str = "") -> str:
    """The relation the query's ``words`` name ("男朋友" → "partner", "闺女" →
    "child"), or ""."""
    if _BY_THE_CHILD.search(query):
        return "partner"
    for word in words:
        head = RELATIVE.get(word, word)
        for kind, heads in _RELATIONS.items():
            if head in heads or word in heads:
                return kind
    return ""


def _names(text: str) -> set[str]:
    """The people ``text`` names, where jieba reads them as names: a person's name not
    in its dictionary (阿俊, 雨晴, not 幼儿园), 老 / 小 / 阿 and a surname (老张, 小周) or
    a name (小凡), a doubled name (萱萱, 朵朵; not 见见 nor 天天)."""
    out = set()
    for word, flag in tagged(text):
        if not 2 <= len(word) <= 3 or KIN.search(word):
            continue  # (not 岳父, which jieba may tag as a name)
        addressed = (
            len(word) == 2
            and word[0] in "小老阿"
            and (word[1] in _SURNAMES or not in_dictionary(word))
        )
        named = flag.startswith("nr") and not in_dictionary(word)
        if named or addressed or doubled_name(word):
            out.add(word)
    return out


_SURNAMES = frozenset(SURNAMES)


def known_as(kind: str, words: Sequence[str], texts: Iterable[str]) -> Name | None:
    """The name ``texts`` give the relative of ``kind`` that the query calls by
    ``words``: the person named beside the relation's words (:data:`SAID_OF`) in the
    most memories, more than anyone else, where no memory calls anyone by ``words``.
    A name is read where jieba reads it as one in any of the texts, then found in
    each as written ("小凡说…", which jieba cuts as 小 / 凡说)."""
    texts = list(texts)
    relation = [w for w in words if relation_of((w,)) == kind]  # not "念书" beside "女朋友"
    if any(w in text for text in texts for w in relation):
        return None  # the memories call them by the word: the query finds them so
    people = set().union(*(_names(t) for t in texts)) if texts else set()
    counts: Counter[str] = Counter()
    for text in dict.fromkeys(texts):
        if _SAID[kind].search(text):
            for person in people:
                at = text.find(person)
                if at >= 0 and not _KIN_BEFORE.search(text[max(0, at - 2) : at]):
                    counts[person] += 1
    ranked = counts.most_common(2)
    if not ranked or (len(ranked) > 1 and ranked[1][1] == ranked[0][1]):
        return None  # no one, or two as likely: no guess
    name = ranked[0][0]
    return Name(name, word_pattern(name))


__all__ = ["SAID_OF", "known_as", "relation_of"]
