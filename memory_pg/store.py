"""MemoryStore: memories as rows in PostgreSQL with pgvector (AsyncMemoryStore: async_store)."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import numpy as np
from sqlalchemy import Connection, Engine, create_engine

from memory_pg import buffer, pooling, queries, schema
from memory_pg._base import (
    EmbeddingInfo,
    MemoryInput,
    Plan,
    Rows,
    StoreCore,
    T,
    memory_dict,
    open_text,
    parse_memory_id,
    redact_url,
    split_step,
    translate_errors,
    validate_top_k,
)
from memory_pg._validate import check_text, check_time
from memory_pg.config import (
    RankingSettings,
    StoreSettings,
    SupersedePolicy,
    database_url_from_env,
    default_home,
)
from memory_pg.embedding import Embedder, get_embedder, readability, resolve_model_name
from memory_pg.errors import SchemaNotReady
from memory_pg.lifecycle import Judge
from memory_pg.plans import relations
from memory_pg.plans.relations import check_kinds
from memory_pg.server import EmbeddedServer, sqlalchemy_url

logger = logging.getLogger(__name__)

__all__ = ["MemoryInput", "MemoryStore"]


def _engine_options(settings: StoreSettings, pooler: str = "auto") -> dict[str, Any]:
    return {
        "pool_pre_ping": True,  # a dead connection is replaced, not handed out
        "pool_size": 5,
        "max_overflow": 5,
        "pool_timeout": settings.pool_timeout_s,
        "connect_args": {
            # libpq waits this long for a server that accepts but never answers.
            "connect_timeout": max(1, int(settings.connect_timeout_s)),
            "application_name": "memory-pg",
            # statement_timeout, prepared statements: what the pooler (if any) allows.
            **pooling.connect_args(pooler, statement_timeout_ms=settings.statement_timeout_ms),
        },
    }


def _materialize(result: Any) -> Rows:
    rows = Rows(dict(r._mapping) for r in result) if result.returns_rows else Rows()
    rows.rowcount = result.rowcount
    return rows


class _Opener:
    """Finds the database (URL, engine or embedded server), migrates it, checks the model."""

    def __init__(
        self,
        url: str | None,
        engine: Engine | None,
        home: str | os.PathLike[str] | None,
        auto_migrate: bool | None,
        embedding_model: str | None,
        embedder: Embedder | None,
        settings: StoreSettings,
    ) -> None:
        self.server: EmbeddedServer | None = None
        self.owns_engine = engine is None
        pooling.resolve(None, settings.pooler)  # a bad setting fails before a server starts
        from_url = None
        if engine is not None:
            self.url = engine.url.render_as_string(hide_password=False)
        else:
            url = url or database_url_from_env()
            if url is None:
                self.server = EmbeddedServer(Path(home) if home else default_home())
                url = self.server.start()
                auto_migrate = True if auto_migrate is None else auto_migrate
            url, from_url = pooling.split_url(url)
            self.url = sqlalchemy_url(url) if "://" in url else url
        #: What stands between the store and PostgreSQL (see :mod:`memory_pg.pooling`).
        self.pooler = pooling.resolve(from_url, settings.pooler)
        if engine is None:
            engine = create_engine(self.url, **_engine_options(settings, self.pooler))
            pooling.watch(engine, self.pooler)
        self.engine = engine
        self.auto_migrate = bool(auto_migrate)
        self.embedding_model = embedding_model
        self.embedder = embedder

    def recorded_model(self) -> str | None:
        with translate_errors(), self.engine.connect() as conn:
            try:
                rev = schema.current_revision(conn)
            except Exception:
                rev = None
            if rev is None:
                return None
            row = conn.execute(queries.read_setting("embedding")).first()
        return str(row[0]["model"]) if row else None

    def ensure_schema(self, embedder: Embedder) -> None:
        with translate_errors():
            with self.engine.connect() as conn:
                rev = schema.current_revision(conn)
            if rev == schema.head_revision():
                return
            if not self.auto_migrate:
                raise SchemaNotReady(
                    f"database schema is at {rev or 'nothing'}, this memory-pg needs "
                    f"{schema.head_revision()}: run `memory-pg migrate` "
                    "(or pass auto_migrate=True)"
                )
            # Only a migration needs the dimension (to size a new vector column).
            schema.upgrade(self.engine, embedding_dim=embedder.dimension)

    def pick_embedder(self) -> Embedder:
        if self.embedder is not None:
            return self.embedder
        name = self.embedding_model or self.recorded_model() or resolve_model_name(None)
        return get_embedder(resolve_model_name(name))


class MemoryStore(StoreCore):
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
        self._user_id = None if user_id is None else self._scope(user_id)
        self.ef_search = ef_search
        opener = _Opener(url, engine, home, auto_migrate, embedding_model, embedder, self.settings)
        self._server = opener.server
        self._owns_engine = opener.owns_engine
        self.engine = opener.engine
        #: ``auto``, ``none``, ``session`` or ``transaction``: see :mod:`memory_pg.pooling`.
        self.pooler = opener.pooler
        try:
            self.embedder = opener.pick_embedder()
            opener.ensure_schema(self.embedder)
            self.embedding: EmbeddingInfo = self._run(self._plan_embedding_check(), None)
        except BaseException:
            self.close()
            raise
        self.url = redact_url(opener.url)

    @classmethod
    def from_env(cls, **kwargs: Any) -> MemoryStore:
        """A store configured by ``MEMORY_PG_*`` environment variables, like the CLI."""
        pooler = os.environ.get("MEMORY_PG_POOLER")
        if pooler and "settings" not in kwargs:
            kwargs["settings"] = StoreSettings(pooler=pooler)
        kwargs.setdefault("embedding_model", os.environ.get("MEMORY_PG_EMBEDDING_MODEL"))
        kwargs.setdefault("home", os.environ.get("MEMORY_PG_HOME"))
        kwargs.setdefault("user_id", os.environ.get("MEMORY_PG_USER_ID"))
        return cls(**kwargs)

    # -- plumbing -------------------------------------------------------------------

    @contextlib.contextmanager
    def _transaction(
        self, user_id: str | None, conn: Connection | None, ef_search: int | None = None
    ) -> Iterator[Connection]:
        with translate_errors():
            if conn is not None:
                # The caller's transaction: join it, never commit it.
                conn.execute(self._set_tenant(user_id, ef_search))
                yield conn
                return
            with self.engine.begin() as own:
                own.execute(self._set_tenant(user_id, ef_search))
                yield own

    def _run(
        self,
        plan: Plan[T],
        user_id: str | None,
        conn: Connection | None = None,
        *,
        ef_search: int | None = None,
    ) -> T:
        """Run a plan in one transaction (the caller's ``conn`` if given) as ``user_id``;
        ``ef_search`` also sets the HNSW settings of a search (:func:`queries.set_tenant`)."""
        with self._transaction(user_id, conn, ef_search) as c:
            try:
                step = next(plan)
                while True:
                    step = plan.send(_materialize(c.execute(*split_step(step))))
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]

    def close(self) -> None:
        """Close the pool this store opened and let go of the embedded server."""
        if getattr(self, "_owns_engine", False):
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
        prepared = self._prepare(user_id, items, agent_id)
        if not prepared.texts:
            return []
        vectors = self.embedder.embed_documents(prepared.embed_texts)
        rows = self._rows(prepared, vectors)
        return self._run(self._plan_insert(rows), prepared.user_id, conn)

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
        old_id = parse_memory_id(memory_id)
        old = self.get(str(old_id), user_id=uid, agent_id=agent_id)
        item, writer = self._replacement(old, old_id, text, metadata, importance, agent_id)
        prepared = self._prepare(uid, [item], writer)
        rows = self._rows(prepared, self.embedder.embed_documents(prepared.embed_texts))
        return self._run(self._plan_replace(old_id, rows, agent_id), uid)

    def delete_memory(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> bool:
        """Erase one memory and its history for good; False if there was none."""
        uid = self._scope(user_id)
        return self._run(
            self._plan_delete(uid, parse_memory_id(memory_id), self._agent(agent_id)), uid
        )

    def clear_user_memory(self, user_id: str | None = None) -> int:
        """Erase every memory, buffered turn and history event of a user; returns memories gone."""
        uid = self._scope(user_id)
        return self._run(self._plan_clear(uid), uid)

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
        return self._run(buffer.plan_append(uid, session, role, content), uid)

    def pending_turns(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """Turns not yet compacted, oldest first: dicts with id, session_id, role, content."""
        uid = self._scope(user_id)
        session = buffer.check_session_id(session_id, self.settings)
        plan = buffer.plan_pending(uid, session, buffer.check_limit(limit))
        return self._run(plan, uid)

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
        ids = buffer.check_turn_ids(turn_ids)
        prepared = self._prepare(uid, [buffer.as_memory_input(m, ids) for m in memories], agent_id)
        insert_plan = None
        if prepared.texts:
            rows = self._rows(prepared, self.embedder.embed_documents(prepared.embed_texts))
            insert_plan = self._plan_insert(rows)
        return self._run(buffer.plan_commit(uid, ids, insert_plan), uid)

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
        expand: int = 0,
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
            expand: also consider the memories this many links (0..3) from the
                best hits: the turn before or after, what a summary came from, a
                memory naming the same entity (see :meth:`related`); in the same
                statement. Such a memory ranks below the hit it hangs from and
                carries ``via`` (that hit's id), ``via_relation`` and ``via_entity``.

        The vector leg weighs as much as the embedding model reads of the query
        (``readability`` in each result: 1.0 for English, about 0 for Chinese with
        the bundled all-MiniLM-L6-v2, whose vocabulary has no Chinese words).
        """
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
        vector = None if full_text_only else self.embedder.embed_query(text)
        plan = self._plan_search(
            uid,
            text,
            vector,
            k,
            filters,
            track_access,
            self.ranking,
            # Without a query vector the vector leg has nothing to read.
            readability=0.0 if vector is None else readability(self.embedder, text),
            now=check_time(now, "now"),
            expand=relations.check_depth(expand, "expand"),
        )
        return self._run(plan, uid, ef_search=self.ef_search)

    def get(
        self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> dict[str, Any] | None:
        """One memory of the user by id (current or not), or None."""
        uid = self._scope(user_id)
        rows = self._run(
            self._plan_one(
                queries.get_memory(uid, parse_memory_id(memory_id), self._agent(agent_id))
            ),
            uid,
        )
        return memory_dict(rows[0]) if rows else None

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
        stmt = queries.list_memories(
            uid,
            memory_types=memory_types,
            include_inactive=include_inactive,
            limit=limit,
            agent_id=self._agent(agent_id),
            agent_ids=self._agents(agent_ids),
        )
        return [memory_dict(r) for r in self._run(self._plan_one(stmt), uid)]

    def history(
        self,
        memory_id: str | None = None,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """Lifecycle events (added, superseded, merged, expired, deleted) oldest first."""
        uid = self._scope(user_id)
        mid = parse_memory_id(memory_id) if memory_id is not None else None
        return [
            memory_dict(r)
            for r in self._run(
                self._plan_one(queries.history_of(uid, mid, self._agent(agent_id))), uid
            )
        ]

    # -- relations (issue 19) ----------------------------------------------------------

    def related(
        self,
        memory_id: str,
        depth: int = 2,
        *,
        limit: int = 50,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """Memories up to ``depth`` links from ``memory_id``: the next and previous turn,
        what it replaced, what a summary came from, memories naming the same entity.

        Nearest first, then newest; each dict has ``hops``, ``relation`` (how the first
        hop to it reads: ``follows``, ``superseded_by``, ``mentions`` ...) and ``entity``
        (for ``mentions``: the shared entity's name).
        """
        uid = self._scope(user_id)
        plan = relations.plan_related(
            uid,
            parse_memory_id(memory_id),
            relations.check_depth(depth),
            self._agent(agent_id),
            validate_top_k(limit),
        )
        return self._run(plan, uid)

    def entity(
        self,
        name: str,
        *,
        limit: int = 50,
        include_inactive: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> dict[str, Any] | None:
        """Everything about one entity (by name or alias, "小王"), newest first, or None.

        A dict with ``id``, ``name``, ``kind``, ``aliases`` and ``memories`` (the
        memories naming it, newest event first; superseded ones only if asked).
        """
        uid = self._scope(user_id)
        plan = relations.plan_entity(
            uid,
            check_text(name, self.settings, what="name"),
            self._agent(agent_id),
            include_inactive,
            validate_top_k(limit),
        )
        return self._run(plan, uid)

    def entities(
        self,
        *,
        kinds: Sequence[str] | None = None,
        limit: int = 100,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """A user's entities, most mentioned first (``mentions``: current memories naming it)."""
        uid = self._scope(user_id)
        plan = relations.plan_entities(
            uid, self._agent(agent_id), check_kinds(kinds), validate_top_k(limit)
        )
        return self._run(plan, uid)

    def graph(
        self,
        name: str,
        *,
        limit: int = 25,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> dict[str, Any] | None:
        """An entity's neighbourhood: :meth:`entity` plus ``related_entities`` (the
        entities named in the same memories, most shared first). Render it with
        :func:`memory_pg.plans.relations.graph_text` or ``graph_dot``."""
        uid = self._scope(user_id)
        plan = relations.plan_graph(
            uid,
            check_text(name, self.settings, what="name"),
            self._agent(agent_id),
            validate_top_k(limit),
        )
        return self._run(plan, uid)

    def stats(self, *, user_id: str | None = None) -> dict[str, Any]:
        """Counts per memory type, for one user or (with no user) the whole database.

        Raises:
            RoleRequired: with no user, the role does not see every user (it is not
                in ``memory_pg_maintenance``, a superuser or ``BYPASSRLS``): row-level
                security would show it nothing, and the counts would read 0.
        """
        uid = self._scope(user_id) if (user_id or self._user_id) else None
        rows = self._run(self._plan_stats(uid), uid)
        return _stats_dict(rows, uid)

    def healthcheck(self) -> dict[str, Any]:
        """Connection, pgvector version, schema revision and embedding model, as a dict."""
        rows = self._run(self._plan_one(queries.health()), None)
        with translate_errors(), self.engine.connect() as conn:
            revision = schema.current_revision(conn)
        return _health_dict(rows[0], revision, self)

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
        rows = self._run(self._plan_one(queries.export_rows(uid, include_inactive)), uid)
        fh, close = open_text(target, "w")
        try:
            for row in rows:
                vec = _vector_list(row.pop("embedding")) if with_embeddings else None
                fh.write(self._export_line(row, vec) + "\n")
        finally:
            if close:
                fh.close()
        return len(rows)

    def import_user_memory(self, source: str | IO[str], *, user_id: str | None = None) -> int:
        """Load JSON lines written by :meth:`export_user_memory` into a user; returns rows added.

        Ids, timestamps, validity and use counts are kept; vectors are reused when
        they come from the same model and re-embedded otherwise (another model, the
        wrong length, all zero). Rows whose id (or exact text) is already there are
        skipped. All or nothing: a damaged line raises
        :class:`~memory_pg.errors.InvalidImport` naming it.
        """
        fh, close = open_text(source, "r")
        try:
            prepared, given = self._parse_import(user_id, fh)
        finally:
            if close:
                fh.close()
        if not prepared.texts:
            return 0
        to_embed = [t for t, v in zip(prepared.embed_texts, given, strict=True) if v is None]
        embedded = self.embedder.embed_documents(to_embed) if to_embed else np.zeros((0, 0))
        rows = self._import_rows(prepared, given, embedded)
        return self._run(self._plan_import(rows), prepared.user_id)


def _vector_list(value: Any) -> list[float]:
    return [float(x) for x in np.asarray(value, dtype=np.float32).tolist()]


def _stats_dict(rows: Rows, user_id: str | None) -> dict[str, Any]:
    by_type = {
        r["memory_type"]: {"current": r["current"], "superseded": r["superseded"]} for r in rows
    }
    return {
        "user_id": user_id,
        "memories": sum(v["current"] for v in by_type.values()),
        "superseded": sum(v["superseded"] for v in by_type.values()),
        "by_type": by_type,
    }


def _health_dict(
    row: Mapping[str, Any], revision: str | None, store: MemoryStore
) -> dict[str, Any]:
    head = schema.head_revision()
    return {
        "ok": row["vector_version"] is not None and revision == head,
        "database": store.url,
        "server_version": row["server_version"],
        "vector_extension": row["vector_version"],
        "revision": revision,
        "head_revision": head,
        "embedding_model": store.embedding.model,
        "embedding_dimension": store.embedding.dimension,
    }
