"""One address or phone number in another's place: "email is jen@mailbox.org" / "reach
me at jkowal@fastmail.com"; "我的手机号是138 0013 8000" / "打我电话：159 1234 5678". A
person has one of each at a time unless the new text names a slot of its own ("Work
phone", "My husband's email", "第二紧急联系人"); one number written two ways ("+44 7700
900123", "07700900123") is one.

Pure functions, no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memory_pg._segment import EN_STOPWORDS, ordered_words
from memory_pg.entities import has_han
from memory_pg.text.attributes import tagged
from memory_pg.text.subjects import KIN, RELATIVE, compound, stem
from memory_pg.text.values import digits
from memory_pg.text.words import beyond

#: Values of a recognisable shape that a person has one of at a time: a phone
#: number, an e-mail address. Two texts giving one of the same shape, with nothing
#: else in the old one's subject than the attribute's own words ("My cell is 555-…" /
#: "New number: 555-…"), speak of one subject.
SHAPES = (
    ("phone", re.compile(r"(?<![\d-])(?:\+?\d[\d -]{5,}\d)(?![\d-])")),
    ("email", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+\.[A-Za-z0-9.]+")),
)


#: Words that only say how to reach someone, naming no slot of their own.
_CONTACT_WORDS = frozenset(
    "reach call text email e-mail mail phone number cell mobile contact address line "
    "电话 手机 手机号 号码 号 邮箱 微信 联系 打我 找我 发到 号是".split()
)
#: Words before a contact word that name no slot: "my new number", "新号", "换号".
_NEUTRAL = frozenset("my our the new current updated main 我 我的 新 现 现在 换 改 的".split())
#: A second one said anywhere: "backup number", "备用手机", "第二紧急联系人", "小号";
#: or one for a while: "this week I'm at a hotel", "出差这周用酒店座机".
_SECOND = re.compile(
    r"\b(?:second|another|backup|spare|alternate|burner|also|too|as well|landline)\b|"
    r"\b(?:this week|today|tonight|for now|while I'?m)\b|"
    r"备用|第二|另一?[个部台张支]|另外|还有|小号|副卡|座机|这周|这几天|今天|出差|暂时|临时|"
    # One for a use: "only for newsletters", "只用来收订阅".
    r"\b(?:only|just) for\b|只用来|专门用来|专门"
    # Someone else's: "Her new number is…", "他的新号…".
    r"|\b(?:his|her|their)\s+(?:new\s+|old\s+)?(?:number|phone|email|cell|mobile|address)\b"
    r"|[他她]的?新?(?:号|电话|手机|邮箱)",
    re.IGNORECASE,
)
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_CLAUSE = re.compile(r"[,.;:!?]\s")


def _contact_word(word: str) -> bool:
    """A word that names a contact slot, or one of them with a neutral word before it
    ("新号", "换号", "手机号码")."""
    w = word.lower()
    if w in _CONTACT_WORDS:
        return True
    return any(
        w.endswith(c) and (w[: -len(c)] in _NEUTRAL or _contact_word(w[: -len(c)]))
        for c in _CONTACT_WORDS
        if has_han(c) and len(w) > len(c)
    )


@lru_cache(maxsize=4096)
def _slot_words(text: str) -> frozenset[str]:
    """The words that name which contact ``text`` gives: those that modify its first
    contact word or value ("Work phone", "my wife's email", "订阅邮件用的邮箱"), not
    the clause around it ("IT migrated everyone", "公司统一换邮箱": a reason)."""
    value = min((m.start() for _n, s in SHAPES if (m := s.search(text))), default=len(text))
    slot: set[str] = set()
    if has_han(text[:value]):
        tags = tagged(text[:value])
        at = next((i for i, (w, _f) in enumerate(tags) if _contact_word(w)), len(tags))
        for i in range(at - 1, -1, -1):
            word, flag = tags[i]
            following = tags[i + 1][0] if i + 1 < len(tags) else ""
            if word in _NEUTRAL or flag.startswith("r"):
                if word == "的":
                    continue
                break
            if flag[0] in "nab" or flag == "vn":
                slot.add(word)
                continue
            if following == "的":
                continue  # "订阅邮件用的邮箱": a use before 的 is the slot's
            break
        return frozenset(w for w in slot if not _kin(w))  # (relatives: compared by _kin)
    clause = _CLAUSE.split(text[:value].rstrip(" :：-—"))[-1]
    words = [re.sub(r"['’]s$", "", m.group(0).lower()) for m in _EN_WORD.finditer(clause)]
    named = next((i for i, w in enumerate(words) if _contact_word(w)), None)
    if named is None:
        return frozenset()  # a value after a verb ("use jake@…"): no slot named
    for word in reversed(words[:named]):
        if word in ("my", "our", "the", "a", "an", "your"):
            break  # where the noun phrase begins: "…so my email changed"
        if word in _NEUTRAL:
            continue
        if word in EN_STOPWORDS:
            break
        slot.add(stem(word))
    return frozenset(w for w in slot if not _kin(w))


def _value_clause(text: str) -> str:
    """The clause of ``text`` that holds its first address or number (in Chinese chat
    a space between words ends a clause too: "换号了 新号555-2087 旧的停机了")."""
    found = [m for _n, s in SHAPES if (m := s.search(text))]
    if not found:
        return text
    value = min(found, key=lambda m: m.start())
    marks = r"[，,;；。！!？?]|\s+(?=\S)" if has_han(text) else r"[,;!?]\s|\.\s"
    start = max((m.end() for m in re.finditer(marks, text[: value.start()])), default=0)
    end = next((m.start() for m in re.finditer(marks, text[value.end() :])), None)
    return text[start : len(text) if end is None else value.end() + end]


@lru_cache(maxsize=4096)
def _said(text: str) -> frozenset[str]:
    """The words of ``text`` as written, English ones by their stem (not the pieces a
    search reads inside a word: "工作日" holds no "工作")."""
    return frozenset(stem(re.sub(r"['’]s$", "", w)) for w in ordered_words(text))


def _contact_scoped(old: str, new: str) -> bool:
    """Whether the new text names a slot of its own for the contact it gives, one the
    old text does not name: words that modify it ("Work phone", "My husband's email",
    "订阅邮件用的邮箱"), a second one ("第二紧急联系人"), or other words in its clause
    ("sent an email to hr@…", "快递员电话…"); not a reason said beside it ("IT
    migrated everyone, work mail is …", "公司统一换邮箱 我的改成…")."""
    if _SECOND.search(new) and not _SECOND.search(old):
        return True
    if any(w.lower() not in _said(old) for w in _slot_words(new)):
        return True  # ("工作邮箱" beside "工作日…": 工作日 is no 工作)
    if any(w.lower() not in _said(new) for w in _slot_words(old)):
        return True  # "Landlord's email: …" / "email me at …": the old one is another's
    if _beside_value(new, old):
        return True  # "Ms. Ortega from the leasing office can be reached at …": hers
    return _beside_value(old, new)


def _beside_value(old: str, new: str) -> bool:
    """Whether the clause of ``new`` that gives its contact names a word ``old`` does
    not, beside the value and the words of reaching someone ("sent an email to hr@…",
    "快递员电话…")."""
    given = " ".join(m.group(0).lower() for _n, s in SHAPES for m in s.finditer(new))
    extra = beyond(old, new, _value_clause(new)) - _CONTACT_WORDS - _NEUTRAL
    # (Pieces of the value, "corp.example.com"; relatives: compared by _kin.)
    return any(w.lower() not in given and not _kin(w) for w in extra)


def _kin(text: str) -> set[str]:
    """The relatives a text names anywhere, one word each ("老妈", "妈" are one; "干妈",
    "mother-in-law", "ex-wife" are others: :func:`subjects.compound`)."""
    return {
        RELATIVE.get(word, word)
        for m in KIN.finditer(text)
        if (word := compound(text, m.start(), m.group(0).lower()))
    }


def _plain(value: str) -> str:
    """A phone number by its last digits, an address in lower case."""
    # (The last eight digits: "+44 7700 900123" and "07700900123" are one number.)
    return value.lower() if "@" in value else digits(value)[-8:]


def other_slot(old: str, new: str) -> bool:
    """Whether both texts give an address or number of one shape and ``new`` says it is
    a second one, one for a while or for a use, or someone else's ("Her new number
    is…", "New email: …, only for newsletters", "出差这周用酒店座机"), or names a slot
    of its own before it ("Work phone"): whatever else it says, it replaces no contact."""
    if not any(shape.search(old) and shape.search(new) for _n, shape in SHAPES):
        return False
    if _SECOND.search(new) and not _SECOND.search(old):
        return True
    return any(w.lower() not in _said(old) for w in _slot_words(new))


def swapped(old: str, new: str) -> bool:
    """Whether ``new`` gives one address or number of a shape where ``old`` gives
    another one, and names nothing of a slot of its own."""
    if re.search(r"[?？]|吗", new) or _kin(old) != _kin(new):
        return False  # a question; a relative's number ("是我老公的", "（我妈）")
    for _name, shape in SHAPES:
        a = {_plain(v) for v in shape.findall(old)}
        b = {_plain(v) for v in shape.findall(new)}
        if (
            len(a) == len(b) == 1
            and not any(x in y or y in x for x in a for y in b)
            and not _contact_scoped(old, new)
        ):
            return True
    return False


__all__ = ["SHAPES", "other_slot", "swapped"]
