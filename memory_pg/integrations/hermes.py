"""Hermes Agent memory provider: Hermes recalls from and remembers into memory-pg.

Implements Hermes' ``agent.memory_provider.MemoryProvider``: ``prefetch`` recalls
the user's relevant memories before each turn, ``sync_turn`` buffers each turn
in PostgreSQL, ``on_session_end`` and ``on_pre_compress`` compact the buffer
into memories, and three tools let the model search, add and forget memories.
Memories are scoped to Hermes' ``user_id`` (gateway users), else
``MEMORY_PG_USER_ID``, else one local user per Hermes profile.

Install the plugin with ``memory-pg hermes install`` and activate it with
``hermes config set memory.provider memory_pg``. Needs ``pip install
'memory-pg[hermes]'`` in the environment Hermes runs in.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from memory_pg.errors import MemoryPgError
from memory_pg.wrapper import compact_pending, format_memories

try:
    from agent.memory_provider import MemoryProvider
except ImportError:  # hermes-agent is optional; the installer works without it
    MemoryProvider = object

logger = logging.getLogger(__name__)

#: The provider's name: the plugin folder and the ``memory.provider`` value.
PROVIDER_NAME = "memory_pg"

#: Agent contexts whose turns are written (cron and subagent prompts are not the user's).
WRITING_CONTEXTS = ("primary", "")

_TOOLS: list[dict[str, Any]] = [
    {
        "name": "memory_pg_search",
        "description": (
            "Search the user's long-term memory (profile, project status, decisions, todos) "
            "by meaning and keywords, in any language. Returns memories with their ids."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what to look for"},
                "top_k": {"type": "integer", "description": "how many (default 5)"},
            },
            "required": ["query"],
        },
    },
    {
        "name": "memory_pg_add",
        "description": (
            "Remember a durable fact about the user or their work. A decision with a topic "
            "(database, payment, ...) replaces the earlier decision on that topic."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "one self-contained sentence"},
                "memory_type": {
                    "type": "string",
                    "enum": ["user_profile", "project_status", "key_decision", "todo"],
                },
                "topic": {"type": "string", "description": "topic key of a decision"},
            },
            "required": ["text"],
        },
    },
    {
        "name": "memory_pg_forget",
        "description": "Erase one memory for good, by the id memory_pg_search returned.",
        "parameters": {
            "type": "object",
            "properties": {"memory_id": {"type": "string"}},
            "required": ["memory_id"],
        },
    },
]


class MemoryPgProvider(MemoryProvider):  # type: ignore[misc]
    """memory-pg as Hermes Agent's external memory provider.

    Args:
        store: a :class:`~memory_pg.store.MemoryStore` to use (not closed on
            shutdown); default: one opened on ``initialize`` from the ``MEMORY_PG_*``
            environment (``MEMORY_PG_DATABASE_URL``, else the embedded server in
            ``MEMORY_PG_HOME``), the same database the ``memory-pg`` command uses.
        retriever: anything with ``retrieve_context(text, user_id=...) -> str``;
            default: the store's search, one memory per line.
        compactor: default: a :class:`~memory_pg.compaction.MemoryCompactor` calling the
            LLM of ``MEMORY_PG_LLM_BASE_URL`` / ``_API_KEY`` / ``_MODEL`` when set, else the
            offline extractor.
        compact_threshold: pending turns that trigger a compaction after a turn.
        top_k: memories recalled per turn.
        user_id: force one user, whatever Hermes says.
    """

    def __init__(
        self,
        store: Any = None,
        *,
        retriever: Any = None,
        compactor: Any = None,
        compact_threshold: int = 20,
        top_k: int = 5,
        user_id: str | None = None,
        store_factory: Callable[[], Any] | None = None,
        agent_id: str | None = None,
    ) -> None:
        self._store = store
        self._owns_store = False
        self._store_factory = store_factory
        self._retriever = retriever
        self._compactor = compactor
        self.compact_threshold = compact_threshold
        self.top_k = top_k
        self._forced_user = user_id
        self.user_id: str | None = user_id
        self._forced_agent = agent_id
        #: This Hermes agent among the user's agents (``MEMORY_PG_AGENT_ID``, else
        #: ``hermes`` or ``hermes:<agent_identity>``): its writes record it, and it
        #: recalls the user's shared memories and its own private ones.
        self.agent_id: str | None = agent_id
        self.session_id = ""
        self._writes = True
        self._lock = threading.Lock()  # Hermes calls from its worker and tool threads

    # -- identity and lifecycle -------------------------------------------------------

    @property
    def name(self) -> str:
        """The provider's name in Hermes (``memory.provider: memory_pg``)."""
        return PROVIDER_NAME

    def is_available(self) -> bool:
        """True: memory-pg needs no credentials (a URL, or the embedded server)."""
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Bind the session and the user, and open the store if none was given."""
        self.session_id = session_id
        self.user_id = (
            self._forced_user
            or kwargs.get("user_id")
            or os.environ.get("MEMORY_PG_USER_ID")
            or f"hermes:{kwargs.get('agent_identity') or 'default'}"
        )
        identity = kwargs.get("agent_identity")
        self.agent_id = (
            self._forced_agent
            or os.environ.get("MEMORY_PG_AGENT_ID")
            or (f"hermes:{identity}" if identity else "hermes")
        )
        self._writes = str(kwargs.get("agent_context") or "") in WRITING_CONTEXTS
        if self._store is None:
            if self._store_factory is not None:
                self._store = self._store_factory()
            else:
                from memory_pg.store import MemoryStore

                self._store = MemoryStore.from_env()
            self._owns_store = True
        if self._compactor is None:
            self._compactor = _compactor_from_env()

    def system_prompt_block(self) -> str:
        """A short note on the memory tools."""
        return (
            "Long-term memory (memory-pg): relevant memories of this user are recalled "
            "before each turn. Use memory_pg_search to look further, memory_pg_add to "
            "remember a durable fact or decision, memory_pg_forget to erase one."
        )

    def shutdown(self) -> None:
        """Compact what is pending and close the store this provider opened."""
        try:
            if self._store is not None and self._writes:
                self._compact(force=True)
        except MemoryPgError as exc:
            logger.warning("memory-pg compaction at shutdown failed: %s", type(exc).__name__)
        finally:
            if self._owns_store and self._store is not None:
                self._store.close()
                self._store = None

    # -- recall and remember ----------------------------------------------------------

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """The user's memories relevant to ``query``, one per line ("" if none)."""
        if self._store is None or not query.strip():
            return ""
        if self._retriever is not None:
            return str(
                self._retriever.retrieve_context(query, user_id=self.user_id, **self._scope())
            )
        return format_memories(
            self._store.search(query, top_k=self.top_k, user_id=self.user_id, **self._scope())
        )

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """Buffer the turn in PostgreSQL; compact when enough turns wait."""
        if self._store is None or not self._writes:
            return
        sid = session_id or self.session_id or None
        for role, content in (("user", user_content), ("assistant", assistant_content)):
            if content and content.strip():
                self._store.append_turn(role, content, user_id=self.user_id, session_id=sid)
        self._compact(force=False)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """Compact every pending turn of the user."""
        if self._store is not None and self._writes:
            self._compact(force=True)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Compact before Hermes drops old messages; returns what was saved, for its summary."""
        if self._store is None or not self._writes:
            return ""
        ids = self._compact(force=True)
        saved = [self._store.get(i, user_id=self.user_id) for i in ids]
        lines = format_memories([m for m in saved if m is not None])
        return f"Saved to long-term memory (memory-pg):\n{lines}" if lines else ""

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        """Later turns belong to the new session."""
        self.session_id = new_session_id

    def on_memory_write(
        self,
        action: str,
        target: str,
        content: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Mirror Hermes' built-in memory additions (USER.md as profile facts)."""
        if self._store is None or not self._writes or action not in ("add", "replace"):
            return
        memory_type = "user_profile" if target == "user" else "project_status"
        self._store.add_memory(
            content,
            memory_type,
            {"source": "hermes", "target": target},
            user_id=self.user_id,
            **self._scope(),
        )

    def _scope(self) -> dict[str, Any]:
        return {"agent_id": self.agent_id} if self.agent_id is not None else {}

    def _compact(self, *, force: bool) -> list[str]:
        assert self._store is not None and self.user_id is not None
        with self._lock:
            return compact_pending(
                self._store,
                self._compactor,
                user_id=self.user_id,
                threshold=self.compact_threshold,
                force=force,
                agent_id=self.agent_id,
            )

    # -- tools ------------------------------------------------------------------------

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Search, add and forget, in OpenAI function-calling form."""
        return [dict(tool) for tool in _TOOLS]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one tool; returns its JSON result (``{"error": ...}`` on bad input)."""
        if self._store is None:
            return _error("memory-pg is not initialized")
        try:
            return json.dumps(self._tool(tool_name, args), ensure_ascii=False)
        except (MemoryPgError, ValueError, TypeError) as exc:
            return _error(f"{type(exc).__name__}: {exc}")

    def _tool(self, tool_name: str, args: dict[str, Any]) -> dict[str, Any]:
        store, uid = self._store, self.user_id
        if tool_name == "memory_pg_search":
            top_k = int(args.get("top_k") or 5)
            found = store.search(str(args.get("query", "")), top_k, user_id=uid, **self._scope())
            return {
                "results": [
                    {"id": m["id"], "memory_type": m["memory_type"], "text": m["text"]}
                    for m in found
                ]
            }
        if tool_name == "memory_pg_add":
            memory_id = store.add_memory(
                args.get("text"),
                args.get("memory_type") or "user_profile",
                {"source": "hermes_tool"},
                topic=args.get("topic"),
                user_id=uid,
                **self._scope(),
            )
            return {"id": memory_id, "saved": True}
        if tool_name == "memory_pg_forget":
            forgotten = store.delete_memory(
                str(args.get("memory_id")), user_id=uid, **self._scope()
            )
            return {"forgotten": forgotten}
        return {"error": f"unknown tool {tool_name!r}"}

    def get_config_schema(self) -> list[dict[str, Any]]:
        """Settings ``hermes memory setup`` asks for; all are environment variables."""
        return [
            {
                "key": "database_url",
                "description": "PostgreSQL URL with pgvector (empty: embedded server)",
                "secret": True,
                "env_var": "MEMORY_PG_DATABASE_URL",
            },
            {
                "key": "home",
                "description": "data folder of the embedded server",
                "env_var": "MEMORY_PG_HOME",
            },
            {
                "key": "embedding_model",
                "description": "sentence-transformers model",
                "env_var": "MEMORY_PG_EMBEDDING_MODEL",
            },
        ]


def _compactor_from_env() -> Any:
    """The LLM compactor when ``MEMORY_PG_LLM_*`` (or ``OPENAI_*``) is set, else the offline one."""
    from memory_pg.compaction import MemoryCompactor
    from memory_pg.config import LLMSettings

    settings = LLMSettings.from_env()
    if settings is None:
        return MemoryCompactor()
    from memory_pg.llm import OpenAICompatibleLLM

    return MemoryCompactor(OpenAICompatibleLLM(settings))


def _error(message: str) -> str:
    return json.dumps({"error": message}, ensure_ascii=False)


def register(ctx: Any) -> None:
    """Hermes' plugin hook: register the provider."""
    ctx.register_memory_provider(MemoryPgProvider())


__all__ = ["PROVIDER_NAME", "MemoryPgProvider", "register"]
