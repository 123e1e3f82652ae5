"""The offline extractor: rule-based facts from Chinese and English dialogue, with no LLM."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from memory_pg import _facts
from memory_pg.text.topics import known_topic, normalize_topic, product_topics, role_topic

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
_ROLE_PREFIX = re.compile(
    r"^\s*(user|human|me|用户|我|assistant|ai|bot|agent|助手|助理|system|系统)\s*[:：]\s*",
    re.IGNORECASE,
)
_NON_USER_ROLES = {"assistant", "ai", "bot", "agent", "助手", "助理", "system", "系统", "tool"}
# Sentences end at 。！？!?;； (and the full-width ．, half-width ｡ and the wave dash ～ that
# chat uses as a full stop), after a run of ellipses (… or ……), at new lines, and at "."
# followed by a blank.
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;．｡～])|(?<=…)(?!…)|\n+|(?<=\.)\s+")
# Clauses: a Chinese comma always, an ASCII comma when a blank follows (not "1,000").
_CLAUSE_SEP = re.compile(r"(，\s*|,\s+)")
_LEADING_CONJUNCTION = re.compile(
    r"^(?:(?:and|but|so|then|also|plus)\s+|(?:而且|但是|然后|并且|所以|另外|还有|同时)\s*)",
    re.IGNORECASE,
)
_TRIM = " \t\r\n。.！!？?；;，,、．｡～…"

# "Go" is a language only capitalised and not in "go with", "go ahead"...

_DECISION_STRONG = re.compile(
    r"决定|选择|选用|采用|改用|换成|换用|切换到|切到|迁移到|迁到|不再用|不再使用|敲定|定下"
    r"|\b(?:decided|decide|decision|chose|choose|chosen|going with|go with|went with"
    r"|switch(?:ed|ing)? (?:to|from|over)|mov(?:e|ed|ing) to|migrat(?:e|ed|ing) to"
    r"|replac(?:e|ed|ing)|settled on|opted for|picked|no longer use|stop(?:ped)? using"
    r"|instead of|we'll use|we will use|will use|gonna use)\b",
    re.IGNORECASE,
)
_DECISION_WEAK = re.compile(
    r"使用|用|选|\b(?:use|uses|using|built on|build on|runs on|run on|stick with)\b",
    re.IGNORECASE,
)
_TODO = re.compile(
    r"待办|别忘了|别忘记|不要忘了|记得|需要|必须|还得|我得|我们得|得先|明天|后天|下周|下星期"
    r"|下个月|下个星期|周[一二三四五六日末]前|月底前|之前要|(?<![主重只不想概纲摘必])要(?![求点素是])"
    r"|\b(?:todo|to-do|need to|needs to|have to|has to|must|remember to|don't forget"
    r"|do not forget|tomorrow|next week|next month|deadline|should|plan to|planning to"
    r"|going to|gotta|will need|by (?:monday|tuesday|wednesday|thursday|friday|eod|the end))\b",
    re.IGNORECASE,
)
_STATUS = re.compile(
    r"项目|进度|正在|已经|已完成|完成了|做完了|上线|目前|进行中|开发中|搞定|测试中|阶段|里程碑"
    r"|\b(?:working on|we're building|we are building|i'm building|i am building|status"
    r"|finished|launched|currently|in progress|done with|completed|shipped|deployed|released"
    r"|so far|right now|at the moment|is live|went live|milestone|sprint|progress"
    r"|(?:the|our|my) project|mvp)\b",
    re.IGNORECASE,
)
_PROFILE = re.compile(
    r"我是|我叫|我在|我做|我们公司|我们做|我们是|我的名字|我住|我来自|我负责|我从事|我们团队"
    r"|我们主要|我的公司|我开了|我经营|本人|我喜欢|我不喜欢|我偏好|我习惯|我擅长"
    r"|\b(?:i am|i'm|my name is|my name's|i work|we run|i run|our company|my company"
    r"|our team|we sell|i sell|i live|i own|we are a|we're a|i prefer|i like|i love|i hate"
    r"|i've been)\b",
    re.IGNORECASE,
)
_TOPIC_ROLE_ZH = re.compile(r"(?:作为|当作|当|来做|做)\s*([\u4e00-\u9fffA-Za-z]{1,10}?)(?:的|$)")
_TOPIC_OBJECT_ZH = re.compile(
    r"(?:改用|换成|切换到|选用|采用|使用|选择|不再用|用)\s*([A-Za-z][\w.+#-]*|[\u4e00-\u9fff]{1,6})"
)
_TOPIC_ROLE_EN = re.compile(
    r"\b(?:as|for)\s+(?:the|our|a|an|my)?\s*([a-z][\w+#-]*(?:\s+[a-z][\w-]*)?)", re.IGNORECASE
)
_TOPIC_OBJECT_EN = re.compile(
    r"\b(?:use|using|to|with|chose|choose|picked|adopt|on)\s+([A-Za-z][\w.+#-]*)", re.IGNORECASE
)
# A clause that gives a reason belongs to the clause before it.
_REASON = re.compile(r"^\s*(?:因为|由于|毕竟|(?:because|since|as)\b)", re.IGNORECASE)
_STOPWORDS = {"the", "a", "an", "our", "my", "it", "this", "that", "them"}
_USE_VERB = re.compile(
    r"用|选|采用|接入|\b(?:use|using|used|chose|choose|chosen|picked|pick|adopt|adopted|go with"
    r"|going with|went with|settled on|opted for)\b",
    re.IGNORECASE,
)
# Where the speaker lives, and moving: a profile fact, not a decision or a project status.
_RESIDENCE = re.compile(
    r"^(?:[^，,]*?)(?:我|本人)[^，,]{0,6}?"
    r"(?:住在|(?<![记抓忍挡停站顶撑稳守盯])住(?![院宿手口])|家在|搬到|搬去|搬家|移居|定居|常驻)"
    r"|\b(?:i|we)\s+(?:now\s+|still\s+|have\s+|'ve\s+|just\s+)?(?:live|moved|relocated)\b"
    r"|\bi(?:'m| am)\s+(?:now\s+)?(?:living|based|moving)\b|\bmy home is\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Turn:
    """One dialogue turn: who spoke (``user``, ``assistant``, ``system``) and what was said."""

    role: str
    text: str


@dataclass
class Extraction:
    """What the offline extractor found, in dialogue order."""

    user_profile: list[str] = field(default_factory=list)
    project_status: list[str] = field(default_factory=list)
    key_decisions: list[tuple[str, str | None]] = field(default_factory=list)  # (text, topic)
    todos: list[str] = field(default_factory=list)


def to_turn(item: str | Mapping[str, str]) -> Turn:
    """Read a buffer item: ``"user: ..."``, ``"助手：..."``, plain text, or ``{"role", "content"}``.

    Plain text with no role prefix is taken as the user's.
    """
    if isinstance(item, Mapping):
        return Turn(role=str(item.get("role", "user")).lower(), text=str(item.get("content", "")))
    match = _ROLE_PREFIX.match(item)
    if match is None:
        return Turn(role="user", text=item)
    role = match.group(1).lower()
    return Turn(role="assistant" if role in _NON_USER_ROLES else "user", text=item[match.end() :])


def is_user(turn: Turn) -> bool:
    """Whether the turn is the user's (and so may hold facts about the user)."""
    return turn.role not in _NON_USER_ROLES


def detect_language(text: str) -> str:
    """``"zh"`` when Chinese characters outnumber Latin words, else ``"en"``."""
    cjk = len(_CJK.findall(text))
    return "zh" if cjk and cjk >= len(_LATIN_WORD.findall(text)) else "en"


def split_sentences(text: str) -> list[str]:
    """Split Chinese and English text into sentences, dropping empty ones."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip(_TRIM)]


def decision_topic(text: str) -> str | None:
    """The topic key of a decision: what it chooses, or None when it names no choice.

    A named product gives its kind (``PostgreSQL`` → ``database``); else a role the
    choice is for (``用腾讯文档做协作工具`` → ``协作工具``, ``chose Zustand for state
    management`` → ``state_management``). A role noun alone gives none: "数据库每天凌晨
    备份" is not a choice of database, and a shared key would make it replace one.
    """
    product = product_topics(text)
    if product:
        return known_topic(text) if len(product) > 1 else next(iter(product))
    if not _USE_VERB.search(text):
        return None
    for pattern in (_TOPIC_ROLE_ZH, _TOPIC_ROLE_EN):
        for match in pattern.finditer(text):
            words = [w for w in match.group(1).split() if w.lower() not in _STOPWORDS]
            if words:
                role = " ".join(words)
                return role_topic(role) or normalize_topic(role)
    return None


def _category(clause: str) -> str | None:
    if _REASON.match(clause):
        return None
    if _RESIDENCE.search(clause) and not product_topics(clause):
        return "profile"
    if _DECISION_STRONG.search(clause) or (
        _DECISION_WEAK.search(clause) and known_topic(clause) is not None
    ):
        return "decision"
    if _TODO.search(clause):
        return "todo"
    if _STATUS.search(clause):
        return "status"
    if _PROFILE.search(clause):
        return "profile"
    return None


def _items(sentence: str) -> list[tuple[str, str]]:
    """Categorised pieces of one sentence: a clause with no category stays with its neighbour."""
    parts = _CLAUSE_SEP.split(sentence)
    clauses = parts[0::2]
    separators = [*parts[1::2], ""]
    items: list[list[str]] = []  # [category, text]
    pending = ""
    for clause, separator in zip(clauses, separators, strict=True):
        category = _category(clause)
        if category is None:
            if items:
                items[-1][1] += clause + separator
            else:
                pending += clause + separator
            continue
        if (
            category == "decision"
            and items
            and items[-1][0] == "decision"
            and decision_topic(clause) is not None
            and decision_topic(clause) == decision_topic(items[-1][1])
        ):
            # "改用 PostgreSQL，不再使用 MySQL": one decision, not two that replace each other.
            items[-1][1] += clause + separator
            continue
        text = clause if not items else _LEADING_CONJUNCTION.sub("", clause)
        items.append([category, pending + text + separator])
        pending = ""
    return [(category, text.strip(_TRIM)) for category, text in items if text.strip(_TRIM)]


def extract(turns: Iterable[Turn]) -> Extraction:
    """Find profile facts, project status, decisions and todos in the user's turns.

    Turns of the assistant or system are skipped: what the assistant says is neither
    a fact about the user nor the user's decision. So are sentences that state no
    fact (:func:`memory_pg._facts.non_fact`: questions, requests, hypotheticals,
    greetings, thanks, acknowledgements); a leading "好的，" or "thanks," is cut off.
    Each sentence is split into clauses, each clause falls in the first matching
    category (decision, todo, status, profile), and a clause that matches none stays
    with the clause before it (``我在做跨境电商，主要卖家居用品`` is one profile fact).
    """
    found = Extraction()
    seen: set[tuple[str, str]] = set()
    for turn in turns:
        if not is_user(turn):
            continue
        for sentence in split_sentences(turn.text):
            sentence = _facts.strip_pleasantries(sentence)
            if _facts.non_fact(sentence) is not None:
                continue  # a question, request, hypothetical or pleasantry is no fact
            for category, text in _items(sentence):
                key = (category, " ".join(text.split()).casefold())
                if key in seen:
                    continue
                seen.add(key)
                if category == "decision":
                    found.key_decisions.append((text, decision_topic(text)))
                elif category == "todo":
                    found.todos.append(text)
                elif category == "status":
                    found.project_status.append(text)
                else:
                    found.user_profile.append(text)
    return found


__all__ = [
    "Extraction",
    "Turn",
    "decision_topic",
    "detect_language",
    "extract",
    "is_user",
    "split_sentences",
    "to_turn",
]
