"""One frame, another value: a statement said again with the words around its value
the same and the value another ("Team size: 9 engineers" / "The team is 12
engineers", "公司在中关村" / "我们公司在西二旗", "Monthly grocery budget is £400" /
"Grocery budget per month: £320").

What a text says is split into its frame (the words it is about: content words, by
stem and by concept) and its values (numbers with their unit, names of people,
places, organisations and products, addresses). Two short statements of one frame
whose values are all different, of one kind, say one thing twice: the newer one in
the older one's place. The new text may not name, beside its value, a word the old
one lacks ("My rent is…" / "My share of the rent is…", "左眼500度" / "右眼450度"),
date itself to an occasion ("last year", "去年"), add ("too", "还有"), or speak of a
key that holds several values ("Reading list", "Languages I speak"). Nothing but
the words decides it: no list of phrasings.

Pure functions, no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memory_pg.entities import has_han
from memory_pg.text import synonyms
from memory_pg.text.attributes import tagged
from memory_pg.text.concepts import concept_of
from memory_pg.text.contacts import SHAPES
from memory_pg.text.restated import added, several
from memory_pg.text.values import numbers
from memory_pg.text.words import content, values

#: jieba's tags of names, by kind: person, place, organisation, other.
_NAME_KINDS = {"nr": "person", "nrfg": "person", "nrt": "person", "ns": "place", "nt": "org"}
_OTHER_NAMES = frozenset({"nz", "eng"})
#: Long texts tell stories; a frame is read from a statement.
_LONGEST = 120
#: Words of time that date a fact to an occasion of its own ("last year", "去年").
_OCCASION = re.compile(
    r"\b(?:last|next|this) (?:year|month|week|quarter|semester|season|time)\b|"
    r"\byesterday\b|\btomorrow\b|\bthe (?:year|month|week) before\b|\bin (?:19|20)\d\d\b|"
    r"去年|明年|前年|今年|[上下这]个?月|本月|[上下这本]周|昨天|明天|今天|[上下这]次|这回|[上下]学期|\d{4}年",
    re.IGNORECASE,
)
#: Words that give a value's period or standing, not another slot ("per month", "a yr").
_PERIOD = frozenset(
    "per year yr month mo week day annual annually monthly weekly daily current currently "
    "total overall usual usually 目前 当前 每月 每个月 每年 每周 每天 平时 一个月 一年".split()
)
#: A unit after a number, or a currency before it.
_UNIT_AFTER = re.compile(r"^\s*([A-Za-z]+|[\u4e00-\u9fff])")
_MONEY = re.compile(r"[$£€¥]|元|块|刀|bucks?\b|dollars?\b|usd\b|rmb\b", re.IGNORECASE)
_MULTIPLIER = frozenset({"k", "m", "万", "千", "百", "亿", "w"})
_CLAUSE = re.compile(r"[，,。;；!！?？\n]|\s[-—–]\s|(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")


def _units(text: str) -> frozenset[str]:
    """The units a text gives its numbers ("kg", "元"; money as "$")."""
    found = set()
    for m in re.finditer(r"\d[\d,.]*|[零〇一二两三四五六七八九十百千万]{2,}", text):
        after = _UNIT_AFTER.match(text[m.end() :])
        unit = after.group(1).lower() if after else ""
        if unit in _MULTIPLIER:
            rest = _UNIT_AFTER.match(text[m.end() + len(after.group(0)) :]) if after else None
            unit = rest.group(1).lower() if rest else ""
        before = text[max(0, m.start() - 2) : m.start()]
        if _MONEY.search(before) or _MONEY.match(unit) or unit in ("元", "块"):
            unit = "$"
        if unit and not re.fullmatch(r"[的了是吧啊呢左右多个]", unit):
            found.add(unit)
    return frozenset(found)


@lru_cache(maxsize=4096)
def parts(text: str) -> tuple[frozenset[str], dict[str, str]]:
    """``(frame, values)`` of ``text``: the words it is about, and each value (in lower
    case) with its kind ("number", "person", "place", "org", "name", "email", "phone").

    Example:
        >>> parts("我们公司在西二旗")
        (frozenset({'公司'}), {'西二旗': 'place'})
    """
    found: dict[str, str] = {}
    rest = text
    for kind, shape in SHAPES:
        for m in shape.finditer(text):
            found[m.group(0).lower()] = kind
            rest = rest.replace(m.group(0), " ")
    if has_han(rest):
        kept = []
        words = tagged(rest)
        for i, (word, flag) in enumerate(words):
            w = word.strip().lower()
            if w in ("小", "老", "阿") and i + 1 < len(words) and words[i + 1][1] == "nr":
                found[w + words[i + 1][0]] = "person"  # "小周", "老王": jieba tags the 周
            if len(w) > 1 and not re.search(r"\d", w) and flag in (*_NAME_KINDS, *_OTHER_NAMES):
                found[w] = _NAME_KINDS.get(flag, "name")
            # Numbers from numerals and digits only: not the 一 of 一般, the 二 of 西二旗.
            kept.append(word if flag in ("m", "eng", "x") or re.search(r"\d", word) else " ")
        said = numbers("".join(kept))
        if not re.search(r"1(?!\d)", rest):
            said -= {1.0}  # "一个月", "一天": a count of one is a word, not the value
    else:
        said = numbers(rest)
    for name in values(rest):
        if re.search("[a-z]", name) and not re.search(r"\d", name):
            found.setdefault(name, "name")
    for n in said:
        found.setdefault(f"{n:g}", "number")
    frame = {
        w
        for w in content(text)
        if not re.search(r"\d", w)
        and w.lower() not in found
        and not any(w in v or v in w for v in found)
    }
    return frozenset(frame), found


def _through_value(text: str, value: str) -> str:
    """``text`` from its start through the clause that gives ``value``: the key and
    the value, not what is said after them ("…, decent for this city")."""
    at = text.lower().find(value)
    if at < 0:
        return text
    end = next((m.start() + at for m in _CLAUSE.finditer(text[at:])), len(text))
    return text[:end]


def _one_kind(a: dict[str, str], b: dict[str, str]) -> bool:
    """Whether the values of two texts are of one kind: numbers and numbers, names and
    names (a person and a place are two attributes: "老板叫张伟" / "老板是上海人")."""
    kinds_a, kinds_b = set(a.values()), set(b.values())
    numeric_a, numeric_b = kinds_a == {"number"}, kinds_b == {"number"}
    if numeric_a or numeric_b:
        return numeric_a and numeric_b and len(a) == len(b) == 1
    if kinds_a & {"email", "phone"} or kinds_b & {"email", "phone"}:
        return False  # (addresses and numbers: :mod:`.contacts`)
    if "number" in kinds_a | kinds_b:
        return False  # "Lawn service is GreenStripe, $60 per visit": several values
    known_a, known_b = kinds_a - {"name"}, kinds_b - {"name"}
    return not (known_a and known_b and not known_a & known_b)


def reframed(old: str, new: str) -> str:
    """The words of the frame ``old`` and ``new`` share, where ``new`` says it again
    with other values of one kind and nothing of its own beside them; or "".

    Example:
        >>> reframed("Team size: 9 engineers", "The team is 12 engineers.")
        'engineer team'
        >>> reframed("My rent is $2,100.", "My share of the rent is $1,050.")
        ''
    """
    if len(old) > _LONGEST or len(new) > _LONGEST or has_han(old) != has_han(new):
        return ""
    if _OCCASION.search(new) or _OCCASION.search(old) or added(new):
        return ""  # "去年去过冰岛" / "前年去过新西兰"; "Spotify too"
    frame_old, values_old = parts(old)
    frame_new, values_new = parts(new)
    if not values_old or not values_new or not _one_kind(values_old, values_new):
        return ""
    if any(a in b or b in a for a in values_old for b in values_new):
        return ""  # a value said again ("李大夫" / "李建华大夫"): the same one
    if "number" in values_old.values():
        units_old, units_new = _units(old), _units(new)
        if units_old and units_new and units_old != units_new:
            return ""  # "3 hours" / "180 minutes", "$" / "kg": two scales or two things
    if several(old) or several(new):
        return ""  # "Reading list: Dune" / "Reading list: The Overstory": one of many
    named_new = {"§" + c for w in frame_new if (c := concept_of(w))} | frame_new
    shared = frame_old & frame_new | synonyms.bridged(old, new)
    missing = {
        w
        for w in frame_old - frame_new - _PERIOD
        if not w.startswith("§") and "§" + (concept_of(w) or "-") not in named_new
    }
    if re.search(r"(\w+)['’]s\b", new) and any(
        m.group(1).lower() in shared for m in re.finditer(r"(\w+)['’]s\b", new)
    ):
        return ""  # "my manager is Dana" / "my manager's manager is Omar": another's
    clause = _through_value(new, next(iter(values_new)))
    named_old = {"§" + c for w in frame_old if (c := concept_of(w))} | frame_old
    extra = {
        w
        for w in content(clause) - frame_old - _PERIOD
        if w in frame_new
        and "§" + (concept_of(w) or "-") not in named_old
        and not w.startswith("§")
        and not any(o in w for o in frame_old if len(o) > 1)  # "我妈" / "我妈家"
    }
    kept = {w for w in shared if not w.startswith("§") or w[1:] not in shared}
    if not kept or extra or len(missing) > 1 or (missing and len(kept) < 2):
        return ""
    return " ".join(sorted(w.lstrip("§~") for w in kept))


__all__ = ["parts", "reframed"]
