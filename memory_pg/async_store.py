"""AsyncMemoryStore: the asyncio twin of MemoryStore, driving the same statement plans."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from datetime import datetime
from typing import IO, Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from memory_pg import buffer, pooling, queries
from memory_pg._base import (
    MemoryInput,
    Plan,
    StoreCore,
    T,
    memory_dict,
    parse_memory_id,
    split_step,
    translate_errors,
    validate_top_k,
)
from memory_pg._validate import check_text, check_time
from memory_pg.config import RankingSettings, StoreSettings, SupersedePolicy
from memory_pg.embedding import Embedder, readability
from memory_pg.lifecycle import Judge
from memory_pg.plans import relations
from memory_pg.store import (
    MemoryStore,
    _engine_options,
    _materialize,
    _stats_dict,
    _vector_list,
)

__all__ = ["AsyncMemoryStore"]


class AsyncMemoryStore(StoreCore):
    """The asyncio twin of :class:`MemoryStore`: the same methods, awaited.

    Opening (embedded server, migration, model check) happens on first use or on
    ``await store.open()``; embedding runs in a worker thread so the event loop
    keeps serving. Use ``async with AsyncMemoryStore(...) as store``.
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
        self._user_id = None if user_id is None else self._scope(user_id)
        self.ef_search = ef_search
        self._args = (url, home, auto_migrate, embedding_model, embedder)
        self._given_engine = engine
        self.engine: AsyncEngine | None = engine
        self._sync: MemoryStore | None = None
        self._open_lock = asyncio.Lock()

    async def open(self) -> AsyncMemoryStore:
        """Start, migrate and check the database (done on first use otherwise)."""
        async with self._open_lock:
            if self._sync is not None:
                return self
            url, home, auto_migrate, model, embedder = self._args
            if self._given_engine is not None and url is None:
                url = self._given_engine.url.render_as_string(hide_password=False)
            self._sync = await asyncio.to_thread(
                MemoryStore,
                url,
                user_id=self._user_id,
                embedding_model=model,
                embedder=embedder,
                home=home,
                auto_migrate=auto_migrate,
                settings=self.settings,
            )
            self.embedder = self._sync.embedder
            self.pooler = self._sync.pooler
            self.embedding = self._sync.embedding
            if self.engine is None:
                self.engine = create_async_engine(
                    self._sync.engine.url, **_engine_options(self.settings, self._sync.pooler)
                )
                pooling.watch(self.engine.sync_engine, self._sync.pooler)
        return self

    @property
    def user_id(self) -> str | None:
        """The tenant bound on this store, if any."""
        return self._user_id

    async def _ready(self) -> AsyncEngine:
        if self._sync is None:
            await self.open()
        assert self.engine is not None
        return self.engine

    @contextlib.asynccontextmanager
    async def _transaction(
        self, user_id: str | None, conn: AsyncConnection | None, ef_search: int | None = None
    ) -> AsyncIterator[AsyncConnection]:
        engine = await self._ready()
        with translate_errors():
            if conn is not None:
                await conn.execute(self._set_tenant(user_id, ef_search))
                yield conn
                return
            async with engine.begin() as own:
                await own.execute(self._set_tenant(user_id, ef_search))
                yield own

    async def _run(
        self,
        plan: Plan[T],
        user_id: str | None,
        conn: AsyncConnection | None = None,
        *,
        ef_search: int | None = None,
    ) -> T:
        async with self._transaction(user_id, conn, ef_search) as c:
            try:
                step = next(plan)
                while True:
                    step = plan.send(_materialize(await c.execute(*split_step(step))))
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]

    async def close(self) -> None:
        """Close what this store opened."""
        if self.engine is not None and self._given_engine is None:
            await self.engine.dispose()
        if self._sync is not None:
            await asyncio.to_thread(self._sync.close)
            self._sync = None

    async def __aenter__(self) -> AsyncMemoryStore:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

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
        await self._ready()
        prepared = self._prepare(user_id, items, agent_id)
        if not prepared.texts:
            return []
        vectors = await asyncio.to_thread(self.embedder.embed_documents, prepared.embed_texts)
        rows = self._rows(prepared, vectors)
        return await self._run(self._plan_insert(rows), prepared.user_id, conn)

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
        await self._ready()
        uid = self._scope(user_id)
        old_id = parse_memory_id(memory_id)
        old = await self.get(str(old_id), user_id=uid, agent_id=agent_id)
        item, writer = self._replacement(old, old_id, text, metadata, importance, agent_id)
        prepared = self._prepare(uid, [item], writer)
        vectors = await asyncio.to_thread(self.embedder.embed_documents, prepared.embed_texts)
        return await self._run(
            self._plan_replace(old_id, self._rows(prepared, vectors), agent_id), uid
        )

    async def delete_memory(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> bool:
        """See :meth:`MemoryStore.delete_memory`."""
        uid = self._scope(user_id)
        return await self._run(
            self._plan_delete(uid, parse_memory_id(memory_id), self._agent(agent_id)), uid
        )

    async def clear_user_memory(self, user_id: str | None = None) -> int:
        """See :meth:`MemoryStore.clear_user_memory`."""
        uid = self._scope(user_id)
        return await self._run(self._plan_clear(uid), uid)

    async def append_turn(
        self, role: str, content: str, *, user_id: str | None = None, session_id: str | None = None
    ) -> int:
        """See :meth:`MemoryStore.append_turn`."""
        uid = self._scope(user_id)
        session, role, content = buffer.prepare_turn(role, content, session_id, self.settings)
        return await self._run(buffer.plan_append(uid, session, role, content), uid)

    async def pending_turns(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """See :meth:`MemoryStore.pending_turns`."""
        uid = self._scope(user_id)
        session = buffer.check_session_id(session_id, self.settings)
        plan = buffer.plan_pending(uid, session, buffer.check_limit(limit))
        return await self._run(plan, uid)

    async def commit_compaction(
        self,
        turn_ids: Sequence[int],
        memories: Iterable[Any],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[str]:
        """See :meth:`MemoryStore.commit_compaction`."""
        await self._ready()
        uid = self._scope(user_id)
        ids = buffer.check_turn_ids(turn_ids)
        prepared = self._prepare(uid, [buffer.as_memory_input(m, ids) for m in memories], agent_id)
        insert_plan = None
        if prepared.texts:
            vectors = await asyncio.to_thread(self.embedder.embed_documents, prepared.embed_texts)
            insert_plan = self._plan_insert(self._rows(prepared, vectors))
        return await self._run(buffer.plan_commit(uid, ids, insert_plan), uid)

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
        expand: int = 0,
    ) -> list[dict[str, Any]]:
        """See :meth:`MemoryStore.search`."""
        await self._ready()
        uid = self._scope(user_id)
        text = self._check_query(query)
        k = validate_top_k(top_k)
        filters = self._search_filters(
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
        vector = (
            None if full_text_only else await asyncio.to_thread(self.embedder.embed_query, text)
        )
        readable = (
            0.0 if vector is None else await asyncio.to_thread(readability, self.embedder, text)
        )
        plan = self._plan_search(
            uid,
            text,
            vector,
            k,
            filters,
            track_access,
            self.ranking,
            readability=readable,
            now=check_time(now, "now"),
            expand=relations.check_depth(expand, "expand"),
        )
        return await self._run(plan, uid, ef_search=self.ef_search)

    async def get(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> dict[str, Any] | None:
        """See :meth:`MemoryStore.get`."""
        uid = self._scope(user_id)
        stmt = queries.get_memory(uid, parse_memory_id(memory_id), self._agent(agent_id))
        rows = await self._run(self._plan_one(stmt), uid)
        return memory_dict(rows[0]) if rows else None

    async def history(
        self,
        memory_id: str | None = None,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """See :meth:`MemoryStore.history`."""
        uid = self._scope(user_id)
        mid = parse_memory_id(memory_id) if memory_id is not None else None
        rows = await self._run(
            self._plan_one(queries.history_of(uid, mid, self._agent(agent_id))), uid
        )
        return [memory_dict(r) for r in rows]

    # -- relations (issue 19) ----------------------------------------------------------

    async def related(
        self,
        memory_id: str,
        depth: int = 2,
        *,
        limit: int = 50,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """See :meth:`MemoryStore.related`."""
        uid = self._scope(user_id)
        plan = relations.plan_related(
            uid,
            parse_memory_id(memory_id),
            relations.check_depth(depth),
            self._agent(agent_id),
            validate_top_k(limit),
        )
        return await self._run(plan, uid)

    async def entity(
        self,
        name: str,
        *,
        limit: int = 50,
        include_inactive: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> dict[str, Any] | None:
        """See :meth:`MemoryStore.entity`."""
        uid = self._scope(user_id)
        plan = relations.plan_entity(
            uid,
            check_text(name, self.settings, what="name"),
            self._agent(agent_id),
            include_inactive,
            validate_top_k(limit),
        )
        return await self._run(plan, uid)

    async def entities(
        self,
        *,
        kinds: Sequence[str] | None = None,
        limit: int = 100,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """See :meth:`MemoryStore.entities`."""
        uid = self._scope(user_id)
        plan = relations.plan_entities(
            uid, self._agent(agent_id), relations.check_kinds(kinds), validate_top_k(limit)
        )
        return await self._run(plan, uid)

    async def graph(
        self,
        name: str,
        *,
        limit: int = 25,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> dict[str, Any] | None:
        """See :meth:`MemoryStore.graph`."""
        uid = self._scope(user_id)
        plan = relations.plan_graph(
            uid,
            check_text(name, self.settings, what="name"),
            self._agent(agent_id),
            validate_top_k(limit),
        )
        return await self._run(plan, uid)

    async def stats(self, *, user_id: str | None = None) -> dict[str, Any]:
        """See :meth:`MemoryStore.stats`."""
        uid = self._scope(user_id) if (user_id or self._user_id) else None
        return _stats_dict(await self._run(self._plan_stats(uid), uid), uid)

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
        stmt = queries.list_memories(
            uid,
            memory_types=memory_types,
            include_inactive=include_inactive,
            limit=limit,
            agent_id=self._agent(agent_id),
            agent_ids=self._agents(agent_ids),
        )
        return [memory_dict(r) for r in await self._run(self._plan_one(stmt), uid)]

    async def export_user_memory(
        self,
        target: IO[str],
        *,
        user_id: str | None = None,
        include_inactive: bool = True,
        with_embeddings: bool = False,
    ) -> int:
        """See :meth:`MemoryStore.export_user_memory` (an open text file only)."""
        uid = self._scope(user_id)
        rows = await self._run(self._plan_one(queries.export_rows(uid, include_inactive)), uid)
        for row in rows:
            embedding = row.pop("embedding", None)
            vec = _vector_list(embedding) if with_embeddings and embedding is not None else None
            target.write(self._export_line(row, vec) + "\n")
        return len(rows)
