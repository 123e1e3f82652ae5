"""MemoryCompactor: a dialogue buffer becomes profile, status, decisions and todos."""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypedDict, TypeVar

from memory_pg._extract import (
    Extraction,
    Turn,
    decision_topic,
    detect_language,
    extract,
    to_turn,
)
from memory_pg._facts import non_fact
from memory_pg._json_repair import parse_llm_json
from memory_pg.config import StoreSettings
from memory_pg.entities import Entity, from_llm, named_in
from memory_pg.errors import InvalidArgument, LLMResponseUnparseable
from memory_pg.text.topics import known_topic, names_only, normalize_topic

logger = logging.getLogger(__name__)

DialogueItem = str | Mapping[str, str]
ChatFunc = Callable[[str], str]
AsyncChatFunc = Callable[[str], Awaitable[str]]
Language = Literal["auto", "zh", "en"]

#: Importance given to each kind of compacted memory (0..1).
IMPORTANCE: dict[str, float] = {
    "user_profile": 0.8,
    "key_decision": 0.8,
    "project_status": 0.6,
    "todo": 0.5,
    "dialogue": 0.3,
}


class KeyDecision(TypedDict):
    """A decision and its topic key (``database``, ``payment``...): a later decision on the
    same topic supersedes this one. The offline extractor gives None when the decision
    names no choice ("数据库每天凌晨备份"): it then replaces only what it states a change of."""

    decision: str
    topic: str | None


class _CompactionFields(TypedDict):
    user_profile: list[str]
    project_status: list[str]
    key_decisions: list[KeyDecision]
    todos: list[str]


class CompactionResult(_CompactionFields, total=False):
    """What :meth:`MemoryCompactor.compact` returns.

    Always present: ``user_profile``, ``project_status`` and ``todos`` (lists of short
    sentences) and ``key_decisions`` (a list of :class:`KeyDecision`, one per topic, the
    latest). Present only when some batch could not be compacted: ``uncompacted``, the
    raw texts of those batches (kept, not dropped), and ``errors``, why (never user text).
    Present only when the LLM listed them: ``entities``, the people, places,
    organisations, projects and things the facts name (read by
    :func:`memory_pg.entities.from_llm`).
    """

    uncompacted: list[str]
    errors: list[str]
    entities: list[Entity]


@dataclass(frozen=True)
class CompactedMemory:
    """One memory ready for :meth:`MemoryStore.add_memory`.

    Attributes:
        memory_type: ``user_profile``, ``project_status``, ``key_decision``, ``todo``, or
            ``dialogue`` for raw text that could not be compacted.
        text: the memory text.
        topic: the topic key of a decision (supersession key); None for other types.
        importance: 0..1, from :data:`IMPORTANCE`.
        metadata: ``{"compaction": "llm" | "offline"}``, or for raw text
            ``{"compaction": "failed", "reason": ...}``.
        entities: the entities the LLM listed that this text names (None when it listed
            none: the store's rules find them on write).
    """

    memory_type: str
    text: str
    topic: str | None = None
    importance: float = 0.5
    metadata: dict[str, Any] = field(default_factory=dict)
    entities: tuple[Entity, ...] | None = None


_PROMPTS = {
    "en": """You maintain the long-term memory of an assistant. Read the dialogue and extract \
durable facts about the USER and their work. Answer with ONE JSON object and nothing else, \
with exactly these keys:
{
  "user_profile": ["facts about the user: who they are, their business, role, preferences"],
  "project_status": ["the current state of their projects: done, in progress, launched"],
  "key_decisions": [{"decision": "the decision, one sentence", "topic": "a short lowercase \
English key: database, language, framework, frontend, backend, hosting, payment, llm, ..."}],
  "todos": ["what is still to be done, with its deadline when one was given"],
  "entities": [{"name": "a person, place, organisation, project or thing the items above \
name", "kind": "person|place|organisation|project|thing", "aliases": ["other names the \
dialogue uses for the same one"]}]
}
Rules:
- Use only what the user said or accepted; the assistant's words and suggestions are not facts \
about the user.
- Only facts. Never store a question ("Which database did we decide to use?", "Where do I \
live?"), a request to the assistant, a hypothetical or an idea being weighed ("what if we used \
MongoDB?", "maybe we should..."), a greeting, thanks or an acknowledgement ("ok", "got it").
- A question is not a decision and not a todo: "Do I need to finish X?" is not a todo.
- One decision per topic: when the user changed their mind (switched, replaced, no longer), keep \
the latest, and say what it replaced ("Switched the frontend from React to Svelte").
- The topic names what the decision chooses (database = which database); another decision about \
the same thing gets its own key ("database_backup" for "back up the database nightly").
- Each item is a short self-contained sentence in the language of the dialogue.
- Give an alias only when the dialogue says both names are the same one (a nickname and a \
full name); two people are never one entity.
- Use [] for a key with nothing to report. Do not invent anything.

Dialogue:
<dialogue>
{dialogue}
</dialogue>""",
    "zh": """你负责维护一个助手的长期记忆。阅读下面的对话，\
提取关于【用户】及其工作的长期有效的信息。只输出一个 JSON 对象，不要输出任何其他内容，键必须是：
{
  "user_profile": ["关于用户的事实：身份、业务、职位、偏好"],
  "project_status": ["用户项目的当前状态：已完成、进行中、已上线"],
  "key_decisions": [{"decision": "一句话描述的决定", "topic": "简短的小写英文主题键，如 database、\
language、framework、frontend、backend、hosting、payment、llm"}],
  "todos": ["还要做的事，有截止时间的写上截止时间"],
  "entities": [{"name": "上面各项提到的人、地点、组织、项目或事物", \
"kind": "person|place|organisation|project|thing", "aliases": ["对话中同一对象的其他叫法"]}]
}
规则：
- 只采用用户说过或认可的内容；助手说的话和建议不是关于用户的事实。
- 只记录事实。不要记录提问（“我们决定用哪个数据库？”“我住在哪里？”）、对助手的请求、\
假设或还在考虑的想法（“要不要换成 MongoDB 呢？”“如果用 X 会怎样”）、\
问候、感谢或“好的”“收到”之类的应答。
- 提问不是决定也不是待办：“我是不是还要完成支付模块？”不是待办。
- 每个主题只保留一个决定：用户改变主意时（改用、换成、切换到、不再使用），只保留最新的决定，\
并写明替换了什么（“数据库改用 PostgreSQL，不再使用 MySQL”）。
- topic 表示这个决定选的是什么（database 表示选哪个数据库）；同一事物的其他决定用自己的键\
（“数据库每天凌晨备份”用 database_backup）。
- 每一项用对话所用的语言写成简短、独立的一句话。
- 只有对话明确说明两个名字指同一对象时才写 aliases（如昵称和全名）；不同的人绝不合并。
- 没有内容的键用 []。不要编造。

对话：
<dialogue>
{dialogue}
</dialogue>""",
}

_KEY_ALIASES = {
    "user_profile": ("user_profile", "profile", "userprofile", "user", "用户画像", "用户信息"),
    "project_status": ("project_status", "status", "project", "projects", "项目状态", "项目进展"),
    "key_decisions": ("key_decisions", "key_decision", "decisions", "关键决策", "决策"),
    "todos": ("todos", "todo", "to_do", "tasks", "action_items", "待办", "待办事项"),
}
_TEXT_FIELDS = ("text", "content", "fact", "item", "task", "description", "value")


def _format_turn(item: DialogueItem) -> str:
    if isinstance(item, str):
        return item
    turn = to_turn(item)
    return f"{turn.role}: {turn.text}"


def build_prompt(items: Sequence[DialogueItem], *, language: Language = "auto") -> str:
    """The compaction prompt for one batch: Chinese when the dialogue is mostly Chinese."""
    dialogue = "\n".join(_format_turn(item) for item in items)
    lang = detect_language(dialogue) if language == "auto" else language
    return _PROMPTS[lang].replace("{dialogue}", dialogue)


def _strings(value: object, depth: int = 0) -> list[str]:
    """Flatten what a model put under a key into non-empty strings."""
    if value is None or depth > 3:
        return []
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if isinstance(value, bool | int | float):
        return [str(value)]
    if isinstance(value, Mapping):
        for name in _TEXT_FIELDS:
            if isinstance(value.get(name), str):
                return _strings(value[name], depth + 1)
        pairs = [f"{k}: {'; '.join(_strings(v, depth + 1))}" for k, v in value.items()]
        return [p for p in pairs if not p.endswith(": ")]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v, depth + 1)]
    return []


def _topic(raw: object, decision: str) -> str | None:
    """The topic key of an LLM's decision: the known key of a product or role it is
    ("db", "postgresql" -> ``database``), else its own ("database_backup" stays:
    a backup decision must not replace the database decision)."""
    if isinstance(raw, str) and raw.strip():
        key = normalize_topic(raw)
        spelled = key.replace("_", " ")
        return (known_topic(spelled) if names_only(spelled) else None) or key
    return decision_topic(decision)


def _decisions(value: object) -> list[KeyDecision]:
    if isinstance(value, Mapping) and not any(k in value for k in ("decision", *_TEXT_FIELDS)):
        # {"database": "PostgreSQL", ...}: a topic → decision mapping
        value = [{"decision": d, "topic": k} for k, v in value.items() for d in _strings(v)]
    items = value if isinstance(value, list | tuple) else [value]
    found: list[KeyDecision] = []
    for item in items:
        if isinstance(item, Mapping):
            texts = _strings(item.get("decision")) or _strings(
                {k: v for k, v in item.items() if k in _TEXT_FIELDS}
            )
            raw_topic = item.get("topic") or item.get("key") or item.get("category")
        else:
            texts, raw_topic = _strings(item), None
        found.extend({"decision": t, "topic": _topic(raw_topic, t)} for t in texts)
    return found


def result_from_reply(reply: str) -> CompactionResult:
    """Read a model's reply into a :class:`CompactionResult`.

    Raises:
        LLMResponseUnparseable: no JSON object in the reply, or none of the expected keys.
    """
    data = parse_llm_json(reply)
    by_key = {normalize_topic(str(k)): v for k, v in data.items()}
    picked = {
        field_name: next((by_key[a] for a in aliases if a in by_key), None)
        for field_name, aliases in _KEY_ALIASES.items()
    }
    if all(v is None for v in picked.values()):
        raise LLMResponseUnparseable(
            f"the LLM reply is JSON but has none of the expected keys ({len(data)} other keys)"
        )
    result: CompactionResult = {
        "user_profile": _facts_only(_strings(picked["user_profile"])),
        "project_status": _facts_only(_strings(picked["project_status"])),
        "key_decisions": [d for d in _decisions(picked["key_decisions"]) if is_fact(d["decision"])],
        "todos": _facts_only(_strings(picked["todos"])),
    }
    # Never a reason to lose the memories: a missing or malformed list leaves the rules.
    entities = from_llm(by_key.get("entities"))
    if entities is not None:
        result["entities"] = entities
    return result


def is_fact(text: str) -> bool:
    """False for a question or a bare "ok", whoever calls it a fact: a model told not to
    sometimes still returns "Which database did we pick?" as a decision (MCP: an agent)."""
    return non_fact(text) not in ("question", "pleasantry")


def _facts_only(texts: list[str]) -> list[str]:
    return [t for t in texts if is_fact(t)]


def _from_extraction(found: Extraction) -> CompactionResult:
    return {
        "user_profile": found.user_profile,
        "project_status": found.project_status,
        "key_decisions": [{"decision": d, "topic": t} for d, t in found.key_decisions],
        "todos": found.todos,
    }


def _dedupe(texts: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    kept = []
    for text in texts:
        key = " ".join(text.split()).casefold()
        if key not in seen:
            seen.add(key)
            kept.append(text)
    return kept


def merge_results(results: Iterable[CompactionResult]) -> CompactionResult:
    """Merge batch results in dialogue order: lists concatenated without duplicates, and one
    decision per topic, the latest (a later "switched to X" supersedes an earlier choice)."""
    results = list(results)
    latest: dict[str | tuple[str], KeyDecision] = {}
    for result in results:
        for decision in result["key_decisions"]:
            # A decision with no topic is keyed by its own text: it replaces no other.
            key = decision["topic"] or (" ".join(decision["decision"].split()).casefold(),)
            latest.pop(key, None)  # re-insert: keep the order of the latest
            latest[key] = decision
    merged: CompactionResult = {
        "user_profile": _dedupe(t for r in results for t in r["user_profile"]),
        "project_status": _dedupe(t for r in results for t in r["project_status"]),
        "key_decisions": list(latest.values()),
        "todos": _dedupe(t for r in results for t in r["todos"]),
    }
    uncompacted = [t for r in results for t in r.get("uncompacted", [])]
    if uncompacted:
        merged["uncompacted"] = uncompacted
        merged["errors"] = _dedupe(e for r in results for e in r.get("errors", []))
    if any("entities" in r for r in results):
        # One per key, as the first batch named it (its aliases included).
        by_key: dict[str, Entity] = {}
        for entity in (e for r in results for e in r.get("entities", [])):
            by_key.setdefault(entity.key, entity)
        merged["entities"] = list(by_key.values())
    return merged


def _failed(items: Sequence[DialogueItem], exc: Exception) -> CompactionResult:
    reason = str(exc) if isinstance(exc, LLMResponseUnparseable) else type(exc).__name__
    logger.warning(
        "compaction of %d dialogue item(s) failed (%s); keeping them as raw dialogue",
        len(items),
        reason,
    )
    logger.debug("uncompacted dialogue: %r", items)
    return _kept_raw(items, reason)


def _kept_raw(items: Sequence[DialogueItem], reason: str) -> CompactionResult:
    """A result that keeps ``items`` as they are (``uncompacted``), saying why."""
    return {
        "user_profile": [],
        "project_status": [],
        "key_decisions": [],
        "todos": [],
        "uncompacted": [_format_turn(item) for item in items],
        "errors": [reason],
    }


def _chunks(texts: Sequence[str], limit: int) -> list[str]:
    """Join texts with new lines into pieces of at most ``limit`` characters."""
    pieces: list[str] = []
    current = ""
    for text in texts:
        while len(text) > limit:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(text[:limit])
            text = text[limit:]
        if current and len(current) + 1 + len(text) > limit:
            pieces.append(current)
            current = ""
        current = f"{current}\n{text}" if current else text
    if current:
        pieces.append(current)
    return pieces


#: What PostgreSQL text cannot hold: NUL, and a lone surrogate (no UTF-8 for it).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable_text(text: str) -> str:
    """``text`` with each character PostgreSQL cannot store (:data:`_UNSTORABLE`) as
    U+FFFD: a turn pasted with one is kept, not refused."""
    return _UNSTORABLE.sub("\ufffd", text)


def split_text(text: str, limit: int) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters; ``[]`` for blank text.

    Each piece ends where :func:`~memory_pg.jobs.consolidate.cap_summary` would cut
    it (a sentence end, else a blank, else ``limit`` characters), so nothing is
    lost but the blanks around the cuts.

    Example:
        >>> split_text("First fact. Second fact.", 15)
        ['First fact.', 'Second fact.']
    """
    from memory_pg.jobs.consolidate import cap_summary

    if limit < 1:
        raise InvalidArgument(f"limit must be at least 1, got {limit}")
    pieces: list[str] = []
    rest = text.strip()
    while rest:
        piece = cap_summary(rest, limit) or rest[:limit]
        pieces.append(piece)
        rest = rest[len(piece) :].lstrip()
    return pieces


def to_memories(
    result: CompactionResult, *, source: str, max_text_chars: int
) -> list[CompactedMemory]:
    """Turn a :class:`CompactionResult` into memories the store can write, in order.

    An item longer than ``max_text_chars`` (a model that echoed a long paste) would
    make the store refuse the whole batch, every time: a profile, status or todo
    item is split into several memories (:func:`split_text`), a decision is cut
    there (its pieces would share its topic and replace one another).
    """
    from memory_pg.jobs.consolidate import cap_summary

    meta = {"compaction": source}
    listed = result.get("entities")
    items = [("user_profile", t) for t in result["user_profile"]]
    items += [("project_status", t) for t in result["project_status"]]
    memories = [
        CompactedMemory(kind, piece, None, IMPORTANCE[kind], dict(meta))
        for kind, text in items
        for piece in split_text(text, max_text_chars)
    ]
    memories += [
        CompactedMemory(
            "key_decision",
            cap_summary(d["decision"], max_text_chars),
            d["topic"],
            IMPORTANCE["key_decision"],
            dict(meta),
        )
        for d in result["key_decisions"]
    ]
    memories += [
        CompactedMemory("todo", piece, None, IMPORTANCE["todo"], dict(meta))
        for t in result["todos"]
        for piece in split_text(t, max_text_chars)
    ]
    if listed is not None:
        memories = [dataclasses.replace(m, entities=named_in(m.text, listed)) for m in memories]
    failed = {"compaction": "failed", "reason": "; ".join(result.get("errors", []))}
    memories += [
        CompactedMemory("dialogue", piece, None, IMPORTANCE["dialogue"], dict(failed))
        for piece in _chunks(result.get("uncompacted", []), max_text_chars)
    ]
    return memories


def raw_memories(
    items: Sequence[DialogueItem], *, reason: str, max_text_chars: int
) -> list[CompactedMemory]:
    """Dialogue items kept as they are, as ``dialogue`` memories of at most
    ``max_text_chars`` characters (``metadata["compaction"]`` is ``"failed"``).

    What is written when the store refused the compacted memories of a batch, so
    the buffer still drains. ``reason`` says why and must hold no user text.
    """
    kept = _kept_raw(items, reason)
    return to_memories(kept, source="failed", max_text_chars=max_text_chars)


ChatT = TypeVar("ChatT", ChatFunc, AsyncChatFunc)


class _CompactorBase(Generic[ChatT]):
    """Settings, batching and the offline path of both compactors; they differ in the call."""

    def __init__(
        self,
        llm_chat_func: ChatT | None = None,
        max_batch: int = 10,
        *,
        language: Language = "auto",
        max_text_chars: int = StoreSettings.max_text_chars,
    ) -> None:
        """Create a compactor.

        Args:
            llm_chat_func: prompt → reply text; None for the offline extractor.
            max_batch: dialogue items per LLM call.
            language: the prompt's language: ``"auto"`` (by the dialogue's script), ``"zh"``
                or ``"en"``.
            max_text_chars: raw text kept after a failure is split into memories of at
                most this many characters (the store's limit).
        """
        if max_batch < 1:
            raise InvalidArgument(f"max_batch must be at least 1, got {max_batch}")
        if language not in _PROMPTS and language != "auto":
            raise InvalidArgument(f"language must be 'auto', 'zh' or 'en', got {language!r}")
        self.llm_chat_func: ChatT | None = llm_chat_func
        self.max_batch = max_batch
        self.language: Language = language
        self.max_text_chars = max_text_chars

    def _memories(self, result: CompactionResult) -> list[CompactedMemory]:
        return to_memories(
            result,
            source="offline" if self.llm_chat_func is None else "llm",
            max_text_chars=self.max_text_chars,
        )

    def _batches(self, items: Sequence[DialogueItem]) -> list[Sequence[DialogueItem]]:
        return [items[i : i + self.max_batch] for i in range(0, len(items), self.max_batch)]

    @staticmethod
    def _offline(items: Sequence[DialogueItem]) -> CompactionResult:
        turns: list[Turn] = [to_turn(item) for item in items]
        return merge_results([_from_extraction(extract(turns))])


class MemoryCompactor(_CompactorBase[ChatFunc]):
    """Compacts a dialogue buffer into ``user_profile``, ``project_status``,
    ``key_decisions`` and ``todos``.

    With ``llm_chat_func`` (any ``Callable[[str], str]``, prompt in, reply text out;
    an :class:`~memory_pg.llm.OpenAICompatibleLLM` qualifies) each batch of
    ``max_batch`` items is one LLM call, with a Chinese prompt for mostly Chinese
    dialogue and an English one otherwise; the JSON reply is repaired
    (:func:`~memory_pg._json_repair.parse_llm_json`) and the batches merged. When a
    call fails, whatever the error, or its reply cannot be read, that batch's raw
    text is kept (``uncompacted``), never dropped. Without ``llm_chat_func`` a
    rule-based offline extractor for Chinese and English is used: no network at all.

    Example:
        >>> compactor = MemoryCompactor()  # offline
        >>> result = compactor.compact(["我们决定使用 PostgreSQL 作为数据库", "下周要完成支付模块"])
        >>> result["key_decisions"]
        [{'decision': '我们决定使用 PostgreSQL 作为数据库', 'topic': 'database'}]
        >>> result["todos"]
        ['下周要完成支付模块']
    """

    def compact(self, texts: Sequence[DialogueItem]) -> CompactionResult:
        """Compact dialogue items (``"user: ..."``, ``"助手：..."``, plain text, or
        ``{"role": ..., "content": ...}``) into a :class:`CompactionResult`."""
        items = list(texts)
        if self.llm_chat_func is None:
            return self._offline(items)
        return merge_results(self._compact_batch(batch) for batch in self._batches(items))

    def _compact_batch(self, batch: Sequence[DialogueItem]) -> CompactionResult:
        assert self.llm_chat_func is not None
        try:
            return result_from_reply(
                self.llm_chat_func(build_prompt(batch, language=self.language))
            )
        except Exception as exc:  # any chat function's failure: keep the text, never lose it
            return _failed(batch, exc)

    def compact_to_memories(self, texts: Sequence[DialogueItem]) -> list[CompactedMemory]:
        """Compact and return memories the store can write directly, in order; raw text that
        could not be compacted comes back as ``dialogue`` memories."""
        return self._memories(self.compact(texts))


class AsyncMemoryCompactor(_CompactorBase[AsyncChatFunc]):
    """The asyncio twin of :class:`MemoryCompactor`, for an async chat function
    (``AsyncOpenAICompatibleLLM`` qualifies). Batches are sent one after another."""

    async def compact(self, texts: Sequence[DialogueItem]) -> CompactionResult:
        """See :meth:`MemoryCompactor.compact`."""
        items = list(texts)
        if self.llm_chat_func is None:
            return self._offline(items)
        results = [await self._compact_batch(batch) for batch in self._batches(items)]
        return merge_results(results)

    async def _compact_batch(self, batch: Sequence[DialogueItem]) -> CompactionResult:
        assert self.llm_chat_func is not None
        try:
            reply = await self.llm_chat_func(build_prompt(batch, language=self.language))
            return result_from_reply(reply)
        except Exception as exc:  # any chat function's failure: keep the text, never lose it
            return _failed(batch, exc)

    async def compact_to_memories(self, texts: Sequence[DialogueItem]) -> list[CompactedMemory]:
        """See :meth:`MemoryCompactor.compact_to_memories`."""
        return self._memories(await self.compact(texts))


__all__ = [
    "IMPORTANCE",
    "AsyncMemoryCompactor",
    "CompactedMemory",
    "CompactionResult",
    "KeyDecision",
    "MemoryCompactor",
    "build_prompt",
    "is_fact",
    "merge_results",
    "raw_memories",
    "result_from_reply",
    "split_text",
    "storable_text",
    "to_memories",
]
