"""Things referred to by description, and the names that memories give them.

A person asks about a thing the way they know it: "我常去的那家健身房怎么样？",
"我房东怎么联系？", "the restaurant we went to for her birthday". The memories that
answer often name it instead: "乐刻的私教课太贵了", "沈阿姨的电话是 139…". Another
memory joins the two: "我常去的那家健身房是乐刻", "房东是个上海阿姨，姓沈".

* :func:`refers` — whether a query refers to something by description or asks an
  attribute of a subject, and by which words (its nouns);
* :func:`names_given` — the names that memories holding those words give them: a
  copula or naming verb after the words (是 / 叫 / 姓 / named / called / is), a
  quoted name, a name right after the words ("同事小何").

Patterns of naming, not lists of sentences. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from memory_pg._segment import tells
from memory_pg.entities import has_han
from memory_pg.text.attributes import asked, nouns, stated, subject_words, tagged

#: A description: a pointing word with a measure word ("那家", "那个", "这位"), or a
#: relative clause before a noun ("我常去的健身房"); English "the X (that|who) I …".
_DESCRIBES = re.compile(
    r"[那这][个家位只条辆所次场本部间座台件种回]|[\u4e00-\u9fff]的[\u4e00-\u9fff]{1,4}[？?]?$"
    r"|\bthe\s+\w+(?:\s+\w+)?\s+(?:that|who|which|where|i|we|you|my)\b",
    re.IGNORECASE,
)

#: A name as written: a quoted one, or a run of Han characters or a Latin word.
_QUOTED = re.compile(r"[“\"「《『]([^”\"」》』\n]{1,20})[”\"」》』]")
_ZH_NAMING = re.compile(
    r"(?:名叫|叫做|名字叫|名字是|大家都叫(?:他|她|它)?|都叫(?:他|她|它)|叫(?:他|她|它)?|称(?:他|她|它)?为|"
    r"外号|昵称|小名)\s*([A-Za-z][\w.'-]*(?:\s[A-Z][\w.'-]*)?|[\u4e00-\u9fff]{1,5}?)"
    r"(?=[，,。.！!；;、\s]|的|是|在|了|$)"
)
_ZH_COPULA = re.compile(
    r"^\s*(?:是|就是|用的是|选的是)\s*([A-Za-z][\w.+#'-]*(?:\s[A-Za-z0-9][\w.+#'-]*)?|[\u4e00-\u9fff]{2,5}?)"
    r"(?=[，,。.！!；;、\s]|的|$)"
)
_ZH_SURNAME = re.compile(r"姓([\u4e00-\u9fff])")
#: Words a copula may be followed by that name nothing: "是个上海阿姨", "是从深圳来的".
_NOT_A_NAME = re.compile(
    r"^(?:个|一|这|那|我|你|他|她|很|挺|在|从|不|也|都|去|有|刚|新|老家|姓|是|叫|的)"
)
#: Right after the words: a Chinese given name (2–3 characters) or a capitalised word.
_ZH_NEXT_NAME = re.compile(
    r"^\s*((?:小|老|阿)[\u4e00-\u9fff]|[\u4e00-\u9fff]{2,3}?)(?=是|在|对|的|说|，|,|也|又|刚|从|跟|和)"
)
_EN_NAME = r"((?:(?:Mr|Mrs|Ms|Dr|Prof)\.?\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"
_EN_NAMING = re.compile(r"\b(?:named|called|nicknamed|goes by)\s+" + _EN_NAME)
_EN_COPULA = re.compile(r"^\s*(?:,\s*|is\s+|was\s+|'s\s+)" + _EN_NAME)
_EN_BEFORE = re.compile(_EN_NAME + r"\s*(?:,|is|was)\s+(?:my|our)\s+$")
#: Chinese forms of address around a surname: 郑总, 沈阿姨, 老周, 小吴.
_ADDRESS = (
    "总|姐|哥|叔|姨|阿姨|老师|医生|大夫|师傅|经理|工|先生|女士|太太|大爷|大妈|奶奶|爷爷|主任|教练"
)


@dataclass(frozen=True)
class Name:
    """A name a memory gives what a query describes: ``text`` joins the query's words;
    ``pattern`` (a PostgreSQL regular expression) finds it in a memory's text."""

    text: str
    pattern: str

    def named_in(self, text: str) -> bool:
        """Whether ``text`` names it: one of its forms, Latin ones as words."""
        folded = text.casefold()
        for form in (
            self.text.split(" ") if " " in self.text and has_han(self.text) else [self.text]
        ):
            if has_han(form):
                if form in text and (
                    not self.pattern.startswith(NOT_ANOTHER) or re.search(self.pattern, text)
                ):
                    return True
            elif re.search(r"(?<![a-z0-9_])" + re.escape(form.casefold()), folded):
                return True
        return False


@lru_cache(maxsize=1024)
def refers(query: str) -> tuple[str, ...]:
    """The nouns by which ``query`` points at something a memory may name otherwise:
    the subject of an attribute it asks ("我房东怎么联系？" → ``("房东",)``), or the
    nouns of a description ("我常去的那家健身房怎么样？" → ``("健身房",)``). Empty when
    it does neither (a topic, a time, the asker alone)."""
    asking = asked(query)
    if asking:
        return subject_words(query, asking)
    if _DESCRIBES.search(query):
        return nouns(query)
    return ()


def names_given(words: Sequence[str], texts: Iterable[str], query: str) -> tuple[Name, ...]:
    """The names that ``texts`` (the best memories for the query) give to what
    ``words`` describe, leaving out names the query already holds."""
    found: dict[str, Name] = {}
    for text in texts:
        for word in filter(tells, words):  # not the 人 of "那个人" in "跟人打架"
            at = _find(text, word)
            if at < 0:
                continue
            for name in _names_near(text, at, at + len(word), _person_described(words)):
                key = name.text.casefold()
                if len(name.text) >= 1 and key not in query.casefold() and key != word.casefold():
                    found.setdefault(key, name)
    return tuple(found.values())


#: A value stated against another holder's: "比我大三岁", "比她姐高", "比上个月贵".
_COMPARED = re.compile(
    r"比\s*([\u4e00-\u9fffA-Za-z]{1,6}?)\s*(?:还|更|要)?\s*"
    r"(?:大|小|年长|年轻|早|晚|高|矮|重|轻|胖|瘦|多|少|贵|便宜)"
)


def compared_with(query: str, texts: Iterable[str]) -> tuple[str, ...]:
    """Whom the best memories for ``query`` state the asked attribute against: a
    relative value needs the other's value too ("我老公多大？" ← "我老公比我大三岁"
    and "我今年三十二"). ``我`` is the speaker. Empty where the query asks no
    attribute or no memory compares."""
    asking = set(asked(query))
    found: dict[str, None] = {}
    for text in texts:
        if asking & set(stated(text)):
            for m in _COMPARED.finditer(text):
                other = re.sub(r"^我的?(?=.)", "", m.group(1))  # 比我婆婆 -> 婆婆
                if other.casefold() not in query.casefold() or other == "我":
                    found.setdefault(other, None)
    return tuple(found)


#: The two sides of a question that compares them or adds them up: "我爸比我妈大几岁",
#: "对门老李和我谁岁数大", "iPad和相机加起来花了多少钱". What follows is asked of each.
_SIDES = re.compile(
    r"^\s*(?P<a>[^，,。？?比和跟与]{1,8}?)\s*(?:"
    r"比\s*(?P<b>[^，,。？?]{1,6}?)\s*(?:还|更|要)?\s*"
    # The comparison's word, then how much or a question's end ("老大小几岁"; not the 大
    # of 老大, nor "比较早的时候").
    r"(?=(?:大|小|年长|年轻|早|晚|高|矮|重|轻|胖|瘦|多|少|贵|便宜)(?:几|多少?|点|些|一|吗|呢|[？?]|$))"
    r"|(?:和|跟|与)\s*(?P<c>[^，,。？?]{1,6}?)\s*(?=谁|哪个|哪一?[个位]|加起来|一共|总共|相差|差))"
)


def sides(query: str) -> tuple[tuple[str, str], ...]:
    """``(side, question)`` for each side ``query`` compares or adds up, with what it
    asks of both asked of that side alone (``我`` is the speaker); empty for any other
    query, or one that asks no attribute.

    Example:
        >>> sides("我爸比我妈大几岁？")
        (('爸', '爸大几岁？'), ('妈', '妈大几岁？'))
    """
    m = _SIDES.search(query)
    if m is None or not asked(query):
        return ()
    rest = query[m.end() :]
    out: list[tuple[str, str]] = []
    for said in (m.group("a"), m.group("b") or m.group("c")):
        side = re.sub(r"^我[的家]?(?=.)", "", said.strip())  # 我爸 -> 爸, as a memory may say 老爸
        if side and side not in {s for s, _ in out}:
            out.append((side, side + rest))
    return tuple(out) if len(out) == 2 else ()


def says_of(holder: str, text: str) -> bool:
    """Whether ``text`` states something of ``holder`` as its subject: for ``我``, a
    text that opens with the speaker ("我今年三十二了"), not with one of theirs
    ("我妈…"); for another, a text that names it outside a comparison."""
    if holder == "我":
        # Any clause may open with the speaker: "跟你说下，我今年28".
        for clause in re.split(r"[，,。；;！!]", text)[:3]:
            clause = clause.strip()
            words = tagged(clause[:12])
            if (
                len(words) > 1
                and words[0][0] == "我"
                and not words[1][1].startswith("n")
                and words[1][0] != "的"  # "我的经理比我大十岁": the manager's
                and not _COMPARED.match(clause[1:])
            ):
                return True
        return False
    outside = _COMPARED.sub("", text)
    return holder in outside


def name_in(query: str, words: Sequence[str], names: Sequence[Name]) -> str:
    """``query`` asking about ``names`` in place of the words that described them
    ("我常去的那家健身房收费怎么样？" → "我常去的那家乐刻收费怎么样？"); the names are
    added at the end when none of the words is found as written."""
    joined = " ".join(n.text for n in names)
    for word in sorted(words, key=len, reverse=True):
        at = _find(query, word)
        if at >= 0:
            return f"{query[:at]} {joined} {query[at + len(word) :]}"
    return f"{query} {joined}"


def _find(text: str, word: str) -> int:
    if re.fullmatch(r"[\w'-]+", word, re.ASCII):
        m = re.search(r"(?<![A-Za-z0-9_])" + re.escape(word), text, re.IGNORECASE)
        return m.start() if m else -1
    return text.find(word)


def _person_described(words: Sequence[str]) -> bool:
    """Whether the words describe a person ("那个人", "那个孩子", "那个同事"), not a
    thing ("那个馆子"): only a person is named by the relative a memory opens with."""
    return any(w.endswith("人") or w in _PEOPLE or re.search(KIN_WORDS, w) for w in words)


#: Words that describe a person by a role.
_PEOPLE = frozenset("孩子 娃 同事 朋友 亲戚 家里人 家人 同学 邻居 哥们 姐妹 闺蜜 伙计".split())


def _names_near(text: str, start: int, end: int, person: bool = True) -> list[Name]:
    """Names ``text`` gives the words at ``start:end``: by a naming verb or a copula
    after them in the same sentence, a quoted name, a surname, or a name next to them."""
    sentence_end = _sentence_end(text, end)
    after = text[end:sentence_end]
    before = text[max(0, start - 40) : start]
    out = [_plain(m.group(1).strip()) for m in _QUOTED.finditer(text)]
    out += [_plain(m.group(1)) for m in _ZH_NAMING.finditer(after)]
    out += [_plain(m.group(1)) for m in _EN_NAMING.finditer(after)]
    for surname in _ZH_SURNAME.findall(after):
        # The memories that name the person call them by the surname and a form of
        # address (郑总, 沈阿姨), which the full text holds as one word.
        forms = [f"老{surname}", f"小{surname}", *(surname + a for a in _ADDRESS.split("|"))]
        escaped = re.escape(surname)
        out.append(Name(" ".join(forms), f"(?:老|小){escaped}|{escaped}(?:{_ADDRESS})"))
    found = _ZH_COPULA.match(after)
    if found and not _NOT_A_NAME.match(found.group(1)):
        out.append(_plain(found.group(1)))
    found = _ZH_NEXT_NAME.match(after)
    if found and _person(found.group(1)):
        out.append(_plain(found.group(1)))
    # The person a description is said of, as the subject of its clause: "老钱在百度
    # 做算法" names who "在百度搞算法的那个同学" is; "小周对猫毛过敏" who cannot be near cats.
    clause_at = _clause_start(text, start)
    subject = _clause_subject(text[clause_at:start], person)
    if _PRONOUN.match(text[clause_at:start]) and clause_at and text[clause_at - 1] in "，,;；:：":
        # "周末和小雨去了趟青城山，她在七中当语文老师": 她 is the one named in the clause
        # before, in the same sentence.
        before_at = _clause_start(text, clause_at - 1)
        subject = _clause_subject(text[before_at : clause_at - 1], person) or subject
    if subject:
        relative = re.fullmatch("我?" + KIN_WORDS, subject) is not None
        out.append(
            Name(subject, NOT_ANOTHER + word_pattern(subject)) if relative else _plain(subject)
        )
    for found in (_EN_COPULA.match(after), _EN_BEFORE.search(before)):
        if found:
            out.append(_plain(found.group(1)))
    return [n for n in out if n.text and n.text.strip()]


def _person(word: str) -> bool:
    """Whether a word next to a description is a person's name: 小吴, 老周, 阿强, or
    what jieba tags as one."""
    if re.fullmatch(r"[小老阿][\u4e00-\u9fff]", word):
        word = word[1]  # a surname after 小 / 老 / 阿 ("小吴"), not "老家"
    return any(flag.startswith("nr") for _, flag in tagged(word))


#: A clause that opens with a third person: who it is was named before.
_PRONOUN = re.compile(r"\s*[他她](?![们的爸妈哥姐弟妹儿女老公婆爷奶家])")  # not "她妈"
_SENTENCE_END = re.compile(r"[。！？!?；;\n]|\.(?:\s|$)")
_CLAUSE_MARK = re.compile(r"[，,。！？!?；;：:\n]")


def _clause_start(text: str, at: int) -> int:
    starts = [m.end() for m in _CLAUSE_MARK.finditer(text, 0, at)]
    return starts[-1] if starts else 0


def _clause_subject(clause: str, person: bool = True) -> str:
    """The person (or named thing) a Chinese clause is about, before its predicate: the
    last name among its words (小周, 佳佳, 王姐), or a form of address jieba splits
    (老 + 钱)."""
    if not has_han(clause):
        return ""
    kin = _KIN_OPENING.match(clause)
    words = tagged(clause)
    found, n = "", 0
    while n < len(words):
        word, flag = words[n]
        after = words[n + 1][0] if n + 1 < len(words) else ""
        if word in ("老", "小", "阿") and len(after) == 1 and has_han(after):
            found, n = word + after, n + 2
            continue
        if len(word) >= 2 and (flag.startswith("nr") or (flag == "nz" and has_han(word))):
            found = word
        n += 1
    # No name: a relative the clause opens with ("闺女在医大二院当护士长", "我哥在西藏
    # 当兵") is who the description is said of, by the word other memories use too.
    if found or not kin or not person:
        return found
    word = kin.group(1)  # "我哥" as written, so 表哥 is not asked for
    return "我" + word if len(word) == 1 else word


#: A relative's word inside another's (媳妇 in 儿媳妇, 姐 in 表姐, 妈 in 姨妈) or said
#: of another person (他儿子): not the speaker's relative.
NOT_ANOTHER = "(?<![他她儿孙表堂干继姑姨舅叔伯婶岳弟嫂])"


#: A relative of the speaker's, by the word a memory opens with: 闺女, 我哥, 我家老二.
KIN_WORDS = (
    r"(?:大|小|二)?(?:闺女|女儿|儿子|儿媳妇?|女婿|老婆|老公|媳妇|爱人|老伴|爸爸|妈妈|爸|妈|哥哥"
    r"|姐姐|弟弟|妹妹|哥|姐|弟|妹|爷爷|奶奶|外公|外婆|姥姥|姥爷|孙子|孙女|舅舅|姑姑|叔叔|阿姨"
    r"|表哥|表姐|表弟|表妹|堂哥|堂姐|堂弟|堂妹|公公|婆婆|岳父|岳母|老大|老二|老三)"
)
_KIN_OPENING = re.compile(
    r"\s*(?:我(?:的|家)?)?(" + KIN_WORDS + r")(?=[在是对有叫从去也都还就比今一住当做开考学上])"
)


def _sentence_end(text: str, at: int) -> int:
    m = _SENTENCE_END.search(text, at)
    return m.start() if m else len(text)


def _plain(name: str) -> Name:
    return Name(name, word_pattern(name))


def word_pattern(word: str) -> str:
    """A PostgreSQL regular expression that finds ``word`` in a memory's text: a
    Chinese one anywhere, another at the start of a word ("landlord" finds
    "landlord's"). Every character but a letter or digit is escaped."""
    escaped = re.sub(r"([^\w])", r"\\\1", word)
    return escaped if has_han(word) else "(^|[^[:alnum:]_])" + escaped


#: Who a fact may be of other than the speaker: a relative ("老公…", "我妈…"), him or her,
#: a pet.
_SOMEONE = re.compile(KIN_WORDS + r"(?![们司])|[他她]|[狗猫]")


def speaker_fact(text: str) -> bool:
    """Whether ``text``'s first clause names no one but the speaker: no relative, no
    him or her, no pet, no name (jieba's ``nr``: "对门老李", "小雨")."""
    first = re.split(r"[，,。；;！!？?]", text.strip(), maxsplit=1)[0]
    # (Who goes along is no holder: "跟老公去了深圳".)
    first = re.sub(r"(?:跟|和|同|陪|带着?)(?:我的?)?" + KIN_WORDS, "", re.sub(r"我们?", "", first))
    if _SOMEONE.search(first):
        return False
    return not any(flag == "nr" for _, flag in tagged(first))


__all__ = [
    "NOT_ANOTHER",
    "Name",
    "compared_with",
    "name_in",
    "names_given",
    "refers",
    "says_of",
    "sides",
    "speaker_fact",
    "word_pattern",
]
