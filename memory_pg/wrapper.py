"""MemoryWrapper: any agent with ``chat(text)`` recalls before each turn and remembers after it.

The wrapper composes the layers: it asks retrieval for what the user's memories
say about the new input, builds a prompt with those memories and the recent
turns, calls the agent, and buffers both turns in PostgreSQL. When enough turns
wait, it compacts them into memories and commits them in one transaction with
the turns' consumption, so a process killed at any point loses no turn and
writes no memory twice.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import logging
import threading
import uuid
from collections.abc import Awaitable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Generic, Protocol, TypeVar

from typing_extensions import deprecated

from memory_pg._validate import check_agent_id
from memory_pg.errors import DatabaseError, InvalidArgument, InvalidInput, MemoryPgError
from memory_pg.plans.write import scope_user
from memory_pg.prompt import INPUT_HEADER, MEMORY_HEADER, RECENT_HEADER, build_prompt
from memory_pg.retrieval import format_memories, said_lately, without_header

logger = logging.getLogger(__name__)

#: Turns compacted in one commit at most: a backlog is worked off in several commits.
#: Also the buffered turns a recall reads at most (the oldest first).
MAX_TURNS_PER_COMMIT = 200


class Agent(Protocol):
    """Any agent: a prompt in, a reply out."""

    def chat(self, prompt: str) -> str: ...


class AsyncAgent(Protocol):
    """An agent whose ``chat`` is a coroutine."""

    def chat(self, prompt: str) -> Awaitable[str]: ...


class Compactor(Protocol):
    """What compacts buffered turns (``memory_pg.compaction.MemoryCompactor`` qualifies)."""

    def compact_to_memories(self, texts: Sequence[Mapping[str, str]]) -> Sequence[Any]: ...


def _check_count(value: object, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidArgument(f"{name} must be an int of at least {minimum}, got {value!r}")
    return value


def _as_turns(pending: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    return [{"role": str(t["role"]), "content": str(t["content"])} for t in pending]


def _due(pending: Sequence[Any], threshold: int, force: bool) -> bool:
    """Whether the pending turns read are worth a compaction now."""
    return bool(pending) and (force or len(pending) >= threshold)


def turn_pieces(content: str, limit: int) -> list[str]:
    """A turn as the rows the buffer takes: pieces of at most ``limit`` characters
    (a long reply or paste is kept whole, in several rows), none for a blank turn."""
    from memory_pg.compaction import split_text, storable_text

    return split_text(storable_text(content), limit)


def buffer_turn(
    store: Any, role: str, content: str, *, user_id: str | None, session_id: str | None
) -> int:
    """Buffer one turn (:func:`turn_pieces` of the store's ``max_text_chars``); returns
    the rows written."""
    pieces = turn_pieces(content, store.settings.max_text_chars)
    for piece in pieces:
        store.append_turn(role, piece, user_id=user_id, session_id=session_id)
    return len(pieces)


def _raw_fallback(
    pending: Sequence[Mapping[str, Any]], exc: InvalidInput, max_text_chars: int
) -> list[Any]:
    """The turns as raw dialogue memories, when the store refused what the compactor made:
    the buffer drains instead of offering the same turns to the same refusal forever."""
    from memory_pg.compaction import raw_memories

    logger.warning(
        "the store refused the memories compacted from %d turns (%s); "
        "keeping the turns as raw dialogue",
        len(pending),
        type(exc).__name__,
    )
    return raw_memories(
        _as_turns(pending), reason=type(exc).__name__, max_text_chars=max_text_chars
    )


def _memory_failed(step: str, exc: MemoryPgError) -> bool:
    """Log a memory step that failed during a turn; True if the database itself failed
    (the turn's later steps would wait on it again, and are skipped)."""
    logger.warning(
        "memory-pg could not %s (%s); the agent answers without it", step, type(exc).__name__
    )
    logger.debug("memory-pg %s failed", step, exc_info=exc)
    return isinstance(exc, DatabaseError)


def compact_pending(
    store: Any,
    compactor: Compactor,
    *,
    user_id: str,
    threshold: int = 1,
    force: bool = False,
    agent_id: str | None = None,
) -> list[str]:
    """Compact a user's pending turns while ``threshold`` wait (any, with ``force``).

    Reads the buffer, runs the compactor, and commits the memories with the
    turns' consumption in one transaction (``store.commit_compaction``). A
    process killed before the commit leaves the turns pending for the next
    call; a commit that lost a race to another process writes nothing. Returns
    the ids of the memories written. With ``agent_id``, the memories record that
    agent as their writer (shared with the user's other agents). Memories the store
    refuses (a text over its limit, say) are replaced by the turns' raw text.
    """
    written: list[str] = []
    scope = {"agent_id": agent_id} if agent_id is not None else {}
    while True:
        pending = store.pending_turns(user_id=user_id, limit=max(threshold, MAX_TURNS_PER_COMMIT))
        if not _due(pending, threshold, force):
            return written
        memories = compactor.compact_to_memories(_as_turns(pending))
        ids = [t["id"] for t in pending]
        try:
            written += store.commit_compaction(ids, memories, user_id=user_id, **scope)
        except InvalidInput as exc:
            raw = _raw_fallback(pending, exc, store.settings.max_text_chars)
            written += store.commit_compaction(ids, raw, user_id=user_id, **scope)
        logger.debug("compacted %d turns; %d memories written", len(ids), len(written))


AgentT = TypeVar("AgentT", "Agent", "AsyncAgent")
CompactorT = TypeVar("CompactorT")


class _WrapperBase(Generic[AgentT, CompactorT]):
    """Settings and prompt state shared by the sync and async wrappers."""

    _error: BaseException | None  # a failed background compaction's, for the next flush

    def __init__(
        self,
        agent: AgentT,
        store: Any,
        retriever: Any = None,
        compactor: CompactorT | None = None,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        recent_window: int = 6,
        compact_threshold: int = 20,
        background: bool = False,
        top_k: int = 5,
        agent_id: str | None = None,
    ) -> None:
        if not callable(getattr(agent, "chat", None)):
            raise InvalidArgument("the agent needs a chat(text) method")
        self.agent: AgentT = agent
        self.store = store
        self.retriever = retriever
        self.compactor: CompactorT = (
            compactor if compactor is not None else self._default_compactor()
        )
        # The store's own rule: the given user, else the one bound on the store.
        self.user_id: str = scope_user(user_id, store.user_id, store.settings)
        # A fresh id per conversation unless the caller resumes one.
        self.session_id: str = session_id or uuid.uuid4().hex
        self.recent_window = _check_count(recent_window, "recent_window", 0)
        self.compact_threshold = _check_count(compact_threshold, "compact_threshold", 1)
        self.top_k = _check_count(top_k, "top_k", 1)
        self.background = bool(background)
        self._recent: collections.deque[dict[str, str]] = collections.deque(
            maxlen=self.recent_window or None
        )
        self._resumed = session_id is None  # a new session has nothing to reload
        #: The agent this wrapper speaks for: it recalls the user's shared memories
        #: and its own private ones, and writes as itself.
        self.agent_id: str | None = check_agent_id(agent_id, self.store.settings)
        self._start_background()

    def _default_compactor(self) -> CompactorT:
        """The offline compactor of the wrapper's kind."""
        raise NotImplementedError

    def _start_background(self) -> None:
        """Set up what runs compactions: a thread for the sync wrapper, a task for the async one."""
        raise NotImplementedError

    def _scope(self) -> dict[str, Any]:
        return {"agent_id": self.agent_id} if self.agent_id is not None else {}

    def _remember_turn(self, role: str, content: str) -> None:
        if self.recent_window:
            self._recent.append({"role": role, "content": content})

    def _reload(self, pending: Sequence[Mapping[str, Any]]) -> None:
        """Seed the recent window from a resumed session's turns still in the buffer."""
        for turn in list(pending)[-self.recent_window :] if self.recent_window else []:
            self._remember_turn(str(turn["role"]), str(turn["content"]))
        self._resumed = True

    def _running(self, previous: Future[list[str]] | asyncio.Task[list[str]] | None) -> bool:
        """Whether the last background compaction still runs; if it failed, its error
        is kept for the next flush (a later turn's compaction replaces it)."""
        if previous is None or not previous.done():
            return previous is not None
        failed = None if previous.cancelled() else previous.exception()
        if failed is not None and self._error is None:
            self._error = failed
        return False

    def _prompt(self, context: str, user_input: str) -> str:
        return build_prompt(context, list(self._recent), user_input)

    def _with_said(
        self, block: str, found: Sequence[Mapping[str, Any]], pending: Sequence[Any], text: str
    ) -> str:
        """``block`` and, after it, what the user said that is not compacted yet."""
        block = without_header(block)
        skip = [text, *(t["content"] for t in self._recent), *(str(h["text"]) for h in found)]
        said = said_lately(pending, text, limit=self.top_k, skip=skip)
        said = [h for h in said if h["text"] not in block]
        more = format_memories(said, start=len(block.splitlines()) + 1)
        return "\n".join(p for p in (block, more) if p)

    def _query(self, text: str) -> str:
        """What a turn recalls with: its first ``max_text_chars`` (the search's limit)."""
        pieces = turn_pieces(text, self.store.settings.max_text_chars)
        return pieces[0] if pieces else ""


def _check_str(value: object, what: str) -> None:
    if not isinstance(value, str):
        raise InvalidArgument(f"{what} is {type(value).__name__}, not str")


def _log_failure(done: Future[list[str]] | asyncio.Task[list[str]]) -> None:
    """Log a failed background compaction (its turns stay in the buffer for a retry)."""
    exc = None if done.cancelled() else done.exception()
    if exc is not None:
        logger.warning("background compaction failed: %s", type(exc).__name__)


class MemoryWrapper(_WrapperBase[Agent, Compactor]):
    """Wraps any agent with ``chat(text) -> str`` so it remembers across sessions.

    Each :meth:`chat` buffers the user's turn in PostgreSQL *before* the agent
    runs, recalls the user's relevant memories, sends the agent a prompt with
    them and the last ``recent_window`` turns, and buffers the reply. When
    ``compact_threshold`` turns are pending, they are compacted into memories and
    committed in one transaction (inline, or with ``background=True`` on a worker
    thread so the reply is not delayed; :meth:`flush` waits for it).

    Example::

        store = MemoryStore(user_id="alice")
        bot = MemoryWrapper(my_agent, store)
        bot.chat("我们决定用 PostgreSQL 作为数据库")
        ...
        MemoryWrapper(my_agent, MemoryStore(user_id="alice")).chat("数据库选型？")

    Not for an agent that already keeps its own memory (such as Hermes Agent):
    install the Hermes provider instead (``memory-pg hermes install``).

    Args:
        agent: any object with ``chat(str) -> str``.
        store: a :class:`~memory_pg.store.MemoryStore` (not closed by the wrapper).
        retriever: anything with ``retrieve_context(text, user_id=...) -> str``; by
            default the store's own search, formatted one memory per line.
        compactor: anything with ``compact_to_memories(turns)``; by default the
            offline :class:`~memory_pg.compaction.MemoryCompactor`.
        user_id: the user (default: the store's bound user).
        session_id: resume this conversation: its buffered turns refill the
            recent window. Default: a new session.
        recent_window: turns of the conversation quoted in each prompt.
        compact_threshold: pending turns that trigger a compaction.
        background: compact on a worker thread instead of before ``chat`` returns.
        top_k: memories recalled per turn.
        agent_id: the agent this wrapper speaks for, when several agents share the
            user's memory: it recalls the shared memories and its own private ones,
            and its compacted memories record it as their writer (shared).
    """

    def _default_compactor(self) -> Compactor:
        from memory_pg.compaction import MemoryCompactor

        return MemoryCompactor()

    def _start_background(self) -> None:
        self._lock = threading.Lock()  # one compaction at a time in this process
        self._executor: ThreadPoolExecutor | None = None
        self._future: Future[list[str]] | None = None
        self._error: BaseException | None = None

    def chat(self, user_input: str) -> str:
        """Answer ``user_input`` with the user's memories in the prompt; returns the reply.

        Memory never stops the agent from answering: a turn longer than the store's
        ``max_text_chars`` is buffered in several rows, a blank one not at all, and
        when the database fails (down, timed out) the failure is logged and the
        agent answers without recall. The agent's own errors are raised.
        """
        _check_str(user_input, "the text given to chat()")
        down = False
        try:
            if not self._resumed:
                self._reload(
                    self.store.pending_turns(user_id=self.user_id, session_id=self.session_id)
                )
            # Durable before the agent runs: a crash in the agent loses no user turn.
            self._buffer("user", user_input)
        except MemoryPgError as exc:
            self._resumed = True
            down = _memory_failed("buffer the user's turn", exc)
        context = "" if down else self._safe_recall(user_input)
        reply = self.agent.chat(self._prompt(context, user_input))
        _check_str(reply, "what the agent's chat() returned")
        self._remember_turn("user", user_input)
        self._remember_turn("assistant", reply)
        if down:
            return reply
        try:
            self._buffer("assistant", reply)
            if self.background:
                self._submit()
            else:
                self.compact()
        except MemoryPgError as exc:
            _memory_failed("buffer or compact the turn", exc)
        return reply

    def _buffer(self, role: str, content: str) -> None:
        buffer_turn(self.store, role, content, user_id=self.user_id, session_id=self.session_id)

    def _safe_recall(self, text: str) -> str:
        query = self._query(text)
        if not query:
            return ""
        try:
            return self.recall(query)
        except MemoryPgError as exc:
            _memory_failed("recall", exc)
            return ""

    def recall(self, text: str) -> str:
        """The memory block for ``text``: the retriever's, or the store's search formatted,
        then the user's turns still in the buffer that share a word with it (what was
        said is recalled before it is compacted, in this process or a new one)."""
        found: list[dict[str, Any]] = []
        if self.retriever is not None:
            block = str(
                self.retriever.retrieve_context(text, user_id=self.user_id, **self._scope())
            )
        else:
            found = self.store.search(text, top_k=self.top_k, user_id=self.user_id, **self._scope())
            block = format_memories(found)
        pending = self.store.pending_turns(user_id=self.user_id, limit=MAX_TURNS_PER_COMMIT)
        return self._with_said(block, found, pending, text)

    def compact(self, *, force: bool = False) -> list[str]:
        """Compact pending turns if ``compact_threshold`` wait (any, with ``force``).

        Returns the ids of the memories written. Safe to call from several
        processes: a turn is consumed by exactly one commit.
        """
        with self._lock:
            return compact_pending(
                self.store,
                self.compactor,
                user_id=self.user_id,
                threshold=self.compact_threshold,
                force=force,
                agent_id=self.agent_id,
            )

    def _submit(self) -> None:
        if self._running(self._future):
            return  # the running compaction re-reads the buffer; the next turn checks again
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-pg")
        self._future = self._executor.submit(self.compact)
        self._future.add_done_callback(_log_failure)

    def flush(self) -> None:
        """Wait for a background compaction; re-raise its error if it failed."""
        # The error is read from the future itself: a done-callback runs only after
        # waiters are woken, so it may not have run yet when the wait returns.
        future, self._future = self._future, None
        error, self._error = self._error, None
        if future is not None:
            error = error or future.exception()  # waits
        if error is not None:
            raise error

    def close(self) -> None:
        """Wait for background work and stop the worker thread (the store stays open)."""
        try:
            self.flush()
        finally:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None

    def __enter__(self) -> MemoryWrapper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@deprecated(
    "HermesMemoryWrapper is deprecated: it is MemoryWrapper under the seed article's name. "
    "Wrap an agent with MemoryWrapper; for Hermes Agent, which keeps its own "
    "memory, install the memory-pg provider instead (memory-pg hermes install)"
)
class HermesMemoryWrapper(MemoryWrapper):
    """Deprecated: :class:`MemoryWrapper` under the seed article's name.

    It wraps any agent with ``chat()``, not Hermes Agent: for Hermes Agent install
    the provider (``memory-pg hermes install``). Instantiating it warns with a
    :class:`DeprecationWarning`.
    """


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class AsyncMemoryWrapper(_WrapperBase[AsyncAgent, Any]):
    """The asyncio twin of :class:`MemoryWrapper`, for an agent with ``async def chat``.

    Takes an :class:`~memory_pg.store.AsyncMemoryStore`; the retriever and the
    compactor may be sync or async (a sync compactor runs in a worker thread).
    With ``background=True`` compaction runs as a task; :meth:`flush` awaits it.
    """

    def _default_compactor(self) -> Any:
        from memory_pg.compaction import AsyncMemoryCompactor

        return AsyncMemoryCompactor()

    def _start_background(self) -> None:
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[list[str]] | None = None
        self._error: BaseException | None = None

    async def chat(self, user_input: str) -> str:
        """See :meth:`MemoryWrapper.chat`."""
        _check_str(user_input, "the text given to chat()")
        uid, sid = self.user_id, self.session_id
        down = False
        try:
            if not self._resumed:
                self._reload(await self.store.pending_turns(user_id=uid, session_id=sid))
            await self._buffer("user", user_input)
        except MemoryPgError as exc:
            self._resumed = True
            down = _memory_failed("buffer the user's turn", exc)
        context = "" if down else await self._safe_recall(user_input)
        reply = await self.agent.chat(self._prompt(context, user_input))
        _check_str(reply, "what the agent's chat() returned")
        self._remember_turn("user", user_input)
        self._remember_turn("assistant", reply)
        if down:
            return reply
        try:
            await self._buffer("assistant", reply)
            if self.background:
                self._submit()
            else:
                await self.compact()
        except MemoryPgError as exc:
            _memory_failed("buffer or compact the turn", exc)
        return reply

    async def _buffer(self, role: str, content: str) -> None:
        for piece in turn_pieces(content, self.store.settings.max_text_chars):
            await self.store.append_turn(
                role, piece, user_id=self.user_id, session_id=self.session_id
            )

    async def _safe_recall(self, text: str) -> str:
        query = self._query(text)
        if not query:
            return ""
        try:
            return await self.recall(query)
        except MemoryPgError as exc:
            _memory_failed("recall", exc)
            return ""

    def _submit(self) -> None:
        if self._running(self._task):
            return  # the running compaction re-reads the buffer; the next turn checks again
        self._task = asyncio.create_task(self.compact())
        self._task.add_done_callback(_log_failure)

    async def recall(self, text: str) -> str:
        """See :meth:`MemoryWrapper.recall`."""
        found: list[dict[str, Any]] = []
        if self.retriever is not None:
            block = self.retriever.retrieve_context(text, user_id=self.user_id, **self._scope())
            block = str(await _maybe_await(block))
        else:
            found = await self.store.search(
                text, top_k=self.top_k, user_id=self.user_id, **self._scope()
            )
            block = format_memories(found)
        pending = await self.store.pending_turns(user_id=self.user_id, limit=MAX_TURNS_PER_COMMIT)
        return self._with_said(block, found, pending, text)

    async def compact(self, *, force: bool = False) -> list[str]:
        """See :meth:`MemoryWrapper.compact`."""
        written: list[str] = []
        async with self._lock:
            while True:
                pending = await self.store.pending_turns(
                    user_id=self.user_id, limit=max(self.compact_threshold, MAX_TURNS_PER_COMMIT)
                )
                if not _due(pending, self.compact_threshold, force):
                    return written
                method = self.compactor.compact_to_memories
                if inspect.iscoroutinefunction(method):
                    memories = await method(_as_turns(pending))
                else:
                    memories = await asyncio.to_thread(method, _as_turns(pending))
                ids = [t["id"] for t in pending]
                try:
                    written += await self.store.commit_compaction(
                        ids, memories, user_id=self.user_id, **self._scope()
                    )
                except InvalidInput as exc:
                    raw = _raw_fallback(pending, exc, self.store.settings.max_text_chars)
                    written += await self.store.commit_compaction(
                        ids, raw, user_id=self.user_id, **self._scope()
                    )

    async def flush(self) -> None:
        """Wait for a background compaction; re-raise its error if it (or an earlier
        one, replaced by a later turn's) failed."""
        task, self._task = self._task, None
        error, self._error = self._error, None
        if task is not None:
            try:
                await task
            except Exception:
                if error is None:
                    raise
        if error is not None:
            raise error

    async def close(self) -> None:
        """Wait for background work (the store stays open)."""
        await self.flush()

    async def __aenter__(self) -> AsyncMemoryWrapper:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


__all__ = [
    "INPUT_HEADER",
    "MEMORY_HEADER",
    "RECENT_HEADER",
    "AsyncMemoryWrapper",
    "HermesMemoryWrapper",
    "MemoryWrapper",
    "buffer_turn",
    "build_prompt",
    "compact_pending",
    "format_memories",
    "turn_pieces",
]
