"""One address or phone number in another's place: "email is jen@mailbox.org" / "reach
me at jkowal@fastmail.com"; "我的手机号是138 0013 8000" / "打我电话：159 1234 5678". A
person has one of each at a time unless the new text names a slot of its own ("Work
phone", "My husband's email", "第二紧急联系人"); one number written two ways ("+44 7700
900123", "07700900123") is one.

Pure functions, no I/O.
"""

from __future__ import annotations

import re

from memory_pg._segment import EN_STOPWORDS
from memory_pg.entities import has_han
from memory_pg.text.attributes import tagged
from memory_pg.text.subjects import KIN, RELATIVE, stem
from memory_pg.text.values import digits
from memory_pg.text.words import beyond, content

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
#: A second one said anywhere: "backup number", "备用手机", "第二紧急联系人".
_SECOND = re.compile(
    r"\b(?:second|another|backup|spare|alternate|also|too|as well)\b|备用|第二|另一个|另外|还有",
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


def _slot_words(text: str) -> set[str]:
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
        return {w for w in slot if not _kin(w)}  # (relatives: compared by _kin)
    clause = _CLAUSE.split(text[:value].rstrip(" :：-—"))[-1]
    words = [m.group(0).lower() for m in _EN_WORD.finditer(clause)]
    at = next((i for i, w in enumerate(words) if _contact_word(w)), len(words))
    for word in reversed(words[:at]):
        word = re.sub(r"['’]s$", "", word)
        if word in _NEUTRAL:
            continue
        if word in EN_STOPWORDS:
            break
        slot.add(stem(word))
    return {w for w in slot if not _kin(w)}


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


def _contact_scoped(old: str, new: str) -> bool:
    """Whether the new text names a slot of its own for the contact it gives, one the
    old text does not name: words that modify it ("Work phone", "My husband's email",
    "订阅邮件用的邮箱"), a second one ("第二紧急联系人"), or other words in its clause
    ("sent an email to hr@…", "快递员电话…"); not a reason said beside it ("IT
    migrated everyone, work mail is …", "公司统一换邮箱 我的改成…")."""
    if _SECOND.search(new) and not _SECOND.search(old):
        return True
    named = content(old) | {w.lower() for w in re.findall(r"[A-Za-z]+", old)}
    if any(w.lower() not in named and w not in old for w in _slot_words(new)):
        return True
    told = content(new) | {w.lower() for w in re.findall(r"[A-Za-z]+", new)}
    if any(w.lower() not in told and w not in new for w in _slot_words(old)):
        return True  # "Landlord's email: …" / "email me at …": the old one is another's
    given = " ".join(m.group(0).lower() for _n, s in SHAPES for m in s.finditer(new))
    extra = beyond(old, new, _value_clause(new)) - _CONTACT_WORDS - _NEUTRAL
    return any(w.lower() not in given for w in extra)  # (pieces of the value: "corp.example.com")


def _kin(text: str) -> set[str]:
    """The relatives a text names anywhere, one word each ("老妈", "妈" are one)."""
    return {RELATIVE.get(m.group(0).lower(), m.group(0).lower()) for m in KIN.finditer(text)}


def _plain(value: str) -> str:
    """A phone number by its last digits, an address in lower case."""
    # (The last eight digits: "+44 7700 900123" and "07700900123" are one number.)
    return value.lower() if "@" in value else digits(value)[-8:]


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


__all__ = ["SHAPES", "swapped"]
