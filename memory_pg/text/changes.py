"""Does a new statement change what an older one said? Decided from structure, in both languages.

A change has three parts, and each is read by concept, not by sentence:

1. **A signal of change** in the new text (:func:`cue`), by kind: from–to ("slipped
   from March 3 to March 10", "从望京搬到了回龙观"), instead-of, now ("现在",
   "these days"), new ("新的手机号"), stopped ("不再", "quit", "下线"), left
   ("离职"), moved ("搬到", "relocated"), postponed ("推迟"), cancelled ("取消"),
   switched ("换成", "replaced"), a value that rose or fell ("涨到", "down to"), and
   what used to be ("以前", "used to"); or, with no word of change, one key said again
   with another value ("My dentist is Dr. Patel" / "Dentist: Dr. Kim", :mod:`.restated`).
2. **The same subject**: the two texts share a content word that is not a value
   ("budget", "房租", "editor"), or name products of one kind (MySQL and
   PostgreSQL are databases), or state the same attribute of the same holder
   (both where the speaker lives: "I live in Brooklyn" / "We moved to Jersey City").
   Two holders (my sister / my brother, 女儿 / 儿子) are two subjects.
3. **The old value given up**: what the old text says beyond the shared subject is
   missing from the new one, or named there as what was left ("instead of
   webpack", "Elasticsearch was too expensive", "IDEA 基本不开了").

Only then is it a change; anything less keeps both (a wrong replacement loses a
fact). An addition ("also added Kafka", "另外还加了") and two events of their own
("upgraded Postgres" / "upgraded Node") are not changes. :func:`judge` returns the
evidence, which the history records as the reason.

Pure functions, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory_pg import _facts
from memory_pg._segment import query_terms
from memory_pg.entities import has_han
from memory_pg.text import (
    aspects,
    contacts,
    kinds,
    quantities,
    states,
    subjects,
    synonyms,
    things,
    topics,
)
from memory_pg.text.attributes import LOOSE, stated
from memory_pg.text.beside import beside
from memory_pg.text.concepts import concept_of, concepts
from memory_pg.text.contacts import SHAPES
from memory_pg.text.cues import CUE as _CUE
from memory_pg.text.cues import CUES, POINTING_BACK, spelled, year_span
from memory_pg.text.days import said_again as day_said_again
from memory_pg.text.references import speaker_fact
from memory_pg.text.restated import may_restate, restated, value_stands
from memory_pg.text.roles import one_value_each, other_holder, other_slot
from memory_pg.text.roles import replaced as role_replaced
from memory_pg.text.states import unchanged
from memory_pg.text.values import same_measure
from memory_pg.text.words import FILLER as _FILLER
from memory_pg.text.words import NUMBER as _NUMBER
from memory_pg.text.words import beyond
from memory_pg.text.words import content as _content
from memory_pg.text.words import values as _values


@dataclass(frozen=True)
class Evidence:
    """Why a new text replaces an old one: the change's ``kind`` and its ``cue`` (the
    signal's words), what makes it the same subject (``same``: ``words``,
    ``product kind`` or an attribute's name), and how many of the old text's own
    words the new one gives up (``gone``)."""

    kind: str
    cue: str
    same: str
    gone: int

    def as_detail(self) -> dict[str, object]:
        """The evidence for a history event (the cue is the library's word for the
        change, from the new text; no other text of the user's)."""
        return {"cue_kind": self.kind, "cue": self.cue, "same": self.same, "gone": self.gone}


def cue(text: str) -> tuple[str, str] | None:
    """``(kind, words)`` of the first signal of change in ``text``, or None.

    Example:
        >>> cue("上个月从望京搬到了回龙观")
        ('from_to', '从望京搬到')
    """
    for m in _CUE.finditer(text):
        return m.lastgroup or "", m.group(0)
    return None


def judge(
    old: str,
    new: str,
    product_kinds: tuple[set[str], set[str]] | None = None,
    similar: bool = False,
    restate: bool = False,
) -> Evidence | None:
    """The evidence that ``new`` changes what ``old`` said, or None to keep both.

    ``product_kinds``: the kinds of product each text names (database, hosting …),
    when the caller knows them; one kind in common makes one subject. ``similar``:
    an embedding model that reads both texts finds them close ("coffee" and
    "caffeine"), which also makes one subject. ``restate``: a key said again with
    another value is a signal (:mod:`.restated`; for a caller whose LLM confirms it).

    Example:
        >>> judge("I live in Brooklyn.", "We moved to Jersey City in June.").kind
        'moved'
        >>> judge("My sister lives in Chengdu.", "My brother lives in Xi'an.") is None
        True
    """
    if _facts.non_fact(new) == "question":
        return None  # "is the tax deadline april 18 this year?" asks, it does not say
    new = spelled(new)  # "dentist resheduled me": a word of change, mistyped
    new, old = subjects.spelled_out(new, old), subjects.spelled_out(old, new)
    signal = _signal(old, new, restate)
    if (
        signal is None
        and product_kinds
        and topics.swapped(old, new)
        and not _scoped(old, new)
        and not re.search(r"[?？吗]|\btoo\b", new)  # "Trello吗？", "we use Redis too"
    ):
        signal = ("now", "")  # "CI runs on Jenkins" / "CI is GitHub Actions": in its place
    if signal is None or beside(old, new) or unchanged(new) or contacts.other_slot(old, new):
        return None  # (…or a contact of a slot of its own: "Her new number is…")
    if signal[0] in _WEAK and (states.other_quantity(old, new) or states.progress(old, new)):
        return None  # "capped at 4GB" / "hit rate is 92% now": two attributes of one thing
    if signal[0] in _WEAK and states.negation_stands(old, new):
        # "I don't drink coffee" / "I drink a lot of tea now": what is not done is
        # changed only by doing it.
        return None
    if signal[0] == "status" and states.partly(new):
        return None  # "季度报告的图表做完了，文字还没写": a part done, the rest to do
    before = _signal(new, old)
    ends = [m.end() for m in _CUE.finditer(new)]
    # "My dentist is Dr. Patel" / "I switched to Dr. Kim": the role is the subject.
    if subjects.owned_by_other(old, new):
        return None  # "Finish the deck" / "Rachel's deck got moved": Rachel's, not mine
    # …or "tom is the tech lead on checkout" / "checkout has a new tech lead: aisha".
    cued = signal[0] not in _WEAK
    renamed = subjects.role_renamed(old, new, ends, similar) or bool(role_replaced(old, new, cued))
    if not renamed and other_holder(old, new):
        return None  # my sister / my brother; 我同事喝咖啡 / 我不再喝咖啡: two people
    kinds_shared = bool(product_kinds and product_kinds[0] & product_kinds[1])
    swap = kinds_shared and topics.swapped(old, new)  # "Bitbucket" / "GitLab now"
    contact = contacts.swapped(old, new)  # "手机号是555-2031" / "换号了 新号555-2087"
    count = quantities.counted(old) & quantities.counted(new)  # "12 engineers" / "8 engineers"
    zone = subjects.zone(old) - _FILLER
    # "pushed it to May"; "12 engineers" / "8 engineers"; "喜欢喝美式" / "改喝拿铁了"
    slot = things.same_slot(old, new) or ("count" if count else "") or things.verb_slot(old, new)
    if product_kinds and product_kinds[1] and not product_kinds[0] and not _gives_up_old(old, new):
        return None  # a product chosen says nothing of a fact that names none ("…每天备份")
    if (
        kinds.other_subject(old, new, _FILLER)
        or kinds.other_scope(old, new)
        or other_slot(old, new)
    ):
        return None  # 测试环境 / 生产环境, Server A / Server B: one noun, two things
    if (
        kinds.other_part(old, new)
        and not aspects.time_value(new, signal)
        and not aspects.has_time(old)
    ):
        return None  # "green tea every morning" / "my evening drink": two habits
    left = _left(old, new, zone) or bool(_left_behind(old, new))
    attribute = _same_attribute(old, new, zone)
    # "职级是P6" / "今年晋升到P7了", not "the new hire on my team is L3": said of no one else.
    version = states.new_version(old, new) is not None and not (
        subjects.holders(new) - subjects.holders(old)
        or (not has_han(new) and subjects.zone(new) - subjects.zone(old) - _FILLER)
    )
    if (
        zone
        and not subjects.holds_zone(new, zone)
        and not (kinds_shared or contact or left or attribute or renamed or similar)
        and not (version or slot)
        and not synonyms.bridged(old, new)  # "代码仓库" / "repo": the thing, another word
        and not subjects.speaks_of_holders(new, old)  # "My son is…" / "He's started…"
        and not one_value_each(old, new)  # "my title is…" / "got promoted to…"
    ):
        return None  # what the old text is about is not named in the new one
    if aspects.time_value(new, signal) and not aspects.has_time(old, parts=True):
        return None  # the new value is a time ("moved to Thursdays"): the old one had one
    if not left and not swap and aspects.other_aspect(old, new, signal):
        # "婚礼在5月" / "婚礼场地换了": the date stands, the place is new.
        return None
    if signal[0] in _WEAK and (person := value_stands(old, new)) and not _given_up(new, [person]):
        return None  # "组长是老王" / "老王现在在减肥": the old value, another fact of it
    if _repeats_number(old, new):
        return None  # "房租每月 5000" / "…下个月开始每月 5000": the old value, said again
    if _other_left(old, new):
        return None  # "我在腾讯工作" / "我从字节跳动离职了": what was left is another
    thing = _thing_changed(new)
    if thing and not subjects.holds_zone(old, thing):
        return None  # "医生把我的降压药换成了…": the drug changed, not who the doctor is
    if things.other_thing(old, new, kinds_shared, moved=signal[0] == "moved"):
        return None  # "公司搬到望京了" beside "我住在双井": the company moved, not the home
    words_old, words_new = _content(old), _content(new)
    # "预算" / "经费"; "数据中台" / "中台", "白酒" / "酒戒了": a compound and its head
    shared = (
        words_old & words_new
        | synonyms.bridged(old, new)
        | kinds.heads_shared(old, new, words_old, words_new)
    )
    same = ""
    if shared:
        same = "words"
    elif kinds_shared:
        same = "product kind"
    elif contact:
        same = "contact"
    elif left:
        same = "value given up"
    elif attribute:
        same = attribute
    elif renamed:
        same = "role"
    elif similar:
        same = "similar"
    elif version:
        same = "version"
    elif slot:
        same = slot
    elif signal[0] == "restated":
        same = "key"  # "最爱的书是《活着》" / "我最爱的书是《围城》": one key, by its words
    elif (
        signal[0] == "value"
        and (unit := same_measure(old, new))
        and not {w for w in _content(new) - _content(old) if not re.search(r"\d", w)}
        - _AMOUNT_WORDS
    ):
        same = unit  # "taking 50mg sertraline" / "dose went up to 100mg": one amount
    elif moved := aspects.speaker_moved(
        old, new, signal, subjects.holders(old) | subjects.holders(new)
    ):
        same = moved  # "transferred over to the sales team" beside "I work in marketing"
    else:
        said = set(stated(old)) & set(stated(new))
        both = (said - LOOSE) or (said & _SEVERAL_VALUES if _shared_han(old, new) else set())
        if signal[0] in ("now", "new", "restated") and not subjects.FIRST_PERSON.search(new):
            both.discard("occupation")  # "组长是老刘" / "快递交给小区物业了": a word of a job
        # In Chinese, two ages or prices with no word in common ("对门老李，七十了" / "我今年
        # 六十八") are one subject only for one holder (benchmarks/change_stream.py).
        held = subjects.holders(old)
        one = held == subjects.holders(new) if held else speaker_fact(old) and speaker_fact(new)
        if both and (not has_han(new) or (both & _OWN and one)):
            same = sorted(both)[0]
    if not same:
        return None
    # A value both name that the new text gives up ("Jenkins 下线了") is the old value.
    if any(_qualified(new, old, w) for w in shared):
        return None  # "Python 2" is not the "Python" of "use Python"
    given = {w for w in shared if _given_up(new, [w], strict=True)}
    if given and not shared - given and same == "words" and before is None:
        person = subjects.role_person(old).lower()
        in_role = all(w in person for w in given)  # "Dr. Alvarez retired": the role stays
        named = concepts(new)
        around = subjects.zone(old) & (words_old - given)
        if (
            not in_role
            and around
            and not any(_holds(new, w) or concept_of(w) in named for w in around)
        ):
            # "数据分析脚本用 Python" / "后端不再用 Python": its own subject. One word of
            # the old subject named again makes it the same ("Jenkins for CI on the
            # billing service" / "no more jenkins for billing").
            return None
        same = "value given up"
    # (A name that opens the new text is no value of it by its capital: "Leo started…".)
    own = (words_old - shared) | given | (_values(old) - _values(new) - words_new)
    gone = [w for w in own if w in given or not _holds(new, w)]
    kept = [w for w in own if w not in given and _holds(new, w)]
    if not gone and not kept:
        if (before is not None and before[1] != signal[1]) or left or states.done(old, new):
            # One subject, its state changed: "Atlas 项目暂停了" / "…重启了".
            return Evidence(signal[0], signal[1], same, 1)
        if not _residue(old, new, shared):
            return None  # the new text says nothing the old one does not
    return Evidence(signal[0], signal[1], same, len(gone) + len(kept) or 1)


def _signal(old: str, new: str, restate: bool = False) -> tuple[str, str] | None:
    """The first signal of change in ``new`` that ``old`` does not also say (or, in its
    clause, the verb of change after a word of time or status): a word
    both say is their subject ("数据迁移完成了 40%" / "数据迁移进度到 85%"), not a
    change. Only the present ("now", "现在") may stand in both ("we now use X" / "we
    now use Y"): another time both say ("this year", "这次") dates both facts to one
    time, where they stand together ("read 20 books this year" / "save $10k this year")."""
    found = [
        m
        for m in _CUE.finditer(new)
        if (
            not _holds(old, m.group(0).strip())
            or (m.lastgroup == "now" and _PRESENT.fullmatch(m.group(0).strip()))
        )
        and not (m.lastgroup == "from_to" and year_span(old, new, m.start()))
    ]
    if found:
        # In the first one's clause, a verb of change outweighs a word of time ("以后
        # 改成周二", "已经不弹了") or a status ("got transferred" is a move).
        clause = re.split(r"[，,。；;！!？?]", new[found[0].start() :], maxsplit=1)[0]
        end = found[0].start() + len(clause)
        verbs = [m for m in found if m.start() < end and m.lastgroup not in (*_WEAK, "status")]
        first = verbs[0] if found[0].lastgroup in (*_WEAK, "status") and verbs else found[0]
        return first.lastgroup or "", first.group(0)
    version = states.new_version(old, new)
    if version:
        return "value", version
    done = states.done(old, new)
    if done:
        return "status", done
    flipped = states.flipped(old, new)
    if flipped:
        return "negated", flipped
    situation = states.new_situation(old, new)
    if situation:
        return "now", situation
    # "The grant application is due June 30" / "grant app deadline is july 15": one
    # thing's one day said again as another, where nothing makes it a second one.
    day = day_said_again(old, new)
    if day:
        return "value", day
    # "email is jen@…" / "reach me at jk@… now": one address or number in another's place.
    if contacts.swapped(old, new):
        return "now", ""
    # "my manager is priya" / "i report to daniel now": another person in a one-person role.
    if role_replaced(old, new):
        return "role", ""
    # "Dentist is Dr. Patel" / "Dentist: Dr. Kim": no cue word, none of the user's words.
    # Offline, only two values of one kind (two names, two numbers, two dates), never a
    # description ("My dentist is really gentle"); an LLM confirms any other.
    return ("restated", "") if restated(old, new, typed=not restate) else None


def _scoped(old: str, new: str) -> bool:
    """Whether ``new`` names a word ``old`` does not, other than the products and the
    name of their kind: a scope of its own ("测试环境用 Docker Compose", "Bitwarden
    for personal stuff")."""
    named = topics.kind_words(topics.product_topics(old) & topics.product_topics(new))
    extra = beyond(old, new)
    return any(w.lower() not in named and not any(w.lower() in n for n in named) for w in extra)


def may_change(text: str) -> bool:
    """Whether ``text`` may state a change of something an older memory says: a word
    of change, a named thing's number, a verb of finishing, a negation, or a key with
    a value (the decision itself needs the older text: :func:`judge`)."""
    text = spelled(text)
    return (
        cue(text) is not None
        or states.versioned(text)
        or states.may_finish_or_flip(text)
        or may_restate(text)
        or bool(topics.product_topics(text))  # a product of a kind, in another's place
    )


#: Signals that the new text is current ("now", "现在"), that something is new ("新的"),
#: that a number was reached ("hit", "达到") or a key said again: they change a fact
#: only where the new text gives a value of the same kind as the old one's.
_WEAK = frozenset({"now", "value", "new", "restated"})
_PRESENT = re.compile(r"now|currently|these days|nowadays|现在|目前|如今|眼下", re.IGNORECASE)


def _same_attribute(old: str, new: str, zone: set[str]) -> str:
    """The attribute of :data:`SHAPES` whose value both texts give, when the old
    text's subject holds nothing but that attribute's words ("my cell", "手机号";
    not "物业电话", "张总的电话"), or ""."""
    for name, shape in SHAPES:
        if shape.search(old) and shape.search(new) and name in stated(new):
            if all(name in stated(w) for w in zone):
                return name
    return ""


def _left(old: str, new: str, zone: set[str]) -> bool:
    """Whether ``new`` names what ``old`` states (a word past its subject, or a value)
    in a clause that gives it up: "Dr. Kaplan closed her practice", "We moved off
    Jira", "布艺沙发扔了", "编辑器从 VS Code 换成了 Cursor"."""
    held = subjects.holders(old)
    own = {
        w
        for w in _content(old) | _values(old)
        if w not in zone
        and w not in held
        and not _NUMBER.fullmatch(w)
        and len(w) > 1
        and _whole(new, w)
    }
    return any(_given_up(new, [w]) for w in own)


def _whole(text: str, word: str) -> bool:
    """Whether ``text`` names ``word`` as a word of its own ("pay" is not in "payment")."""
    if has_han(word):
        return word in text
    return (
        re.search(r"(?<![\w])" + re.escape(word) + r"(?:s|es|ed|ing)?(?![\w])", text, re.I)
        is not None
    )


#: A number written with digits or several numerals: a value, not a word ("一台").
_WHOLE_NUMBER = re.compile(
    r"\d+(?:[.,]\d+)*|[一二两三四五六七八九十][零〇一二两三四五六七八九十]*[十百千万亿]"
    r"[零〇一二两三四五六七八九十百千万亿]*|十[零〇一二两三四五六七八九]?"
)


def _repeats_number(old: str, new: str) -> bool:
    """Whether the new text gives the old text's numbers and no other: the old value
    said again replaces nothing."""
    numbers = {n.replace(",", "") for n in _WHOLE_NUMBER.findall(old)}
    return bool(numbers) and numbers == {n.replace(",", "") for n in _WHOLE_NUMBER.findall(new)}


#: What a new text names as left behind: "从字节跳动离职", "from React to", "instead of
#: webpack", "left Deloitte".
_LEFT_BEHIND = re.compile(
    r"从([^，,。；;从]{2,12}?)(?:离职|辞职|跳槽|搬|迁|换|改|转|调|挪|升|降|退|提|加|减|涨|砍)"
    r"|\bfrom\s+([A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*)?|\$?\d[\d.,:%]*)\s+to\b"
    r"|\binstead of\s+([A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*)?)"
    r"|\b(?:left|quit)\s+([A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*)?)"
)


def _other_left(old: str, new: str) -> bool:
    """Whether ``new`` names what it leaves (:data:`_LEFT_BEHIND`) and ``old`` names
    none of it: the change is from another value than the old text's."""
    left = _left_behind(old, new)
    return left is not None and not left


def _left_behind(old: str, new: str) -> bool | None:
    """Whether the value ``new`` names as left behind (:data:`_LEFT_BEHIND`: "从 VS Code
    换成", "from React to", "instead of webpack") is named in ``old``; None when
    ``new`` names none. Named there, it is the old value given up, and makes one
    subject by itself."""
    m = _LEFT_BEHIND.search(new)
    if m is None:
        return None
    gone = next(g for g in m.groups() if g)
    if gone.endswith(("起", "开始")):
        return None  # "从这个月起加到两千": when it starts, not what was left
    if POINTING_BACK.match(gone.strip()):
        return None  # "从原来那天挪到…", "从之前那位换成…": the old value, by a pointer
    words = {w for w in _content(gone) | _values(gone) if len(w) > 1} or {gone.strip()}
    return any(_holds(old, w) for w in words)


#: What a change is done to, where the sentence names it: "把我的降压药换成了…",
#: "switched my editor to…", "changed the venue to…".
_THING = re.compile(
    r"把([^，,。；;]{1,10}?)(?:换|改|调|挪|搬|迁|升级|降)"
    r"|\b(?:switched|changed|moved|swapped|replaced|upgraded|renamed|updated)\s+"
    r"(?:my|our|the|his|her|their)\s+((?:[a-z]+\s+)?[a-z]+)\s+(?:to|from|for|with)\b",
    re.IGNORECASE,
)


def _thing_changed(new: str) -> set[str]:
    """The nouns of what ``new`` says it changed, when it names it (:data:`_THING`)."""
    m = _THING.search(new)
    if m is None:
        return set()
    words = m.group(1) or m.group(2) or ""
    return {
        w for w in subjects.zone(words + ("是" if has_han(words) else " is")) if w not in _FILLER
    }


#: Characters that say nothing of what a Chinese text is about.
_HAN_FUNCTION = frozenset(
    "我你他她它们的了是在有不没也都还就又再很太和与跟对把被给从到个一这那每月年天日时要会能可以"
)


def _shared_han(old: str, new: str) -> bool:
    """Whether both texts hold one Chinese character of substance: with an attribute
    both state that allows several values (diet, health, price), the character ties
    them to one ("我是素食者" / "不再坚持全素了"; "月薪" / "涨薪"), where "我对芒果过敏" /
    "咖啡彻底戒了" share none."""
    chars = set(re.findall(r"[\u4e00-\u9fff]", old)) & set(re.findall(r"[\u4e00-\u9fff]", new))
    return bool(chars - _HAN_FUNCTION)


def _residue(old: str, new: str, shared: frozenset[str]) -> bool:
    """Whether ``old`` holds a Chinese character outside its shared words that ``new``
    lacks: a value of one character ("紧急联系人是我妈" / "…改成我爱人了")."""
    rest = old
    for word in shared:
        rest = rest.replace(word, " ")
    return any(
        ch not in new for ch in re.findall(r"[\u4e00-\u9fff]", rest) if ch not in "的了是在我"
    )


def _qualified(new: str, old: str, word: str) -> bool:
    """Whether ``new`` names ``word`` with a number or version after it that ``old``
    lacks ("Python 2" is not the "Python" of "use Python", "GitLab CI" not
    "GitLab"): another thing."""
    if has_han(word):
        return False  # "邮箱 123456789@qq.com": an address after the noun, no version
    after = re.compile(re.escape(word) + r"\s*(v?\d|(?-i:[A-Z]{2,})\b)", re.IGNORECASE)
    m = after.search(new)
    if m is None or after.search(old) is not None:
        return False
    # A word in capitals the old text says too is no version: "QA" of "handles QA for
    # the mobile app" / "mobile app QA is Lena's job now".
    return not (m.group(1).isalpha() and _holds(old, m.group(1)))


#: Attributes a person has several values of at once (two allergies, rent and
#: salary): one subject only with a word of substance in common (:func:`_shared_han`).
_SEVERAL_VALUES = frozenset({"diet", "health", "price"})  # (_OWN: a person's own)
_OWN = frozenset("name age birthday occupation employer education home hometown".split())
#: Words that name an amount, not what it is of ("dose went up to 100mg").
_AMOUNT_WORDS = frozenset("dose dosage amount weight went gone 剂量 药量 体重 分量".split())


def _holds(text: str, word: str) -> bool:
    if _NUMBER.fullmatch(word):  # a number as a whole: "两万" is not in "两万五"
        return word in {n.replace(",", "") for n in _NUMBER.findall(text)}
    if re.fullmatch(r"[\w.+#'-]+", word, re.ASCII):
        # A stem meets its longer forms ("server" in "servers"); an identifier with a
        # mark in it ("sam.k", "jlee_codes") only itself ("sam.k" is not in "sam.kim").
        end = r"(?![A-Za-z0-9])" if re.search(r"[._@#+]", word) else ""
        return re.search(r"(?<![A-Za-z0-9])" + re.escape(word) + end, text, re.I) is not None
    return word in text


#: Words that frame an old value in the new text as what was given up.
_GIVEN_UP = re.compile(
    r"\binstead of\b|\brather than\b|\bno longer\b|\bnot\b|\bdropped\b(?!\s+to\b)|\bretired\b"
    # "was too expensive" gives it up; "was postponed" moves it, keeping it.
    r"|\bwas\b(?!\s+(?:\w+ly\s+)?(?:postponed|moved|pushed|rescheduled|delayed|bumped|brought"
    r"|changed|updated|extended|raised|increased|cut|lowered|reduced|approved|renamed)\b)"
    r"|\bused to\b|\bold\b|\bclosed\b|\bgone\b|\bfrom\b|\bsold\b|\bleft\b|\boutgrew\b"
    r"|\bquit\b|不再|停|戒|下线|砍(?!到)|放弃|不用|退|弃|淘汰|旧|以前|原来|之前|而不是|从|离开|离职|没|不开|换掉|不",
    re.IGNORECASE,
)


def _leaves(clause: str) -> bool:
    """Whether a clause says something stopped, left, moved or was replaced."""
    found = cue(clause)
    return found is not None and found[0] not in ("now", "new", "status", "value")


def _gives_up_old(old: str, new: str) -> bool:
    """Whether ``new`` gives up a value of ``old`` ("不用Confluence了"; not the subject
    of "周会不用钉钉了" beside "每周一开周会")."""
    said = [w for w in _values(old) if _holds(new, w)]
    return any(_given_up(new, [w], strict=True) for w in said)


def _given_up(new: str, kept: list[str], strict: bool = False) -> bool:
    """Whether each old value the new text still names stands in a clause that gives it
    up ("Elasticsearch was too expensive", "IDEA 基本不开了", "instead of webpack").
    ``strict``: only by words of giving up, not by any signal of a move or a stop in
    the clause (the subject of "周会挪到周二" is not given up)."""
    clauses = re.split(r"[，,。;；!！?？]|\.(?!\d)|\bbut\b|\band\b|但是|不过", new)
    for word in kept:
        holding = [c for c in clauses if _holds(c, word)]
        if not holding or not any(
            things.gives_up(c, word, _GIVEN_UP) or (not strict and _leaves(c)) for c in holding
        ):
            return False
    return True


def word_queries(new_text: str) -> tuple[str, str] | None:
    """The tsquery texts (English, Chinese) that find what a statement of change may
    replace, or None when ``new_text`` states no change. The words of the statement,
    the other products of the kinds it names, and for a move the words of living."""
    if not _facts.is_change(new_text) and not may_change(new_text):
        return None
    words = query_terms(new_text + " " + " ".join(_facts.change_words(new_text)))
    english, chinese = synonyms.widened(new_text, *words)  # "经费" meets "预算"
    if not english and not chinese:
        return None
    return english, chinese


__all__ = ["CUES", "Evidence", "cue", "judge", "may_change", "unchanged", "word_queries"]
