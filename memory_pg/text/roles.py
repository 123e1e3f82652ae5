"""Who fills a role: "tom is the tech lead on checkout", "my manager is priya", "项目经理是
张婷". A role held by one person at a time (the definite one: *the* tech lead, *my*
manager, 项目经理) is a slot; another person put in it is a change of that slot,
whether the new text says so with a word of change ("checkout has a new tech lead:
aisha"), by a verb of the role ("kevin o'brien leads the team", "i report to daniel
now", "项目这边改由陈刚负责") or by naming the role again ("PO for billing is sofia").

People's names in chat are often lower-case ("priya", "aisha"), so a name is read by
its place, not by its capital: the word a role is said of, or said to be.

What the role is *of* must stay the same: "jess is scrum master for the data team"
beside "the web team's scrum master is arjun" are two slots, as are "前端负责人是小吴"
and "后端那边负责人是胖哥". A role said of a person with an article ("a designer on
the app") is not one slot: a team has several designers.

Pure functions, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memory_pg._segment import EN_STOPWORDS, ordered_words
from memory_pg.entities import has_han
from memory_pg.text import subjects, synonyms
from memory_pg.text.attributes import stated, tagged
from memory_pg.text.values import FIRST_CLAUSE, PERSON_ZH, shortened, value_kind

#: Roles one person holds at a time, and the words of each (the first is its name).
_ROLES: tuple[tuple[str, ...], ...] = (
    ("lead", "tech lead", "technical lead", "team lead", "lead", "tl", "组长", "技术负责人"),
    ("manager", "manager", "boss", "supervisor", "line manager", "领导", "上司", "主管"),
    ("owner", "product owner", "po", "负责人", "owner"),
    ("pm", "pm", "product manager", "project manager", "产品经理", "项目经理"),
    ("designer", "designer"),
    ("contact", "point of contact", "对接人", "联系人"),
    ("mentor", "mentor", "导师"),
    ("scrum", "scrum master"),
    ("head", "总监"),
    ("boss", "老板", "老总"),
    ("teacher", "homeroom teacher", "班主任"),
    ("landlord", "landlord", "房东"),
)
_ROLE_OF = {w: group[0] for group in _ROLES for w in group[1:]}
_ROLE_WORDS = sorted(_ROLE_OF, key=len, reverse=True)
_ROLE = "|".join(re.escape(w) for w in _ROLE_WORDS)

#: Verbs that put a person in a role: "kevin leads the team", "lena took over design",
#: "i report to daniel", "改由陈刚负责", "交给小李".
_NAME = r"[a-z][a-z'.-]*(?: [a-z][a-z'.-]*)?"
_VERBS_EN = (
    # "kevin leads the team": a team, a squad, a project is what is led.
    (
        "lead",
        rf"^(?P<p>{_NAME}) (?:now )?(?:leads|is leading|heads) (?:the |our )?"
        r"(?:team|squad|group|project|crew)\b",
    ),
    ("manager", rf"\b(?:i|we) (?:now )?report (?:in )?to (?P<p>{_NAME})"),
    # A role handed to someone, or taken over by them: "scrum master role got handed
    # over to dmitri", "marcus took over as tech lead".
    (
        "",
        r"(?P<r>{role})(?: role| duties| job)? (?:got |was |has been |is being )?"
        rf"(?:handed|passed|given|reassigned|transferred)(?: over)? to (?P<p>{_NAME})",
    ),
    (
        "",
        rf"^(?P<p>{_NAME}) (?:took|has taken|is taking|takes) over (?:as )?(?:the |our )?"
        r"(?P<r>{role})\b",
    ),
)
_VERBS_ZH = (
    ("owner", r"(?:改由|交由|由)(?P<p>[\u4e00-\u9fff]{2,3}?)(?:来)?负责"),
    # Whom one reports to is one's manager: "我改成直接汇报给刘敏".
    (
        "manager",
        r"我(?:现在|改成|改为|直接|以后|今后|开始){0,3}汇报给(?P<p>[\u4e00-\u9fff]{2,3})",
    ),
)
#: A stand-in, not the holder: "aisha is acting tech lead", "临时代班".
_STAND_IN = re.compile(
    r"\b(?:interim|acting|temporary|temp|covering|covers|fill(?:ing|s)? in|while|for now|"
    r"on leave|until)\b"
    r"|临时|代班|代理|暂时",
    re.IGNORECASE,
)
_ARTICLE = re.compile(r"^(?:an?)\s", re.IGNORECASE)
_DEFINITE = r"(?:the|my|our)\s+"
_NOT_NAMES = EN_STOPWORDS | frozenset(
    "i i'm we you he she they it someone somebody nobody everyone who new now still also "
    "gonna going out off away sick leave covering temporary interim acting".split()
)


_LONGEST = 300
#: Kinds of value a person's name is read as (:func:`memory_pg.text.values.value_kind`).
_PERSONS = frozenset({"name", "person", "thing"})


@dataclass(frozen=True)
class Holder:
    """A person in a role: the role's name (:data:`_ROLES`), the person, and the words of
    what the role is of ("checkout", "data team")."""

    role: str
    person: str
    of: frozenset[str]
    named: bool = False
    verb: bool = False


@lru_cache(maxsize=4096)
def holder(text: str) -> Holder | None:
    """The person ``text`` puts in a one-person role, or None.

    Example:
        >>> holder("tom is the tech lead on checkout")
        Holder(role='lead', person='tom', of=frozenset({'checkout'}))
        >>> holder("Maya is a designer on the app") is None
        True
    """
    if len(text) > _LONGEST or _STAND_IN.search(text):
        return None  # a long text is no statement of one role; a stand-in holds none
    clause = FIRST_CLAUSE.split(text.strip(), maxsplit=1)[0]
    found = _zh(clause) if has_han(clause) else _en(clause)
    if found is None:
        return None
    # A name as written: capitalised ("Priya"), or a Chinese person (张婷, 老刘).
    at = text.lower().find(found.person)
    named = has_han(found.person) or (at >= 0 and text[at].isupper())
    return Holder(found.role, found.person, found.of, named or found.named, found.verb)


def _en(clause: str) -> Holder | None:
    low = clause.lower().strip()
    # "the tech lead on checkout is tom", "billing PO is sofia", "team lead - Chen Wei"
    m = re.match(
        rf"^(?:{_DEFINITE})?(?P<pre>(?:[\w'-]+\s+){{0,2}}?)(?P<r>{_ROLE})(?P<post>(?:\s+(?:on|for|of)\s+(?:the\s+)?[\w-]+(?:\s+[\w-]+)?)?)"
        r"\s*(?:is|=|:|-|—|–)\s*(?:now\s+)?(?P<p>[a-z][\w'.-]*(?:\s+[a-z][\w'.-]*)?)"
        r"(?:\s+(?:now|these days|nowadays))?\s*$",
        low,
    )
    if m and not _ARTICLE.match(m.group("p")):
        return _made(m.group("r"), m.group("p"), m.group("pre") + " " + m.group("post"))
    # "tom is the tech lead on checkout", "priya is my manager"
    m = re.match(
        rf"^(?P<p>[a-z][\w'.-]*(?:\s+[a-z][\w'.-]*)?)\s+is\s+(?:now\s+)?(?:{_DEFINITE})?"
        rf"(?P<pre>(?:[\w-]+\s+){{0,2}}?)(?P<r>{_ROLE})(?P<post>(?:\s+(?:on|for|of)\s+.*)?)$",
        low,
    )
    if m and not _ARTICLE.match(m.group("pre")):  # "Maya is a designer": one of several
        return _made(m.group("r"), m.group("p"), m.group("pre") + " " + m.group("post"))
    # "my boss raj wants the deck": a role and its person side by side, named by place.
    m = re.match(
        rf"^(?:my|our)\s+(?P<r>{_ROLE})\s+(?P<p>[a-z][\w'.-]*)\s+(?:wants|says|said|asked|is|was|thinks|told|needs)\b",
        low,
    )
    if m:
        made = _made(m.group("r"), m.group("p"), "")
        return made and Holder(made.role, made.person, made.of, named=True)
    # "checkout has a new tech lead: aisha", "…new PM, jake"
    m = re.search(rf"\bnew\s+(?P<r>{_ROLE})\b\s*(?:is|:|,|-|—)\s*(?P<p>[a-z][\w'.-]*)", low)
    if m:  # said outright: a new holder, named
        made = _made(m.group("r"), m.group("p"), low[: m.start()])
        return made and Holder(made.role, made.person, made.of, verb=True)
    for role, pattern in _VERBS_EN:
        m = re.search(pattern.replace("{role}", _ROLE), low)
        if m:
            rest = low[m.end() :] if role == "lead" else ""
            made = _made(role or m.group("r"), m.group("p"), rest)
            return made and Holder(made.role, made.person, made.of, verb=True)
    return None


def _zh(clause: str) -> Holder | None:
    text = re.sub(r"^(?:我们的?|我的|咱们的?|这个|那个)", "", clause.strip())
    for role, pattern in _VERBS_ZH:
        m = re.search(pattern, text)
        if m and _zh_person(m.group("p")):
            made = _made(role, m.group("p"), text[: m.start()] if role == "owner" else "")
            return made and Holder(made.role, made.person, made.of, verb=True)
    m = re.search(rf"新(?P<r>{_ROLE})姓(?P<p>[\u4e00-\u9fff])", text)
    if m:  # "新老板姓孙": a person by the surname
        return _made(m.group("r"), "姓" + m.group("p"), text[: m.start()])
    m = re.search(
        rf"(?P<r>{_ROLE})(?:的)?(?:现在|目前|如今)?(?:换人了?[\s，,]*)?(?:是|叫|：|:|换成了?|变成了?)"
        r"(?P<p>[\u4e00-\u9fff]{2,3})",
        text,
        re.IGNORECASE,
    )
    if m and _zh_person(m.group("p")):
        return _made(m.group("r"), m.group("p"), text[: m.start()])
    return None


def _zh_person(word: str) -> bool:
    """Whether a Chinese word is a person as named or addressed: 张婷, 老刘, 王总 (not
    阿里, 小区, 老家: words of another kind)."""
    word = re.sub(r"[了啦呢吧]$", "", word)
    tags = tagged(word)
    if len(tags) == 1 and tags[0][1] in ("nr", "nrfg", "nrt"):
        return True
    if PERSON_ZH.fullmatch(word):
        return not (len(tags) == 1 and tags[0][1] not in ("nr", "nrfg", "nrt", "t", "x"))
    return False


def _made(role_word: str, person: str, of: str) -> Holder | None:
    """A :class:`Holder`, where ``person`` reads as a person's name."""
    person = re.sub(r"[了啦呢吧]$", "", person.strip(" .,!?;。，！？；"))
    words = person.split()
    while len(words) > 1 and (words[-1] in _NOT_NAMES or words[-1] in _ROLE_OF):
        words.pop()  # "daniel now", "marco too"
    person = " ".join(words)
    if not person or any(w in _NOT_NAMES or w in _ROLE_OF for w in words):
        return None
    if person.startswith("姓"):
        pass  # "新老板姓孙": a surname
    elif value_kind(person if has_han(person) else person.title()) not in _PERSONS:
        return None  # "my manager is really nice": a description, no one's name
    role = _ROLE_OF.get(role_word.strip().lower(), role_word.strip())
    if has_han(of):  # "后端那边": what is left of it once its fillers are gone
        rest = re.sub(r"那边|这边|这块|那块|了|我们|咱们|这个|那个|项目|直属|直接|[\s，,]", "", of)
        rest = re.sub(r"^我的?|^的", "", rest)
        return Holder(
            role,
            person,
            frozenset({rest} if rest else ()),
        )
    of_words = frozenset(
        w
        for w in ordered_words(of)
        if w not in _NOT_NAMES
        and w not in _ROLE_OF
        and w not in _FILLER
        and len(w) > 1
        and w not in ("has", "have", "had", "got", "gets", "our", "us", "for", "now")
    )
    return Holder(role, person, of_words)


#: A word of what a role is of that makes it another slot: an owner, an ordinal.
_OWNED = re.compile(r"'s$|的$|^第|^(?:second|backup|another|other|副|另)", re.IGNORECASE)
_FILLER = frozenset(
    "this project 项目 这块 这边 那边 我们 咱们 那个 这个 app team 组 on for of the".split()
)


def replaced(old: str, new: str, cued: bool = False) -> str:
    """The role ``new`` puts another person in, where ``old`` names who holds it ("tom is
    the tech lead on checkout" / "checkout has a new tech lead: aisha"), or "".

    ``cued``: the new text has a word of change. Without one, both people must be
    named as names are written (capitalised, or a Chinese name or address): a word
    in lower case after "is" may describe ("my manager is remote")."""
    a, b = holder(old), holder(new)
    if a is None or b is None or a.person == b.person:
        return ""
    # "改由陈刚负责": who is responsible now, for the thing the old text's role is of.
    responsible = b.verb and b.role == "owner" and _shares_han(old, new)
    if a.role != b.role and not responsible:
        return ""
    if not cued and not (a.named and b.named) and not b.verb:
        return ""
    if subjects.holders(new) - subjects.holders(old):
        return ""  # "我领导是王总" / "我老婆的领导是李姐": another's
    if re.search(rf"(?<![a-z]){re.escape(a.person)}(?![a-z])", new.lower()):
        return ""  # the old holder is still in it
    if has_han(a.person) and has_han(b.person) and a.person[0] == b.person[0]:
        return ""  # "王总" / "王建国", "刘老师" / "刘伟教授": one surname, one person
    # What the role is of: the old one's words all in the new text, or none given.
    if a.of and not all(w in new.lower() for w in a.of):
        return ""
    extra = {w for w in b.of if _OWNED.search(w) or not any(x in w or w in x for x in a.of)}
    if extra:
        # "the web team's scrum master" beside the data team's; "my manager's manager",
        # "我老婆的领导", "第二紧急联系人": another slot.
        return ""
    if shortened(a.person, b.person) or set(a.person.split()) & set(b.person.split()):
        return ""  # "Priya Shah" / "Priya", "Alexander Brandt" / "Alex Brandt": one person
    return a.role


#: A verb after a name that opens a text: "Mark took…", "Nina got promoted…".
_DOES = re.compile(
    r"^(?P<n>[A-Z][a-z]+) (?:got promoted|was promoted|(?:took|accepted|landed|got) (?:a|an) "
    r"(?:[\w-]+ ){0,2}(?:job|position|role|offer)|became (?:a|an|the) |started (?:a|an) "
    r"(?:new )?job)"
)
#: The fact is for another: "…for my wife", "给我老婆…".
_FOR_ANOTHER = re.compile(
    r"\bfor (?:my|our|his|her) (?:wife|husband|partner|son|daughter|kid|mom|dad|mother|"
    r"father|sister|brother|friend|boss)\b|给(?:我)?(?:老婆|老公|儿子|女儿|孩子|爸|妈|朋友)"
)
#: A second one of a kind, named as such: "a new work email", "备用手机".
_SECOND = re.compile(
    r"\b(?:work|backup|spare|second|secondary|personal) (?:email|e-mail|phone|number|cell|"
    r"mobile|address|account|laptop|card)\b|备用|工作用|副卡",
    re.I,
)
#: A person who opens a Chinese change of their own: "隔壁组的小王升组长了".
_ZH_DOES = re.compile(
    r"^(?:[\u4e00-\u9fff]{0,6}的)?(?P<n>[\u4e00-\u9fff]{2,3}?)(?:升|当上|被|调到|跳槽)"
)


_OPENERS = frozenset("got just finally today yesterday everyone everybody team company".split())


def someone_else(old: str, new: str) -> bool:
    """Whether ``new`` states its fact of someone the old text does not name, or as a
    second one of its kind: "Mark took a full time job as a designer", "隔壁组的小王升组长
    了", "Lexapro dose went up to 20mg for my wife", "Got a new work email"."""
    m = _DOES.match(new.strip())
    name = m.group("n") if m else ""
    if name and name.lower() not in old.lower() and name.lower() not in _NOT_NAMES | _OPENERS:
        return True
    if _FOR_ANOTHER.search(new) and not _FOR_ANOTHER.search(old):
        return True
    if _SECOND.search(new) and not _SECOND.search(old):
        return True
    zh = _ZH_DOES.match(new.strip())
    # "小王升主管了" beside "我是销售"
    return bool(zh and zh.group("n") not in old and _zh_person(zh.group("n")))


def _two_holders(old: str, new: str) -> bool:
    """Whether the two texts state facts of two holders: two different ones (my
    sister / my brother), or one on one side that the other does not speak of
    ("我同事喝咖啡" / "我不再喝咖啡"; "我吃素" / "我老公无肉不欢"). A text speaks of
    a holder it names anywhere, by the name the other gives it, by "he" or "she", or
    through what the holder owns (:func:`memory_pg.text.subjects.refers_to_holder`)."""
    held_old, held_new = subjects.holders(old), subjects.holders(new)
    if subjects.speaker_and_other(old, new):
        return True  # "My email is…" / "Linda… she's at linda@…"
    if held_old and held_new:  # one holder named by two words: "my folks" / "my parents"
        return not held_old & held_new and not any(
            synonyms.same_thing(a, b) for a in held_old for b in held_new
        )
    if held_old - {"team"}:
        return not subjects.refers_to_holder(new, old, held_old)
    if any(subjects.KIN.search(h) or subjects.PEER.search(h) for h in held_new):
        return not subjects.refers_to_holder(old, new, held_new)
    # A role holding the new value later ("换了个房东，新房东电话…"): the landlord's.
    later = subjects.clause_holders(new) - {"team"}
    return (
        bool(later) and not subjects.holders(old) and not subjects.refers_to_holder(old, new, later)
    )


def other_holder(old: str, new: str) -> bool:
    """Whether the two texts state facts of two holders (:func:`_two_holders`), or the
    new one of someone the old does not name (:func:`someone_else`)."""
    return _two_holders(old, new) or someone_else(old, new)


def _shares_han(a: str, b: str) -> bool:
    """Whether two texts share two Chinese characters in a row (项目, 需求)."""
    return any(a[i : i + 2] in b for i in range(len(a) - 1) if has_han(a[i : i + 2]))


def other_slot(old: str, new: str) -> bool:
    """Whether the two texts put people in one role of two things ("Nina is the PM for
    Search" / "Omar is now the PM for Checkout"): two slots, both kept."""
    a, b = holder(old), holder(new)
    if not (a and b and a.role == b.role and a.of and b.of):
        return False
    bare_a, bare_b = ({w.removesuffix("的") for w in h.of} for h in (a, b))
    return not any(x in y or y in x for x in bare_a for y in bare_b)


def one_value_each(old: str, new: str) -> bool:
    """Whether both texts state an attribute one holds one value of at a time, of one
    holder ("my title is senior analyst" / "got promoted to analytics manager", "家在上海"
    / "在重庆买了房"): the attribute is the subject, whatever word names it."""
    said = set(stated(old)) & set(stated(new)) & _ONE_VALUE
    if not (subjects.FIRST_PERSON.search(old) or _ATTRIBUTE_FIRST.match(old)):
        return False  # "The staging database lives in Frankfurt": a thing's place
    if any(holder(t) or subjects.role_person(t) for t in (old, new)):
        said.discard("occupation")  # "我的导师是刘老师" / "…换了个新秘书": others' jobs
    return bool(said) and not subjects.holders(old) ^ subjects.holders(new)


#: The speaker's own fact in Chinese, with no one named: it opens with the attribute
#: ("家在上海", "职位是运营专员").
_ATTRIBUTE_FIRST = re.compile(r"(?:家|住|职位|岗位|工作|单位|公司|电话|手机|邮箱|体重)")
#: Attributes one holds one value of at a time.
_ONE_VALUE = frozenset({"occupation", "employer", "home", "phone", "email", "age", "body"})


__all__ = [
    "Holder",
    "holder",
    "one_value_each",
    "other_holder",
    "other_slot",
    "replaced",
    "someone_else",
]
