"""memory-pg as LangGraph's ``BaseStore``: graphs and LangMem's memory tools use it unchanged.

Install the extra (``pip install "memory-pg[langgraph]"``), then::

    from memory_pg import MemoryStore
    from memory_pg.integrations.langgraph import MemoryPgStore

    store = MemoryPgStore(MemoryStore())
    store.put(("memories", "alice"), "db", {"content": "Alice's team uses PostgreSQL"})
    store.search(("memories", "alice"), query="which database?")

The mapping (docs/langgraph.md has the whole of it):

* **user**: the namespace label after a leading ``"memories"`` (LangMem's
  ``("memories", "{user_id}")``); ``user_from_namespace=`` picks another label (an
  index) or any function of the namespace. A namespace that names no user belongs
  to the store's bound user (``MemoryStore(user_id=...)``); with none bound, it is
  :class:`~memory_pg.errors.MissingUserScope`. A store bound to one user refuses a
  namespace naming another with :class:`~memory_pg.errors.TenantMismatch` before
  anything is read or written, and row-level security holds underneath.
* **item**: one current memory (type ``memory_type``, default ``user_profile``);
  its text is the value's ``content`` or ``text`` field, else the value's strings
  joined, else the value as JSON (``index=[fields]`` names the fields instead).
  The namespace, key and value (exactly as given) live in its metadata.
* **put** of a key held already supersedes the old memory, which stays in
  :meth:`~memory_pg.store.MemoryStore.history`; ``value=None`` and ``delete`` erase
  every version of the key. ``ttl`` (minutes) is the memory's ``expires_at``.
* **search** with a query is memory-pg's ranked search (vector, full text, recency,
  importance; ``score`` is its score); without one, items most recently updated first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from memory_pg._validate import check_agent_id, check_memory_type
from memory_pg.async_store import AsyncMemoryStore
from memory_pg.errors import ConfigurationError, InvalidArgument, MissingUserScope
from memory_pg.integrations._langgraph_rows import (
    META,
    NewItem,
    containment,
    list_statement,
    namespaces_statement,
    plan_get,
    plan_list,
    plan_namespaces,
    plan_put,
    plan_refresh,
    topic_of,
    with_item_hashes,
)
from memory_pg.integrations._langgraph_values import (
    TEXT_FIELDS,
    check_filter,
    check_page,
    equalities,
    fixed_prefix,
    json_object,
    matches,
    namespace_matches,
    text_of,
)
from memory_pg.plans import relations, write
from memory_pg.plans.protocol import Plan
from memory_pg.plans.shapes import MemoryInput, Prepared
from memory_pg.sql.memories import NewMemory
from memory_pg.store import MemoryStore

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        TTLConfig,
        validate_op_namespace,
    )
except ImportError as exc:  # pragma: no cover - exercised by the light-import tests
    raise ConfigurationError(
        'memory_pg.integrations.langgraph needs LangGraph: pip install "memory-pg[langgraph]"'
    ) from exc

__all__ = ["AsyncMemoryPgStore", "InvalidNamespace", "MemoryPgStore", "user_after_memories"]


class InvalidNamespace(InvalidArgument, InvalidNamespaceError):
    """A namespace LangGraph refuses (empty, an empty label, a ``.`` in one), raised by
    ``batch`` before anything is written: both memory-pg's
    :class:`~memory_pg.errors.InvalidArgument` and LangGraph's ``InvalidNamespaceError``."""


def user_after_memories(namespace: tuple[str, ...]) -> str | None:
    """The default user of a namespace: the label after a leading ``"memories"``.

    ``("memories", "alice", "prefs")`` is alice's; ``("docs", "x")`` names no user.
    """
    if len(namespace) >= 2 and namespace[0] == "memories":
        return namespace[1]
    return None


# -- the steps one batch takes, run by a sync or an async driver ---------------------------


@dataclass(frozen=True)
class _RunPlan:
    plan: Plan[Any]
    user_id: str


@dataclass(frozen=True)
class _Call:
    """Blocking work (embedding, entity finding): the async store runs it in a thread."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()


@dataclass(frozen=True)
class _Search:
    kwargs: dict[str, Any] = field(default_factory=dict)


_Step = _RunPlan | _Call | _Search
_Batch = Generator[_Step, Any, list[Result]]


class _Mapping:
    """What both stores share: the mapping of LangGraph's ops onto memory-pg's rows."""

    supports_ttl = True

    def __init__(
        self,
        store: MemoryStore | AsyncMemoryStore,
        *,
        user_from_namespace: int | Callable[[tuple[str, ...]], str | None] | None = (
            user_after_memories
        ),
        memory_type: str = "user_profile",
        text_fields: Sequence[str] = TEXT_FIELDS,
        agent_id: str | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        if isinstance(user_from_namespace, bool) or not (
            user_from_namespace is None
            or isinstance(user_from_namespace, int)
            or callable(user_from_namespace)
        ):
            raise InvalidArgument(
                "user_from_namespace is a label index, a function of the namespace, or None"
            )
        self.store = store
        self._user_from = user_from_namespace
        self.memory_type = check_memory_type(memory_type, store.settings)
        if isinstance(text_fields, str) or not all(isinstance(f, str) for f in text_fields):
            raise InvalidArgument("text_fields is a list of value field names")
        self.text_fields = tuple(text_fields)
        self.agent_id = check_agent_id(agent_id, store.settings)
        if ttl is not None and not isinstance(ttl, Mapping):
            raise InvalidArgument("ttl is LangGraph's TTLConfig: a dict with default_ttl ...")
        #: LangGraph's TTL settings: ``default_ttl`` (minutes) for puts that give none,
        #: ``refresh_on_read`` (default True). Expired memories are never returned; the
        #: ``memory-pg forget`` job removes them (there is no sweeper thread).
        self.ttl_config = None if ttl is None else TTLConfig(**ttl)

    # -- users -----------------------------------------------------------------------

    def user_of(self, namespace: tuple[str, ...]) -> str:
        """The user a namespace belongs to (see the module's mapping), checked against the
        store's bound user: :class:`TenantMismatch` for another one."""
        named: str | None
        if self._user_from is None:
            named = None
        elif isinstance(self._user_from, int):
            i = self._user_from
            named = namespace[i] if -len(namespace) <= i < len(namespace) else None
        else:
            named = self._user_from(tuple(namespace))
        bound = self.store.user_id
        if named is None and bound is None:
            raise MissingUserScope(
                f"namespace {namespace!r} names no user and the store is bound to none: "
                'use ("memories", "<user_id>", ...), or bind the store: MemoryStore(user_id=...)'
            )
        return write.scope_user(named, bound, self.store.settings)

    # -- validation (pure: every op of a batch is checked before anything runs) --------

    def _new_item(self, op: PutOp) -> NewItem:
        if not isinstance(op.key, str) or not op.key:
            raise InvalidArgument(f"an item's key is a non-empty str, got {op.key!r}")
        if not isinstance(op.value, dict):
            raise InvalidArgument(f"an item's value is a dict, got {type(op.value).__name__}")
        value = json_object(op.value)
        index: object = op.index
        if not (index is None or isinstance(index, bool) or isinstance(index, list)) or (
            isinstance(index, list) and not all(isinstance(f, str) and f for f in index)
        ):
            raise InvalidArgument(f"index is False or a list of value field paths, got {index!r}")
        explicit = isinstance(index, list)
        fields = list(index) if isinstance(index, list) else self.text_fields
        text = text_of(value, fields, explicit=explicit)
        indexed = index is not False
        ttl = op.ttl
        expires = None
        if ttl is not None:
            if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl > 0:
                raise InvalidArgument(f"ttl is a number of minutes above 0, got {ttl!r}")
            expires = datetime.now(timezone.utc) + timedelta(minutes=float(ttl))
        return NewItem(tuple(op.namespace), op.key, value, text, indexed, ttl, expires)

    def _check(self, ops: list[Op]) -> None:
        for op in ops:
            try:
                validate_op_namespace(op)
            except InvalidNamespaceError as exc:
                raise InvalidNamespace(str(exc)) from exc
            if isinstance(op, PutOp):
                # A "langgraph" root is LangGraph's own (put() refuses it; batch() lets
                # LangGraph write there), so only an empty namespace is refused here.
                if not op.namespace:
                    raise InvalidNamespace("an item's namespace cannot be empty")
            elif not isinstance(op, (GetOp, SearchOp, ListNamespacesOp)):
                raise InvalidArgument(f"unknown store operation {type(op).__name__}")
            if isinstance(op, SearchOp):
                check_filter(op.filter)
                check_page(op.limit, op.offset)
            if isinstance(op, ListNamespacesOp):
                check_page(op.limit, op.offset)
                if op.max_depth is not None and (
                    isinstance(op.max_depth, bool)
                    or not isinstance(op.max_depth, int)
                    or op.max_depth < 1
                ):
                    raise InvalidArgument(f"max_depth is at least 1, got {op.max_depth!r}")

    # -- one batch, as steps -----------------------------------------------------------

    def _batch(self, ops: Iterable[Op]) -> _Batch:
        listed = list(ops)
        self._check(listed)
        results: list[Result] = [None] * len(listed)
        # Every put is checked (users, values) before anything is read or written.
        writes = self._prepare_puts(
            [(i, op) for i, op in enumerate(listed) if isinstance(op, PutOp)]
        )
        # Reads first, then the puts, as PostgresStore runs a batch.
        gets = [(i, op) for i, op in enumerate(listed) if isinstance(op, GetOp)]
        yield from self._gets(gets, results)
        for i, op in enumerate(listed):
            if isinstance(op, SearchOp):
                results[i] = yield from self._search(op)
            elif isinstance(op, ListNamespacesOp):
                results[i] = yield from self._namespaces(op)
        yield from self._puts(writes)
        return results

    def _prepare_puts(
        self, puts: list[tuple[int, PutOp]]
    ) -> list[tuple[str, list[NewItem], list[str], Prepared | None]]:
        """Every put of a batch validated (no I/O): per user, its items, the topics it
        deletes and its prepared write. A typed error here means nothing was done."""
        # The last put of a key in a batch wins, as in LangGraph's own stores.
        last: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for _, op in puts:
            last[(tuple(op.namespace), op.key)] = op
        per_user: dict[str, tuple[list[NewItem], list[str]]] = {}
        prepared: dict[str, Prepared] = {}
        for op in last.values():
            uid = self.user_of(tuple(op.namespace))
            items, deletes = per_user.setdefault(uid, ([], []))
            if op.value is None:
                deletes.append(topic_of(op.namespace, op.key))
            else:
                items.append(self._new_item(op))
        for uid, (items, _) in per_user.items():
            if not items:
                continue
            inputs = [
                MemoryInput(
                    text=item.text,
                    memory_type=self.memory_type,
                    metadata=item.metadata(),
                    topic=item.topic,
                    expires_at=item.expires_at,
                )
                for item in items
            ]
            # Validates every item (text, metadata size) before any user's write.
            prepared[uid] = write.prepare(self.store.settings, uid, inputs, self.agent_id)
        return [
            (uid, items, deletes, prepared.get(uid)) for uid, (items, deletes) in per_user.items()
        ]

    def _puts(
        self, writes: list[tuple[str, list[NewItem], list[str], Prepared | None]]
    ) -> Generator[_Step, Any, None]:
        for uid, items, deletes, prepared in writes:
            new_rows: list[NewMemory] = []
            if items and prepared is not None:
                made = yield _Call(_rows_of, (self.store, prepared))
                new_rows = with_item_hashes(made, items)
            model = self.store.embedder.model_name
            plan = plan_put(uid, self.memory_type, new_rows, items, deletes, model)
            yield _RunPlan(plan, uid)

    def _gets(
        self, gets: list[tuple[int, GetOp]], results: list[Result]
    ) -> Generator[_Step, Any, None]:
        groups: dict[tuple[str, bool], list[tuple[int, GetOp]]] = {}
        for i, op in gets:
            uid = self.user_of(tuple(op.namespace))
            groups.setdefault((uid, bool(op.refresh_ttl)), []).append((i, op))
        for (uid, refresh), group in groups.items():
            topics = [topic_of(op.namespace, op.key) for _, op in group]
            plan = plan_get(uid, self.memory_type, topics, refresh, self.agent_id)
            found = yield _RunPlan(plan, uid)
            for (i, _), topic in zip(group, topics, strict=True):
                row = found.get(topic)
                results[i] = None if row is None else _item(row)

    def _search(self, op: SearchOp) -> Generator[_Step, Any, list[SearchItem]]:
        prefix = tuple(op.namespace_prefix)
        uid = self._user_of_prefix(prefix)
        query = op.query.strip() if isinstance(op.query, str) else None
        if op.query is not None and not isinstance(op.query, str):
            raise InvalidArgument(f"query is a str, got {type(op.query).__name__}")
        if not query:
            stmt = list_statement(
                uid, self.memory_type, prefix, op.filter, op.limit, op.offset, self.agent_id
            )
            listed = yield _RunPlan(plan_list(stmt, uid, bool(op.refresh_ttl)), uid)
            return [_search_item(r, None) for r in listed]
        wanted = containment(prefix, indexed_only=True)
        exact, narrowed = equalities(op.filter)
        if narrowed:
            wanted[META]["value"] = narrowed
        top_k = min(1000, op.offset + op.limit) if exact else 1000
        found = yield _Search(
            {
                "query": query,
                "top_k": max(top_k, 1),
                "user_id": uid,
                "memory_types": [self.memory_type],
                "metadata_filter": wanted,
                "agent_id": self.agent_id,
            }
        )
        hits = [
            r
            for r in found
            if META in r["metadata"] and matches(r["metadata"][META]["value"], op.filter)
        ][op.offset : op.offset + op.limit]
        expiring = [r["id"] for r in hits if r["metadata"][META].get("ttl") is not None]
        if op.refresh_ttl and expiring:
            yield _RunPlan(plan_refresh(uid, expiring), uid)
        return [_search_item(r, float(r["score"])) for r in hits]

    def _namespaces(self, op: ListNamespacesOp) -> Generator[_Step, Any, list[tuple[str, ...]]]:
        prefix: tuple[str, ...] | None = None
        suffix: tuple[str, ...] | None = None
        for cond in op.match_conditions or ():
            if cond.match_type == "prefix":
                prefix = tuple(cond.path)
            elif cond.match_type == "suffix":
                suffix = tuple(cond.path)
            else:
                raise InvalidArgument(f"match_type is prefix or suffix, got {cond.match_type!r}")
        fixed = fixed_prefix(prefix)
        uid = self._user_of_prefix(fixed)
        stmt = namespaces_statement(uid, self.memory_type, fixed, self.agent_id)
        found = yield _RunPlan(plan_namespaces(stmt), uid)
        kept = {
            ns if op.max_depth is None else ns[: op.max_depth]
            for ns in found
            if namespace_matches(ns, prefix, suffix)
        }
        return sorted(kept)[op.offset : op.offset + op.limit]

    def _user_of_prefix(self, prefix: tuple[str, ...]) -> str:
        """The user of a search or listing: named by the prefix, else the bound one."""
        return self.user_of(prefix)


def _rows_of(store: MemoryStore | AsyncMemoryStore, prepared: Prepared) -> list[NewMemory]:
    """The new rows of a write: embedded, with the entities they name (blocking work)."""
    vectors = store.embedder.embed_documents(prepared.embed_texts)
    return relations.with_entities(write.new_rows(prepared, vectors, store.embedder))


def _times(row: Mapping[str, Any]) -> tuple[datetime, datetime]:
    block = row["metadata"][META]
    first = block.get("created_at")
    created = datetime.fromisoformat(first) if isinstance(first, str) else row["created_at"]
    return created, row["updated_at"]


def _item(row: Mapping[str, Any]) -> Item:
    block = row["metadata"][META]
    created, updated = _times(row)
    return Item(
        value=block["value"],
        key=block["key"],
        namespace=tuple(block["namespace"]),
        created_at=created,
        updated_at=updated,
    )


def _search_item(row: Mapping[str, Any], score: float | None) -> SearchItem:
    block = row["metadata"][META]
    created, updated = _times(row)
    return SearchItem(
        namespace=tuple(block["namespace"]),
        key=block["key"],
        value=block["value"],
        created_at=created,
        updated_at=updated,
        score=score,
    )


class MemoryPgStore(_Mapping, BaseStore):
    """LangGraph's ``BaseStore`` over a :class:`~memory_pg.store.MemoryStore`.

    Pass it as a graph's store (``builder.compile(store=MemoryPgStore(MemoryStore()))``)
    or to LangMem's memory tools. ``abatch`` runs ``batch`` in a worker thread; in an
    async application use :class:`AsyncMemoryPgStore` instead.

    Args:
        store: the memory-pg store (not closed by this one). Bind it to a user
            (``MemoryStore(user_id=...)``) to serve that user only.
        user_from_namespace: which namespace label is the user: a function of the
            namespace (default :func:`user_after_memories`), an index, or None (every
            namespace is the bound user's).
        memory_type: the memory type of items (its half-life ranks them).
        text_fields: value fields whose text is the memory's text, first found first.
        agent_id: the agent that writes and reads (its private memories are seen too).
        ttl: LangGraph's ``TTLConfig``: ``default_ttl`` in minutes for puts that give
            none, ``refresh_on_read`` (default True) to move the expiry on each read.
    """

    store: MemoryStore

    def __init__(
        self,
        store: MemoryStore,
        *,
        user_from_namespace: int | Callable[[tuple[str, ...]], str | None] | None = (
            user_after_memories
        ),
        memory_type: str = "user_profile",
        text_fields: Sequence[str] = TEXT_FIELDS,
        agent_id: str | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        if not isinstance(store, MemoryStore):
            raise InvalidArgument("MemoryPgStore wraps a MemoryStore (AsyncMemoryPgStore: async)")
        super().__init__(
            store,
            user_from_namespace=user_from_namespace,
            memory_type=memory_type,
            text_fields=text_fields,
            agent_id=agent_id,
            ttl=ttl,
        )

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run LangGraph's ops: the reads, in order, then the puts (one transaction per user)."""
        steps = self._batch(ops)
        try:
            step = next(steps)
            while True:
                step = steps.send(self._do(step))
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]

    def _do(self, step: _Step) -> Any:
        if isinstance(step, _RunPlan):
            return self.store.run_plan(step.plan, step.user_id)
        if isinstance(step, _Call):
            return step.fn(*step.args)
        return self.store.search(**step.kwargs)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread (the sync store blocks)."""
        return await asyncio.to_thread(self.batch, list(ops))


class AsyncMemoryPgStore(_Mapping, BaseStore):
    """LangGraph's ``BaseStore`` over an :class:`~memory_pg.async_store.AsyncMemoryStore`.

    The twin of :class:`MemoryPgStore` for async graphs: ``abatch`` awaits the
    database and runs embedding in a worker thread. ``batch`` (the sync API) may be
    called from a thread other than the event loop's only, as LangGraph's own async
    stores allow. Arguments are :class:`MemoryPgStore`'s.
    """

    store: AsyncMemoryStore

    def __init__(
        self,
        store: AsyncMemoryStore,
        *,
        user_from_namespace: int | Callable[[tuple[str, ...]], str | None] | None = (
            user_after_memories
        ),
        memory_type: str = "user_profile",
        text_fields: Sequence[str] = TEXT_FIELDS,
        agent_id: str | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        if not isinstance(store, AsyncMemoryStore):
            raise InvalidArgument("AsyncMemoryPgStore wraps an AsyncMemoryStore")
        super().__init__(
            store,
            user_from_namespace=user_from_namespace,
            memory_type=memory_type,
            text_fields=text_fields,
            agent_id=agent_id,
            ttl=ttl,
        )
        try:  # the loop it is made on, for the sync methods called from other threads
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run LangGraph's ops: the reads, in order, then the puts (one transaction per user)."""
        self._loop = asyncio.get_running_loop()
        steps = self._batch(ops)
        try:
            step = next(steps)  # every op checked, users included, before the store opens
            await self.store.open()
            while True:
                step = steps.send(await self._do(step))
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]

    async def _do(self, step: _Step) -> Any:
        if isinstance(step, _RunPlan):
            return await self.store.run_plan(step.plan, step.user_id)
        if isinstance(step, _Call):
            return await asyncio.to_thread(step.fn, *step.args)
        return await self.store.search(**step.kwargs)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`abatch` on the loop the store runs on, from another thread."""
        loop = self._loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is None or running is loop:
            # LangGraph's async stores raise this too (the loop would wait on itself).
            raise asyncio.InvalidStateError(
                "AsyncMemoryPgStore's sync methods run from a thread other than its event "
                "loop's, after the store was first used there: use the a-methods (aget, "
                "asearch, aput ...) in async code"
            )
        future = asyncio.run_coroutine_threadsafe(self.abatch(list(ops)), loop)
        return future.result()
