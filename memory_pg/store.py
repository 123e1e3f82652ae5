"""MemoryStore: memories as rows in PostgreSQL with pgvector (AsyncMemoryStore: async_store).

A thin driver: each public method validates its arguments, builds a plan
(:mod:`memory_pg.plans`) and runs it in one transaction on a ``Connection``.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import IO, Any

import numpy as np
from sqlalchemy import Connection, Engine, create_engine

from memory_pg import buffer, opening, pooling, schema
from memory_pg._validate import check_time
from memory_pg.config import RankingSettings, StoreSettings, SupersedePolicy
from memory_pg.embedding import Embedder, readability
from memory_pg.plans import read, setup, transfer, write
from memory_pg.plans.protocol import Plan, T, begin, materialise, split_step, translate_errors
from memory_pg.plans.setup import EmbeddingInfo
from memory_pg.plans.write import MemoryInput
from memory_pg.supersession import Judge

logger = logging.getLogger(__name__)

__all__ = ["MemoryInput", "MemoryStore"]


class MemoryStore:
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
        embedding_model: sentence-transformers model; default: what the database
            records, else ``MEMORY_PG_EMBEDDING_MODEL``'s value passed by the caller,
            else bge-small-zh-v1.5 if cached, else the bundled all-MiniLM-L6-v2.
        embedder: any :class:`Embedder` (overrides ``embedding_model``).
        home: data folder of the embedded server.
        auto_migrate: migrate to the library's head revision on open (default: only
            for the embedded server).
        settings: limits and defaults.
        ranking: how searches rank (half-lives per type, weights, candidate counts).
        ef_search: HNSW ``ef_search`` of every search (recall against speed).
        supersede: how a new memory replaces or merges with a current one.
        judge: confirms replacements found by similarity: any ``Callable[[str], str]``,
            for example an LLM client; with none, only very similar memories of
            ``supersede.detect_types`` are replaced (and topic keys always).
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        engine: Engine | None = None,
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
        engine_url = None if engine is None else engine.url.render_as_string(hide_password=False)
        target = opening.locate(url, home, auto_migrate, self.settings, engine_url=engine_url)
        self._server = target.server
        self._owns_engine = engine is None
        #: ``auto``, ``none``, ``session`` or ``transaction``: see :mod:`memory_pg.pooling`.
        self.pooler = target.pooler
        if engine is None:
            engine = create_engine(target.url, **opening.engine_options(self.settings, self.pooler))
            pooling.watch(engine, self.pooler)
        self.engine = engine
        try:
            with translate_errors(), self.engine.connect() as conn:
                revision, recorded = opening.read_state(conn)
            self.embedder = opening.pick_embedder(embedder, embedding_model, recorded)
            if opening.needs_migration(revision, target.auto_migrate):
                # Only a migration needs the dimension (to size a new vector column).
                with translate_errors():
                    schema.upgrade(self.engine, embedding_dim=self.embedder.dimension)
            plan = setup.plan_embedding_check(self.embedder)
            self.embedding: EmbeddingInfo = self.run_plan(plan, None)
        except BaseException:
            self.close()
            raise
        self.url = opening.redact_url(target.url)

    @classmethod
    def from_env(cls, **kwargs: Any) -> MemoryStore:
        """A store configured by ``MEMORY_PG_*`` environment variables, like the CLI."""
        return cls(**opening.env_kwargs(kwargs))

    # -- plumbing -------------------------------------------------------------------

    @contextlib.contextmanager
    def _transaction(
        self, user_id: str | None, conn: Connection | None, ef_search: int | None
    ) -> Iterator[Connection]:
        first = begin(user_id, self.settings, self.pooler, ef_search)
        with translate_errors():
            if conn is not None:
                # The caller's transaction: join it, never commit it.
                conn.execute(first)
                yield conn
                return
            with self.engine.begin() as own:
                own.execute(first)
                yield own

    def run_plan(
        self,
        plan: Plan[T],
        user_id: str | None,
        conn: Connection | None = None,
        *,
        ef_search: int | None = None,
    ) -> T:
        """Run a plan (:mod:`memory_pg.plans`) in one transaction as ``user_id``.

        The transaction is the caller's ``conn`` if given (joined, not committed);
        ``ef_search`` also sets a search's HNSW settings in its first statement.
        This is how jobs and tools reach the database through a store; the other
        methods are this with a plan built from their arguments.
        """
        with self._transaction(user_id, conn, ef_search) as c:
            try:
                step = next(plan)
                while True:
                    step = plan.send(materialise(c.execute(*split_step(step))))
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]

    def close(self) -> None:
        """Close the pool this store opened and let go of the embedded server."""
        if getattr(self, "_owns_engine", False) and hasattr(self, "engine"):
            self.engine.dispose()
        if getattr(self, "_server", None) is not None:
            assert self._server is not None
            self._server.stop()
            self._server = None

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def user_id(self) -> str | None:
        """The tenant bound on this store, if any."""
        return self._user_id

    def _scope(self, user_id: str | None) -> str:
        return write.scope_user(user_id, self._user_id, self.settings)

    def _writer(self) -> write.Writer:
        return write.Writer(self.embedder.model_name, self.supersede, self.judge)

    def _vectors(self, prepared: write.Prepared) -> np.ndarray[Any, Any]:
        return self.embedder.embed_documents(prepared.embed_texts)

    # -- writes -----------------------------------------------------------------------

    def add_memory(
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
        conn: Connection | None = None,
    ) -> str:
        """Store one memory and return its id.

        An exact duplicate (same user, type and text up to case and spacing) of a
        current memory is not stored again: its id is returned.

        Args:
            text: what to remember.
            memory_type: ``user_profile``, ``project_status``, ``key_decision``,
                ``todo``, ``dialogue`` or a type added in the settings.
            metadata: a JSON object stored beside it.
            user_id: the tenant, if not bound on the store.
            topic: a stable key (``"database"``) that a later decision on the same
                topic replaces.
            importance: 0..1, default 0.5.
            event_time: when the fact happened (default: now).
            expires_at: when it stops being current.
            context: text that frames this memory, such as the question a dialogue
                turn answers: embedded and indexed with it (its words count
                ``RankingSettings.lexical_context_weight`` of the memory's own), so
                a search finds "Yes, last Friday" through what it answered. Not part
                of the memory's text; returned as ``context``.
            conn: the caller's connection, to write inside its transaction.
        """
        item = MemoryInput(
            text, memory_type, metadata, topic, importance, event_time, expires_at, context, private
        )
        return self.add_memories([item], user_id=user_id, agent_id=agent_id, conn=conn)[0]

    def add_memories(
        self,
        items: Iterable[MemoryInput | Mapping[str, Any] | str],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        conn: Connection | None = None,
    ) -> list[str]:
        """Store many memories: one embedding batch, one statement per 500 rows.

        Items are :class:`MemoryInput`, dicts with the same keys, or plain text
        (a ``dialogue`` memory). Either every item is valid and all are stored, or
        a typed error names the first bad one and nothing is stored.
        """
        prepared = write.prepare(self.settings, self._scope(user_id), items, agent_id)
        if not prepared.texts:
            return []
        rows = write.new_rows(prepared, self._vectors(prepared), self.embedder)
        return self.run_plan(write.plan_insert(rows, self._writer()), prepared.user_id, conn)

    def replace_memory(
        self,
        memory_id: str,
        text: str,
        *,
        user_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        importance: float | None = None,
        agent_id: str | None = None,
    ) -> str:
        """Update by replacement: a new memory with ``text`` replaces ``memory_id``.

        The new memory keeps the old one's type, topic and (unless given) metadata
        and importance; the old row stays, marked superseded by the new one, for
        history. Returns the new id (the old id if the text is the same).
        :class:`MemoryNotFound` if there is no such memory, :class:`MemoryConflict`
        if it is no longer current.
        """
        uid = self._scope(user_id)
        old_id = write.parse_memory_id(memory_id)
        old = self.get(str(old_id), user_id=uid, agent_id=agent_id)
        item, writer = write.replacement(old, old_id, text, metadata, importance, agent_id)
        prepared = write.prepare(self.settings, uid, [item], writer)
        rows = write.new_rows(prepared, self._vectors(prepared), self.embedder)
        return self.run_plan(write.plan_replace(old_id, rows, self._writer(), agent_id), uid)

    def delete_memory(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> bool:
        """Erase one memory and its history for good; False if there was none."""
        uid = self._scope(user_id)
        plan = write.plan_delete(uid, memory_id, self.settings, agent_id)
        return self.run_plan(plan, uid)

    def clear_user_memory(self, user_id: str | None = None) -> int:
        """Erase every memory, buffered turn and history event of a user; returns memories gone."""
        uid = self._scope(user_id)
        return self.run_plan(write.plan_clear(uid), uid)

    # -- dialogue buffer --------------------------------------------------------------

    def append_turn(
        self, role: str, content: str, *, user_id: str | None = None, session_id: str | None = None
    ) -> int:
        """Buffer one dialogue turn (``user``, ``assistant``, ``system``, ``tool``); returns its id.

        Buffered turns wait in PostgreSQL for :meth:`commit_compaction`, so a crash
        between a turn and its compaction loses nothing.
        """
        uid = self._scope(user_id)
        session, role, content = buffer.prepare_turn(role, content, session_id, self.settings)
        return self.run_plan(buffer.plan_append(uid, session, role, content), uid)

    def pending_turns(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """Turns not yet compacted, oldest first: dicts with id, session_id, role, content."""
        uid = self._scope(user_id)
        return self.run_plan(buffer.plan_pending_turns(uid, session_id, limit, self.settings), uid)

    def commit_compaction(
        self,
        turn_ids: Sequence[int],
        memories: Iterable[Any],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[str]:
        """Write the memories compacted from ``turn_ids`` and mark those turns consumed.

        One transaction: if any of the turns was consumed by another worker (or
        erased) first, nothing is written and ``[]`` comes back, so concurrent
        compactions never duplicate a memory. Memories are what
        :meth:`add_memories` takes, or the compactor's ``CompactedMemory``; each
        records the turns it came from in ``metadata["source_turns"]``.
        """
        uid = self._scope(user_id)
        ids, prepared = buffer.prepare_commit(uid, turn_ids, memories, agent_id, self.settings)
        insert_plan = None
        if prepared.texts:
            rows = write.new_rows(prepared, self._vectors(prepared), self.embedder)
            insert_plan = write.plan_insert(rows, self._writer())
        return self.run_plan(buffer.plan_commit(uid, ids, insert_plan), uid)

    # -- reads ------------------------------------------------------------------------

    def search(
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
        """The ``top_k`` memories of a user that best match ``query``, best first.

        Each result is a dict with at least ``text``, ``metadata``, ``distance``
        (cosine), ``score``, ``id``, ``memory_type`` and the timestamps, and the
        parts of its score so a user can see why it ranked: ``similarity``,
        ``lexical`` (full-text), ``rrf`` (rank fusion), ``relevance``, ``recency``,
        ``importance``, ``reinforcement`` (see :class:`RankingSettings`). Returned
        memories count as used (``access_count``, ``last_accessed_at``) in one
        batched statement unless ``track_access=False``.

        Args:
            query: what to look for, in any language.
            top_k: how many results (1..1000).
            memory_types: only these types.
            since: only memories whose event time is at or after this.
            until: only memories whose event time is before this.
            metadata_filter: only memories whose metadata contains this object.
            as_of: what was current at that past time (superseded rows included).
            track_access: record the use of the returned memories.
            min_similarity: drop results whose cosine similarity is below this,
                unless ``min_lexical`` keeps them.
            min_lexical: drop results whose full-text score (0..1) is below this,
                unless ``min_similarity`` keeps them.
            full_text_only: rank by the full-text leg alone, without embedding the
                query (no model is loaded): for a caller whose model is still
                loading. Results then carry ``full_text_only: True`` and no
                ``similarity`` (``full_text_only: False`` otherwise); a memory that
                shares no word with the query is not found.
            now: the time that dates and relative times in the query ("上周",
                "5月2号", "last Friday") are resolved against (default: ``as_of``,
                else the current time). Memories whose event time falls in the
                span the query names rank first (``time_match`` in the result);
                the words that named it are left out of the full-text query.

        The vector leg weighs as much as the embedding model reads of the query
        (``readability`` in each result: 1.0 for English, about 0 for Chinese with
        the bundled all-MiniLM-L6-v2, whose vocabulary has no Chinese words).
        """
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
        vector = None if full_text_only else self.embedder.embed_query(text)
        # Without a query vector the vector leg has nothing to read.
        readable = 0.0 if vector is None else readability(self.embedder, text)
        plan = read.plan_search(
            uid,
            text,
            vector,
            k,
            filters,
            track_access,
            self.ranking,
            readability=readable,
            now=check_time(now, "now"),
        )
        return self.run_plan(plan, uid, ef_search=self.ef_search)

    def get(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> dict[str, Any] | None:
        """One memory of the user by id (current or not), or None."""
        uid = self._scope(user_id)
        return self.run_plan(read.plan_get(uid, memory_id, self.settings, agent_id), uid)

    def list_memories(
        self,
        *,
        user_id: str | None = None,
        memory_types: Sequence[str] | None = None,
        include_inactive: bool = False,
        limit: int | None = None,
        agent_id: str | None = None,
        agent_ids: Sequence[str] | None = None,
    ) -> list[dict[str, Any]]:
        """A user's memories, newest first (superseded ones only if asked)."""
        uid = self._scope(user_id)
        plan = read.plan_list(
            uid, self.settings, memory_types, include_inactive, limit, agent_id, agent_ids
        )
        return self.run_plan(plan, uid)

    def history(
        self,
        memory_id: str | None = None,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """Lifecycle events (added, superseded, merged, expired, deleted) oldest first."""
        uid = self._scope(user_id)
        return self.run_plan(read.plan_history(uid, memory_id, self.settings, agent_id), uid)

    def stats(self, *, user_id: str | None = None) -> dict[str, Any]:
        """Counts per memory type, for one user or (with no user) the whole database.

        Raises:
            RoleRequired: with no user, the role does not see every user (it is not
                in ``memory_pg_maintenance``, a superuser or ``BYPASSRLS``): row-level
                security would show it nothing, and the counts would read 0.
        """
        uid = self._scope(user_id) if (user_id or self._user_id) else None
        return self.run_plan(read.plan_stats(uid), uid)

    def healthcheck(self) -> dict[str, Any]:
        """Connection, pgvector version, schema revision and embedding model, as a dict."""
        found = self.run_plan(setup.plan_health(), None)
        with translate_errors(), self.engine.connect() as conn:
            revision = schema.current_revision(conn)
        head = schema.head_revision()
        return setup.health_dict(found, revision, head, self.url, self.embedding)

    # -- export / import --------------------------------------------------------------

    def export_user_memory(
        self,
        target: str | IO[str],
        *,
        user_id: str | None = None,
        include_inactive: bool = True,
        with_embeddings: bool = True,
    ) -> int:
        """Write a user's memories as JSON lines (a path or a text file); returns the count."""
        uid = self._scope(user_id)
        rows = self.run_plan(transfer.plan_export(uid, include_inactive), uid)
        return transfer.write_lines(target, rows, with_embeddings)

    def import_user_memory(self, source: str | IO[str], *, user_id: str | None = None) -> int:
        """Load JSON lines written by :meth:`export_user_memory` into a user; returns rows added.

        Ids, timestamps, validity and use counts are kept; vectors are reused when
        they come from the same model and re-embedded otherwise (another model, the
        wrong length, all zero). Rows whose id (or exact text) is already there are
        skipped. All or nothing: a damaged line raises
        :class:`~memory_pg.errors.InvalidImport` naming it.
        """
        uid = self._scope(user_id)
        prepared, given = transfer.read_lines(source, uid, self.settings, self.embedder)
        if not prepared.texts:
            return 0
        to_embed = transfer.texts_to_embed(prepared, given)
        embedded = self.embedder.embed_documents(to_embed) if to_embed else np.zeros((0, 0))
        rows = transfer.import_rows(prepared, given, embedded, self.embedder)
        return self.run_plan(transfer.plan_import(rows, self.embedder.model_name), uid)
