"""Words for the same thing, in Chinese and English: "预算" and "经费", "截止日期" and
"DDL", "毛笔字" and "书法", "退休金" and "养老钱". A question asked weeks later uses
the asker's own word, not the one the memory was written with.

The table (``memory_pg/data/synonyms.tsv``) was written as a thesaurus of
everyday personal and work life, not from any question or sentence of the
project's sets: each group is one referent, never a topic ("高血压" is no synonym
of "病"). A query that names a word of a group also asks the group's other words,
as one full-text term per script (:func:`mate_terms`): a memory that says it with
another word of the group is found by it as by the asker's word. The change
decision reads the same table (:func:`same_thing`): "发布推迟到月底了" speaks of
the "上线" of "项目上线时间定在 5 月 10 日".

Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

from memory_pg._segment import in_dictionary, segment, whole_words


def _table() -> tuple[tuple[str, ...], ...]:
    """The groups of ``data/synonyms.tsv``: each its id, then its words."""
    text = resources.files("memory_pg").joinpath("data", "synonyms.tsv").read_text("utf-8")
    return tuple(
        (group, *words.split(" | "))
        for group, _, words in (
            line.partition("\t") for line in text.splitlines() if line and line[0] != "#"
        )
    )


#: One group per referent: its id, then its words.
SYNONYMS = _table()

#: Off switch for measuring: a query asks only its own words.
ON = True

_HAN = re.compile(r"[\u4e00-\u9fff]")


def _words() -> dict[str, str]:
    """Each word of the table, lower-case, to its group's id."""
    return {w.lower(): group[0] for group in SYNONYMS for w in group[1:]}


_GROUP_OF = _words()
_MEMBERS = {group[0]: tuple(dict.fromkeys(w.lower() for w in group[1:])) for group in SYNONYMS}


def _pattern(word: str) -> str:
    """A word as a whole word, an English one also in the plural ("GPs", "landlords")."""
    # Not "cares" for "car": a short word takes a plural only in capitals ("GPs").
    plural = "" if _HAN.search(word) or (len(word) < 4 and not word.isupper()) else r"(?:s|es)?"
    return (
        r"(?<![A-Za-z0-9])"
        + re.escape(word).replace(r"\ ", r"[\s-]+")
        + plural
        + r"(?![A-Za-z0-9])"
    )


def _finder(words: list[str], flags: int) -> re.Pattern[str]:
    """One alternation of ``words``, longest first ("due date" before "date")."""
    ordered = sorted(words, key=len, reverse=True)
    return re.compile("|".join(_pattern(w) for w in ordered) or r"(?!)", flags)


@lru_cache(maxsize=1)
def _finders() -> tuple[re.Pattern[str], ...]:
    """What finds the table's words other than by jieba's cut, built on first use (not
    at import; jieba's dictionary loads then): an abbreviation in capitals only as
    written ("HR", not "hr" for hours), another English word in any case, and a
    Chinese word jieba's dictionary does not hold ("养老钱") as written."""
    english = [w for g in SYNONYMS for w in g[1:] if not _HAN.search(w)]
    unknown = [w for g in SYNONYMS for w in g[1:] if _HAN.search(w) and not in_dictionary(w)]
    return (
        _finder([w for w in english if w.isupper()], 0),
        _finder([w for w in english if not w.isupper()], re.IGNORECASE),
        _finder(unknown, 0),
    )


def named(text: str) -> Mapping[str, frozenset[str]]:
    """The groups ``text`` names, each with the words of it that ``text`` holds: a
    Chinese word of jieba's dictionary where jieba cuts the text into it or into a
    compound it ends ("科研经费"; "太太" is not in "老太太", "发布" not in "发布会"),
    another word as a whole word. Nothing when :data:`ON` is off."""
    return _named(text) if ON else MappingProxyType({})


@lru_cache(maxsize=4096)
def _named(text: str) -> Mapping[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    said = [m.group() for finder in _finders() for m in finder.finditer(text)]
    for token in whole_words(text):
        if _HAN.search(token):
            said.append(token)
            # A compound ends with its head: "科研经费" is an 经费, "老太太" no 太太.
            said += [token[i:] for i in range(1, len(token) - 1) if token[:i] not in "老小"]
    for word in said:
        key = re.sub(r"[\s-]+", " ", word.lower())
        group = _GROUP_OF.get(key) or _GROUP_OF.get(word.lower())
        if not group and not _HAN.search(key):  # "GPs" is a GP, "bosses" bosses
            key = next(
                (
                    key[: -len(e)]
                    for e in ("s", "es")
                    if (len(key) - len(e) >= 4 or word[: -len(e)].isupper())
                    and _GROUP_OF.get(key[: -len(e)])
                ),
                key,
            )
            group = _GROUP_OF.get(key)
        if group:
            found.setdefault(group, set()).add(key)
    return MappingProxyType({g: frozenset(ws) for g, ws in found.items()})


def same_thing(a: str, b: str) -> str:
    """The group both words name (each a word as written in a text), or ""."""
    ga, gb = _GROUP_OF.get(a.lower()), _GROUP_OF.get(b.lower())
    return ga if ga and ga == gb else ""


def mates(word: str) -> tuple[str, ...]:
    """The other words of ``word``'s group in its own script ("媳妇" → 老婆, 妻子 …),
    or none when :data:`ON` is off."""
    group = _GROUP_OF.get(word.lower()) if ON else None
    han = bool(_HAN.search(word))
    return tuple(
        w
        for w in _MEMBERS.get(group or "", ())
        if w != word.lower() and bool(_HAN.search(w)) == han
    )


def bridged(a: str, b: str) -> frozenset[str]:
    """``"~"`` and the id of each group two texts name by different words only
    ("预算" / "经费"): one thing, which the texts' words alone do not share."""
    one, other = named(a), named(b)
    return frozenset("~" + g for g in one.keys() & other.keys() if not one[g] & other[g])


def held_by(text: str, word: str) -> bool:
    """Whether ``text`` names the group of ``word`` by another word of it."""
    group = _GROUP_OF.get(word.lower())
    return bool(group and group in named(text))


@lru_cache(maxsize=1)
def _kinds() -> dict[str, tuple[str, ...]]:
    """Each broad word of ``data/kinds.tsv`` ("首饰", "tablet"), lower-case, to the kinds
    it covers ("金镯子", "iPad"): written as a lexicon of everyday life by a helper who
    read none of the project's code, questions or sentence pairs."""
    text = resources.files("memory_pg").joinpath("data", "kinds.tsv").read_text("utf-8")
    out: dict[str, dict[str, None]] = {}
    for line in text.splitlines():
        if line and line[0] != "#":
            _, broad, narrow = line.split("\t")
            for word in broad.split(" | "):
                out.setdefault(word.lower(), {}).update(dict.fromkeys(narrow.split(" | ")))
    return {w: tuple(k for k in kinds if k.lower() != w) for w, kinds in out.items()}


def kinds_of(word: str) -> tuple[str, ...]:
    """The kinds a broad word covers ("首饰" → 项链, 金镯子 …; "tablet" → iPad …), or none
    when :data:`ON` is off: a question asked with the broad word meets a memory that
    names the kind. Only kinds full text can ask whole: a Chinese one its pieces cover
    (not "月会", whose 会 no query keeps), a Latin one of letters and digits (not "C++")."""
    return _kinds_of(word.lower()) if ON else ()


@lru_cache(maxsize=1024)
def _kinds_of(word: str) -> tuple[str, ...]:
    return tuple(k for k in _kinds().get(word, ()) if _whole(k))


def _whole(kind: str) -> bool:
    if _HAN.search(kind):
        seg = segment(kind)
        return not seg.words and "".join(_in_order(kind, seg.cjk)) == kind
    return re.fullmatch(r"[A-Za-z][A-Za-z0-9' -]*[A-Za-z0-9]", kind) is not None


def latin_kinds(word: str) -> tuple[str, str] | None:
    """For a Chinese broad word, its kinds written in Latin letters ("平板" → iPad,
    MatePad) as one English term ``(any, own)``, or None: for a query that has no
    English word of its own (:func:`memory_pg.text.query.analyse`)."""
    latin = [k for k in kinds_of(word) if not _HAN.search(k)] if _HAN.search(word) else []
    any_q = " | ".join(t for t in (_latin_term(k.lower(), "") for k in latin) if t)
    own_q = " | ".join(t for t in (_latin_term(k.lower(), "D") for k in latin) if t)
    return (any_q, own_q) if any_q else None


def _quote(token: str, weight: str) -> str:
    quoted = "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"
    return f"{quoted}:{weight}" if weight else quoted


def _han_term(word: str, weight: str) -> str:
    """A Chinese word as the simple configuration meets it in a memory: the word
    when jieba keeps it whole, else all of its pieces ("养老钱": 养老 & 钱)."""
    seg = segment(word)
    pieces = seg.cjk
    if not pieces or seg.words:
        return ""  # "唱K": one config cannot ask it whole
    if word in pieces:
        return _quote(word, weight)
    # Its pieces in a row ("养老钱": 养老 <-> 钱), not anywhere: "年假" is not 年 … 假.
    return "(" + " <-> ".join(_quote(p, weight) for p in _in_order(word, pieces)) + ")"


def _in_order(word: str, pieces: tuple[str, ...]) -> list[str]:
    """The pieces that cut ``word`` from its start, in order (search mode also gives
    the words inside a longer one)."""
    out, at = [], 0
    for piece in sorted(dict.fromkeys(pieces), key=lambda p: (word.find(p), -len(p))):
        if word.find(piece, at) == at:
            out.append(piece)
            at += len(piece)
    return out or list(pieces)


def _latin_term(word: str, weight: str) -> str:
    """An English word or phrase ("due date": due <-> date)."""
    parts = [p for p in re.split(r"[\s-]+", word) if p]
    if len(parts) == 1:
        return _quote(parts[0], weight)
    return "(" + " <-> ".join(_quote(p, weight) for p in parts) + ")"


def mate_terms(query: str) -> tuple[tuple[str, str, str, str], ...]:
    """What ``query`` also asks for the groups it names: per group and script, one
    term of the group's other words, as ``(group, "en" | "cjk", any, own)``. Own: the
    word in the memory's own text (weight ``D``), as
    :func:`memory_pg._segment.term_queries` asks it."""
    return _mate_terms(query) if ON else ()


@lru_cache(maxsize=1024)
def _mate_terms(query: str) -> tuple[tuple[str, str, str, str], ...]:
    out: list[tuple[str, str, str, str]] = []
    lowered = query.lower()
    for group, said in named(query).items():
        mates = [w for w in _MEMBERS[group] if w not in said and w not in lowered]
        han = [w for w in mates if _HAN.search(w)]
        latin = [w for w in mates if not _HAN.search(w)]
        for config, words, term in (("cjk", han, _han_term), ("en", latin, _latin_term)):
            any_q = [t for t in (term(w, "") for w in words) if t]
            own_q = [t for t in (term(w, "D") for w in words) if t]
            if any_q:
                out.append((group, config, " | ".join(any_q), " | ".join(own_q)))
    return tuple(out)


def _pieces(words: frozenset[str]) -> set[str]:
    """The full-text words of ``words`` as a query cuts them ("养老钱": 养老, 钱)."""
    out: set[str] = set()
    for word in words:
        seg = segment(word)
        out.update(seg.cjk if _HAN.search(word) else seg.words)
    return out


def _first_lexeme(term: str) -> str:
    """The first quoted word of a tsquery text ("'养老' | 'yanglao'" → 养老)."""
    m = re.match(r"'((?:[^']|'')*)'", term)
    return m.group(1).replace("''", "'") if m else ""


def widen_terms(
    query: str, en_any: list[str], en_own: list[str], cjk_any: list[str], cjk_own: list[str]
) -> None:
    """Each term of a query word that names a group (the lists of
    :func:`memory_pg._segment.term_queries`) also meets the group's other words of
    its script, in place: a memory that says "退休金" holds the word terms "养老钱"
    asks (养老, 钱), as one that says "养老钱" would. No term is added: a term of its
    own would count the thing twice, and one that no memory holds would change which
    words pull a large user's candidates (:mod:`memory_pg.sql.lexical`)."""
    said = named(query)
    for group, config, any_q, own_q in mate_terms(query):
        anys, owns = (cjk_any, cjk_own) if config == "cjk" else (en_any, en_own)
        pieces = _pieces(said[group])
        for i, term in enumerate(anys):
            if _first_lexeme(term) in pieces:
                anys[i] = f"{term} | {any_q}"
                owns[i] = f"{owns[i]} | {own_q}"


def widen_word(word: str, others: Sequence[str], anys: list[str], owns: list[str]) -> None:
    """The term of ``word`` (in the lists of
    :func:`memory_pg._segment.term_queries`) also meets ``others``, in place, as
    :func:`widen_terms` does for a group's words: "对象" meets 男朋友 and 女朋友."""
    if not ON or not others:
        return
    term = _han_term if _HAN.search(word) else _latin_term
    others = list(dict.fromkeys(o.lower() for o in others if o.lower() != word.lower()))
    any_q = " | ".join(t for t in (term(o, "") for o in others) if t)
    own_q = " | ".join(t for t in (term(o, "D") for o in others) if t)
    for i, found in enumerate(anys):
        if any_q and _first_lexeme(found) == word.lower():
            anys[i] = f"{found} | {any_q}"
            owns[i] = f"{owns[i]} | {own_q}"


def widened(text: str, english: str, chinese: str) -> tuple[str, str]:
    """OR-queries (:func:`memory_pg._segment.query_terms`) of ``text`` widened by the
    other words of the groups it names: a statement of change meets the memory it
    changes though that one says the thing with another word."""
    for _, config, any_q, _ in mate_terms(text):
        if config == "cjk":
            chinese = f"{chinese} | {any_q}" if chinese else any_q
        else:
            english = f"{english} | {any_q}" if english else any_q
    return english, chinese


__all__ = [
    "ON",
    "SYNONYMS",
    "bridged",
    "held_by",
    "kinds_of",
    "latin_kinds",
    "mate_terms",
    "named",
    "same_thing",
    "widen_terms",
    "widen_word",
    "widened",
]
