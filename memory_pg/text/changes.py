"""Does a new statement change what an older one said? Decided from structure, in both languages.

A change has three parts, and each is read by concept, not by sentence:

1. **A signal of change** in the new text (:func:`cue`), by kind: from–to ("slipped
   from March 3 to March 10", "从望京搬到了回龙观"), instead-of, now ("现在",
   "these days"), new ("新的手机号"), stopped ("不再", "quit", "下线"), left
   ("离职"), moved ("搬到", "relocated"), postponed ("推迟"), cancelled ("取消"),
   switched ("换成", "replaced"), a value that rose or fell ("涨到", "down to"), and
   what used to be ("以前", "used to").
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
from functools import lru_cache

from memory_pg._segment import EN_STOPWORDS, segment
from memory_pg.entities import has_han
from memory_pg.text.attributes import stated, tagged

#: Signals of change by kind, each a concept in both languages.
CUES: tuple[tuple[str, str], ...] = (
    (
        "from_to",
        r"从[^，,。；;]{1,20}?(?:改|换|搬|迁|调|挪|推迟|提前|降|涨|升|变|转)[^，,。；;]{0,3}?[到至成为]"
        r"|\bfrom\b[^.;]{1,40}?\bto\b|由[^，,。]{1,15}?(?:改|换|变)[为成]",
    ),
    (
        "instead",
        r"\binstead\b|\brather than\b|\bin place of\b|而不是|而非|取代|替代|代替|替换",
    ),
    (
        "stopped",
        r"\bno longer\b|\bnot anymore\b|\bany ?more\b|\bstopped\b|\bquit\b|\bdropped\b"
        r"|\bditched\b|\bretired\b|\bgave up\b|\bshut (?:it )?down\b|\bclosed\b|\bis gone\b"
        r"|\bdecommissioned\b|\boutgrew\b|\bsold\b|\bturned off\b|\bkilled\b|\bended\b"
        r"|不再|停(?:用|掉|了|止)|戒(?:了|掉)|下线|关掉|关了|砍掉|砍了|放弃|不用了|退了|弃用|废弃"
        r"|淘汰|没了|不开了|不坚持|结束了|撤了|卖了|解约",
    ),
    (
        "left",
        r"\bleft\b|\bresigned\b|\bquit\b|\blaid off\b|\bfired\b|\bwent on leave\b"
        r"|离职|辞职|跳槽|辞了|被裁|走了|退休",
    ),
    (
        "moved",
        r"\bmoved\b|\bmoving\b|\brelocated\b|\btransferred\b|\bmigrat(?:ed|ing)\b|\bre-?homed\b"
        r"|搬(?:到|去|了|家|回)|迁(?:到|至|移|去|回)|调(?:到|回|去)|挪(?:到|去)|转到|转去|落户到",
    ),
    (
        "postponed",
        r"\bpostponed\b|\bpushed (?:back|out|to)\b|\bdelayed\b|\bslipped\b|\brescheduled\b"
        r"|\bmoved up\b|\bbrought forward\b|\breschedul\w*|\bbumped\b|\bpushed\b|\brebooked\b"
        r"|推迟|延期|延后|改期|提前到|顺延|往后推",
    ),
    (
        "cancelled",
        r"\bcancel(?:l)?ed\b|\bcalled off\b|\bscrapped\b|\bfell through\b|\bwithdr[ae]w\b"
        r"|\bbroke up\b|\bcame off\b|\bstepped down\b|取消|作废|黄了|分手|离婚|退课|退学"
        r"|不[\u4e00-\u9fff]{1,2}了",
    ),
    (
        "switched",
        r"\bswitched\b|\bswapped\b|\breplaced\b|\bupgraded\b|\bdowngraded\b|\brewr(?:ote|itten)\b"
        r"|\bchanged\b|\bconverted\b|\brenamed\b|\bupdated\b|\bbecame\b|\bturned into\b"
        r"|\bnow (?:use|uses|using|run|runs|on|is|are|at|in)\b|\bgone\b|\bgoing\b"
        r"|换成|换了|改用|换用|切到|切换|升级到|升级成|降级到|更换|换掉|改成|改为|改到|变成|变为"
        r"|更新|改名|重写|转成|改了|改(?=[喝吃用在去做走坐买学打穿开住])|换(?=[了成到掉个])|转行|转岗"
        r"|进入|\btook over\b|\bhanded\b|\bpassed to\b|\btaken over\b",
    ),
    (
        "value",
        r"\braised\b|\bcut\b|\bincreased\b|\bdecreased\b|\bdown to\b|\bup to\b|\brose\b|\bfell\b"
        r"|\bgrew\b|\bcrossed\b|\breached\b|\bhit\b|\bjumped\b|\bdoubled\b|\bhalved\b"
        r"|\bapproved\b|\brepriced\b|\bscaled\b|\bextended\b|\bshortened\b"
        r"|涨到|降到|涨了|降了|提高到|提到|减少到|减到|只剩|还剩|剩下|增加到|达到|突破|调整|调到|调成"
        r"|涨租|加到|减为|升到|批下来|(?:进度|数)到\s*[\d零一二两三四五六七八九十]",
    ),
    (
        "now",
        r"\bnow\b|\bthese days\b|\bnowadays\b|\bcurrently\b|\bfrom now on\b|\bgoing forward\b"
        r"|\bas of\b|\bagain\b|\bstarted\b|\bthis year\b"
        r"|现在|如今|目前|眼下|以后|从此|今后|已经|已(?=[\u4e00-\u9fff])|正式|重新|又开始",
    ),
    (
        "new",
        r"(?<!\d )\bnew\b|\bbrand-new\b|新的"
        r"|(?:^|(?<=[，,。的个了是换]))新(?![提增加开建招买来添到认识交])(?=[\u4e00-\u9fff])"
        r"|换了个|换了一个",
    ),
    (
        "used_to",
        r"\bused to\b|\bformerly\b|\bpreviously\b|\bthe old\b|\bwas too\b"
        r"|以前|原来|原本|之前|过去|旧的|(?<![照依仍])旧",
    ),
    (
        "status",
        r"\bresumed\b|\bunblocked\b|\bwent (?:live|ga)\b|\blaunched\b|\bshipped\b|\bpassed\b"
        r"|\bcompleted\b|\bfinished\b|\bback on track\b|\breleased\b|\bgot\b"
        r"|\bis done\b|\bexpanded\b|\bnarrowed\b"
        r"|上线了|重启|恢复|通过|完成了|解决了|赶上|发布了|交付|好多了",
    ),
)
_CUE = re.compile("|".join(f"(?P<{k}>{p})" for k, p in CUES), re.IGNORECASE)

#: Words that add a fact beside the old one rather than replace it.
_ADDITION = re.compile(
    r"\balso\b|\bas well\b|\bin addition\b|\badditionally\b|\bone more\b"
    r"|另外|还加了|也(?!不)|又(?:领养|买|加|添|多)|额外|再加",
    re.IGNORECASE,
)
#: Words that say nothing changed: "计划照旧", "still Sam's team".
_UNCHANGED = re.compile(
    r"\bstill\b|\bas before\b|\bas usual\b|\bnothing new\b|\bsame as\b|\bunchanged\b"
    r"|照旧|依旧|仍旧|仍然|还是老样子|没变|不变",
    re.IGNORECASE,
)
#: Who holds a fact, when it is not the speaker: kin and roles. Two texts naming two
#: different ones speak of two subjects.
_HOLDERS = re.compile(
    r"\b(?:my|our|his|her|their)\s+(?:(?:older|younger|little|big|ex-?|late)\s+)?"
    r"(wife|husband|partner|son|daughter|kids?|children|mom|mother|dad|father|parents|sister"
    r"|brother|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|niece|nephew|friend"
    r"|boss|manager|colleague|coworker|roommate|landlord|neighbou?r|doctor|dentist|team"
    r"|girlfriend|boyfriend|fianc[ée]e?|in-laws|baby|dog|cat)\b"
    r"|(老婆|老公|妻子|丈夫|爱人|媳妇|儿子|女儿|孩子|大宝|二宝|爸爸|妈妈|爸|妈|父母|爸妈|姐姐|妹妹|哥哥|弟弟"
    r"|爷爷|奶奶|外婆|外公|姥姥|姥爷|婆婆|公公|岳父|岳母|叔叔|阿姨|舅舅|姑姑|堂哥|表哥|表姐|表妹|堂妹"
    r"|朋友|同事|领导|老板|室友|房东|邻居|医生|男朋友|女朋友|对象)",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*|[零〇一二两三四五六七八九十百千万亿]+")
#: Words that say when or how a change happened, not what it is about.
_FILLER = frozenset(
    "last week month year yesterday today ago just recently finally already since ago "
    "officially entirely fully completely totally all everything everyone so too very "
    "really got get gets been have has had did do does done am be being new now old "
    "上周 上个月 去年 昨天 今天 最近 刚 刚刚 终于 已经 全部 彻底 基本 正式 都 了 上 这周 本周 "
    "下个月 下周 开始 现在 以后 一下 一直 还是 就 也 又 再 才".split()
)


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


@lru_cache(maxsize=4096)
def _content(text: str) -> frozenset[str]:
    """The words of ``text`` that can say what it is about or what it states, English
    ones by their stem ("logs", "logging" → "log"): no function words, numbers,
    signals of change or words of time."""
    stripped = _CUE.sub(" ", text)
    seg = segment(stripped)
    words = {stem(w) for w in seg.words if w not in EN_STOPWORDS and w not in _FILLER}
    cjk = {w for w in seg.cjk if len(w) > 1 and w not in _FILLER}
    return frozenset(w for w in words | cjk if w and not _NUMBER.fullmatch(w))


def stem(word: str) -> str:
    """A crude English stem, enough to meet a word's plural and verb forms: "servers"
    → "server", "logging" → "log", "standups" → "standup"."""
    w = word.lower().removesuffix("'s")
    for suffix in ("ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix) and not w.endswith("ss"):
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]
    return w


#: Where a holder of a fact stands: before the first verb of its sentence ("My
#: sister lives…", "我姐姐住在…"); after it, a holder is a value ("紧急联系人是我妈").
_VERB = re.compile(
    r"\b(?:is|are|was|were|has|have|had|lives?|works?|eats?|drinks?|likes?|loves?|uses?|runs?"
    r"|goes|go|owns?|leads?|[a-z]+ed)\b|是|在|住|对|有|喜欢|爱|不|用|改|换|吃|喝",
    re.IGNORECASE,
)
#: Holders that are family: a fact of theirs is never the speaker's.
_KIN = re.compile(
    r"wife|husband|partner|son|daughter|kid|child|mom|mother|dad|father|parent|sister|brother"
    r"|grand|aunt|uncle|cousin|niece|nephew|girlfriend|boyfriend|fianc|baby"
    r"|老婆|老公|妻子|丈夫|爱人|媳妇|儿子|女儿|孩子|宝|爸|妈|父母|姐|妹|哥|弟|爷|奶|外婆|外公|姥"
    r"|婆婆|公公|岳|叔|姨|舅|姑|表|堂|男朋友|女朋友|对象",
    re.IGNORECASE,
)


def _holders(text: str) -> set[str]:
    """Who holds the fact ``text`` states, when not the speaker: a kin or role word in
    subject position (the first few words: "My sister lives…", "我姐姐住在…"), before
    its first verb; after it, such a word is a value ("紧急联系人是我妈")."""
    verb = _VERB.search(text)
    zone = text[: verb.start()] if verb else text
    zone = zone[:24] if not has_han(zone[:8]) else zone[:6]
    return {(m.group(1) or m.group(2)).lower() for m in _HOLDERS.finditer(zone)}


def _values(text: str) -> set[str]:
    """Values a text gives: numbers, and names written in Latin letters (products,
    handles, addresses: "MySQL", "jake@acme.io", "4B"). In English, a word is a name
    when it is capitalised past the sentence's first word, or holds a digit or a mark."""
    numbers = {n.replace(",", "") for n in _NUMBER.findall(text)}
    han = has_han(text)
    names: set[str] = set()
    for m in _LATIN_VALUE.finditer(text):
        word = m.group(0)
        first = not text[: m.start()].strip(" \"'“(")
        if han or re.search(r"[\d@.+#_]", word) or (not first and word[0].isupper()):
            if word.lower() not in EN_STOPWORDS:
                names.add(word.lower())
    return numbers | names


_LATIN_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+#@'-]*[A-Za-z0-9_+#]|[A-Za-z]")


def judge(
    old: str,
    new: str,
    product_kinds: tuple[set[str], set[str]] | None = None,
    similar: bool = False,
) -> Evidence | None:
    """The evidence that ``new`` changes what ``old`` said, or None to keep both.

    ``product_kinds``: the kinds of product each text names (database, hosting …),
    when the caller knows them; one kind in common makes one subject. ``similar``:
    an embedding model that reads both texts finds them close ("coffee" and
    "caffeine"), which also makes one subject.

    Example:
        >>> judge("I live in Brooklyn.", "We moved to Jersey City in June.").kind
        'moved'
        >>> judge("My sister lives in Chengdu.", "My brother lives in Xi'an.") is None
        True
    """
    signal = cue(new)
    if signal is None or _ADDITION.search(new) or _UNCHANGED.search(new) or _HEDGE.search(new):
        return None
    before = cue(old)
    if before is not None and before[0] == signal[0] and not _values(old) & _values(new):
        # Two events of one kind ("upgraded Postgres" / "upgraded Node", "raised a
        # seed round" / "raised a Series A"), unless the new one names the old's value.
        return None
    holders_old, holders_new = _holders(old), _holders(new)
    if holders_old and holders_new and not holders_old & holders_new:
        return None  # my sister / my brother: two subjects
    if (holders_old and not holders_new and holders_old - {"team"}) or (
        holders_new and not holders_old and any(_KIN.search(h) for h in holders_new)
    ):
        # "我同事喝咖啡" / "我不再喝咖啡", "我吃素" / "我老公无肉不欢": two people.
        return None
    if product_kinds and product_kinds[1] and not product_kinds[0]:
        return None  # a product chosen says nothing of a fact that names none
    if _other_subject(old, new):
        return None  # 测试环境 / 生产环境, Server A / Server B: one noun, two things
    zone = _zone(old)
    if (
        zone
        and not any(_holds(new, w) for w in zone)
        and not (product_kinds and product_kinds[0] & product_kinds[1])
    ):
        return None  # what the old text is about is not named in the new one
    if "time" in stated(new[signal_end(new, signal) :][:40]) and "time" not in stated(old):
        return None  # the new value is a time ("moved to Thursdays"): the old one had one
    words_old, words_new = _content(old), _content(new)
    shared = words_old & words_new
    same = ""
    if shared:
        same = "words"
    elif product_kinds and product_kinds[0] & product_kinds[1]:
        same = "product kind"
    elif similar:
        same = "similar"
    else:
        both = set(stated(old)) & set(stated(new)) - _LOOSE_ATTRIBUTES
        if both:
            same = sorted(both)[0]
    if not same:
        return None
    # A value both name, which the new text gives up ("Jenkins 下线了"), is the old
    # value, not the subject.
    if any(_qualified(new, old, w) for w in shared):
        return None  # "Python 2" is not the "Python" of "use Python"
    given = {w for w in shared if _given_up(new, [w], strict=True)}
    if given and not shared - given and same == "words" and before is None:
        if any(not _holds(new, w) for w in _zone(old) & (words_old - given)):
            return None  # "数据分析脚本用 Python" / "后端不再用 Python": its own subject
        same = "value given up"
    own = (words_old - shared) | given | (_values(old) - _values(new))
    gone = [w for w in own if w in given or not _holds(new, w)]
    kept = [w for w in own if w not in given and _holds(new, w)]
    if kept and not _given_up(new, kept):
        return None  # the old value stands in the new text, not as what was left
    if not gone and not kept:
        if before is not None and before[1] != signal[1]:
            # One subject, its state changed: "Atlas 项目暂停了" / "…重启了".
            return Evidence(signal[0], signal[1], same, 1)
        if not _residue(old, new, shared):
            return None  # the new text says nothing the old one does not
    return Evidence(signal[0], signal[1], same, len(gone) + len(kept) or 1)


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
    lacks ("Python 2" is not the "Python" of "use Python"): another thing."""
    after = re.compile(re.escape(word) + r"\s*v?\d", re.IGNORECASE)
    return after.search(new) is not None and after.search(old) is None


def signal_end(text: str, signal: tuple[str, str]) -> int:
    """Where the signal's words end in ``text``."""
    at = text.find(signal[1])
    return at + len(signal[1]) if at >= 0 else 0


def _zone(text: str) -> set[str]:
    """The words before a text's first verb: what it is about ("测试环境", "Server A")."""
    if has_han(text):
        words: set[str] = set()
        for word, flag in tagged(text):
            if flag.startswith(("v", "p")) or word in "是在对有":
                return words
            if flag.startswith("n") or re.fullmatch(r"[A-Za-z0-9]+", word):
                words.add(word.lower())
        return set()
    verb = _VERB.search(text)
    if verb is None:
        return set()
    seg = segment(text[: verb.start()])
    return {stem(w) for w in seg.words if w not in _DETERMINERS}


_DETERMINERS = frozenset("the my our we i you your his her their this that its".split())


def _other_subject(old: str, new: str) -> bool:
    """Whether both texts open on one noun with different words around it: two things
    of one kind ("测试环境" / "生产环境", "Server A" / "Server B", "marketing budget" /
    "hiring budget")."""
    a, b = _zone(old), _zone(new)
    return bool(a & b) and bool(a - b) and bool(b - a)


#: Hedges: a plan or a guess is no change ("maybe we should", "要不要").
_HEDGE = re.compile(
    r"\bmaybe\b|\bperhaps\b|\bshould\b|\bmight\b|\bcould\b|\bthinking (?:about|of)\b"
    r"|\bconsidering\b|要不要|考虑|也许|或许|可能",
    re.IGNORECASE,
)


#: Attributes too general to make one subject by themselves: any sentence with a
#: number states a count, any with a verb of liking a preference.
_LOOSE_ATTRIBUTES = frozenset({"count", "time", "place", "opinion", "preference", "tool"})


def _holds(text: str, word: str) -> bool:
    if _NUMBER.fullmatch(word):  # a number as a whole: "两万" is not in "两万五"
        return word in {n.replace(",", "") for n in _NUMBER.findall(text)}
    if re.fullmatch(r"[\w.+#'-]+", word, re.ASCII):
        return re.search(r"(?<![A-Za-z0-9])" + re.escape(word), text, re.IGNORECASE) is not None
    return word in text


#: Words that frame an old value in the new text as what was given up.
_GIVEN_UP = re.compile(
    r"\binstead of\b|\brather than\b|\bno longer\b|\bnot\b|\bdropped\b|\bretired\b|\bwas\b"
    r"|\bused to\b|\bold\b|\bclosed\b|\bgone\b|\bfrom\b|\bsold\b|\bleft\b|\boutgrew\b|\bquit\b"
    r"|不再|停|戒|下线|砍|放弃|不用|退|弃|淘汰|旧|以前|原来|之前|而不是|从|离开|离职|没|不开|换掉|不",
    re.IGNORECASE,
)


def _leaves(clause: str) -> bool:
    """Whether a clause says something stopped, left, moved or was replaced."""
    found = cue(clause)
    return found is not None and found[0] not in ("now", "new", "status", "value")


def _given_up(new: str, kept: list[str], strict: bool = False) -> bool:
    """Whether each old value the new text still names stands in a clause that gives it
    up ("Elasticsearch was too expensive", "IDEA 基本不开了", "instead of webpack").
    ``strict``: only by words of giving up, not by any signal of a move or a stop in
    the clause (the subject of "周会挪到周二" is not given up)."""
    clauses = re.split(r"[，,。.;；!！?？]|\bbut\b|\band\b|但是|不过", new)
    for word in kept:
        holding = [c for c in clauses if _holds(c, word)]
        if not holding or not any(
            _GIVEN_UP.search(c) or (not strict and _leaves(c)) for c in holding
        ):
            return False
    return True


__all__ = ["CUES", "Evidence", "cue", "judge"]
