"""AsyncMemoryStore: the asyncio twin of MemoryStore, a driver of the same operations.

It opens its own async engine and pool (psycopg's async driver) and holds no sync
store. The blocking steps of opening (the embedded server, loading the model),
embedding and file I/O run in worker threads, so the event loop keeps serving. Its
public methods are the operations of :mod:`memory_pg.methods`, awaited: the names,
signatures and docstrings are :class:`~memory_pg.store.MemoryStore`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from memory_pg import (
    exchange,
    methods,
    opening,
    pooling,
    relation_methods,
    replicas,
    schema,
    transfer_methods,
    warming,
)
from memory_pg.embedding import Embedder
from memory_pg.errors import InvalidArgument, MemoryPgError
from memory_pg.methods import StoreBase
from memory_pg.operations import Blocking, Op, Run, Session, async_method
from memory_pg.plans import setup
from memory_pg.plans.protocol import T, begin, materialise, split_step, translate_errors
from memory_pg.server import EmbeddedServer

logger = logging.getLogger(__name__)

__all__ = ["AsyncMemoryStore"]


class AsyncMemoryStore(StoreBase[AsyncEngine]):
    """The asyncio twin of :class:`~memory_pg.store.MemoryStore`: the same methods, awaited.

    Opening (embedded server, migration, model check) happens on first use or on
    ``await store.open()``. Use ``async with AsyncMemoryStore(...) as store``.
    ``engine`` is the host application's :class:`AsyncEngine` (not closed by
    :meth:`close`); every other argument is :class:`MemoryStore`'s.
    """

    engine: AsyncEngine | None

    def _start(
        self,
        url: str | None,
        engine: AsyncEngine | None,
        home: str | os.PathLike[str] | None,
        auto_migrate: bool | None,
        embedding_model: str | None,
        embedder: Embedder | None,
    ) -> None:
        # Nothing blocks here: opening waits for open() or the first call.
        self._args = (url, home, auto_migrate, embedding_model, embedder)
        self._given_engine = self.engine = engine
        self._server: EmbeddedServer | None = None
        self._opened = False
        #: The read replicas (``read_urls``), and what their reads must see.
        self._reads: replicas.Reads | None = None
        #: Writes the uses of search results (memory_pg.usage) every ``use_flush_s``.
        self._flush_task: asyncio.Task[None] | None = None
        self._flush_now = asyncio.Event()
        self._open_lock = asyncio.Lock()

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
            exchange.watch_liveness(self.engine.sync_engine)  # instead of a pre-ping per checkout
        self._reads = replicas.open_async(self._read_urls, self.settings)
        revision, recorded = await self._do(Session(opening.read_state))
        # A schema it may not migrate is refused before a model loads (or warns).
        migrate = opening.needs_migration(revision, target.auto_migrate)
        self.embedder = await asyncio.to_thread(opening.pick_embedder, embedder, model, recorded)
        if migrate:
            pooling.require_session(self.engine.sync_engine, "migrate")
            dim = await asyncio.to_thread(lambda: self.embedder.dimension)
            await self._do(Session(lambda conn: schema.upgrade_on(conn, embedding_dim=dim)))
        self.embedding = await self._do(Run(setup.plan_embedding_check(self.embedder), None))
        self.url = opening.redact_url(target.url)

    # -- the driver -------------------------------------------------------------------

    async def _drive(self, op: Op[T]) -> T:
        """Run an operation of :mod:`memory_pg.methods` to its value."""
        try:
            step = next(op)  # the call is validated before anything opens
            await self.open()
            while True:
                step = op.send(await self._do(step))
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]

    async def _do(self, step: Run | Blocking | Session) -> Any:
        assert self.engine is not None
        if isinstance(step, Blocking):
            return await asyncio.to_thread(step.fn, *step.args)
        if isinstance(step, Session):
            with translate_errors():
                async with self.engine.connect() as conn:
                    return await conn.run_sync(step.fn)
        if step.best_effort:
            try:
                return await self._do(dataclasses.replace(step, best_effort=False))
            except MemoryPgError as exc:
                logger.warning("memory-pg: a step after a committed write failed: %s", exc)
                return None
        if step.conn is not None and not isinstance(step.conn, AsyncConnection):
            raise InvalidArgument("AsyncMemoryStore joins an AsyncConnection, not a Connection")
        if step.conn is None:  # a transaction of its own: pipelined (memory_pg.exchange)
            if step.read and self._reads is not None:
                primary, value = await self._on_replica(step)
                if primary is None:
                    return value
                step = primary
            first = begin(step.user_id, self.settings, self.pooler, step.ef_search)
            with translate_errors():
                value = await exchange.run_async(self.engine, first, step.plan)
            if self._reads is not None and step.user_id and not step.read:
                await self._wrote(step.user_id)
            return value
        async with self._transaction(step.user_id, step.conn, step.ef_search) as c:
            plan = step.plan
            try:
                part = next(plan)
                while True:
                    part = plan.send(materialise(await c.execute(*split_step(part))))
            except StopIteration as stop:
                return stop.value

    @contextlib.asynccontextmanager
    async def _transaction(
        self, user_id: str | None, conn: AsyncConnection | None, ef_search: int | None
    ) -> AsyncIterator[AsyncConnection]:
        assert self.engine is not None
        first = begin(user_id, self.settings, self.pooler, ef_search)
        with translate_errors():
            if conn is not None:
                for stmt in first:
                    await conn.execute(*split_step(stmt))
                yield conn
                return
            async with self.engine.begin() as own:
                for stmt in first:
                    await own.execute(*split_step(stmt))
                yield own

    async def _on_replica(self, step: Run) -> tuple[Run | None, Any]:
        """:meth:`MemoryStore._on_replica <memory_pg.store.MemoryStore._on_replica>`."""
        assert self._reads is not None
        replica = await replicas.pick_async(self._reads, step.user_id)
        if replica is None:
            return step, None
        first = begin(step.user_id, self.settings, replica.pooler, step.ef_search)
        try:
            with translate_errors():
                return None, await exchange.run_async(replica.engine, first, step.plan)
        except MemoryPgError as exc:
            if step.again is None or not replicas.retry_on_primary(exc):
                raise
            self._reads.failed(replica, exc)
            return dataclasses.replace(step, plan=step.again()), None

    async def _wrote(self, user_id: str) -> None:
        """Where the primary's WAL stands after a write of ``user_id`` (read-your-writes)."""
        assert self._reads is not None and self.engine is not None
        try:
            with translate_errors():
                async with self.engine.connect() as conn:
                    lsn = await conn.run_sync(replicas.wal_position)
            self._reads.wrote(user_id, lsn)
        except MemoryPgError as exc:  # the write is committed: say so, not this
            logger.warning("memory-pg: could not read the primary's WAL position: %s", exc)

    def _uses_noted(self, full: bool) -> None:
        task = self._flush_task
        loop = asyncio.get_running_loop()
        if task is None or task.done() or task.get_loop() is not loop:
            self._flush_now = asyncio.Event()
            self._flush_task = loop.create_task(self._flush_loop(), name="memory-pg-uses")
        if full:
            self._flush_now.set()

    async def _flush_loop(self) -> None:
        try:
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._flush_now.wait(), self.settings.use_flush_s)
                self._flush_now.clear()
                await self._flush_quietly()
        except asyncio.CancelledError:
            # Closed, or the event loop ends (asyncio.run cancels what is left): what
            # is noted is written first, if the store is still open.
            if self.engine is not None and len(self._uses):
                await self._flush_quietly()
            raise

    async def _flush_quietly(self) -> None:
        try:
            await self.flush_uses()
        except MemoryPgError as exc:  # the uses went back into the log; try again later
            logger.warning("memory-pg: could not write the uses of search results: %s", exc)

    async def close(self) -> None:
        """Write the uses of search results still waiting, close the pools this store
        opened and let go of the embedded server."""
        task, self._flush_task = self._flush_task, None
        if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.engine is not None and self._opened and len(self._uses):
            await self._flush_quietly()
        await replicas.close_async(self._reads)
        self._reads = None
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

    # -- the public methods: one text for both stores (memory_pg.methods) ----------------

    run_plan = async_method(methods.run_plan)
    add_memory = async_method(methods.add_memory)
    add_memories = async_method(methods.add_memories)
    replace_memory = async_method(methods.replace_memory)
    restore = async_method(methods.restore)
    delete_memory = async_method(methods.delete_memory)
    clear_user_memory = async_method(methods.clear_user_memory)
    append_turn = async_method(methods.append_turn)
    pending_turns = async_method(methods.pending_turns)
    commit_compaction = async_method(methods.commit_compaction)
    search = async_method(methods.search)
    flush_uses = async_method(methods.flush_uses)
    warm_up = async_method(warming.warm_up)
    get = async_method(methods.get)
    list_memories = async_method(methods.list_memories)
    history = async_method(methods.history)
    stats = async_method(methods.stats)
    healthcheck = async_method(methods.healthcheck)
    export_user_memory = async_method(transfer_methods.export_user_memory)
    import_user_memory = async_method(transfer_methods.import_user_memory)
    related = async_method(relation_methods.related)
    entity = async_method(relation_methods.entity)
    entities = async_method(relation_methods.entities)
    graph = async_method(relation_methods.graph)
