"""MemoryRetriever: a user's input in, the memories worth putting in the prompt out.

The store ranks in SQL (see :mod:`memory_pg.scoring`); the retriever drops what is
clearly irrelevant and formats the rest as a numbered, typed block whose labels
read in Chinese and English::

    相关记忆 / Relevant memories:
    1. [关键决策 key_decision] 使用 PostgreSQL 作为数据库 (2026-11-02)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypedDict, TypeVar

from memory_pg._facts import non_fact
from memory_pg._segment import EN_STOPWORDS, segment
from memory_pg.errors import InvalidArgument

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from memory_pg.async_store import AsyncMemoryStore
    from memory_pg.store import MemoryStore

logger = logging.getLogger(__name__)

__all__ = [
    "HEADER",
    "TYPE_LABELS",
    "AsyncMemoryRetriever",
    "MemoryRetriever",
    "RecallFilters",
    "RetrievalSettings",
    "format_block",
    "format_memories",
    "said_lately",
]

#: Readable names of the built-in types; a team's own types show their own name.
TYPE_LABELS: dict[str, str] = {
    "user_profile": "用户画像",
    "project_status": "项目状态",
    "key_decision": "关键决策",
    "todo": "待办事项",
    "dialogue": "对话",
}

#: The first line of :func:`format_block`'s block.
HEADER = "相关记忆 / Relevant memories:"


@dataclass(frozen=True)
class RetrievalSettings:
    """What counts as relevant enough to reach a prompt.

    A result is kept when its cosine ``similarity`` times the query's
    ``readability`` is at least ``min_similarity`` **or** its full-text score
    ``lexical`` is at least ``min_lexical`` (a query word, or a segmented Chinese
    word, matched). Both gates exist because an English-only model
    (all-MiniLM-L6-v2) gives Chinese text meaningless vectors: there, a word match
    is the evidence, and the similarity counts only as far as the model reads the
    query (1.0 for English). Measured on
    ``memory_pg/data/eval_bilingual.json`` with all-MiniLM-L6-v2: see the eval
    command in docs/measurements.md.

    Attributes:
        min_similarity: cosine similarity that alone makes a result relevant.
        min_lexical: full-text score (0..1) that alone makes a result relevant.
        min_score: final score below which a result is dropped whatever else.
    """

    min_similarity: float = 0.35
    min_lexical: float = 0.01
    min_score: float = 0.0

    def keeps(self, hit: Mapping[str, Any]) -> bool:
        """Whether a search result clears the gates."""
        if float(hit.get("score") or 0.0) < self.min_score:
            return False
        readable = float(hit.get("readability", 1.0) or 0.0)
        return (
            float(hit.get("similarity") or 0.0) * readable >= self.min_similarity
            or float(hit.get("lexical") or 0.0) >= self.min_lexical
        )


def settings_for(embedder: object) -> RetrievalSettings:
    """The default gates for a store's model: its own ``min_similarity`` where it
    declares one, else :class:`RetrievalSettings`' defaults.

    multilingual-e5 scores any two texts of one language high (unrelated Chinese
    pairs about 0.84, related ones about 0.90): the default 0.35 would let every
    memory through, so :mod:`memory_pg.embedders_zh` declares 0.87 for it.
    """
    floor = getattr(embedder, "min_similarity", None)
    if floor is None:
        return RetrievalSettings()
    return RetrievalSettings(min_similarity=float(floor))


def type_label(memory_type: str) -> str:
    """``"关键决策 key_decision"``: the Chinese name beside the type, when there is one."""
    zh = TYPE_LABELS.get(memory_type)
    return f"{zh} {memory_type}" if zh else memory_type


def format_memories(hits: Sequence[Mapping[str, Any]], *, start: int = 1) -> str:
    """Memories as numbered prompt lines, one each; ``""`` for none.

    The one formatter of memories for a prompt: the retriever's block, the
    wrapper's default recall and the Hermes provider all use it.

    Example:
        >>> print(format_memories([{"memory_type": "key_decision", "text": "Use PostgreSQL"}]))
        1. [关键决策 key_decision] Use PostgreSQL
    """
    lines = []
    for n, hit in enumerate(hits, start):
        when = hit.get("event_time") or hit.get("created_at")
        date = f" ({when.date().isoformat()})" if isinstance(when, datetime) else ""
        text = " ".join(str(hit["text"]).split())
        label = type_label(str(hit.get("memory_type", "memory")))
        lines.append(f"{n}. [{label}] {text}{date}")
    return "\n".join(lines)


#: English words that ask or help a verb: a query's "what do" shares nothing with a fact.
_EN_ASKING = frozenset("what where when who whom which why how do does did have has had".split())


def _content_words(text: str) -> set[str]:
    seg = segment(text)
    words = {w for w in seg.words if w not in EN_STOPWORDS and w not in _EN_ASKING}
    # A plural meets its singular ("Sundays", "Sunday"); no stemmer for a handful of turns.
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words} | set(seg.cjk)


def said_lately(
    turns: Sequence[Mapping[str, Any]],
    query: str,
    *,
    limit: int,
    skip: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """What the user said that is not compacted yet and shares a word with ``query``.

    A turn waits in the dialogue buffer until enough turns gather for a compaction;
    until then no search finds it, though it is already in PostgreSQL. This picks,
    from the buffered ``turns`` (``store.pending_turns``), the user's own that a
    compaction could keep (not a question, request, hypothetical or pleasantry) and
    that share a content word with ``query``, most words first, then newest, as
    ``dialogue`` hits for :func:`format_memories`. ``skip``: texts already in the
    prompt (the recent window, the input itself, the memories found).

    Example:
        >>> turns = [{"role": "user", "content": "我们决定使用 PostgreSQL 作为数据库"}]
        >>> [h["text"] for h in said_lately(turns, "数据库选型？", limit=5)]
        ['我们决定使用 PostgreSQL 作为数据库']
    """
    wanted = _content_words(query)
    shown = set(skip)
    scored: list[tuple[int, int, Mapping[str, Any]]] = []
    for n, turn in enumerate(turns):
        text = str(turn["content"])
        if turn.get("role") != "user" or text in shown or non_fact(text) is not None:
            continue
        shared = len(wanted & _content_words(text))
        if shared:
            scored.append((shared, n, turn))
            shown.add(text)
    scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
    return [
        {"memory_type": "dialogue", "text": str(t["content"]), "created_at": t.get("created_at")}
        for _, _, t in scored[:limit]
    ]


def format_block(hits: Sequence[Mapping[str, Any]]) -> str:
    """The prompt block: :data:`HEADER`, then :func:`format_memories`; ``""`` for no hits."""
    lines = format_memories(hits)
    return f"{HEADER}\n{lines}" if lines else ""


def without_header(block: str) -> str:
    """``block`` without a leading :data:`HEADER`: for a prompt that heads the memories itself."""
    return block.strip().removeprefix(HEADER).strip()


class RecallFilters(TypedDict, total=False):
    """Which memories a recall may return (keyword arguments of the retrievers' methods).

    Attributes:
        memory_types: only these types.
        since: only memories whose event time is at or after this.
        until: only memories whose event time is before this.
        metadata_filter: only memories whose metadata contains this object.
        user_id: the tenant, if not bound on the store.
        agent_id: the agent recalling: the user's shared memories and its own
            private ones (none: the shared ones only).
    """

    memory_types: Sequence[str] | None
    since: datetime | None
    until: datetime | None
    metadata_filter: Mapping[str, Any] | None
    user_id: str | None
    agent_id: str | None


StoreT = TypeVar("StoreT", "MemoryStore", "AsyncMemoryStore")


class _RetrieverBase(Generic[StoreT]):
    """The store, ``top_k`` and the gates; the twins below only run the search."""

    def __init__(
        self,
        store: StoreT,
        top_k: int = 5,
        *,
        settings: RetrievalSettings | None = None,
    ) -> None:
        if not isinstance(top_k, int) or not 1 <= top_k <= 1000:
            raise InvalidArgument(f"top_k must be an int between 1 and 1000, got {top_k!r}")
        self.store: StoreT = store
        self.top_k = top_k
        self._settings = settings

    @property
    def settings(self) -> RetrievalSettings:
        """The gates: as given, else the defaults for the store's model
        (:func:`settings_for`, known once the store is open)."""
        if self._settings is not None:
            return self._settings
        embedder = getattr(getattr(self, "store", None), "embedder", None)
        if embedder is None:
            return RetrievalSettings()
        self._settings = settings_for(embedder)
        return self._settings

    @settings.setter
    def settings(self, value: RetrievalSettings) -> None:
        self._settings = value

    def _search_kwargs(self, filters: RecallFilters) -> dict[str, Any]:
        # The gates run in the search statement, so a dropped memory is not counted as used.
        return {
            **filters,
            "top_k": self.top_k,
            "min_similarity": self.settings.min_similarity,
            "min_lexical": self.settings.min_lexical,
        }

    def _keep(self, hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # The gates already ran in SQL; min_score is checked here (it needs the score).
        kept = [h for h in hits if self.settings.keeps(h)]
        logger.debug("retrieved %d, kept %d", len(hits), len(kept))
        return kept


class MemoryRetriever(_RetrieverBase["MemoryStore"]):
    """Finds the memories relevant to a user's input, as a prompt block or a list.

    Example::

        retriever = MemoryRetriever(store, top_k=5)
        context = retriever.retrieve_context("我们用什么数据库？")

    The relevance gates run inside the search statement, so what is dropped is
    neither returned nor counted as used; what is returned is (``access_count``,
    ``last_accessed_at``), in the same batched statement as the store's search.

    Args:
        store: a :class:`~memory_pg.store.MemoryStore`.
        top_k: the most memories returned.
        settings: the relevance gates (:class:`RetrievalSettings`).
    """

    def retrieve_as_list(
        self, user_input: str, **filters: Unpack[RecallFilters]
    ) -> list[dict[str, Any]]:
        """The relevant memories, best first, as the store's result dicts (with score parts).

        Args:
            user_input: what the user just said.
            **filters: which memories may be returned (:class:`RecallFilters`):
                ``memory_types``, ``since``, ``until``, ``metadata_filter``,
                ``user_id`` and ``agent_id``.
        """
        return self._keep(self.store.search(user_input, **self._search_kwargs(filters)))

    def retrieve_context(self, user_input: str, **filters: Unpack[RecallFilters]) -> str:
        """The prompt block of the relevant memories; ``""`` when nothing is relevant.

        Takes the same arguments as :meth:`retrieve_as_list`.
        """
        return format_block(self.retrieve_as_list(user_input, **filters))


class AsyncMemoryRetriever(_RetrieverBase["AsyncMemoryStore"]):
    """The asyncio twin of :class:`MemoryRetriever`, over an :class:`AsyncMemoryStore`."""

    async def retrieve_as_list(
        self, user_input: str, **filters: Unpack[RecallFilters]
    ) -> list[dict[str, Any]]:
        """See :meth:`MemoryRetriever.retrieve_as_list`."""
        return self._keep(await self.store.search(user_input, **self._search_kwargs(filters)))

    async def retrieve_context(self, user_input: str, **filters: Unpack[RecallFilters]) -> str:
        """See :meth:`MemoryRetriever.retrieve_context`."""
        return format_block(await self.retrieve_as_list(user_input, **filters))
