"""One address or phone number in another's place: "email is jen@mailbox.org" / "reach
me at jkowal@fastmail.com"; "我的手机号是138 0013 8000" / "打我电话：159 1234 5678". A
person has one of each at a time unless the new text names a slot of its own ("Work
phone", "My husband's email", "第二紧急联系人"); one number written two ways ("+44 7700
900123", "07700900123") is one.

Pure functions, no I/O.
"""

from __future__ import annotations

import re

from memory_pg.text.subjects import KIN, RELATIVE
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
    "reach call text email e-mail mail phone number cell mobile contact address "
    "电话 手机 手机号 号码 邮箱 联系 打我 找我 发到 号是".split()
)


def _contact_scoped(old: str, new: str) -> bool:
    """Whether the new text's first clause names a word the old one does not, beyond
    how to reach someone: a slot of its own ("Work phone", "My husband's email", "第二
    紧急联系人", "订阅邮件用的邮箱")."""
    clause = re.split(r"[，,;；]", new, maxsplit=1)[0]
    extra = beyond(old, new, clause) - _CONTACT_WORDS
    return any(not SHAPES[0][1].search(w) and not SHAPES[1][1].search(w) for w in extra)


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
