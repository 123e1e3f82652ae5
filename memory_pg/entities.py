"""Entities a memory names, found offline by rules: English names, @handles, titles, Chinese names.

What it finds, in the order the text names them:

* English: runs of capitalised words ("Caroline", "New York", "Bank of America"),
  all-capital acronyms ("LGBTQ", "AWS"); a capitalised common word that only opens
  a sentence ("Yesterday", "The") is not a name, nor are weekdays and months;
* ``@handles`` (a person or an account);
* quoted titles: "Becoming Nicole", “Charlotte's Web”, 《三体》 (a few words, not a
  quoted sentence);
* Chinese: jieba's part-of-speech tags ``nr`` (person: 小王, 张伟), ``ns`` (place:
  北京), ``nt`` (organisation), ``nz`` (other proper noun: 腾讯), with a single-character
  surname after 小 or 老 joined to it (小李, 老张).

Surface forms meet on :func:`entity_key` alone (NFKC, casefold, spaces collapsed, a
possessive 's dropped): "OpenAI", "OPENAI" and "ＯｐｅｎＡＩ" are one entity, while
"小王" and "王伟" stay two. A wrong merge joins two people, so nothing fuzzier is
ever merged here; different spellings of one name can be tied by the LLM extractor
(which returns aliases) or by hand.

Not for: resolving pronouns, or telling two people of one name apart.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

#: The kinds of entity, as the ``kind`` column allows them.
KINDS = ("person", "place", "organisation", "project", "thing")

#: At most this many entities from one memory: a long text names its subjects first.
MAX_PER_MEMORY = 24

#: Longest name kept (characters).
MAX_NAME_CHARS = 80

_JIEBA_KINDS = {
    "nr": "person",
    "nrfg": "person",
    "nrt": "person",
    "ns": "place",
    "nt": "organisation",
    "nz": "thing",
}

# Words that are capitalised because they open a sentence (or always: "I"), and
# capitalised words that name no entity (days, months, greetings).
_COMMON = frozenset(
    """
    a about after again all also although always an and another any anyway are as at
    back be because been before being besides both but by can could did do does doing
    done during each either even ever every everyone everything first for from good
    great had has have having he hello her here hers hey hi him his how however i i'd
    i'll i'm i've if in indeed instead into is it it's its just last lately let let's
    like maybe me meanwhile mine more moreover most my nah never next no nobody none
    nor not nothing now of oh ok okay on once one only or other otherwise our ours out
    over perhaps please really recently right she should since so some someone
    something sometimes soon still such sure thank thanks that that's the their theirs
    them then there there's these they they're this those though through thus to today
    tomorrow tonight too totally under unless until up us very was we we're well were
    what what's whatever when where whether which while who whoever why will with
    without wow would wrote yeah yes yesterday yet you you're your yours
    monday tuesday wednesday thursday friday saturday sunday
    january february march april june july august september october november december
    may mr mrs ms dr
    hope glad sorry nice cool awesome wish congrats congratulations happy love sounds
    btw omg lol haha yep yup nope actually thankfully plus anyways honestly
    """.split()
)
# Words that may join capitalised words inside one name ("Bank of America").
_JOINERS = frozenset({"of", "de", "la", "van", "von", "du", "da"})
# After a lone capitalised word that opens a sentence, these say it names someone
# ("Melanie went", "Jo and I", "Caroline:"); any other word leaves it out ("Ping him").
_SUBJECT_NEXT = frozenset(
    """: 's ’s , and is was has had have will would can could said says went goes got
    gets told thinks thought loves likes wants made took came saw did does just also
    really never always met gave found felt left bought brought knew ran wrote sent lost
    won paid read spent sold built kept began became""".split()
)
_ORG_WORDS = frozenset(
    """inc corp corporation company co ltd llc group bank university college school
    institute foundation association club church team agency hospital council committee
    society labs lab studio studios""".split()
)
_PLACE_WORDS = frozenset(
    """city town street st avenue ave road park river lake mountain mountains beach
    island county state province valley bay coast airport station""".split()
)

_TOKEN = re.compile(r"@\w+|[A-Za-z][A-Za-z0-9'’&-]*|[0-9]+|[.!?:;\n\"“”]|[^\sA-Za-z0-9]")
_SENTENCE_END = frozenset('.!?:;\n"“”')
_QUOTED = re.compile(r"[\"“]([^\"“”\n]{2,60})[\"”]|《([^《》\n]{1,40})》|「([^「」\n]{1,40})」")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Entity:
    """One entity a text names: its name as written, its kind and its merge key."""

    name: str
    kind: str
    key: str
    #: Other spellings of the same key in the text ("OPENAI" beside "OpenAI").
    aliases: tuple[str, ...] = ()


def has_han(text: str) -> bool:
    """Whether ``text`` holds a Chinese character (a name of the Chinese rules)."""
    return _HAN.search(text) is not None


def entity_key(name: str) -> str:
    """The form two names must share to be one entity (no fuzzy matching, ever).

    >>> entity_key("ＯｐｅｎＡＩ") == entity_key("openai")
    True
    """
    folded = unicodedata.normalize("NFKC", name).casefold().strip()
    folded = folded.replace("’", "'")
    if folded.endswith("'s"):
        folded = folded[:-2]
    folded = folded.lstrip("@").strip(" .,'\"")
    return _SPACES.sub(" ", folded)


def extract(text: str) -> list[Entity]:
    """Entities ``text`` names, first mention first, one per key (the first spelling)."""
    found: dict[str, Entity] = {}

    def add(name: str, kind: str) -> None:
        name = name.strip(" .,'’\"")
        if name.endswith(("'s", "’s")):
            name = name[:-2]
        key = entity_key(name)
        if not key or len(name) > MAX_NAME_CHARS or key in _COMMON:
            return
        seen = found.get(key)
        if seen is None:
            if len(found) < MAX_PER_MEMORY:
                found[key] = Entity(name, kind, key)
        elif name != seen.name and name not in seen.aliases:
            found[key] = Entity(seen.name, seen.kind, key, (*seen.aliases, name))

    spans: list[tuple[int, str, str]] = []
    for match in _QUOTED.finditer(text):
        title = next(g for g in match.groups() if g is not None).strip()
        # A title is a few words, not a quoted sentence.
        if title and len(title.split()) <= 8 and not title.endswith((".", "!", "?", "。")):
            spans.append((match.start(), title, "thing"))
    # Full-width letters (ＡＩ) read as their ASCII forms; offsets only order the names.
    spans.extend(_english(unicodedata.normalize("NFKC", text)))
    if _HAN.search(text):
        spans.extend(_chinese(text))
    for _, name, kind in sorted(spans, key=lambda s: s[0]):
        add(name, kind)
    return list(found.values())


def _english(text: str) -> list[tuple[int, str, str]]:
    """(offset, name, kind) of handles, capitalised runs and acronyms."""
    tokens = [(m.start(), m.group()) for m in _TOKEN.finditer(text)]
    lowered = {t.lower() for _, t in tokens if t[:1].islower()}
    # Capitalised words that also stand inside a sentence somewhere in the text.
    capitals_inside = {
        t for k, (_, t) in enumerate(tokens) if k > 0 and tokens[k - 1][1] not in _SENTENCE_END
    }
    out: list[tuple[int, str, str]] = []
    sentence_start = True
    i = 0
    while i < len(tokens):
        start, tok = tokens[i]
        if tok.startswith("@") and len(tok) > 1:
            out.append((start, tok, "person"))
            sentence_start = False
            i += 1
            continue
        if not _capitalised(tok):
            sentence_start = tok in _SENTENCE_END or (sentence_start and not tok.isalnum())
            i += 1
            continue
        # A run of capitalised words, joined by "of", "de" ... between two of them.
        words = [tok]
        j = i + 1
        while j < len(tokens):
            nxt = tokens[j][1]
            if _capitalised(nxt):
                words.append(nxt)
                j += 1
            elif nxt.lower() in _JOINERS and j + 1 < len(tokens) and _capitalised(tokens[j + 1][1]):
                words.extend([nxt, tokens[j + 1][1]])
                j += 2
            else:
                break
        # A sentence opens with a capital: a common word there is no name, nor is a
        # word the text also writes in lower case ("Running" beside "running").
        while words and (
            words[0].lower() in _COMMON
            or (sentence_start and words[0].lower() in lowered)
            or words[0] in ("I", "I'm", "I've", "I'll", "I'd")
        ):
            words = words[1:]
            sentence_start = False
        if (
            sentence_start
            and len(words) == 1
            and words[0] not in capitals_inside
            and not words[0].endswith(("'s", "’s"))
        ):
            following = tokens[j][1].lower() if j < len(tokens) else ""
            if following not in _SUBJECT_NEXT and not following.endswith(("ed", "s")):
                words = []
        while words and words[0].lower() in _JOINERS:
            words = words[1:]
        if words:
            name = " ".join(words)
            previous = tokens[i - 1][1].lower() if i > 0 else ""
            out.append((start, name, _english_kind(words, previous)))
        sentence_start = False
        i = j
    return out


def _capitalised(token: str) -> bool:
    return (
        len(token) > 1
        and token[0].isupper()
        and token[0].isascii()
        and any(c.isalpha() for c in token[1:])
    ) or token in ("I",)


def _english_kind(words: list[str], previous: str) -> str:
    last = words[-1].lower().rstrip(".")
    if last in _ORG_WORDS:
        return "organisation"
    if last in _PLACE_WORDS or previous in ("in", "at"):
        return "place"
    if words[0].lower() == "project" and len(words) > 1:
        return "project"
    if len(words) == 1 and words[0].isupper() and len(words[0]) > 1:
        return "organisation" if len(words[0]) <= 5 else "thing"
    if len(words) == 1 and any(c.isupper() for c in words[0][1:]):
        return "thing"  # PostgreSQL, GitHub: a product's spelling, not a person's
    return "person" if len(words) <= 2 else "thing"


def _chinese(text: str) -> list[tuple[int, str, str]]:
    """(offset, name, kind) from jieba's part-of-speech tags."""
    import logging

    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)

    out: list[tuple[int, str, str]] = []
    at = 0
    pairs = [(p.word, p.flag) for p in jieba.posseg.cut(text)]
    for n, (word, flag) in enumerate(pairs):
        start = text.find(word, at)
        at = start + len(word) if start >= 0 else at
        kind = _JIEBA_KINDS.get(flag)
        if kind is None or not _HAN.search(word):
            # 小 / 老 before a one-character surname: 小李, 老张.
            if (
                word in ("小", "老")
                and n + 1 < len(pairs)
                and pairs[n + 1][1] == "nr"
                and len(pairs[n + 1][0]) == 1
            ):
                out.append((start, word + pairs[n + 1][0], "person"))
            continue
        if len(word) == 1 and n > 0 and pairs[n - 1][0] in ("小", "老"):
            continue  # joined above
        if kind == "person" and len(word) < 2:
            continue  # a lone surname character is too ambiguous to be a name
        out.append((start, word, kind))
    return out


# -- entities an LLM listed (compaction asks for them in the same call) --------------------

# Kinds an LLM may write for ours; anything else it calls a kind reads as "thing".
_LLM_KINDS = {
    "people": "person",
    "human": "person",
    "人物": "person",
    "人": "person",
    "location": "place",
    "city": "place",
    "country": "place",
    "地点": "place",
    "地方": "place",
    "organization": "organisation",
    "org": "organisation",
    "company": "organisation",
    "组织": "organisation",
    "公司": "organisation",
    "机构": "organisation",
    "项目": "project",
    "product": "thing",
}


def from_llm(value: object) -> list[Entity] | None:
    """Entities an LLM listed (``[{"name", "kind", "aliases"}]``), read defensively.

    None when ``value`` is not a list (the rules then decide alone); an item with no
    usable name is skipped. An alias whose key is another listed entity's name is
    dropped: the model contradicted itself, and a wrong merge joins two people.
    """
    if not isinstance(value, list):
        return None
    found: dict[str, Entity] = {}
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        name = item["name"].strip()
        key = entity_key(name)
        if not key or len(name) > MAX_NAME_CHARS or key in found:
            continue
        raw_kind = item.get("kind", item.get("type"))
        kind = raw_kind.strip().casefold() if isinstance(raw_kind, str) else "thing"
        kind = kind if kind in KINDS else _LLM_KINDS.get(kind, "thing")
        raw = item.get("aliases")
        aliases = [a.strip() for a in raw if isinstance(a, str)] if isinstance(raw, list) else []
        kept = tuple(
            dict.fromkeys(a for a in aliases if a and a != name and len(a) <= MAX_NAME_CHARS)
        )
        found[key] = Entity(name, kind, key, kept)
        if len(found) >= MAX_PER_MEMORY * 4:
            break
    names = set(found)
    return [
        Entity(f.name, f.kind, f.key, tuple(a for a in f.aliases if entity_key(a) not in names))
        for f in found.values()
    ]


def named_in(text: str, listed: list[Entity]) -> tuple[Entity, ...]:
    """The listed entities ``text`` names by their name or an alias (keys compared)."""
    folded = _SPACES.sub(" ", unicodedata.normalize("NFKC", text).casefold())

    def names(spelling: str) -> bool:
        key = entity_key(spelling)
        if not key:
            return False
        if _HAN.search(key):
            return key in folded
        # Whole words only: "Al" is not named by "also".
        return re.search(rf"(?<!\w){re.escape(key)}(?!\w)", folded) is not None

    named = [f for f in listed if any(names(s) for s in (f.name, *f.aliases))]
    return tuple(named[:MAX_PER_MEMORY])


def combine(listed: tuple[Entity, ...] | None, rules: list[Entity]) -> list[Entity]:
    """A memory's entities: the LLM's when it listed any, then the rules' it did not name.

    A rule entity whose key is one of the LLM's names or aliases is left out (the LLM
    said which entity that spelling belongs to); nothing else is merged.
    """
    if not listed:
        return rules
    taken = {entity_key(s) for f in listed for s in (f.name, *f.aliases)}
    return [*listed, *(r for r in rules if r.key not in taken)][:MAX_PER_MEMORY]


__all__ = [
    "KINDS",
    "MAX_PER_MEMORY",
    "Entity",
    "combine",
    "entity_key",
    "extract",
    "from_llm",
    "has_han",
    "named_in",
]
