"""Who or what a statement is about: its holder (my sister, 房东) and its opening noun.

A fact has a subject before its verb: "My sister lives in Chengdu" is the
sister's, "测试环境使用 MySQL" the test environment's, "I live in Brooklyn" the
speaker's. The change decision (:mod:`memory_pg.text.changes`) replaces an old
fact only by a new one about the same subject; this module reads the subject.

* :func:`holders`: who holds the fact when it is not the speaker (kin, roles), in
  subject position only ("紧急联系人是我妈": 我妈 is the value, not the holder).
* :func:`refers_to_holder`: whether a text that names no holder still speaks of
  the other text's holder: the holder's word anywhere ("Dad sold the house",
  "新房东"), a name the other text gives its holder ("My partner is Jordan" /
  "Jordan and I broke up"), a pronoun of a third person ("She's at Lincoln now"),
  or the thing the holder owns ("my sister's baby shower" / "The baby shower").
* :func:`zone`: the words before the first verb, what a statement is about.
* Two things of one kind ("测试环境" / "生产环境") are read in :mod:`.kinds`.

Pure functions, no I/O.
"""

from __future__ import annotations

import re

from memory_pg._segment import EN_STOPWORDS, in_dictionary, segment
from memory_pg.entities import extract, has_han
from memory_pg.text import synonyms
from memory_pg.text.attributes import tagged
from memory_pg.text.concepts import concept_of, concepts

#: Who holds a fact, when it is not the speaker: kin and roles. Two texts naming two
#: different ones speak of two subjects.
_HOLDER_PATTERN = (
    r"\b(?:my|our|his|her|their)\s+(?:(?:older|younger|little|big|ex|late)\s+|(?:ex|step|god|half)[-\s]?)?"
    r"(wife|husband|partner|son|daughter|kids?|children|mom|mother|dad|father|parents|sister"
    r"|brother|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|niece|nephew|friend"
    r"|boss|manager|supervisor|colleague|coworker|roommate|landlord|neighbou?r|doctor|dentist|team"
    r"|girlfriend|boyfriend|fianc[ée]e?|in-laws|baby|dog|cat)\b"
    r"|(老婆|老公|妻子|丈夫|爱人|媳妇|儿子|女儿|孩子|大宝|二宝|父母|爸妈|爹娘|二老|老两口|爸爸|妈妈|爸|妈|姐姐|妹妹|哥哥|弟弟"
    r"|爷爷|奶奶|外婆|外公|姥姥|姥爷|婆婆|公公|岳父|岳母|叔叔|阿姨|舅舅|姑姑|堂哥|表哥|表姐|表妹|堂妹"
    r"|朋友|同事|领导|老板|上司|主管|室友|房东|邻居|医生|男朋友|女朋友|对象"
    # Each relative's other words of two characters or more ("闺女", "小孩", "老丈人")
    r"|{other_words}"
    r"|(?<=我)[弟哥姐妹](?![弟哥姐妹夫们媳嫂])|(?:(?<=[我俺])|(?<![\u4e00-\u9fff]))娃(?![娃儿子])"
    r")"  # "我弟刚搬去重庆了", "娃的辅导班…"
)
#: Where a holder of a fact stands: before the first verb of its sentence ("My
#: sister lives…", "我姐姐住在…"); after it, a holder is a value ("紧急联系人是我妈").
VERB = re.compile(
    r"\b(?:is|are|was|were|has|have|had|lives?|works?|eats?|drinks?|likes?|loves?|uses?|runs?"
    r"|goes|go|owns?|leads?|[a-z]+ed)\b|是|在|住|对|有|喜欢|爱|不|用|改|换|吃|喝",
    re.IGNORECASE,
)
#: A copula: where it comes first in a sentence, what stands before it is the subject
#: even if a word that can be a verb is in it ("Our team lead is Tom").
_COPULA = re.compile(r"\b(?:is|are|was|were)\b|'s\b|'re\b", re.IGNORECASE)
#: Holders who are people beside the speaker, not a role the speaker fills: a count,
#: a pet, a job said of them is theirs ("邻居家现在三只猫" beside "我有两只猫").
PEER = re.compile(
    r"friend|colleague|coworker|roommate|neighbou?r|girlfriend|boyfriend|朋友|同事|室友|邻居|男朋友|女朋友",
    re.IGNORECASE,
)
#: Holders that are family: a fact of theirs is never the speaker's.
KIN = re.compile(
    r"wife|husband|partner|son|daughter|kid|child|mom|mother|dad|father|parent|sister|brother"
    r"|grand|aunt|uncle|cousin|niece|nephew|girlfriend|boyfriend|fianc|baby"
    r"|老婆|老公|妻子|丈夫|爱人|媳妇|儿子|女儿|孩子|宝|爸|妈|父母|姐|妹|哥|弟|爷|奶|外婆|外公|姥"
    r"|婆婆|公公|岳|叔|姨|舅|姑|表|堂|男朋友|女朋友|对象",
    re.IGNORECASE,
)
#: A third person as the subject of a clause: the fact is not the speaker's.
_THIRD_PERSON = re.compile(
    r"(?:^|[,;.，；。]\s*)(?:he|she)\b|\b(?:he|she)(?:'s|'ll| is| was| has)\b"
    r"|^[他她]|[，；。][他她]",
    re.IGNORECASE,
)
#: The speaker as the subject of a clause.
FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|we|we're|my|our)\b|我", re.IGNORECASE)
#: A Chinese form of address: "小李", "老王", "张总", "陈经理", "刘姐".
#: Titles a name carries, in both languages: "Dr." / "医生" on both sides is one profession.
EN_TITLES = ("Dr", "Mr", "Mrs", "Ms", "Prof")
ZH_TITLES = "总|经理|老师|医生|大夫|律师|主任"
_ZH_NAMED = rf"[\u4e00-\u9fff]{{1,2}}(?:{ZH_TITLES}|姐|哥|叔|姨)"
_ZH_ADDRESS = re.compile(rf"[小老][\u4e00-\u9fff]|{_ZH_NAMED}")
#: Words of English that say nothing of what a statement is about.
FUNCTION = EN_STOPWORDS | frozenset(
    "the my our we i you your his her their this that its i'm we're i've we've "
    "i'd don't doesn't didn't can't won't want wants need needs going plan planning "
    "got get gets just also now still".split()
)
#: A Chinese preposition glued to a name by the tagger ("由小周", "归阿强", "向周总"):
#: the subject ended before it.
_GLUED_PREPOSITION = "由归被给把向从对跟和与"
#: Chinese function words that open a subject and say nothing of it ("我的手机号").
_ZH_OPENING = re.compile(r"^(?:我们的|我们|我的|我)")


#: Words for one relative, the first the one :func:`holders` gives: "my mom" and "my
#: mother" are one holder, and "sis got her own place" speaks of "my sister".
_ONE_RELATIVE = (
    ("mother", "mom", "mum", "mommy", "mama"),
    ("father", "dad", "daddy", "papa"),
    ("sister", "sis"),
    ("brother", "bro"),
    ("grandmother", "grandma", "granny", "nana"),
    ("grandfather", "grandpa", "granddad", "gramps"),
    ("husband", "hubby"),
    # With the words of the regions ("阿大" in the north-west, "尪" in Minnan, "堂客" in
    # Hunan), and the ones of age ("老爷子" of one's father).
    ("妈妈", "妈", "老妈", "母亲", "老母", "麻麻", "阿妈", "老娘", "额娘", "俺娘"),
    (
        "爸爸",
        "爸",
        "老爸",
        "父亲",
        "爹",
        "老爹",
        "老豆",
        "老汉",
        "老爷子",
        "阿大",
        "阿爸",
        "老父亲",
    ),
    ("父母", "爸妈", "爹娘", "二老", "老两口", "双亲"),
    ("弟弟", "弟", "老弟", "细佬", "阿弟"),
    ("哥哥", "哥", "阿哥"),
    ("姐姐", "姐", "老姐", "阿姐"),
    ("妹妹", "妹", "老妹", "老妹儿", "阿妹"),
    # A spouse by the child: "孩他妈", "孩儿她爸".
    ("老婆", "妻子", "媳妇", "堂客", "婆娘", "孩他妈", "孩她妈", "孩儿她妈", "娃他妈"),
    ("老公", "丈夫", "尪", "老倌", "孩他爸", "孩她爸", "孩儿她爸", "娃他爸"),
    ("儿子", "囝", "个仔"),
    ("女儿", "闺女", "囡", "囡囡", "碎女子", "丫头"),
    ("孩子", "娃", "小孩", "孩儿", "娃娃"),
    ("岳母", "丈母娘", "外母"),
    ("岳父", "丈人", "老丈人", "外父"),
    # One person at work, whichever word names the role.
    ("manager", "boss", "supervisor", "line manager"),
    ("领导", "老板", "上司", "主管"),
)
RELATIVE = {word: words[0] for words in _ONE_RELATIVE for word in words}
_HOLDERS = re.compile(
    _HOLDER_PATTERN.replace(
        "{other_words}",
        "|".join(
            sorted(
                (w for words in _ONE_RELATIVE for w in words if has_han(w) and len(w) > 1),
                key=len,
                reverse=True,
            )
        ),
    ),
    re.IGNORECASE,
)


def one_person(word: str) -> tuple[str, ...]:
    """The words for the relative or role ``word`` names ("老爸" → 爸爸, 爸, 父亲)."""
    head = RELATIVE.get(word.lower())
    return next((w for w in _ONE_RELATIVE if w[0] == head), ()) if head else ()


#: The English words for each relative (a Chinese short form such as 妈 is inside
#: too many other words, 姑妈, to be looked for alone).
_ALIASES = {words[0]: words for words in _ONE_RELATIVE if not has_han(words[0])}


#: A short form in capitals: "TL", "CC", "IF", "LP".
_SHORT = re.compile(r"(?<![\w@.#-])([A-Z]{2,4})(?![\w@.#-])")


def spelled_out(text: str, other: str) -> str:
    """``text`` with each short form in capitals that stands for words of ``other``
    written out as those words: "billing rewrite TL is Marco" beside "Priya is the
    tech lead" reads "billing rewrite tech lead is Marco"; "ditched LP" beside "I use
    LastPass" reads "ditched LastPass". A short form stands for consecutive words,
    or the parts of one word in CamelCase, whose first letters it is."""
    if has_han(other) or not _SHORT.search(text):
        return text
    words = list(re.finditer(r"[A-Za-z][A-Za-z0-9]*", other))
    spans: dict[str, str] = {}
    for size in (2, 3, 4):
        for i in range(len(words) - size + 1):
            run = words[i : i + size]
            if run[0].group(0).lower() in EN_STOPWORDS:
                continue
            spans.setdefault(
                "".join(w.group(0)[0] for w in run).upper(),
                other[run[0].start() : run[-1].end()],
            )
    for w in words:
        parts = re.findall(r"[A-Z][a-z0-9]+", w.group(0))
        if len(parts) > 1 and "".join(parts) == w.group(0):
            spans.setdefault("".join(p[0] for p in parts), w.group(0))

    def out(m: re.Match[str]) -> str:
        short = m.group(1)
        if re.search(r"(?<![A-Za-z])" + short + r"(?![A-Za-z])", other):
            return short
        return spans.get(short, short)

    return _SHORT.sub(out, text)


def holders(text: str) -> set[str]:
    """Who holds the fact ``text`` states, when not the speaker: a kin or role word in
    subject position (the first few words: "My sister lives…", "我姐姐住在…"), before
    its first verb; after it, such a word is a value ("紧急联系人是我妈"). One
    relative is one word, whichever word names them ("my mom", "my mother")."""
    verb = VERB.search(text)
    zone_ = text[: verb.start()] if verb else text
    zone_ = zone_[:24] if not has_han(zone_[:8]) else zone_[:6]
    found = {
        compound(
            zone_, m.start(1) if m.group(1) else m.start(2), (m.group(1) or m.group(2)).lower()
        )
        for m in _HOLDERS.finditer(zone_)
        if not _REPORTING.match(text, m.end()) and not _COMPANION.search(zone_[: m.start()])
    }
    return {RELATIVE.get(word, word) for word in found}


def compound(text: str, at: int, word: str) -> str:
    """A relative's word found at ``at`` in ``text``, with what makes it another person:
    the character before a one-character word ("舅妈", "干妈", "后妈" are not 妈; "我妈",
    "老妈" are), "in-law" after it, "ex-", "step", "god", "half-" before it."""
    before = text[at - 1 : at] if at > 0 else ""
    if len(word) == 1 and re.fullmatch(r"[\u4e00-\u9fff]", before) and before not in "我俺咱老阿的":
        return before + word
    if re.match(r"-?in-?law|\s+in\s+law", text[at + len(word) :], re.IGNORECASE):
        return word + "-in-law"
    prefix = re.search(r"(?:ex|step|god|half)[-\s]?$", text[:at], re.IGNORECASE)
    return prefix.group(0).lower().rstrip(" -") + "-" + word if prefix else word


#: Who goes along, not who holds the fact: "跟老公去了深圳", "和我妈搬回了老家", "with
#: my wife": the speaker moved, with them.
_COMPANION = re.compile(r"(?:跟|和|同|陪|带着?)(?:我的?)?$|\bwith\s+$", re.IGNORECASE)


#: A holder who only reports or asks ("医生说不用再吃了", "the doctor told me to…",
#: "医生让我加到两片"): the fact is still the speaker's.
_REPORTING = re.compile(
    r"\s*(?:说|讲|让|叫我|建议|要求|嘱咐|said|says|told|tells|wants me|asked me|suggested)",
    re.IGNORECASE,
)


def speaker_and_other(a: str, b: str) -> bool:
    """Whether one text states a fact of the speaker ("My email is…", "I live…") and
    the other one of a third person, by pronoun and with no word of the speaker
    ("…she's at linda@lindacpa.com")."""

    def speaker(text: str) -> bool:
        opening = FIRST_PERSON.match(text.lstrip()) is not None
        return opening and not holders(text)

    def third(text: str) -> bool:
        if FIRST_PERSON.search(text):
            return False
        start = text.lstrip()
        named = any(
            e.kind == "person" and _ZH_ADDRESS.fullmatch(e.name) and start.startswith(e.name)
            for e in extract(start)
        )
        return named or _THIRD_PERSON.search(text) is not None

    return (speaker(a) and third(b)) or (speaker(b) and third(a))


#: A person named as the owner of what a text opens with: "Rachel's slide deck", "小刘的
#: 季度总结", "王总的车".
_NAMED_OWNER = re.compile(
    r"^\s*(?:the\s+)?([A-Z][a-z]+)['’]s\s+(?!been\b|going\b|got\b)[a-z]"
    r"|^\s*((?:小|老|阿)[\u4e00-\u9fff]|[\u4e00-\u9fff]{1,2}(?:总|工|老师))的"
)


def named_owner(text: str) -> str:
    """The person ``text`` opens by naming as the owner of its subject ("Rachel's slide
    deck got moved" → "rachel", "小刘的季度总结推迟了" → "小刘"), or "". Not a
    relative ("Mom's"), nor a word that is no name ("小区的物业费", "老家的房子")."""
    m = _NAMED_OWNER.match(text)
    if m is None:
        return ""
    name = (m.group(1) or m.group(2)).lower()
    kin = KIN.fullmatch(name) is not None or PEER.fullmatch(name) is not None
    if m.group(2) and name[0] in "小老阿" and len(name) == 2:
        word = in_dictionary(name) and not any(f.startswith("nr") for _, f in tagged(name))
        kin = kin or word  # 小区, 老家: words of their own; 小刘, 老王: people
    return "" if kin or name in FUNCTION or name in _NOT_NAMES else name


def owned_by_other(old: str, new: str) -> bool:
    """Whether ``new`` opens with the thing of a person ``old`` does not name: "Rachel's
    slide deck got moved" beside "Finish the slide deck by Thursday"."""
    owner = named_owner(new)
    return bool(owner) and not names(old, owner)


_NOT_NAMES = frozenset("let it that what here there he she who where everyone nobody today".split())


def clause_holders(text: str) -> set[str]:
    """:func:`holders` of each clause of ``text`` after its first: "换了个房东，新房东电话
    136…" gives the landlord's number."""
    out: set[str] = set()
    for clause in re.split(r"[，,;；。]", text)[1:]:
        clause = clause.strip()
        opening = clause[:4] if has_han(clause) else " ".join(clause.split()[:3])
        out |= {h for h in holders(clause) if h in opening.lower()}
    return out


def refers_to_holder(text: str, other: str, held: set[str]) -> bool:
    """Whether ``text``, naming no holder in subject position, still speaks of the
    holders ``held`` of ``other``: it names one of them anywhere ("Dad sold the
    house", "换了个房东，新房东…"), names a person ``other`` names ("My partner is
    Jordan" / "Jordan and I broke up"), has a third person for its subject ("She's
    at Lincoln now"), or names what the holder owns ("My sister's baby shower" /
    "Baby shower was pushed")."""
    for word in held:
        if names(text, word) or synonyms.held_by(text, word):  # 爸妈 / 二老
            return True
    if _shared_person(text, other):
        return True
    if _THIRD_PERSON.search(text) and not FIRST_PERSON.search(text.split(",")[0]):
        return True
    return any(names(text, w) and not _own(text, w) for w in _owned(other, held))


def _own(text: str, word: str) -> bool:
    """Whether ``text`` says ``word`` is the speaker's: "My GPA is 3.4" is not the GPA
    of "my brother's GPA", "我的工资" not "我老婆的工资"."""
    w = re.escape(word)
    return (
        re.search(rf"\b(?:my|our)\s+(?:[\w-]+\s+)?{w}", text, re.IGNORECASE) is not None
        or re.search(rf"我(?:们)?的?{w}", text) is not None
    )


def speaks_of_holders(text: str, other: str) -> bool:
    """Whether ``other`` names holders (my son, 我妈) and ``text`` has a third person for
    its subject: "My son is in 4th grade" / "He's started 5th grade"."""
    first = text.split(",")[0]
    return (
        bool(holders(other))
        and bool(_THIRD_PERSON.search(first))
        and not FIRST_PERSON.search(first)
    )


def _people(text: str) -> set[str]:
    return {e.key for e in extract(text) if e.kind == "person"}


def names(text: str, word: str) -> bool:
    """Whether ``text`` names ``word``: a Chinese word anywhere in it, an English one
    as a word, by an alias ("Postgres" for "postgresql") or by its stem."""
    if has_han(word):
        return word in text
    if any(
        re.search(r"\b" + re.escape(alias) + r"s?\b", text, re.IGNORECASE) is not None
        for alias in _ALIASES.get(word, (word,))
    ):
        return True
    # A subject word is a stem (:func:`zone`): "onboard" is named by "onboarding". Not
    # a short one: "new" is the stem of "news", "not" of "notes".
    return len(word) > 3 and word in {stem(w) for w in re.findall(r"[A-Za-z][A-Za-z'-]*", text)}


def _shared_person(a: str, b: str) -> bool:
    """Whether both texts name one person (by the entity reader: "Jordan", "陈经理")."""
    # A Chinese name only in a form of address ("小李", "陈经理"): the reader takes
    # words such as "喝咖啡" for names.
    people = {
        e.key
        for e in extract(a)
        if e.kind == "person" and (not has_han(e.name) or _ZH_ADDRESS.fullmatch(e.name))
    }
    if not people:
        return False
    return any(e.kind == "person" and e.key in people for e in extract(b)) or any(
        names(b, p.split()[0]) for p in people if not has_han(p)
    )


def _owned(text: str, held: set[str]) -> list[str]:
    """The nouns a holder owns in ``text``: "my sister's baby shower" → baby,
    shower; "儿子的生日派对" → 生日派对."""
    out: list[str] = []
    for word in held:
        m = re.search(re.escape(word) + r"(?:'s\s+|的)([\w\u4e00-\u9fff ]{2,20})", text, re.I)
        if m is None:
            continue
        rest = m.group(1)
        if has_han(rest):
            out.extend(w for w, flag in tagged(rest)[:2] if flag.startswith("n") and len(w) > 1)
        else:
            out.extend(w for w in rest.split()[:2] if w.lower() not in FUNCTION)
    return out


def zone(text: str) -> set[str]:
    """The words before a text's first verb: what it is about ("测试环境", "Server A")."""
    return set(ordered_zone(text))


def ordered_zone(text: str) -> list[str]:
    """:func:`zone` in the order of the text."""
    if has_han(text):
        words: list[str] = []
        for word, flag in tagged(_ZH_OPENING.sub("", text.lstrip())):
            if flag.startswith(("v", "p")) or word in "是在对有":
                return words
            if len(word) > 2 and word[0] in _GLUED_PREPOSITION and flag.startswith("nr"):
                return words
            if flag.startswith("n") or re.fullmatch(r"[A-Za-z0-9]+", word):
                words.append(word.lower())
        return []
    first = re.split(r"[,;:.!?]", text, maxsplit=1)[0]
    copula = _COPULA.search(first)
    verb = copula if copula and len(first[: copula.start()].split()) <= 5 else VERB.search(text)
    if verb is None:
        return []
    head = text[: verb.start()]
    seg = segment(head)
    return [
        stem(w)
        for w in seg.words
        if (w not in FUNCTION or _letter_name(head, w)) and not w.endswith("n't")
    ]


def _letter_name(text: str, word: str) -> bool:
    """Whether ``word`` is one capital letter naming a thing ("Server A", "Plan B")."""
    return len(word) == 1 and re.search(r"\w\s+" + word.upper() + r"\b", text) is not None


def holds_zone(text: str, words: set[str]) -> bool:
    """Whether ``text`` names any of the subject ``words``, or the thing one of them
    names by another word ("月供" for "房贷", :mod:`memory_pg.text.concepts`; "folks"
    for "parents", :mod:`memory_pg.text.synonyms`); a
    Chinese word of three or more characters is named by any two of them in a row
    ("周会定" by "周会": the tagger glues words)."""
    named = concepts(text)
    for word in words:
        if names(text, word) or concept_of(word) in named or synonyms.held_by(text, word):
            return True
        if has_han(word) and len(word) > 2 and not _known(word):
            if any(word[i : i + 2] in text for i in range(len(word) - 1)):
                return True
    return False


def _known(word: str) -> bool:
    """Whether the tagger's dictionary holds ``word``; one it does not is its guess,
    often two words glued ("周会定" in "周会定在每周一")."""
    import jieba

    # The dictionary loads on first use: before it, every word would look unknown.
    jieba.dt.check_initialized()
    return bool(jieba.dt.FREQ.get(word))


def stem(word: str) -> str:
    """A crude English stem, enough to meet a word's plural and verb forms: "servers"
    → "server", "logging" → "log", "standups" → "standup"."""
    w = word.lower().removesuffix("'s")
    for suffix in ("ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix) and not w.endswith("ss"):
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]
    return w


#: A person's name given as a value: "Dr. Patel", "Sarah Lee", "老刘", "小韩", "王医生".
_PERSON = re.compile(
    rf"(?:(?:{'|'.join(EN_TITLES)})\.?\s+)?(?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\b"
    rf"|[小老][\u4e00-\u9fff](?![\u4e00-\u9fff]{{2}})|{_ZH_NAMED}"
)
_TITLE = re.compile(rf"^(?:{'|'.join(EN_TITLES)})\b|(?:{ZH_TITLES})$", re.IGNORECASE)
_NAMED_AS = re.compile(r"\s+(?:is|was)\s+|是|叫")
_BETWEEN = re.compile(r"^\s*(?:to|with|for|by|了|成|为|到|给)?\s*(?:an?\s+|the\s+)?", re.I)


def _person_at(text: str) -> str:
    m = _PERSON.match(text)
    return m.group(0) if m else ""


def _role_named(text: str) -> tuple[str, str]:
    """The role ``text`` names a person in, and the person ("My dentist is Dr. Patel"
    → ("My dentist", "Dr. Patel")), or ("", "")."""
    m = _NAMED_AS.search(text)
    if m is None or m.start() > 30:
        return "", ""
    person = _person_at(text[m.end() :])
    return (text[: m.start()].strip(), person) if person else ("", "")


def role_person(text: str) -> str:
    """The person ``text`` names in a role ("My dentist is Dr. Patel" → "Dr. Patel",
    "我们组长是老刘" → "老刘"), or ""."""
    return _role_named(text)[1]


def role_renamed(old: str, new: str, ends: list[int], similar: bool = False) -> bool:
    """Whether ``old`` names the person in a role ("My dentist is Dr. Patel", "我们组长是
    老刘") and ``new`` puts another person in it with a signal of change, one of which
    ends at each of ``ends`` ("I switched to Dr. Kim's clinic", "组长换成了小韩"): the
    role is the subject, the person its value, not a second holder. The new text must
    show it is the same role: it names the role, the two names carry one title (Dr.,
    医生), or the embedding model reads the texts as close (``similar``)."""
    role, name = _role_named(old)
    if not name or holders(new) - holders(old):
        return False
    role = _ZH_OPENING.sub("", role)
    if has_han(role):
        words = {role, role[-2:]}  # a compound's head comes last: 部门经理 → 经理
    else:
        words = {stem(w) for w in segment(role).words if w not in FUNCTION}
    words = {w for w in words if len(w) > 1}
    # The person after a signal ("换成了小韩"), or the role named again ("…our
    # landlord is Mrs. Chen now").
    found = [_BETWEEN.sub("", new[end:], count=1) for end in ends] + [
        new[is_.end() :]
        for is_ in _NAMED_AS.finditer(new)
        if holds_zone(new[max(0, is_.start() - 30) : is_.start()], words)
    ]
    others = {_person_at(text) for text in found} - {"", name}
    if not others:
        return False

    def title(person: str) -> str:
        m = _TITLE.search(person)
        return m.group(0).lower() if m else ""

    same_title = bool(title(name)) and title(name) == title(sorted(others)[0])
    return holds_zone(new, words) or same_title or similar


__all__ = [
    "EN_TITLES",
    "FIRST_PERSON",
    "FUNCTION",
    "KIN",
    "VERB",
    "clause_holders",
    "holders",
    "holds_zone",
    "names",
    "one_person",
    "ordered_zone",
    "owned_by_other",
    "refers_to_holder",
    "role_person",
    "role_renamed",
    "speaker_and_other",
    "stem",
    "zone",
]
