"""MemoryStore: memories as rows in PostgreSQL with pgvector (AsyncMemoryStore: async_store).

A thin driver: its public methods are the operations of :mod:`memory_pg.methods`
(validate, build a plan, run it), run here in place on a ``Connection``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
from collections.abc import Iterator
from typing import Any

from sqlalchemy import Connection, Engine, create_engine

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
from memory_pg.admission import Gate
from memory_pg.embedding import Embedder
from memory_pg.errors import InvalidArgument, MemoryPgError
from memory_pg.methods import StoreBase
from memory_pg.operations import Blocking, Op, Run, Session, sync_method
from memory_pg.plans import setup
from memory_pg.plans.protocol import T, begin, materialise, split_step, translate_errors
from memory_pg.plans.shapes import MemoryInput
from memory_pg.server import EmbeddedServer
from memory_pg.usage import Flusher

logger = logging.getLogger(__name__)

__all__ = ["MemoryInput", "MemoryStore"]


class MemoryStore(StoreBase[Engine]):
    """Memories of many users in one PostgreSQL database, searched by meaning and words.

    Every call is scoped to one user: bind ``user_id`` here, or pass ``user_id=``
    per call; with neither, the call raises :class:`MissingUserScope`.

    With no ``url`` or ``engine`` (and no ``MEMORY_PG_DATABASE_URL`` /
    ``DATABASE_URL``), an embedded PostgreSQL starts in ``home`` (``MEMORY_PG_HOME``)
    and is migrated; its data survives restarts. Given a URL, memory-pg never
    starts a server, and does not migrate unless ``auto_migrate=True``.

    Example::

        store = MemoryStore(user_id="alice")
        store.add_memory("使用 PostgreSQL 作为数据库", "key_decision")
        store.search("数据库选型", top_k=3)

    Args:
        url: a PostgreSQL URL (``postgresql://user:pw@host/db``).
        engine: the host application's SQLAlchemy engine (not closed by :meth:`close`).
        user_id: the default tenant of every call.
        embedding_model: sentence-transformers model; default:
            ``MEMORY_PG_EMBEDDING_MODEL`` (as for the CLI, the services and Hermes),
            else what the database records, else bge-small-zh-v1.5 if cached, else
            the bundled all-MiniLM-L6-v2. A model other than the recorded one is
            refused (``EmbeddingModelMismatch``), naming ``memory-pg reembed``.
        embedder: any :class:`Embedder` (overrides ``embedding_model``).
        home: data folder of the embedded server.
        auto_migrate: migrate to the library's head revision on open (default: only
            for the embedded server, or with ``MEMORY_PG_AUTO_MIGRATE=1``).
        settings: limits and defaults.
        ranking: how searches rank (half-lives per type, weights, candidate counts).
        ef_search: HNSW ``ef_search`` of every search (recall against speed).
        supersede: how a new memory replaces or merges with a current one.
        judge: confirms replacements found by similarity: any ``Callable[[str], str]``,
            for example an LLM client; with none, only very similar memories of
            ``supersede.detect_types`` are replaced (and topic keys always).
    """

    engine: Engine
    _server: EmbeddedServer | None = None
    _owns_engine = False
    #: First come, first served places in front of the pool this store opened.
    _gate: Gate | None = None
    #: The read replicas (``read_urls``), and what their reads must see.
    _reads: replicas.Reads | None = None
    _flusher: Flusher | None = None

    def _start(
        self,
        url: str | None,
        engine: Engine | None,
        home: str | os.PathLike[str] | None,
        auto_migrate: bool | None,
        embedding_model: str | None,
        embedder: Embedder | None,
    ) -> None:
        given = None if engine is None else engine.url.render_as_string(hide_password=False)
        target = opening.locate(url, home, auto_migrate, self.settings, engine_url=given)
        self._server, self._owns_engine, self.pooler = target.server, engine is None, target.pooler
        if engine is None:
            engine = create_engine(target.url, **opening.engine_options(self.settings, self.pooler))
            pooling.watch(engine, self.pooler)
            exchange.watch_liveness(engine)  # instead of a pre-ping per checkout
            self._gate = Gate(opening.gate_places(self.settings), self.settings.pool_timeout_s)
        self.engine = engine
        try:
            self._reads = replicas.open_sync(self._read_urls, self.settings)
            self._flusher = Flusher(self.flush_uses, self.settings.use_flush_s)
            with translate_errors(), self.engine.connect() as conn:
                revision, recorded = opening.read_state(conn)
            # A schema it may not migrate is refused before a model loads (or warns).
            migrate = opening.needs_migration(revision, target.auto_migrate)
            self.embedder = opening.pick_embedder(embedder, embedding_model, recorded)
            if migrate:
                # Only a migration needs the dimension (to size a new vector column).
                with translate_errors():
                    schema.upgrade(self.engine, embedding_dim=self.embedder.dimension)
            self.embedding = self._drive(
                methods.run_plan(self, setup.plan_embedding_check(self.embedder), None)
            )
        except BaseException:
            self.close()
            raise
        self.url = opening.redact_url(target.url)

    # -- the driver -------------------------------------------------------------------

    def _drive(self, op: Op[T]) -> T:
        """Run an operation of :mod:`memory_pg.methods` to its value."""
        try:
            step = next(op)
            while True:
                step = op.send(self._do(step))
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]

    def _do(self, step: Run | Blocking | Session) -> Any:
        if isinstance(step, Blocking):
            return step.fn(*step.args)
        if isinstance(step, Session):
            with self._place(), translate_errors(), self.engine.connect() as conn:
                return step.fn(conn)
        if step.best_effort:
            try:
                return self._do(dataclasses.replace(step, best_effort=False))
            except MemoryPgError as exc:
                logger.warning("memory-pg: a step after a committed write failed: %s", exc)
                return None
        if step.conn is not None and not isinstance(step.conn, Connection):
            raise InvalidArgument("MemoryStore joins a Connection, not an AsyncConnection")
        if step.conn is None:  # a transaction of its own: pipelined (memory_pg.exchange)
            if step.read and self._reads is not None:
                primary, value = self._on_replica(step)
                if primary is None:
                    return value
                step = primary
            first = begin(step.user_id, self.settings, self.pooler, step.ef_search)
            with translate_errors():
                value = exchange.run(self.engine, first, step.plan, self._place())
            if self._reads is not None and step.user_id and not step.read:
                self._wrote(step.user_id)
            return value
        with self._transaction(step.user_id, step.conn, step.ef_search) as c:
            plan = step.plan
            try:
                part = next(plan)
                while True:
                    part = plan.send(materialise(c.execute(*split_step(part))))
            except StopIteration as stop:
                return stop.value

    @contextlib.contextmanager
    def _transaction(
        self, user_id: str | None, conn: Connection | None, ef_search: int | None
    ) -> Iterator[Connection]:
        first = begin(user_id, self.settings, self.pooler, ef_search)
        with translate_errors():
            if conn is not None:
                # The caller's transaction: join it, never commit it.
                for stmt in first:
                    conn.execute(*split_step(stmt))
                yield conn
                return
            with self._place(), self.engine.begin() as own:
                for stmt in first:
                    own.execute(*split_step(stmt))
                yield own

    def _on_replica(self, step: Run) -> tuple[Run | None, Any]:
        """Run a read on a replica: ``(None, its value)``, or ``(the step to run on the
        primary, None)`` where no replica is fit or the one chosen failed it."""
        assert self._reads is not None
        replica = replicas.pick(self._reads, step.user_id)
        if replica is None:
            return step, None
        first = begin(step.user_id, self.settings, replica.pooler, step.ef_search)
        try:
            with translate_errors():
                return None, exchange.run(replica.engine, first, step.plan, replica.place())
        except MemoryPgError as exc:
            if step.again is None or not replicas.retry_on_primary(exc):
                raise
            self._reads.failed(replica, exc)
            return dataclasses.replace(step, plan=step.again()), None

    def _wrote(self, user_id: str) -> None:
        """Remember where the primary's WAL stands after a write of ``user_id``, for
        that user's next read (read-your-writes)."""
        assert self._reads is not None
        try:
            with self._place(), translate_errors(), self.engine.connect() as conn:
                self._reads.wrote(user_id, replicas.wal_position(conn))
        except MemoryPgError as exc:  # the write is committed: say so, not this
            logger.warning("memory-pg: could not read the primary's WAL position: %s", exc)

    def _uses_noted(self, full: bool) -> None:
        if self._flusher is not None:
            self._flusher.poke(full)

    def _place(self) -> contextlib.AbstractContextManager[None]:
        """A place in line for a pooled connection (none needed on a host's engine)."""
        return contextlib.nullcontext() if self._gate is None else self._gate.place()

    def close(self) -> None:
        """Write the uses of search results still waiting, close the pools this store
        opened and let go of the embedded server."""
        flusher, self._flusher = self._flusher, None
        if flusher is not None:
            flusher.close()
        replicas.close_sync(self._reads)
        if self._owns_engine and hasattr(self, "engine"):
            self.engine.dispose()
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the public methods: one text for both stores (memory_pg.methods) ----------------

    run_plan = sync_method(methods.run_plan)
    add_memory = sync_method(methods.add_memory)
    add_memories = sync_method(methods.add_memories)
    replace_memory = sync_method(methods.replace_memory)
    restore = sync_method(methods.restore)
    delete_memory = sync_method(methods.delete_memory)
    clear_user_memory = sync_method(methods.clear_user_memory)
    append_turn = sync_method(methods.append_turn)
    pending_turns = sync_method(methods.pending_turns)
    commit_compaction = sync_method(methods.commit_compaction)
    search = sync_method(methods.search)
    flush_uses = sync_method(methods.flush_uses)
    warm_up = sync_method(warming.warm_up)
    get = sync_method(methods.get)
    list_memories = sync_method(methods.list_memories)
    history = sync_method(methods.history)
    stats = sync_method(methods.stats)
    healthcheck = sync_method(methods.healthcheck)
    export_user_memory = sync_method(transfer_methods.export_user_memory)
    import_user_memory = sync_method(transfer_methods.import_user_memory)
    related = sync_method(relation_methods.related)
    entity = sync_method(relation_methods.entity)
    entities = sync_method(relation_methods.entities)
    graph = sync_method(relation_methods.graph)
