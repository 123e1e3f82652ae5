"""Two things of one kind: one noun with another word before it ("测试环境" /
"生产环境", "Server A" / "Server B", "the deadline for the design doc" / "the API
spec deadline"), a scope of its own ("For my hobby project …"), or another part of
the day, the week or the year ("every morning" / "my evening drink"). The change
decision (:mod:`memory_pg.text.changes`) keeps both facts of two such things.

Pure functions, no I/O.
"""

from __future__ import annotations

import re

from memory_pg._segment import in_dictionary, segment, tells
from memory_pg.entities import has_han
from memory_pg.text import synonyms
from memory_pg.text.aspects import DAY_PARTS_EN, DAY_PARTS_ZH
from memory_pg.text.attributes import tagged
from memory_pg.text.subjects import FUNCTION, VERB, names, ordered_zone, stem

#: Parts of a day, a week, a year: a fact said of one is not said of another.
_PARTS = tuple(
    re.compile(p)
    for p in (
        rf"\b({DAY_PARTS_EN})s?\b|({DAY_PARTS_ZH})",
        r"\b(weekday|weekend)s?\b|(工作日|周末)",
        # A season after a word of time ("this summer"), not "Spring Boot" or "a fall".
        r"\b(?:in|this|every|next|last|the)\s+(summer|winter|spring|autumn|fall)\b|(夏天|冬天|春天|秋天)",
    )
)
#: A purpose put before the speaker: "For my hobby project I switched to SQLite". The
#: new fact holds there, which the old one may not name. (A Chinese topic before 我,
#: "代码仓库我们迁到GitHub了", is as often the old fact's own subject: not read.)
_SCOPE = re.compile(
    r"^\s*for\s+(?:my|our|the|a|an|his|her)?\s*([a-z][a-z -]{2,30}?)\s*(?:,|(?=\s(?:i|we)\b))",
    re.IGNORECASE,
)


#: A group or an undertaking a fact is said of, anywhere in the text: "for the payments
#: squad", "on the side project", "the sister team's".
_GROUP_SCOPE = re.compile(
    r"\b(?:for|on|in)\s+(?:my|our|the|a|an|his|her|their)\s+(?:[a-z-]+\s+){0,2}"
    r"(?:squad|team|project|client|account|hackathon)\b|\b[a-z-]+\s+team['’]s\b",
    re.IGNORECASE,
)
_GROUP_WORDS = frozenset(
    "for on in my our the a an his her their squad team team's team’s project".split()
)


def other_part(old: str, new: str) -> bool:
    """Whether each text names its own part of a day, a week or a year ("green tea
    every morning" / "my evening drink", "工作日" / "周末"): two habits. (Where the
    value changed is a time, the part is the value: the caller asks only otherwise.)"""
    for parts in _PARTS:
        a, b = ({m.group(1) or m.group(2) for m in parts.finditer(t.lower())} for t in (old, new))
        if a and b and not a & b:
            return True
    return False


def other_scope(old: str, new: str) -> bool:
    """Whether ``new`` puts its fact in a scope of its own that ``old`` does not name:
    "I use Postgres at work" / "For my hobby project I switched to SQLite"; "Our tech
    lead is Marcus" / "marcus took over as tech lead for the payments squad", "the
    sister team's scrum master…"."""
    m = _SCOPE.match(new)
    words = [stem(w) for w in m.group(1).split() if w.lower() not in FUNCTION] if m else []
    if words and not any(names(old, w) for w in words):
        return True
    for m in _GROUP_SCOPE.finditer(new):
        named = [stem(w) for w in m.group(0).split() if w.lower() not in _GROUP_WORDS]
        if named and not any(names(old, w) for w in named):
            return True
    return False


def other_subject(old: str, new: str, filler: frozenset[str] = frozenset()) -> bool:
    """Whether both texts name one noun with a different word next to it: two things
    of one kind ("测试环境" / "生产环境", "Server A" / "Server B", "Project Atlas" /
    "Project Phoenix", "marketing budget" / "hiring budget", "A项目" / "B项目", "the
    deadline for the design doc" / "the API spec deadline"). The word before the
    noun is read in both texts' subjects (and anywhere in Chinese, where a modifier
    always comes first: "测试环境" / "生产环境的数据库"); the word after it only
    where both are names. A word on one side only ("the team offsite" / "the offsite
    venue") describes, and is no second thing."""
    if has_han(old) and has_han(new) and _zh_two_of_a_kind(old, new, filler):
        return True
    a = [w for w in _heads(ordered_zone(old)) if w not in filler]
    after = _sequence(new, filler)
    for i, head in enumerate(a):
        y = _word_before(new, head, filler)
        x = a[i - 1] if i > 0 else _modifier_after(old, head)
        if x and y and x != y and not names(new, x) and not names(old, y):
            if not {x, y} & _NOT_KINDS:  # "the revised budget" is the budget, revised
                return True
        if i + 1 < len(a) and head in after and after.index(head) + 1 < len(after):
            x, y = a[i + 1], after[after.index(head) + 1]
            if x != y and _is_name(x, old) and _is_name(y, new) and not names(new, x):
                return True
    return False


#: Words before a noun that say which state of it, not which of its kind.
_NOT_KINDS = frozenset(
    "revis revised updat updated current latest final original initial overall total "
    "actual official new old 新 旧 最新 原来 现在".split()
)


def _heads(words: list[str]) -> list[str]:
    """``words`` with each Chinese compound whose tail is a word of its own cut before
    it: "测试环境" is 测试 and 环境, so that "生产环境" names the same noun."""
    out: list[str] = []
    for word in words:
        cut = next(
            (k for k in range(1, len(word) - 1) if has_han(word) and in_dictionary(word[k:])),
            0,
        )
        out.extend((word[:cut], word[cut:]) if cut else (word,))
    return out


def _zh_two_of_a_kind(old: str, new: str, filler: frozenset[str]) -> bool:
    """Whether two Chinese texts open with one noun each given another word before it
    the other text does not hold: "预发环境的数据库" / "开发环境…", "A组的组长" /
    "B组的组长" (read from the words, whatever the tagger takes them for; "存款目标" /
    "存钱目标", two words of one first character, and "最爱的歌手" / "最喜欢的歌手"
    are one thing)."""
    a, b = _opening(old), _opening(new)
    for head, before in a.items():
        other = b.get(head)
        if not (before and other) or before == other or {before, other} & filler:
            continue
        if before in new or other in old or before[0] == other[0] or "不" in before + other:
            continue  # "存款目标" / "存钱目标": one thing; "不住宿舍了": a verb, negated
        return not synonyms.same_thing(before, other)
    return False


def _opening(text: str) -> dict[str, str]:
    """The nouns of a Chinese text's first eight characters, each with the word before
    it that can tell one thing of its kind from another: a letter or a number before a
    measure word or a noun ("A组", "B项目"), a noun ("测试环境的"), or a verb glued to
    the noun ("预发环境", "登录模块"). Not a pronoun, a time, a name before its title
    ("刘医生"), or what stands before "的" and is no noun ("最爱的歌手")."""
    out: dict[str, str] = {}
    at, before, flag_before, glued = 0, "", "", False
    for word, flag in tagged(text.lstrip()):
        if at >= 8 or not word.strip() or re.fullmatch(r"[，,。；;：:！!？?]", word):
            break
        at += len(word)
        if word == "的":
            glued = False
            continue
        letter = re.fullmatch(r"[A-Za-z]{1,3}|[A-Za-z]\d", before) is not None
        noun = (flag[:1] == "n" and flag != "nr") or (flag == "q" and letter)
        if noun and has_han(word) and before and word not in out:
            nominal = flag_before[:1] == "n" or flag_before in ("vn", "eng") or letter
            if nominal or (flag_before == "v" and glued):
                out[word] = before
        telling = re.fullmatch(r"[A-Za-z]{1,3}|[A-Za-z]\d", word) or (
            len(word) > 1 and has_han(word) and flag not in ("nr", "t", "r", "m", "d")
        )
        before = word if telling and word not in _PRONOUNS else ""
        flag_before, glued = flag, True
    return out


_PRONOUNS = frozenset("我 我们 你 你们 他 她 他们 她们 它 咱们 咱 大家 自己".split())


#: A noun's modifier said after it in English: "the deadline for the design doc".
_OF = re.compile(r"\s+(?:for|of)\s+(?:the|my|our|a|an|this|that)?\s*([a-z]+(?:\s+[a-z]+)?)", re.I)


def _modifier_after(text: str, head: str) -> str:
    """The last word of what ``head`` is said to be of or for, in an English text:
    "doc" in "The deadline for the design doc is…"."""
    if has_han(text):
        return ""
    m = re.search(r"\b" + re.escape(head) + r"\w*" + _OF.pattern, text, re.IGNORECASE)
    if m is None:
        return ""
    words = [w for w in m.group(1).split() if w.lower() not in FUNCTION]
    words = words[: next((i for i, w in enumerate(words) if VERB.fullmatch(w)), len(words))]
    return stem(words[-1].lower()) if words else ""


def _word_before(text: str, head: str, filler: frozenset[str]) -> str:
    """The noun right before ``head`` in ``text``, if one is: in the subject of an
    English text ("the hiring budget"), anywhere in a Chinese one ("生产环境")."""

    def is_head(word: str) -> bool:  # "DB" is the head "database" by another word
        return word == head or bool(synonyms.same_thing(word, head))

    if not has_han(text):
        b = [w for w in ordered_zone(text) if w not in filler]
        at = next((i for i, w in enumerate(b) if is_head(w)), -1)
        return b[at - 1] if at > 0 else ""
    words = [(w, f) for w, f in tagged(text) if w.strip()]
    for i, (word, _) in enumerate(words):
        if len(word) > len(head) + 1 and word.endswith(head) and has_han(head):
            return word[: -len(head)]  # "生产环境" is the 环境 of 生产; "刘医生" is a name
        if is_head(word.lower()) and i > 0:
            prev, flag = words[i - 1]
            # "B项目"; a number before a unit is a value ("70公斤", "163邮箱"), no kind
            letter = re.fullmatch(r"[A-Za-z]{1,3}|[A-Za-z]\d", prev) is not None
            if flag == "nr":
                return ""  # "刘医生": a name and its title, no kind of doctor
            return prev.lower() if flag[:1] == "n" or flag in ("vn", "eng") or letter else ""
    return ""


def _sequence(text: str, filler: frozenset[str]) -> list[str]:
    """The words of ``text`` in order that can name or qualify a thing: Chinese
    nouns (not verbs, particles, pronouns, numbers or times);
    English words that are not function words."""
    if has_han(text):
        return [
            w.lower()
            for w, flag in tagged(text)
            if (flag[:1] in ("n", "e") or flag == "vn") and w not in filler and w.strip()
        ]
    return [stem(w) for w in segment(text).words if w not in FUNCTION and w not in filler]


def _is_name(word: str, text: str) -> bool:
    """Whether ``word`` stands in ``text`` as a name: capitalised, a digit, or one
    letter ("Server A", "Project Atlas", "Phase 2")."""
    m = re.search(r"(?<![\w])(" + re.escape(word) + r")", text, re.IGNORECASE)
    if m is None:
        return False
    found = m.group(1)
    return found[:1].isupper() or found[:1].isdigit() or len(found) == 1


def heads_shared(
    old: str, new: str, content_old: frozenset[str], content_new: frozenset[str]
) -> frozenset[str]:
    """The Chinese words of ``new`` that end a longer word of ``old`` ("中台" of "数据中台"):
    one of two characters or more anywhere, one of one character where it opens
    ``new`` ("酒戒了" beside "我每晚都喝点白酒": the topic put first)."""
    if not (has_han(old) and has_han(new)):
        return frozenset()
    longer = [w for w in content_old if has_han(w) and len(w) > 1]
    opening = re.match(r"[\u4e00-\u9fff]", new.lstrip())
    out = {
        w
        for w in content_new
        if has_han(w) and w not in longer and any(o.endswith(w) for o in longer)
    }
    first = opening.group(0) if opening else ""
    # Not a character found in thousands of words (家, 人): "家里刚装修完" is no 我家;
    # nor one that opens a word ("酒店改订到…", "琴房搬到…"): jieba's first word is it,
    # or no word of its dictionary ("酒戒了" is cut 酒戒).
    token = next((w for w, _ in tagged(new.lstrip()) if w.strip()), "")
    alone = token == first or (token.startswith(first) and not in_dictionary(token))
    if first and alone and tells(first) and any(o.endswith(first) for o in longer):
        if re.match(re.escape(first) + r"(?![\u4e00-\u9fff]{0,1}[的])", new.lstrip()):
            out.add(first)
    return frozenset(out)


__all__ = ["heads_shared", "other_part", "other_scope", "other_subject"]
