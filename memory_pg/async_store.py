"""AsyncMemoryStore: the asyncio twin of MemoryStore, a driver of the same plans.

It opens its own async engine and pool (psycopg's async driver) and holds no sync
store. The blocking steps of opening (the embedded server, loading the model)
and every embedding run in worker threads, so the event loop keeps serving. Each
public method validates its arguments, builds a plan (:mod:`memory_pg.plans`) and
runs it on an ``AsyncConnection``; names and signatures are :class:`MemoryStore`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from datetime import datetime
from typing import IO, Any

import numpy as np
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from memory_pg import buffer, opening, pooling, schema
from memory_pg._validate import check_time
from memory_pg.config import RankingSettings, StoreSettings, SupersedePolicy
from memory_pg.embedding import Embedder, readability
from memory_pg.plans import read, setup, transfer, write
from memory_pg.plans.protocol import Plan, T, begin, materialise, split_step, translate_errors
from memory_pg.plans.setup import EmbeddingInfo
from memory_pg.plans.write import MemoryInput
from memory_pg.server import EmbeddedServer
from memory_pg.supersession import Judge

__all__ = ["AsyncMemoryStore"]


class AsyncMemoryStore:
    """The asyncio twin of :class:`~memory_pg.store.MemoryStore`: the same methods, awaited.

    Opening (embedded server, migration, model check) happens on first use or on
    ``await store.open()``. Use ``async with AsyncMemoryStore(...) as store``.
    ``engine`` is the host application's :class:`AsyncEngine` (not closed by
    :meth:`close`); every other argument is :class:`MemoryStore`'s.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        engine: AsyncEngine | None = None,
        user_id: str | None = None,
        embedding_model: str | None = None,
        embedder: Embedder | None = None,
        home: str | os.PathLike[str] | None = None,
        auto_migrate: bool | None = None,
        settings: StoreSettings | None = None,
        ranking: RankingSettings | None = None,
        ef_search: int = 100,
        supersede: SupersedePolicy | None = None,
        judge: Judge | None = None,
    ) -> None:
        self.settings = settings or StoreSettings()
        self.ranking = ranking or RankingSettings()
        self.supersede = supersede or SupersedePolicy()
        self.judge = judge
        self._user_id = None if user_id is None else write.scope_user(user_id, None, self.settings)
        self.ef_search = ef_search
        self._args = (url, home, auto_migrate, embedding_model, embedder)
        self._given_engine = engine
        self.engine: AsyncEngine | None = engine
        self._server: EmbeddedServer | None = None
        self._opened = False
        self._open_lock = asyncio.Lock()
        #: ``auto``, ``none``, ``session`` or ``transaction``: see :mod:`memory_pg.pooling`.
        self.pooler = "auto"
        self.url = ""

    @classmethod
    def from_env(cls, **kwargs: Any) -> AsyncMemoryStore:
        """A store configured by ``MEMORY_PG_*`` environment variables, like the CLI."""
        return cls(**opening.env_kwargs(kwargs))

    async def open(self) -> AsyncMemoryStore:
        """Start, migrate and check the database (done on first use otherwise)."""
        async with self._open_lock:
            if not self._opened:
                try:
                    await self._open()
                except BaseException:
                    await self.close()
                    raise
                self._opened = True
        return self

    async def _open(self) -> None:
        url, home, auto_migrate, model, embedder = self._args
        given = self._given_engine
        engine_url = None if given is None else given.url.render_as_string(hide_password=False)
        target = await asyncio.to_thread(
            opening.locate, url, home, auto_migrate, self.settings, engine_url=engine_url
        )
        self._server, self.pooler = target.server, target.pooler
        if self.engine is None:
            options = opening.engine_options(self.settings, self.pooler)
            self.engine = create_async_engine(target.url, **options)
            pooling.watch(self.engine.sync_engine, self.pooler)
        with translate_errors():
            async with self.engine.connect() as conn:
                revision, recorded = await conn.run_sync(opening.read_state)
        self.embedder = await asyncio.to_thread(opening.pick_embedder, embedder, model, recorded)
        if opening.needs_migration(revision, target.auto_migrate):
            pooling.require_session(self.engine.sync_engine, "migrate")
            dim = await asyncio.to_thread(lambda: self.embedder.dimension)
            with translate_errors():
                async with self.engine.connect() as conn:
                    await conn.run_sync(schema.upgrade_on, embedding_dim=dim)
        plan = setup.plan_embedding_check(self.embedder)
        self.embedding: EmbeddingInfo = await self._run(plan, None)
        self.url = opening.redact_url(target.url)

    # -- plumbing -------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _transaction(
        self, user_id: str | None, conn: AsyncConnection | None, ef_search: int | None
    ) -> AsyncIterator[AsyncConnection]:
        assert self.engine is not None
        first = begin(user_id, self.settings, self.pooler, ef_search)
        with translate_errors():
            if conn is not None:
                await conn.execute(first)
                yield conn
                return
            async with self.engine.begin() as own:
                await own.execute(first)
                yield own

    async def _run(
        self, plan: Plan[T], user_id: str | None, conn: AsyncConnection | None = None, **kw: Any
    ) -> T:
        async with self._transaction(user_id, conn, kw.get("ef_search")) as c:
            try:
                step = next(plan)
                while True:
                    step = plan.send(materialise(await c.execute(*split_step(step))))
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]

    async def run_plan(
        self,
        plan: Plan[T],
        user_id: str | None,
        conn: AsyncConnection | None = None,
        *,
        ef_search: int | None = None,
    ) -> T:
        """See :meth:`MemoryStore.run_plan`."""
        await self.open()
        return await self._run(plan, user_id, conn, ef_search=ef_search)

    async def close(self) -> None:
        """Close the pool this store opened and let go of the embedded server."""
        if self.engine is not None and self._given_engine is None:
            await self.engine.dispose()
            self.engine = None
        if self._server is not None:
            await asyncio.to_thread(self._server.stop)
            self._server = None
        self._opened = False

    async def __aenter__(self) -> AsyncMemoryStore:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def user_id(self) -> str | None:
        """The tenant bound on this store, if any."""
        return self._user_id

    def _scope(self, user_id: str | None) -> str:
        return write.scope_user(user_id, self._user_id, self.settings)

    def _writer(self) -> write.Writer:
        return write.Writer(self.embedder.model_name, self.supersede, self.judge)

    async def _embed(self, texts: list[str]) -> np.ndarray[Any, Any]:
        await self.open()
        return await asyncio.to_thread(self.embedder.embed_documents, texts)

    # -- writes -----------------------------------------------------------------------

    async def add_memory(
        self,
        text: str,
        memory_type: str = "dialogue",
        metadata: Mapping[str, Any] | None = None,
        *,
        user_id: str | None = None,
        topic: str | None = None,
        importance: float | None = None,
        event_time: datetime | None = None,
        expires_at: datetime | None = None,
        context: str | None = None,
        agent_id: str | None = None,
        private: bool = False,
        conn: AsyncConnection | None = None,
    ) -> str:
        """See :meth:`MemoryStore.add_memory`."""
        item = MemoryInput(
            text, memory_type, metadata, topic, importance, event_time, expires_at, context, private
        )
        return (await self.add_memories([item], user_id=user_id, agent_id=agent_id, conn=conn))[0]

    async def add_memories(
        self,
        items: Iterable[MemoryInput | Mapping[str, Any] | str],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        conn: AsyncConnection | None = None,
    ) -> list[str]:
        """See :meth:`MemoryStore.add_memories`."""
        prepared = write.prepare(self.settings, self._scope(user_id), items, agent_id)
        if not prepared.texts:
            return []
        vectors = await self._embed(prepared.embed_texts)
        plan = write.plan_insert(write.new_rows(prepared, vectors, self.embedder), self._writer())
        return await self._run(plan, prepared.user_id, conn)

    async def replace_memory(
        self,
        memory_id: str,
        text: str,
        *,
        user_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        importance: float | None = None,
        agent_id: str | None = None,
    ) -> str:
        """See :meth:`MemoryStore.replace_memory`."""
        uid = self._scope(user_id)
        old_id = write.parse_memory_id(memory_id)
        old = await self.get(str(old_id), user_id=uid, agent_id=agent_id)
        item, writer = write.replacement(old, old_id, text, metadata, importance, agent_id)
        prepared = write.prepare(self.settings, uid, [item], writer)
        rows = write.new_rows(prepared, await self._embed(prepared.embed_texts), self.embedder)
        return await self._run(write.plan_replace(old_id, rows, self._writer(), agent_id), uid)

    async def delete_memory(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> bool:
        """See :meth:`MemoryStore.delete_memory`."""
        uid = self._scope(user_id)
        return await self.run_plan(write.plan_delete(uid, memory_id, self.settings, agent_id), uid)

    async def clear_user_memory(self, user_id: str | None = None) -> int:
        """See :meth:`MemoryStore.clear_user_memory`."""
        uid = self._scope(user_id)
        return await self.run_plan(write.plan_clear(uid), uid)

    # -- dialogue buffer --------------------------------------------------------------

    async def append_turn(
        self, role: str, content: str, *, user_id: str | None = None, session_id: str | None = None
    ) -> int:
        """See :meth:`MemoryStore.append_turn`."""
        uid = self._scope(user_id)
        turn = buffer.prepare_turn(role, content, session_id, self.settings)
        return await self.run_plan(buffer.plan_append(uid, *turn), uid)

    async def pending_turns(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """See :meth:`MemoryStore.pending_turns`."""
        uid = self._scope(user_id)
        plan = buffer.plan_pending_turns(uid, session_id, limit, self.settings)
        return await self.run_plan(plan, uid)

    async def commit_compaction(
        self,
        turn_ids: Sequence[int],
        memories: Iterable[Any],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[str]:
        """See :meth:`MemoryStore.commit_compaction`."""
        uid = self._scope(user_id)
        ids, prepared = buffer.prepare_commit(uid, turn_ids, memories, agent_id, self.settings)
        insert = None
        if prepared.texts:
            vectors = await self._embed(prepared.embed_texts)
            rows = write.new_rows(prepared, vectors, self.embedder)
            insert = write.plan_insert(rows, self._writer())
        return await self.run_plan(buffer.plan_commit(uid, ids, insert), uid)

    # -- reads ------------------------------------------------------------------------

    async def search(
        self,
        query: str,
        top_k: int = 5,
        *,
        user_id: str | None = None,
        memory_types: Sequence[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        metadata_filter: Mapping[str, Any] | None = None,
        as_of: datetime | None = None,
        track_access: bool = True,
        min_similarity: float | None = None,
        min_lexical: float | None = None,
        full_text_only: bool = False,
        agent_id: str | None = None,
        agent_ids: Sequence[str] | None = None,
        now: datetime | None = None,
    ) -> list[dict[str, Any]]:
        """See :meth:`MemoryStore.search`."""
        uid = self._scope(user_id)
        text, k = read.check_query(query, top_k, self.settings)
        filters = read.search_filters(
            self.settings,
            memory_types,
            since,
            until,
            metadata_filter,
            as_of,
            min_similarity,
            min_lexical,
            agent_id,
            agent_ids,
        )
        at = check_time(now, "now")
        await self.open()
        vector, readable = (
            (None, 0.0)
            if full_text_only
            else await asyncio.to_thread(_embed_query, self.embedder, text)
        )
        plan = read.plan_search(
            uid, text, vector, k, filters, track_access, self.ranking, readability=readable, now=at
        )
        return await self._run(plan, uid, ef_search=self.ef_search)

    async def get(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> dict[str, Any] | None:
        """See :meth:`MemoryStore.get`."""
        uid = self._scope(user_id)
        return await self.run_plan(read.plan_get(uid, memory_id, self.settings, agent_id), uid)

    async def list_memories(
        self,
        *,
        user_id: str | None = None,
        memory_types: Sequence[str] | None = None,
        include_inactive: bool = False,
        limit: int | None = None,
        agent_id: str | None = None,
        agent_ids: Sequence[str] | None = None,
    ) -> list[dict[str, Any]]:
        """See :meth:`MemoryStore.list_memories`."""
        uid = self._scope(user_id)
        listing = (memory_types, include_inactive, limit, agent_id, agent_ids)
        return await self.run_plan(read.plan_list(uid, self.settings, *listing), uid)

    async def history(
        self,
        memory_id: str | None = None,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """See :meth:`MemoryStore.history`."""
        uid = self._scope(user_id)
        plan = read.plan_history(uid, memory_id, self.settings, agent_id)
        return await self.run_plan(plan, uid)

    async def stats(self, *, user_id: str | None = None) -> dict[str, Any]:
        """See :meth:`MemoryStore.stats`."""
        uid = self._scope(user_id) if (user_id or self._user_id) else None
        return await self.run_plan(read.plan_stats(uid), uid)

    async def healthcheck(self) -> dict[str, Any]:
        """See :meth:`MemoryStore.healthcheck`."""
        found = await self.run_plan(setup.plan_health(), None)
        assert self.engine is not None
        with translate_errors():
            async with self.engine.connect() as conn:
                revision = await conn.run_sync(schema.current_revision)
        head = schema.head_revision()
        return setup.health_dict(found, revision, head, self.url, self.embedding)

    # -- export / import --------------------------------------------------------------

    async def export_user_memory(
        self,
        target: str | IO[str],
        *,
        user_id: str | None = None,
        include_inactive: bool = True,
        with_embeddings: bool = True,
    ) -> int:
        """See :meth:`MemoryStore.export_user_memory` (the file is written in a thread)."""
        uid = self._scope(user_id)
        rows = await self.run_plan(transfer.plan_export(uid, include_inactive), uid)
        return await asyncio.to_thread(transfer.write_lines, target, rows, with_embeddings)

    async def import_user_memory(self, source: str | IO[str], *, user_id: str | None = None) -> int:
        """See :meth:`MemoryStore.import_user_memory` (the file is read in a thread)."""
        uid = self._scope(user_id)
        await self.open()
        parsed = await asyncio.to_thread(
            transfer.read_lines, source, uid, self.settings, self.embedder
        )
        prepared, given = parsed
        if not prepared.texts:
            return 0
        to_embed = transfer.texts_to_embed(prepared, given)
        embedded = await self._embed(to_embed) if to_embed else np.zeros((0, 0))
        rows = transfer.import_rows(prepared, given, embedded, self.embedder)
        return await self._run(transfer.plan_import(rows, self.embedder.model_name), uid)


def _embed_query(embedder: Embedder, text: str) -> tuple[np.ndarray[Any, Any], float]:
    """The query's vector and how much of it the model reads (one worker-thread trip)."""
    return embedder.embed_query(text), readability(embedder, text)
