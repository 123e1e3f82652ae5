"""Is a sentence a fact, and does it state a change? Rules for Chinese and English, no LLM.

Two questions the write path asks of a text before it becomes, or replaces, a memory:

- :func:`non_fact` — a question, request, hypothetical, greeting, thanks or
  acknowledgement is not a fact ("要不要换成 MongoDB 呢？", "what if we used X?",
  "Which database did we decide to use?"): it is not remembered and it never
  replaces anything.
- :func:`change_applies` — an explicit statement of change (改用, 换成, 不再,
  已经搬到, 改成; switched to/from, instead of, no longer, moved to, replaced X
  with Y) replaces a current memory about the same subject. The rules lean to
  "keep both": a wrong replacement loses a fact, a missed one leaves one too many.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memory_pg._regex import Prefiltered
from memory_pg._segment import EN_STOPWORDS, segment
from memory_pg.text.questions import TRIM as _TRIM
from memory_pg.text.questions import is_question
from memory_pg.text.topics import bare_role, known_topic, product_names, product_topics

# -- non-facts ------------------------------------------------------------------------

_HYPOTHETICAL = re.compile(
    r"如果|假如|假设|假使|要是|万一|倘若|的话|要不要|要不(?!然)|或许|也许|说不定|可能会|在考虑|考虑(?:换|改|用|要|是否|一下|下|看看)"
    r"|想想|打算看看|不如|能否|是否应该|是不是应该|在犹豫|犹豫|纠结"
    r"|\b(?:what if|how about|what about|suppose|supposing|imagine|hypothetically|(?-i:[Ii]f)|maybe"
    r"|perhaps|might|we could|i could|should we|shall we|not sure|unsure|would it be"
    r"|would be nice|in theory"
    r"|(?:i|we)(?:'m|'re| am| are)?\s+(?:still\s+)?(?:considering|thinking (?:about|of)|wondering)"
    r"|considering (?:switching|moving|using|changing|replacing|migrating))\b",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"^(?:请你|请帮|请给|请问|麻烦|帮我|帮忙|给我|告诉我|你能|你可以|你帮|能帮|可以帮|写一个|写个|解释|翻译"
    r"|总结一下|查一下|搜一下|搜索一下|推荐|介绍一下|列出|生成"
    r"|(?:please\s+)?(?:can|could|would|will)\s+you\b|please\b(?!\s+remember)|pls\b|help me\b"
    r"|tell me\b|show me\b|give me\b|explain\b|summari[sz]e\b|translate\b|write me\b"
    r"|write an?\b|list\b|recommend\b|suggest\b|let me know\b|look up\b|search for\b)",
    re.IGNORECASE,
)
_PLEASANTRY = (
    r"hi|hello|hey|hiya|good (?:morning|afternoon|evening|night)|thanks(?: a lot)?|thank you"
    r"(?: so much| very much)?|thx|ty|cheers|ok|okay|k|cool|great|nice|sure|got it|gotcha"
    r"|sounds good|perfect|awesome|alright|all right|right|bye|goodbye|see you|yes|yeah|yep|no"
    r"|nope|understood|noted|lol|haha|wow|oh|ah|hmm|indeed|exactly|agreed|fine"
    r"|你好|您好|嗨|哈喽|早上好|早安|中午好|下午好|晚上好|晚安|谢谢你?|谢了|多谢|感谢|辛苦了|好的|好吧"
    r"|好滴|好嘞|好|行|行吧|可以|嗯+|恩|明白了?|知道了|了解|收到|没问题|拜拜|再见|对|对的|是的|不是"
    r"|不用了?|哦+|噢|啊|哈+|太好了|不错|棒|厉害|ok了"
)
_PLEASANTRY_ONLY = re.compile(
    r"^(?:(?:" + _PLEASANTRY + r")(?![A-Za-z])[\s,，!！.。~～、]*)+$", re.IGNORECASE
)
_LEADING_PLEASANTRY = re.compile(
    r"^(?:(?:" + _PLEASANTRY + r")(?![A-Za-z])\s*[,，!！.。~～、]+\s*)+", re.IGNORECASE
)
# "Remember that I'm vegetarian" / "记住我是素食者" is a fact asked to be kept, not a request.
_REMEMBER = re.compile(
    r"^(?:(?:please\s+)?(?:remember|note|keep in mind)(?:\s+that\b|\s*[:：])\s*"
    r"|(?:请)?(?:记住|记一下|记下|记着|备注)[:：,，]?\s*)",
    re.IGNORECASE,
)


def strip_pleasantries(sentence: str) -> str:
    """``sentence`` without a leading greeting, thanks or acknowledgement ("好的，我们用 X")
    and without a leading "remember that" / "记住" (what follows is the fact)."""
    text = _LEADING_PLEASANTRY.sub("", sentence.strip())
    return _REMEMBER.sub("", text).strip()


def non_fact(text: str) -> str | None:
    """Why ``text`` is not a fact to remember, or None when it may be one.

    Returns ``"question"``, ``"hypothetical"``, ``"request"`` or ``"pleasantry"``
    (greetings, thanks, acknowledgements).

    Example:
        >>> non_fact("要不要换成 MongoDB 呢？")
        'question'
        >>> non_fact("数据库改用 PostgreSQL，不再使用 MySQL") is None
        True
    """
    body = text.strip()
    if not body.strip(_TRIM) or _PLEASANTRY_ONLY.match(body.strip()):
        return "pleasantry"
    body = strip_pleasantries(body)
    if not body.strip(_TRIM):
        return "pleasantry"
    if is_question(body):
        return "question"
    if _HYPOTHETICAL.search(body):
        return "hypothetical"
    if _REQUEST.match(body.strip(_TRIM)):
        return "request"
    return None


# -- changes ------------------------------------------------------------------------

# An object: a Latin name (with dots, digits, "+", "#": Next.js, C++, gpt-4o, two
# capitalised words), or a short run of Chinese up to a particle or punctuation.
_OBJ_BODY = (
    r"[A-Za-z][\w.+#-]*(?-i:\s+[A-Z0-9][\w.+#-]*)?"
    r"|[\u4e00-\u9fff][\u4e00-\u9fff0-9]{0,7}?(?=了|的|吧|啦|呀|去|来|啊|$|[\s，,。.！!；;、）)])"
)


#: A time of day ("10am", "9:30", "3 p.m."): a new value only where something moved
#: to it; never an old value (any memory may name a time).
_TIME_OF_DAY = r"\d{1,2}[:：]\d{2}(?:\s?[ap]\.?m\b\.?)?|\d{1,2}\s?[ap]\.?m\b\.?"


def _obj(name: str) -> str:
    return "(?P<" + name + ">" + _OBJ_BODY + ")"


# Each may take 了 ("数据库换成了 PostgreSQL", the most common way to say it).
_ZH_VERB_NEW = (
    r"(?:改用|换成|换用|改成|改为|改到|改在|换到|切换到|切换成|切到|迁移到|迁到|转到|转用"
    r"|替换成|替换为)了?"
)
_ZH_MOVE = r"(?:搬到|搬去|搬家到|搬回|移居到?|定居到?)了?"
_EN_SWITCH = (
    r"switch(?:ed|ing)?|chang(?:e|ed|ing)|mov(?:e|ed|ing)|migrat(?:e|ed|ing)"
    r"|transition(?:ed|ing)?"
)
# Named groups: ``old`` / ``new`` the values, ``subj`` the subject when the pattern
# reaches back for it, ``mid`` the words between an English verb and "from" ("switched
# the frontend from React"). Elsewhere the subject is the clause before the match; for
# ``instead`` the clause before the verb of choice ("后端用 Go 而不是 Python").
_CHANGE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # old → new: 把 X 换成 Y / 从 X 换成 Y / 由 X 改为 Y
    (
        "old_new",
        re.compile(
            r"(?:把|从|由|将)\s*" + _obj("old") + r"\s*" + _ZH_VERB_NEW + r"\s*" + _obj("new")
        ),
    ),
    (
        "old_new",
        re.compile(r"(?:从|由)\s*" + _obj("old") + r"\s*" + _ZH_MOVE + r"\s*" + _obj("new")),
    ),
    ("subject_new", re.compile(r"(?P<subj>^|.*?)\s*" + _ZH_VERB_NEW + r"\s*" + _obj("new"))),
    ("subject_new", re.compile(r"(?P<subj>^|.*?)\s*" + _ZH_MOVE + r"\s*" + _obj("new"))),
    ("old", re.compile(r"不再(?:使用|用|采用|选用|住在|住|在|是|做|喜欢|吃|喝)?\s*" + _obj("old"))),
    ("instead", re.compile(r"(?:而不是|而非|取代了?|替代了?)\s*(?:用|使用)?\s*" + _obj("old"))),
    (
        "old_new",
        re.compile(
            r"\b(?:"
            + _EN_SWITCH
            + r"|went|port(?:ed|ing)?)(?P<mid>(?:\s+\w+){0,3}?)\s+from\s+"
            + _obj("old")
            + r"\s+(?:over\s+)?to\s+"
            + _obj("new"),
            re.IGNORECASE,
        ),
    ),
    (
        "old_new",
        re.compile(r"\breplac(?:e|ed|ing)\s+" + _obj("old") + r"\s+with\s+" + _obj("new"), re.I),
    ),
    (
        "subject_new",
        re.compile(
            # What was switched may stand between ("switched the database to X"): it
            # names the subject as the words before the verb do.
            r"(?P<subj>^|.*?)\b(?:" + _EN_SWITCH + r")(?P<mid>(?:\s+(?:it|over|everything|them))?"
            r"(?:\s+(?!to\b)[\w-]+){0,3}?)\s+to\s+(?:the\s+)?"
            # A time of day is a new value here ("The standup moved to 10am").
            r"(?P<new>" + _TIME_OF_DAY + "|" + _OBJ_BODY + ")",
            re.IGNORECASE,
        ),
    ),
    (
        "instead",
        re.compile(r"(?P<new>[A-Za-z][\w.+#-]*)\s+instead\s+of\s+" + _obj("old"), re.IGNORECASE),
    ),
    (
        "old",
        re.compile(
            r"\b(?:no longer|not anymore|don't|do not|doesn't|does not)\s+(?:use|uses|using"
            r"|live in|living in|work at|work for|like|prefer|run on|deploy to)\s+(?:the\s+)?"
            + _obj("old"),
            re.IGNORECASE,
        ),
    ),
    (
        "old",
        re.compile(
            r"\b(?:stopped|quit|dropped|abandoned|ditched)\s+(?:using\s+)?(?:the\s+)?"
            + _obj("old"),
            re.IGNORECASE,
        ),
    ),
)
_CHANGES = tuple((kind, Prefiltered(pattern)) for kind, pattern in _CHANGE_PATTERNS)
_RESIDENCE = re.compile(
    r"住在|(?<![记抓忍挡停站顶撑稳守盯])住(?![院宿手口])|家在|搬到|搬去|搬家|移居|定居|常驻|base在"
    r"|\b(?:live|lives|living|lived|moved|move|relocated|relocating|based|reside|resides)\b",
    re.IGNORECASE,
)
# The speaker (or "the user", as an LLM's compaction writes it) as the one who lives or
# moves: "我已经搬到", "我家在", "I moved", "we relocated". Not any 我: "我妈妈住在北京".
_ZH_ADVERBS = (
    r"已经|已|现在|目前|一直|还|也|就|都|又|刚刚?|曾经|之前|以前|去年|今年|上个?月|最近|暂时|长期"
    r"|正在|在"
)
_SPEAKER_RESIDENCE = re.compile(
    r"(?:我|本人|用户)们?(?:" + _ZH_ADVERBS + r")*\s*"
    r"(?:住在|住(?![院宿手口])|家在|搬到|搬去|搬家|搬回|移居|定居|常驻|base在)"
    r"|\b(?:i|we|the user|user)(?:'m|'ve|'d|'re|\s+(?:am|are|is|have|has|had|was|were|been|just"
    r"|recently|finally|already|now|currently|still|then|also|will))*\s+(?:live[sd]?|living"
    r"|mov(?:e|ed|es|ing)|relocat(?:e|ed|ing)|resid(?:e|es|ed|ing)|based|stay(?:s|ed|ing)?)\b"
    r"|\bmy (?:home|house|place|apartment|flat) is in\b",
    re.IGNORECASE,
)
_SUBJECT_NOISE = re.compile(
    r"关键决策|决策|决定|我们团队|团队|我们|我|已经|已|现在|目前|后来|最终|最后|打算|准备|统一|全部|都|也|就|又|再"
    r"|上个?月|这个?月|本月|去年|今年|昨天|今天|最近|刚刚?|上周|这周|本周"
    r"|[:：,，。]|\b(?:our team|we|i|they|you|have|has|had|now|already|finally|just|decided|to"
    r"|the|our|my|a|an|also|recently|officially|everything|all|it|over|then|last|this|week"
    r"|month|year|yesterday|today|is|are|was|were|am|be|been|will|would|do|does|did)\b"
    # A contraction's tail ("I've", "we're") is no subject either.
    r"|'(?:ve|re|m|d|ll|s)\b",
    re.IGNORECASE,
)
# Where the clause of a subject starts: "我们讨论了很久，数据库改用 X" / "X and stopped Y".
_CLAUSE = re.compile(r"[，,。；;!！?？]|\b(?:and|but|so)\b|而且|并且|但是|所以", re.IGNORECASE)
# The verb of choice before "instead of" / "而不是": the subject is what comes before it.
_CHOICE_VERB = re.compile(
    r"使用|采用|选用|选择|选了|用|是"
    r"|\b(?:went with|go(?:ing)? with|chose|choose|picked|pick|opted for|use[sd]?|using"
    r"|prefer(?:s|red)?|is|are|was|were)\b",
    re.IGNORECASE,
)
# Someone other than the speaker, or one named instance among several (server A, the
# test environment): a memory about one is not replaced by a change about another.
_PERSONS = re.compile(
    r"\b(?:colleagues?|co-?workers?|friends?|wife|husband|partner|girlfriend|boyfriend|mom|mum"
    r"|mother|dad|father|parents|brothers?|sisters?|sons?|daughters?|kids?|children|boss"
    r"|manager|teammates?|roommates?|flatmates?|neighbou?rs?|cousins?|uncle|aunt"
    r"|grand(?:ma|pa|mother|father)|he|she|his|her|him)\b"
    r"|妈妈|母亲|爸爸|父亲|父母|爸妈|老婆|老公|妻子|丈夫|爱人|媳妇|男朋友|女朋友|男友|女友|同事|朋友"
    r"|老板|领导|上司|经理|哥哥|姐姐|弟弟|妹妹|儿子|女儿|孩子|室友|邻居|家人|奶奶|爷爷|外婆|外公"
    r"|姥姥|姥爷|叔叔|阿姨|舅舅|同学|客户(?!端)|(?<=我)[妈爸哥姐弟妹]|(?<![其吉])他们?|她们?"
    r"|[小老][王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗高郑梁谢宋唐许韩冯邓曹彭曾肖]",
    re.IGNORECASE,
)
_INSTANCES = re.compile(
    r"\b(?:production|prod|staging|stage|dev|development|test|testing|qa|uat|sandbox"
    r"|pre-?prod(?:uction)?|local)\s+(?:environment|env|servers?|clusters?|database|db|instance)\b"
    r"|\b(?:servers?|hosts?|nodes?|machines?|clusters?|instances?|vms?|regions?"
    r"|data ?cent(?:er|re)s?|environments?|envs?|sites?|branch)\s+(?:#?\d+|(?-i:[A-Z]))(?![\w.])"
    r"|(?:生产|测试|开发|预发布?|线上|线下|本地|正式|灰度|演示|预生产)环境"
    r"|(?:服务器|主机|节点|机器|集群|实例|机房|数据中心|分支)\s*(?:[A-Za-z0-9]+|[一二三四五六七八九十]+)号?"
    r"|[A-Za-z0-9一二三四五六七八九十]+号(?:服务器|主机|机器?|节点|集群|机房)",
    re.IGNORECASE,
)
_LATIN_WORD = re.compile(r"[A-Za-z0-9]+(?:[.+#-][A-Za-z0-9]+)*[+#]*")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "weekday",
        re.compile(
            r"周[一二三四五六日天末]|星期[一二三四五六日天]|礼拜[一二三四五六日天]"
            r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b",
            re.IGNORECASE,
        ),
    ),
    (
        "clock",
        re.compile(r"\d{1,2}[:：]\d{2}|\d{1,2}\s*(?:点|am|pm)|[上下]午|中午|晚上|早上", re.I),
    ),
    (
        "date",
        re.compile(
            r"\d{1,2}\s*月|\d{1,2}\s*[日号]|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b",
            re.I,
        ),
    ),
    ("number", re.compile(r"\d")),
)


@dataclass(frozen=True)
class Change:
    """What a statement of change says.

    Attributes:
        subject: whose or what's change it is, without the speaker ("数据库" in
            "数据库改用 PostgreSQL", "Server B" in "Server B switched from Ubuntu to
            Debian", "生产环境" in "生产环境不再使用 MySQL"); "" when it is the
            speaker's ("I don't like coffee") or unsaid.
        new: what it is now ("" for a pure negation: "不再使用 MySQL").
        old: what it no longer is.
        residence: a change of where the speaker lives ("我已经搬到上海了"), or where
            a person named as the subject lives ("我妈妈搬到上海了").
    """

    subject: str
    new: str
    old: tuple[str, ...]
    residence: bool = False


@lru_cache(maxsize=1024)
def parse_change(text: str) -> Change | None:
    """The change ``text`` states, or None when it states none (or is not a fact).

    Example:
        >>> parse_change("数据库改用 PostgreSQL，不再使用 MySQL")
        Change(subject='数据库', new='PostgreSQL', old=('MySQL',), residence=False)
    """
    if non_fact(text) is not None:
        return None
    new, old, subjects = "", [], []
    found = False
    for kind, pattern in _CHANGES:
        for match in pattern.finditer(text):
            found = True
            groups = {k: (v or "").strip() for k, v in match.groupdict().items()}
            if kind == "subject_new" and new:
                continue  # "把 X 换成 Y" already read as old → new
            if groups.get("old"):
                old.append(groups["old"])
            new = new or groups.get("new", "")
            subjects.append(_subject_of(kind, text, match))
    if not found:
        return None
    old_kept = tuple(dict.fromkeys(o for o in old if o and o.casefold() != new.casefold()))
    subject = next((s for s in subjects if s), "")
    # "We moved to 2pm for the weekly sync" is a meeting's move, not the speaker's.
    residence = (
        not product_topics(text)
        and _kind(new) != "clock"
        and (
            _SPEAKER_RESIDENCE.search(text) is not None
            or (_PERSONS.search(subject) is not None and _RESIDENCE.search(text) is not None)
        )
    )
    return Change(subject, new, old_kept, residence)


def _subject_of(kind: str, text: str, match: re.Match[str]) -> str:
    names = match.groupdict()
    if "subj" in names:
        raw = names["subj"] or ""
    else:
        raw = text[: match.start()]
        if kind == "instead":
            raw = _CLAUSE.split(raw)[-1]
            verb = _CHOICE_VERB.search(raw)
            raw = raw[: verb.start()] if verb else ""
    return _subject(raw + " " + (names.get("mid") or ""))


def _subject(raw: str) -> str:
    # The last clause before the verb names the subject: "我们讨论了很久，数据库改用 X".
    clause = _CLAUSE.split(raw)[-1]
    words = re.sub(r"\s+", " ", _SUBJECT_NOISE.sub(" ", clause)).strip().lstrip("的").strip()
    # "用户" / "the user" is how an LLM's compaction names the speaker.
    return "" if re.fullmatch(r"用户|(?:the )?user", words, re.IGNORECASE) else words


def _words(text: str) -> set[str]:
    seg = segment(text)
    return set(seg.words) | set(seg.cjk)


def _about(text: str, subject: str) -> bool:
    """Whether ``text`` names ``subject``: each of its Latin words ("server", "b"), and
    each of its Chinese runs, whole or word by word ("生产环境": 生产, 环境)."""
    latin = {w.casefold() for w in _LATIN_WORD.findall(text)}
    if any(w.casefold() not in latin for w in _LATIN_WORD.findall(subject)):
        return False
    words = _words(text)
    for run in _CJK_RUN.findall(subject):
        run_words = set(segment(run).cjk)
        if run not in text and not (run_words and run_words <= words):
            return False
    return True


def _qualifiers(text: str) -> set[str]:
    """The people other than the speaker and the named instances ``text`` speaks of."""
    found = [m.group(0) for p in (_PERSONS, _INSTANCES) for m in p.finditer(text)]
    return {re.sub(r"\s+", "", q).casefold() for q in found}


#: What a statement that something stopped says beside the thing itself: the verb
#: of use, and words of no content (:data:`memory_pg._segment.EN_STOPWORDS`; the
#: Chinese ones never reach here, :func:`memory_pg._segment.segment` drops them).
_STOP_SAYING = EN_STOPWORDS | frozenset(
    "use uses using used like likes prefer prefers live lives living work works run runs "
    "deploy any 使用 用 采用 选用 住在 住 做 喜欢 吃 喝 再".split()
)

#: Where the stopping is said: what follows names what stopped.
_STOPPING = re.compile(
    r"\b(?:no longer|not anymore|don't|do not|doesn't|does not|didn't|did not|never"
    r"|stopped|quit|dropped|abandoned|ditched)\b|不再|不用|停用|没有再",
    re.IGNORECASE,
)

#: When it stopped ("last month", "since March", "now", "现在"): not what stopped.
_WHEN = re.compile(
    r"\b(?:since|last|this|until|from)\s+\w+|\b\w+\s+ago\b"
    r"|\b(?:anymore|any more|at all|now|these days|nowadays|recently|today|yesterday)\b"
    r"|现在|目前|已经|如今|从此|以后",
    re.IGNORECASE,
)

_INSTEAD = re.compile(r"而不是|而非|取代|替代|\binstead\s+of\b", re.IGNORECASE)


def _stopped_in_full(new_text: str, change: Change, old_text: str) -> bool:
    """Whether ``old_text`` holds all the clause says after the stopping ("不再", "no
    longer"), when aside: "I don't like Italian wine" keeps "I like Italian food",
    "我们不再使用 S3 存储日志" keeps "用户头像存储在 S3". A Chinese word counts where
    the old text holds it anywhere (jieba may cut "飞书" apart in one text only)."""
    if _INSTEAD.search(new_text):
        return True  # "后端用 Go 而不是 Python": a new choice, said in full
    said: set[str] = set()
    for clause in _CLAUSE.split(new_text):
        if not clause or not any(_mentions(clause, o) for o in change.old):
            continue
        stop = _STOPPING.search(clause)
        rest = _WHEN.sub(" ", clause[stop.end() :] if stop else clause)
        said |= {w.casefold() for w in _words(rest)}
    said -= _STOP_SAYING | {w.casefold() for w in _words(change.subject)}
    old_words = {w.casefold() for w in _words(old_text)}
    return all(w in old_words or (_CJK_RUN.search(w) and w in old_text) for w in said)


def _mentions(text: str, name: str) -> bool:
    if re.search(r"[\u4e00-\u9fff]", name):
        return name in text
    return re.search(r"(?<![\w.+#-])" + re.escape(name) + r"(?![\w+#])", text, re.I) is not None


def _kind(value: str) -> str | None:
    for kind, pattern in _KINDS:
        if pattern.search(value):
            return kind
    if re.fullmatch(r"[A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*)*", value.strip()):
        return "name"
    return None


def _topics_of(names: tuple[str, ...], context: str) -> set[str]:
    """The kinds of the products named, read in ``context`` (Redis as a cache is a cache)."""
    topics: set[str] = set()
    for name in names:
        topics |= product_topics(name) if name else set()
    in_context = product_topics(context)
    if "database" in topics and "cache" in in_context and "database" not in in_context:
        topics = (topics - {"database"}) | {"cache"}
    return topics


def change_applies(new_text: str, old_text: str) -> bool:
    """Whether ``new_text`` states a change that replaces ``old_text`` (same user and type).

    First, both must be about the same subject: ``old_text`` must not speak of
    someone or something the change does not (``My colleague Tom drinks coffee`` /
    ``I don't like coffee``; ``测试环境使用 MySQL`` / ``生产环境不再使用 MySQL``), and
    when the change names a subject, ``old_text`` must name it too (``Server B
    switched from Ubuntu to Debian`` does not replace ``Server A runs on Ubuntu``),
    unless that subject is only a role its product fills (``缓存换成 Redis`` /
    ``我们用 Memcached``). Then it does when the change names what ``old_text`` said
    (``不再使用 MySQL`` / ``数据库使用 MySQL``); when its new value is a product of the
    kind ``old_text`` names (``改用 PostgreSQL`` / ``使用 MySQL``); when both say where
    the same person lives (the speaker: ``我住在北京`` / ``我已经搬到上海了``, never
    ``我妈妈住在北京``); or when both are about the same subject words and give a
    value of the same kind (``周会改成周三`` / ``周会在周二``). It does not when
    ``old_text`` also names products of other kinds (it holds more than this fact),
    nor for a different fact about the same subject (``数据库每天凌晨备份``).

    Example:
        >>> change_applies("数据库改用 PostgreSQL", "数据库每天凌晨备份")
        False
        >>> change_applies("生产环境不再使用 MySQL", "测试环境使用 MySQL")
        False
    """
    change = parse_change(new_text)
    if change is None or non_fact(old_text) is not None:
        return False
    if not _qualifiers(old_text) <= _qualifiers(new_text):
        return False  # about someone or something else: my colleague, server A, 测试环境
    new_topics = _topics_of((change.new, *change.old), new_text)
    old_topics = product_topics(old_text)
    if change.subject and not _about(old_text, change.subject):
        role = known_topic(change.subject)
        if (
            role is None
            or role not in old_topics
            or _qualifiers(change.subject)
            # "The analytics database switched to X" says nothing of "the main database".
            or not bare_role(change.subject)
        ):
            return False  # "生产环境不再使用 MySQL" says nothing of "我们用 MySQL"
    if new_topics and old_topics - new_topics:
        return False  # the old memory holds facts of other kinds too: keep it
    # What stopped, with no new value, replaces only a memory that says all of it.
    whole = bool(change.new) or _stopped_in_full(new_text, change, old_text)
    if any(_mentions(old_text, name) for name in change.old) and whole:
        return True
    if new_topics and old_topics & new_topics and whole:
        return True
    if change.residence:
        if change.subject:  # a person named, and named in the old memory too
            return _RESIDENCE.search(old_text) is not None
        return _SPEAKER_RESIDENCE.search(old_text) is not None
    if new_topics or known_topic(change.subject) is not None or not change.subject:
        return False  # a role noun alone ("数据库") is shared by different facts
    subject_words = _words(change.subject)
    if not subject_words or not subject_words <= _words(old_text):
        return False
    kind = _kind(change.new)
    return kind is not None and kind == _kind(old_text.replace(change.subject, " "))


def change_words(text: str) -> list[str]:
    """Words a memory replaced by the change in ``text`` may hold instead of its own:
    the products of the kinds it names ("使用 MySQL" for "改用 PostgreSQL") and, for
    a move, the words of living somewhere ("我住在北京" for "我已经搬到上海了")."""
    change = parse_change(text)
    if change is None:
        return []
    words: list[str] = []
    for topic in product_topics(text):
        words.extend(product_names(topic))
    if change.residence:
        words.extend(("住", "住在", "家在", "live", "lives", "living", "based", "moved"))
    return words


def different_kinds(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` both name products, of no common kind (a database and
    a cache): two facts, however alike the rest of their words."""
    ka, kb = product_topics(a), product_topics(b)
    return bool(ka and kb and not ka & kb)


@lru_cache(maxsize=1024)
def is_change(text: str) -> bool:
    """Whether ``text`` states a change (see :func:`parse_change`)."""
    return parse_change(text) is not None


__all__ = [
    "Change",
    "change_applies",
    "change_words",
    "different_kinds",
    "is_change",
    "is_question",
    "non_fact",
    "parse_change",
    "strip_pleasantries",
]
