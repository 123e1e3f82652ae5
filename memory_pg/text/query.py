"""A search query, analysed once before its statement is built: the time it names,
its words for the full-text leg, the entities it names, the attribute it asks for and
of whom. The statement builders (:mod:`memory_pg.sql.search`) take these as values
and analyse nothing themselves.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from memory_pg._segment import sound, term_queries, typed_sounds, whole_words
from memory_pg.entities import extract, has_han
from memory_pg.text.attributes import OTHER_PEOPLE, answered_by, asked, subject_words
from memory_pg.text.references import KIN_WORDS, NOT_ANOTHER, Name, word_pattern
from memory_pg.text.subjects import KIN, one_person
from memory_pg.text.synonyms import kinds_of, latin_kinds, mates, widen_terms, widen_word
from memory_pg.timespan import TimeSpan, find_timespan, without_recurring


@dataclass(frozen=True)
class Query:
    """What a search's statement needs to know of its query."""

    #: The time the query names, resolved against the search's reference time.
    span: TimeSpan | None
    #: Each word as its own tsquery text (:func:`memory_pg._segment.term_queries`):
    #: English as it may match and as written, then Chinese the same.
    en_any: list[str]
    en_own: list[str]
    cjk_any: list[str]
    cjk_own: list[str]
    #: ``(key, name as written)`` of the entities it names (none when not weighed).
    entities: tuple[tuple[str, str], ...]
    #: A PostgreSQL regular expression finding those names (:func:`name_pattern`).
    entity_pattern: str
    #: The attributes whose statement answers what it asks (none when it asks none).
    asked: tuple[str, ...]
    #: A regular expression (for ``~*``) of whom it asks about ("" for the asker).
    subject: str
    #: The sounds of those words, as a tsquery of a memory's own text ("" for none):
    #: "游勇课" and "fangdai" name the "游泳" and the "房贷" a memory holds.
    subject_sounds: str = ""
    #: Of :attr:`asked`, those the question names itself ("在哪上班": the employer,
    #: where an occupation also answers): a memory stating one ranks above one that
    #: states only a related attribute.
    asked_itself: tuple[str, ...] = ()


def analyse(
    query: str,
    reference: datetime | None = None,
    names: Sequence[Name] = (),
    *,
    entities: bool = True,
    attributes: bool = True,
) -> Query:
    """``query`` analysed for a search at ``reference`` (what relative dates resolve
    against; default: now). ``names``: what memories call the thing the query describes
    (:func:`memory_pg.text.references.names_given`): a memory naming one is about the
    question's subject. ``entities`` / ``attributes``: whether the ranking weighs
    them (when not, they are not looked for)."""
    span = find_timespan(query, reference or datetime.now(timezone.utc))
    # The words that named the time, or a day that recurs, are not content words.
    content = span.rest if span else without_recurring(query)
    en_any, en_own, cjk_any, cjk_own = term_queries(content)
    widen_terms(content, en_any, en_own, cjk_any, cjk_own)  # "毛笔字" asks "书法" too
    english = bool(en_any)  # the query's own English words, before any kind is added
    # "老爸" asks 爸, "对象" 男朋友 and 女朋友, "首饰" 项链 and 金镯子
    for said in whole_words(content):
        word = said[1:] if said.startswith("我") and len(said) > 1 else said  # jieba's 我妈
        kinds = [k for k in kinds_of(word) if has_han(k) == has_han(word)]
        others = [
            w for w in (*one_person(word), *COVERS.get(word.lower(), ()), *kinds) if w != word
        ]
        if has_han(word):
            widen_word(said, others, cjk_any, cjk_own)
            if not english and (latin := latin_kinds(word)):  # "平板" meets "iPad"
                en_any.append(latin[0])
                en_own.append(latin[1])
        else:
            widen_word(word, others, en_any, en_own)
    named = query_entities(content) if entities else ()
    asking, subject = asked_about(query, content, names) if attributes else ((), "")
    sounds = subject_sounds(content, asking) if subject else ""
    return Query(
        span,
        en_any,
        en_own,
        cjk_any,
        cjk_own,
        named,
        name_pattern([name for _, name in named]),
        asking,
        subject,
        sounds,
        asked(query) if asking else (),  # (each of them is among what answers it)
    )


@functools.lru_cache(maxsize=256)
def query_entities(query: str) -> tuple[tuple[str, str], ...]:
    """``(key, name as written)`` of the entities ``query`` names; cached like the
    query's vector (the Chinese side tags words with jieba: about 0.6 ms a query)."""
    return tuple((f.key, f.name) for f in extract(query))


def name_pattern(names: Sequence[str]) -> str:
    """A PostgreSQL regular expression (for ``~``) that finds any of ``names`` as the
    query wrote them: a Latin name as a whole word and with its capitals ("Bill" is
    not the electricity "bill", "Al" not "also"), a Chinese one anywhere. Every
    character but a letter or digit is escaped."""
    alternatives = []
    for name in names:
        escaped = re.sub(r"([^\w])", r"\\\1", name)
        if has_han(name):
            alternatives.append(escaped)
        else:
            alternatives.append("(^|[^[:alnum:]_])" + escaped + "($|[^[:alnum:]_])")
    return "|".join(alternatives)


def asked_about(query: str, content: str, names: Sequence[Name]) -> tuple[tuple[str, ...], str]:
    """``(attributes, subject)``: the attributes whose statement answers what ``query``
    asks (none when it asks none), and a pattern (:func:`subject_pattern`) of whom it
    asks about: the nouns of ``content`` (the query less the words that named a
    time), or the ``names`` memories give what it describes ("" when it asks of the
    user alone)."""
    asking = asked(query)
    if not asking:
        return (), ""
    said = subject_words(content, asking)
    if not said and not names and _OF_THE_SPEAKER.search(query) and not _OF_ANOTHER.search(query):
        # "我在哪家公司上班？": of the speaker, so not a relative's fact ("我爸在电厂上班");
        # "她今年多大？", "Where does he work?" point at someone else.
        return tuple(answered_by(asking)), NOT_A_RELATIVES
    # "我爸妈身体…": each parent's own memory ("我爸有糖尿病") is about them.
    words = subject_pattern([*said, *(m for w in said for m in others_of(w))])
    # "我和我老婆…": the speaker's own facts answer too, beside the other's.
    speaker = SPEAKER_FACT if said and _WITH_SPEAKER.search(query) else ""
    return tuple(answered_by(asking)), "|".join(
        p for p in (words, speaker, *(n.pattern for n in names)) if p
    )


def subject_sounds(content: str, asking: Sequence[str]) -> str:
    """A tsquery (simple configuration) of the sounds of the words ``content`` asks
    ``asking`` of: a Chinese word's pinyin, or pinyin typed as it is, each as a sound
    of a memory's own text (weight ``B``, :func:`memory_pg._segment.term_queries`)."""
    heard: dict[str, None] = {}
    typed = set(typed_sounds(content))  # pinyin is told from English in its context
    for word in subject_words(content, tuple(asking)):
        if has_han(word) and relative(word):
            continue  # a relative's word sounds inside another's: 媳妇 in 儿媳妇
        said = (sound(word) if len(word) > 1 else None) if has_han(word) else None
        if said or word.lower() in typed:
            heard.setdefault(said or word.lower(), None)
    return " | ".join("'" + h.replace("\\", "\\\\").replace("'", "''") + "':B" for h in heard)


def relative(word: str) -> bool:
    """Whether ``word`` names a relative or a partner (老爸, 媳妇, 对象, 男友; not 手表)."""
    low = word.lower()
    return (
        bool(one_person(low))
        or low in COVERS
        or KIN.fullmatch(low) is not None
        or any(KIN.fullmatch(m) for m in mates(low))
    )


def others_of(word: str) -> tuple[str, ...]:
    """The other words a memory may name the subject ``word`` by: each of a pair
    ("爸妈" → 爸, 妈), the same relative ("老爸" → 爸), the thesaurus's words ("媳妇"
    → 老婆), or whom a broader word covers ("对象" → 男朋友, 女朋友)."""
    low = word.lower()
    # "小儿子", "尕儿子", "大闺女": the child by birth order is the child.
    head = _BY_ORDER.fullmatch(low)
    found = (
        *((head.group(1),) if head else ()),
        *MEMBERS.get(low, ()),
        *one_person(low),
        *mates(low),
        *COVERS.get(low, ()),
        *_COVERED_BY.get(low, ()),
        *_KINDS_OF.get(low, ()),
    )
    return tuple(dict.fromkeys(w for w in found if w != low))


#: People a broader word covers: "我对象…" is asked of a boyfriend or a girlfriend.
COVERS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("对象", "另一半"), ("男朋友", "女朋友", "男友", "女友", "老公", "老婆")),
    **dict.fromkeys(("爱人", "那位", "那口子"), ("老公", "老婆", "丈夫", "妻子", "老伴")),
    # 老头 of an older speaker: the husband, or the father ("老头血压高").
    **dict.fromkeys(("老头子", "老头儿", "老头"), ("老伴", "老公", "爸", "父亲")),
    **dict.fromkeys(("老太婆", "老婆子"), ("老伴", "老婆")),
    **dict.fromkeys(("孩子", "娃", "小孩", "孩儿"), ("儿子", "女儿", "闺女")),
    **dict.fromkeys(("上司", "顶头上司", "上级"), ("经理", "领导", "老板", "主管", "总监")),
    **dict.fromkeys(
        ("partner", "significant other"), ("boyfriend", "girlfriend", "husband", "wife")
    ),
    **dict.fromkeys(("kid", "kids", "child", "children"), ("son", "daughter")),
    **dict.fromkeys(("boss",), ("manager", "supervisor")),
}
_BY_ORDER = re.compile(r"[大小二三老尕幺细](儿子|女儿|闺女|孙子|孙女|姑娘|哥|姐|弟|妹)")
#: Kinds a broader word of an animal covers: "我家那条狗" is asked of "那只柯基".
_KINDS_OF: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        ("狗", "狗狗", "小狗", "狗子"),
        (
            "柯基",
            "泰迪",
            "金毛",
            "哈士奇",
            "二哈",
            "拉布拉多",
            "边牧",
            "柴犬",
            "比熊",
            "博美",
            "萨摩耶",
            "土狗",
            "田园犬",
            "阿拉斯加",
            "德牧",
            "法斗",
            "雪纳瑞",
            "吉娃娃",
        ),
    ),
    **dict.fromkeys(
        ("猫", "猫咪", "小猫"),
        ("布偶", "英短", "美短", "橘猫", "狸花", "加菲", "暹罗", "蓝猫", "三花", "缅因"),
    ),
    **dict.fromkeys(
        ("dog", "puppy"),
        (
            "corgi",
            "poodle",
            "retriever",
            "husky",
            "labrador",
            "beagle",
            "terrier",
            "bulldog",
            "dachshund",
            "pug",
            "collie",
            "schnauzer",
            "chihuahua",
            "spaniel",
        ),
    ),
    **dict.fromkeys(("cat", "kitten"), ("tabby", "siamese", "persian", "ragdoll")),
}
#: The broader words a memory may name a person by: "我老公…" is asked of "我对象…".
_COVERED_BY: dict[str, tuple[str, ...]] = {}
for _broad, _narrow in COVERS.items():
    for _word in _narrow:
        _COVERED_BY[_word] = (*_COVERED_BY.get(_word, ()), _broad)
#: People named together, by each of them: a memory of one is about the pair.
MEMBERS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("爸妈", "父母", "双亲", "二老"), ("爸", "妈", "父亲", "母亲")),
    **dict.fromkeys(("公婆", "公公婆婆"), ("公公", "婆婆")),
    **dict.fromkeys(("岳父母", "丈人丈母娘"), ("岳父", "岳母", "丈人", "丈母娘")),
    **dict.fromkeys(("爷爷奶奶", "祖父母"), ("爷爷", "奶奶")),
    **dict.fromkeys(("外公外婆", "姥姥姥爷"), ("外公", "外婆", "姥姥", "姥爷")),
    **dict.fromkeys(("兄弟姐妹",), ("哥", "姐", "弟", "妹")),
    # The family as a whole: "我们家里人都有啥毛病" asks of each of them.
    **dict.fromkeys(
        ("家里人", "家人", "一家人", "全家", "全家人", "一家子"),
        ("爸", "妈", "老公", "老婆", "儿子", "女儿", "闺女", "孩子", "老伴", "婆婆", "公公"),
    ),
    **dict.fromkeys(("parents", "folks"), ("mom", "dad", "mother", "father")),
    **dict.fromkeys(("grandparents",), ("grandma", "grandpa", "grandmother", "grandfather")),
    **dict.fromkeys(("in-laws",), ("father-in-law", "mother-in-law")),
}
#: A question asked of the speaker and another ("我和室友…", "me and my wife").
_WITH_SPEAKER = re.compile(
    r"我(?:和|跟|与)|(?:和|跟|与)我(?!的)|\b(?:me|I) and\b|\band (?:me|I|myself)\b",
    re.IGNORECASE,
)
#: A question of the speaker ("我在哪上班？", "where do I work?"), and one that points at
#: someone else or at more than the speaker ("她", "he", "咱家", "we").
_OF_THE_SPEAKER = re.compile(r"我|\b(?:i|my|me)\b", re.IGNORECASE)
_OF_ANOTHER = re.compile(
    r"[他她它咱]|我们|\b(?:he|she|his|her|him|they|their|them|we|our|us)\b", re.IGNORECASE
)
#: A PostgreSQL regular expression (for ``~*``) of a memory that does not open with a
#: relative of the speaker's or another person of theirs ("我爸…", "闺女…", "男朋友…",
#: "My wife…"): what a question asked of the speaker alone is answered by.
NOT_A_RELATIVES = (
    "^(?![[:space:]]*(?:(?:我的?|我家)?(?:"
    + KIN_WORDS
    + "|"
    + OTHER_PEOPLE
    + ")(?![们司])|my[[:space:]]+(?:wife|husband|partner|"
    "mom|mum|mother|dad|father|son|daughter|brother|sister|boyfriend|girlfriend|boss|manager)"
    "([^[:alnum:]_]|$)))"
)
#: A PostgreSQL regular expression (for ``~*``) of a memory whose subject is the
#: speaker: it opens with 我 or "I", not with one of theirs ("我妈…").
SPEAKER_FACT = (
    "^[[:space:]]*我(?!的?(?:[爸妈哥姐弟妹老公婆爷奶儿女家们表堂舅姨叔姑岳媳丈同闺室舍]"
    "|朋友|领导|上司|老板|男朋友|对象|邻居|师傅|客户|房东))|^[[:space:]]*i([^[:alnum:]_]|$)"
)


def subject_pattern(words: Sequence[str]) -> str:
    """A PostgreSQL regular expression (for ``~*``) that finds any of the question's
    subject words (:func:`memory_pg.text.attributes.subject_words`), each by
    :func:`memory_pg.text.references.word_pattern`."""
    return "|".join(
        (NOT_ANOTHER if has_han(word) and relative(word) else "") + word_pattern(word)
        for word in words
    )


__all__ = ["Query", "analyse", "asked_about", "name_pattern", "query_entities", "subject_pattern"]
