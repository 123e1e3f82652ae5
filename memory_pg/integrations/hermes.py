"""Hermes Agent memory provider: Hermes recalls from and remembers into memory-pg.

Implements Hermes' ``agent.memory_provider.MemoryProvider``: ``prefetch`` recalls
the user's relevant memories before each turn, ``sync_turn`` buffers each turn
in PostgreSQL, ``on_session_end`` and ``on_pre_compress`` compact the buffer
into memories, and three tools let the model search, add and forget memories.
Memories are scoped to Hermes' ``user_id`` (gateway users), else
``MEMORY_PG_USER_ID``, else one local user per Hermes profile.

Hermes gives a prefetch 8 s, and loading the embedding model takes longer than
that on a small machine. ``initialize`` therefore loads the model in a background
thread; until it is ready, recall ranks by the full-text leg alone (search results
say ``full_text_only``), so the first message of a new process recalls too. A
prefetch gives up after 6 s (a database that stalls), and the store the provider
opens waits 3 s for a connection, with TCP keepalives.
Failures (database down, schema not migrated, bad user id, a turn not saved,
incomplete LLM settings) go to Hermes' ``warning_callback``, which the CLI
prints, and ``hermes memory status`` shows why memory-pg is not available.

Install the plugin with ``memory-pg hermes install`` and activate it with
``hermes config set memory.provider memory_pg``. Needs ``pip install
'memory-pg[hermes]'`` in the environment Hermes runs in.
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

from memory_pg._validate import check_user_id
from memory_pg.config import StoreSettings, database_url_from_env, default_home
from memory_pg.errors import (
    DatabaseUnavailable,
    EmbeddedServerError,
    InvalidArgument,
    MemoryPgError,
    SchemaNotReady,
)
from memory_pg.integrations._hermes_setup import (
    CONFIG_SCHEMA,
    PREFETCH_TIMEOUT_S,
    SHUTDOWN_TIMEOUT_S,
    call_within,
    compactor_from_env,
    open_store,
)
from memory_pg.integrations._hermes_tools import (
    TOOL_MEMORY_TYPES,
    TOOLS,
    add_args,
    error_json,
    search_args,
    text_arg,
)
from memory_pg.retrieval import format_memories, said_lately
from memory_pg.wrapper import MAX_TURNS_PER_COMMIT, buffer_turn, compact_pending

try:
    from agent.memory_provider import MemoryProvider
except ImportError:  # hermes-agent is optional; the installer works without it
    MemoryProvider = object

logger = logging.getLogger(__name__)

#: The provider's name: the plugin folder and the ``memory.provider`` value.
PROVIDER_NAME = "memory_pg"

#: Agent contexts whose turns are written (cron and subagent prompts are not the user's).
WRITING_CONTEXTS = ("primary", "")


class MemoryPgProvider(MemoryProvider):  # type: ignore[misc]
    """memory-pg as Hermes Agent's external memory provider.

    Args:
        store: a :class:`~memory_pg.store.MemoryStore` to use (not closed on
            shutdown); default: one opened on ``initialize`` from the ``MEMORY_PG_*``
            environment (``MEMORY_PG_DATABASE_URL``, else the embedded server in
            ``MEMORY_PG_HOME``), the same database the ``memory-pg`` command uses.
        retriever: anything with ``retrieve_context(text, user_id=...) -> str``;
            default: the store's search, one memory per line (by words alone
            while the model loads; a retriever given here is always waited for).
        compactor: default: a :class:`~memory_pg.compaction.MemoryCompactor` calling the
            LLM of ``MEMORY_PG_LLM_BASE_URL`` / ``_API_KEY`` / ``_MODEL`` when set, else the
            offline extractor (also, with a warning, when those settings name no endpoint).
        compact_threshold: pending turns that trigger a compaction after a turn.
        top_k: memories recalled per turn.
        user_id: force one user, whatever Hermes says.
        store_factory: opens the store on ``initialize`` (default:
            ``MemoryStore.from_env()``, waiting 3 s for a connection, with keepalives).
        prefetch_timeout_s: seconds a prefetch may wait for the database before this
            turn goes without memories (Hermes abandons a prefetch at 8 s).
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
        prefetch_timeout_s: float = PREFETCH_TIMEOUT_S,
    ) -> None:
        self._store = store
        self.prefetch_timeout_s = prefetch_timeout_s
        self._owns_store = False
        self._store_factory = store_factory
        self._retriever = retriever
        self._compactor = compactor
        self.compact_threshold = compact_threshold
        self.top_k = top_k
        self._forced_user = user_id
        self.user_id: str | None = user_id
        self._forced_agent = agent_id
        #: This Hermes agent (``MEMORY_PG_AGENT_ID``, else ``hermes[:<agent_identity>]``):
        #: its writes record it; it recalls the shared memories and its own private ones.
        self.agent_id: str | None = agent_id
        self.session_id = ""
        self._writes = True
        self._lock = threading.Lock()  # Hermes calls from its worker and tool threads
        self._model_ready = threading.Event()
        self._loader: threading.Thread | None = None
        #: Why memory-pg cannot serve this session (shown to the user), or None.
        self.unavailable_reason: str | None = None
        self._unavailable_type = "MemoryPgError"
        self._warning_callback: Callable[[str], Any] | None = None
        self._warned: set[str] = set()
        self._warned_lock = threading.Lock()
        self._queued: dict[str, list[dict[str, Any]]] = {}

    # -- identity and lifecycle -------------------------------------------------------

    @property
    def name(self) -> str:
        """The provider's name in Hermes (``memory.provider: memory_pg``)."""
        return PROVIDER_NAME

    def is_available(self) -> bool:
        """False once a check found the database unusable (``hermes memory status``
        runs one: see :meth:`get_status_config`) or ``initialize`` failed.

        Makes no connection itself, as Hermes asks: a database that is down is
        reported by ``initialize`` through Hermes' warning callback instead.
        """
        return self.unavailable_reason is None

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Bind the session and the user, open the store, start loading the model.

        Raises:
            InvalidUserId: the user id Hermes (or ``MEMORY_PG_USER_ID``) gives is
                empty, blank, too long or holds control characters; the
                warning callback hears it too.

        Any other failure goes to the warning callback: a database that cannot be
        opened turns memory-pg off for the session; ``MEMORY_PG_LLM_*`` settings
        that name no endpoint leave compaction to the offline extractor.
        """
        callback = kwargs.get("warning_callback")
        self._warning_callback = callback if callable(callback) else None
        self.unavailable_reason = None
        self.session_id = session_id
        user_id = (
            self._forced_user
            or kwargs.get("user_id")
            or os.environ.get("MEMORY_PG_USER_ID")
            or f"hermes:{kwargs.get('agent_identity') or 'default'}"
        )
        settings = getattr(self._store, "settings", None) or StoreSettings()
        try:
            self.user_id = check_user_id(user_id, settings)
        except MemoryPgError as exc:
            self._fail(f"memory-pg is off: bad user id ({exc})", exc)
            raise
        identity = kwargs.get("agent_identity")
        self.agent_id = (
            self._forced_agent
            or os.environ.get("MEMORY_PG_AGENT_ID")
            or (f"hermes:{identity}" if identity else "hermes")
        )
        self._writes = str(kwargs.get("agent_context") or "") in WRITING_CONTEXTS
        if self._compactor is None:  # before the store: nothing to close if it fails
            try:
                self._compactor = compactor_from_env()
            except MemoryPgError as exc:
                from memory_pg.compaction import MemoryCompactor

                self._compactor = MemoryCompactor()
                self._report(f"memory-pg compacts offline, with no LLM: {_describe(exc)}")
        if self._store is None:
            try:
                self._store = self._open_store()
            except MemoryPgError as exc:
                self._fail(f"memory-pg is off for this session: {_describe(exc)}", exc)
                return
            self._owns_store = True
        self._start_model_load()

    def _open_store(self) -> Any:
        if self._store_factory is not None:
            return self._store_factory()
        # Unbound: the user is Hermes' (a gateway serves many), not MEMORY_PG_USER_ID.
        return open_store()

    def _start_model_load(self) -> None:
        """Load the embedding model in the background: importing torch and
        sentence-transformers takes longer than Hermes waits for a prefetch."""
        embedder = self._store.embedder

        def load() -> None:
            try:
                embedder.embed_query("warm-up")
                # A turn's texts may run on another model than queries (int8 queries).
                embedder.embed_documents(["warm-up"])
            except Exception as exc:  # any failure ends here, reported
                self._report(
                    f"memory-pg could not load its embedding model ({_describe(exc)}): "
                    "recall matches words only, and new memories cannot be saved"
                )
                return
            self._model_ready.set()

        # Not a daemon: a process that ends while the model loads waits for the load to
        # finish. A daemon thread stopped inside ONNX Runtime's or torch's native code at
        # exit aborts the process (SIGABRT, "terminate called without an active exception").
        self._loader = threading.Thread(target=load, name="memory-pg-model")
        self._loader.start()

    @property
    def _serving(self) -> bool:
        return self._store is not None and self.unavailable_reason is None

    @property
    def model_ready(self) -> bool:
        """True once the embedding model is loaded (search then ranks by meaning too)."""
        return self._model_ready.is_set()

    def wait_for_model(self, timeout: float | None = None) -> bool:
        """Block until the model is loaded; False if ``timeout`` passed first."""
        return self._model_ready.wait(timeout)

    def system_prompt_block(self) -> str:
        """A short note on the memory tools."""
        if not self._serving:
            return ""
        return (
            "Long-term memory (memory-pg): relevant memories of this user are recalled "
            "before each turn. Use memory_pg_search to look further, memory_pg_add to "
            "remember a durable fact or decision, memory_pg_forget to erase one."
        )

    def shutdown(self) -> None:
        """Compact what is pending and close the store this provider opened.

        The compaction may take 10 s: turns it leaves stay buffered in PostgreSQL
        for the next session.
        """
        try:
            if self._serving and self._writes:
                call_within(
                    lambda: self._compact(force=True), SHUTDOWN_TIMEOUT_S, "memory-pg-shutdown"
                )
        except MemoryPgError as exc:
            self._report(f"memory-pg could not save the pending turns: {_describe(exc)}")
        except concurrent.futures.TimeoutError:
            self._report(
                f"memory-pg could not compact the pending turns in {SHUTDOWN_TIMEOUT_S:g} s: "
                "they stay buffered for the next session"
            )
        finally:
            if self._loader is not None:
                self._loader.join()  # the store's engine may not close under a loading model
            if self._owns_store and self._store is not None:
                self._store.close()
                self._store = None

    def backup_paths(self) -> list[str]:
        """The embedded server's data folder (``MEMORY_PG_HOME``), for ``hermes backup``.

        Nothing when ``MEMORY_PG_DATABASE_URL`` (or ``DATABASE_URL``) points at a
        server: back that up with the server's own tools. Copying a running
        server's folder gives a backup PostgreSQL may have to recover: stop Hermes
        first, or keep a ``memory-pg export`` beside it.
        """
        if database_url_from_env() is not None:
            return []
        return [str(default_home().resolve())]

    # -- failures the user sees -------------------------------------------------------

    def _fail(self, reason: str, exc: MemoryPgError) -> None:
        self.unavailable_reason = reason
        self._unavailable_type = type(exc).__name__
        self._report(reason)

    def _report(self, problem: str) -> None:
        """Tell the user once (Hermes' warning callback) and the log, until a call succeeds."""
        logger.warning("%s", problem)
        with self._warned_lock:
            if problem in self._warned:
                return
            self._warned.add(problem)
        if self._warning_callback is not None:
            try:
                self._warning_callback(problem)
            except Exception:  # the host's callback must not break a turn
                logger.debug("Hermes warning callback failed", exc_info=True)

    def _succeeded(self) -> None:
        if self._warned:
            with self._warned_lock:
                self._warned.clear()

    # -- recall and remember ----------------------------------------------------------

    def _search(self, query: str, top_k: int) -> list[dict[str, Any]]:
        """Hybrid search once the model is loaded; by words alone until then."""
        found: list[dict[str, Any]] = self._store.search(
            query,
            top_k,
            user_id=self.user_id,
            full_text_only=not self.model_ready,
            **self._scope(),
        )
        return found

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """The user's memories relevant to ``query``, one per line ("" if none).

        What :meth:`queue_prefetch` recalled for the previous message fills the
        places the new message leaves free (a follow-up such as "ok, do that"
        keeps the memories of its topic). A database that has not answered within
        ``prefetch_timeout_s`` gives "" and a warning: the call goes on alone.
        """
        if not self._serving or not query.strip():
            return ""
        queued = self._queued.pop(session_id or self.session_id, [])
        try:
            return call_within(
                lambda: self._recall(query, queued), self.prefetch_timeout_s, "memory-pg-prefetch"
            )
        except concurrent.futures.TimeoutError:
            self._report(
                f"memory-pg recall took over {self.prefetch_timeout_s:g} s and was skipped "
                "(is the database reachable?)"
            )
            return ""

    def _recall(self, query: str, queued: list[dict[str, Any]]) -> str:
        try:
            if self._retriever is not None:
                return str(
                    self._retriever.retrieve_context(query, user_id=self.user_id, **self._scope())
                )
            found = self._search(query, self.top_k)
            # Other sessions' turns still buffered (a Hermes killed before it compacted);
            # this session's are in Hermes' own context.
            pending = self._store.pending_turns(user_id=self.user_id, limit=MAX_TURNS_PER_COMMIT)
            others = [t for t in pending if t["session_id"] != self.session_id]
            said = said_lately(others, query, limit=self.top_k, skip=[m["text"] for m in found])
        except MemoryPgError as exc:
            self._report(f"memory-pg recall failed: {_describe(exc)}")
            return ""
        self._succeeded()
        seen = {m["id"] for m in found}
        found += [m for m in queued if m["id"] not in seen][: max(0, self.top_k - len(found))]
        return format_memories([*found, *said])

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Recall for the message just answered, for the next turn's :meth:`prefetch`.

        Hermes calls this from its background worker after each turn.
        """
        if not self._serving or self._retriever is not None or not query.strip():
            return
        try:
            found = self._search(query, self.top_k)
        except MemoryPgError as exc:
            self._report(f"memory-pg recall failed: {_describe(exc)}")
            return
        self._queued[session_id or self.session_id] = found

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """Buffer the turn in PostgreSQL; compact when enough turns wait."""
        if not self._serving or not self._writes:
            return
        sid = session_id or self.session_id or None
        try:
            for role, content in (("user", user_content), ("assistant", assistant_content)):
                # A long reply is buffered in several rows, a blank turn not at all.
                buffer_turn(self._store, role, content or "", user_id=self.user_id, session_id=sid)
            self._compact(force=False)
        except MemoryPgError as exc:
            self._report(f"memory-pg could not save this turn: {_describe(exc)}")
            return
        self._succeeded()

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """Compact every pending turn of the user."""
        if self._serving and self._writes:
            try:
                self._compact(force=True)
            except MemoryPgError as exc:
                self._report(f"memory-pg could not save the session: {_describe(exc)}")

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Compact before Hermes drops old messages; returns what was saved, for its summary."""
        if not self._serving or not self._writes:
            return ""
        try:
            ids = self._compact(force=True)
            saved = [self._store.get(i, user_id=self.user_id) for i in ids]
        except MemoryPgError as exc:
            self._report(f"memory-pg could not save before compression: {_describe(exc)}")
            return ""
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
        if not self._serving or not self._writes or action not in ("add", "replace"):
            return
        memory_type = "user_profile" if target == "user" else "project_status"
        try:
            self._store.add_memory(
                content,
                memory_type,
                {"source": "hermes", "target": target},
                user_id=self.user_id,
                **self._scope(),
            )
        except MemoryPgError as exc:
            self._report(f"memory-pg could not mirror a memory write: {_describe(exc)}")

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
        return [dict(tool) for tool in TOOLS]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one tool; returns its JSON result.

        A refused call returns ``{"error": "<what is wrong>", "error_type":
        "<memory_pg.errors class>"}`` and writes nothing.
        """
        if not self._serving:
            reason = self.unavailable_reason or "memory-pg is not initialized"
            return error_json(reason, self._unavailable_type)
        try:
            if not isinstance(args, Mapping):
                raise InvalidArgument(f"arguments must be a JSON object, got {type(args).__name__}")
            result = json.dumps(self._tool(tool_name, args), ensure_ascii=False)
        except MemoryPgError as exc:
            return error_json(f"{type(exc).__name__}: {exc}", type(exc).__name__)
        self._succeeded()
        return result

    def _tool(self, tool_name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        store, uid = self._store, self.user_id
        if tool_name == "memory_pg_search":
            query, top_k = search_args(args)
            found = self._search(query, top_k)
            answer: dict[str, Any] = {
                "results": [
                    {"id": m["id"], "memory_type": m["memory_type"], "text": m["text"]}
                    for m in found
                ]
            }
            if not self.model_ready:
                answer["full_text_only"] = True  # the model is loading: matched by words
            return answer
        if tool_name == "memory_pg_add":
            text, memory_type, topic = add_args(args)
            memory_id = store.add_memory(
                text,
                memory_type,
                {"source": "hermes_tool"},
                topic=topic,
                user_id=uid,
                **self._scope(),
            )
            return {"id": memory_id, "saved": True}
        if tool_name == "memory_pg_forget":
            memory_id = text_arg(args, "memory_id", required=True)
            return {"forgotten": store.delete_memory(memory_id, user_id=uid, **self._scope())}
        raise InvalidArgument(
            f"unknown tool {tool_name!r}: memory-pg has " + ", ".join(t["name"] for t in TOOLS)
        )

    # -- configuration and status -----------------------------------------------------

    def get_config_schema(self) -> list[dict[str, Any]]:
        """Settings ``hermes memory setup`` asks for (the database, the user and agent
        ids, the LLM that compacts); all are environment variables."""
        return [dict(field) for field in CONFIG_SCHEMA]

    def get_status_config(self, provider_config: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """What ``hermes memory status`` prints: the database, and whether it serves.

        With a database URL it connects to check the schema and the model; a
        failure makes :meth:`is_available` False, with the reason. The embedded
        server is not started for a status (starting and stopping it could stop
        it under a running Hermes): its folder is shown, and it is migrated on use.
        """
        shown = dict(provider_config or {})
        url = database_url_from_env()
        if url is None:
            home = default_home()
            shown["database"] = f"embedded PostgreSQL in {home} (MEMORY_PG_HOME)"
            created = (home / "pgdata").exists()
            shown["state"] = "created" if created else "not created yet: it is created on first use"
            return shown
        from memory_pg.opening import redact_url

        shown["database"] = redact_url(url)
        try:
            store = self._store or self._open_store()
            try:
                health = store.healthcheck()
            finally:
                if store is not self._store:
                    store.close()
        except MemoryPgError as exc:
            self.unavailable_reason = _describe(exc)
            self._unavailable_type = type(exc).__name__
            shown["state"] = f"unavailable ✗ {self.unavailable_reason}"
            return shown
        shown["state"] = (
            f"ready (schema {health['revision']}, {health['embedding_model']}, "
            f"pgvector {health['vector_extension']})"
        )
        return shown


def _describe(exc: BaseException) -> str:
    """An error as one line a user can act on."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SchemaNotReady):
        return text  # its message says to run `memory-pg migrate`
    if isinstance(exc, (DatabaseUnavailable, EmbeddedServerError)):
        return (
            f"{text} (check MEMORY_PG_DATABASE_URL and that the server is up, then restart Hermes)"
        )
    return text


def register(ctx: Any) -> None:
    """Hermes' plugin hook: register the provider."""
    ctx.register_memory_provider(MemoryPgProvider())


__all__ = [
    "PROVIDER_NAME",
    "TOOL_MEMORY_TYPES",
    "MemoryPgProvider",
    "register",
]
