"""The public methods of both stores, written once as operations that a driver runs
(the steps they yield and how a store runs them: :mod:`memory_pg.operations`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Generic, TypeVar

import numpy as np

from memory_pg import buffer, opening, schema
from memory_pg._validate import check_time
from memory_pg.config import RankingSettings, StoreSettings, SupersedePolicy
from memory_pg.embedding import Embedder, QueryVectorCache, readability
from memory_pg.operations import Conn, Op
from memory_pg.operations import blocking as _blocking
from memory_pg.operations import read as _read
from memory_pg.operations import run as _run
from memory_pg.operations import session as _session
from memory_pg.plans import read, relations, setup, turns, write
from memory_pg.plans.protocol import Plan
from memory_pg.plans.restore import plan_restore
from memory_pg.plans.setup import EmbeddingInfo
from memory_pg.plans.shapes import MemoryInput, Prepared, parse_memory_id
from memory_pg.supersession import Judge
from memory_pg.usage import UseLog, plan_flush

T = TypeVar("T")
E = TypeVar("E")
S = TypeVar("S", bound="StoreBase[Any]")


class StoreBase(Generic[E]):
    """What both stores share: settings, the arguments that open them, ``from_env``.

    The arguments are :class:`~memory_pg.store.MemoryStore`'s; ``engine`` is the host
    application's engine (an ``AsyncEngine`` for the async store), not closed by ``close``.
    """

    embedder: Embedder
    embedding: EmbeddingInfo
    #: The database URL, password masked.
    url: str
    #: ``auto``, ``none``, ``session`` or ``transaction``: see :mod:`memory_pg.pooling`.
    pooler: str = "auto"

    def __init__(
        self,
        url: str | None = None,
        *,
        engine: E | None = None,
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
        read_urls: Sequence[str] | None = None,
    ) -> None:
        self.settings = settings or StoreSettings()
        self.ranking = ranking or RankingSettings()
        self.supersede = supersede or SupersedePolicy()
        self.judge = judge
        self._user_id = None if user_id is None else write.scope_user(user_id, None, self.settings)
        self.ef_search = ef_search
        #: The users seen holding more memories than the full-text sample (their
        #: searches get its time window; see :class:`~memory_pg.plans.read.HeavyUsers`).
        self._heavy_users = read.HeavyUsers()
        #: The uses of search results not written yet (:mod:`memory_pg.usage`).
        self._uses = UseLog(self.settings.max_pending_uses)
        self._read_urls = opening.read_urls(read_urls)
        self.url = ""
        self._start(url, engine, home, auto_migrate, embedding_model, embedder)

    def _start(
        self,
        url: str | None,
        engine: E | None,
        home: str | os.PathLike[str] | None,
        auto_migrate: bool | None,
        embedding_model: str | None,
        embedder: Embedder | None,
    ) -> None:
        raise NotImplementedError

    @classmethod
    def from_env(cls: type[S], **kwargs: Any) -> S:
        """A store configured by ``MEMORY_PG_*`` environment variables, like the CLI."""
        return cls(**opening.env_kwargs(kwargs))

    @property
    def user_id(self) -> str | None:
        """The tenant bound on this store, if any."""
        return self._user_id

    @property
    def pending_uses(self) -> int:
        """Memories whose use by searches is noted and not yet written."""
        return len(self._uses)

    def _uses_noted(self, full: bool) -> None:
        """A search noted uses: the store makes sure they are written in time."""
        raise NotImplementedError


def _scope(store: StoreBase[Any], user_id: str | None) -> str:
    return write.scope_user(user_id, store.user_id, store.settings)


def _writer(store: StoreBase[Any]) -> write.Writer:
    return write.Writer(store.embedder.model_name, store.supersede, store.judge)


def _rows(store: StoreBase[Any], prepared: Prepared) -> Op[list[Any]]:
    return (yield from _blocking(_new_rows, store, prepared))


# Blocking steps read the store's embedder when they run (the async store has none before
# it opens; a call is validated before that). A write's entities are found there too,
# outside its transaction: jieba loads its tagger on the first Chinese text.


def _new_rows(store: StoreBase[Any], prepared: Prepared) -> list[Any]:
    vectors = _embed(store, prepared.embed_texts)
    return relations.with_entities(write.new_rows(prepared, vectors, store.embedder))


def _embed(store: StoreBase[Any], texts: list[str]) -> np.ndarray[Any, Any]:
    return store.embedder.embed_documents(texts)


def _query(store: StoreBase[Any], text: str) -> tuple[np.ndarray[Any, Any], float]:
    """The query's vector and how much of the query the model reads (one trip)."""
    return store.embedder.embed_query(text), readability(store.embedder, text)


def _known_query(store: StoreBase[Any], text: str) -> tuple[np.ndarray[Any, Any], float] | None:
    """:func:`_query` without blocking, where the embedder has the query's vector cached
    (its model and tokenizer are loaded then); None otherwise.

    A repeated query then costs the async store no hand-off to a worker thread and back
    (the thread's wake-up and its turn for the GIL cost more than the cache lookup).
    """
    embedder = getattr(store, "embedder", None)  # none yet: an async store not yet open
    cache = getattr(embedder, "query_cache", None)
    if not isinstance(cache, QueryVectorCache):
        return None
    vector = cache.peek(text)
    if vector is None:
        return None
    return vector, readability(embedder, text)


# -- plans ---------------------------------------------------------------------------


def run_plan(
    self: StoreBase[Any],
    plan: Plan[T],
    user_id: str | None,
    conn: Conn | None = None,
    *,
    ef_search: int | None = None,
) -> Op[T]:
    """Run a plan (:mod:`memory_pg.plans`) in one transaction as ``user_id``.

    The transaction is the caller's ``conn`` if given (joined, not committed);
    ``ef_search`` marks a nearest-neighbour statement (a search, a write's lookup of
    what it may replace): its HNSW settings and ``plan_cache_mode``
    (``sql.setup.plan_for_user``) hold in the transaction until it ends. Jobs and
    tools reach the database this way; the other methods are this with a plan.
    """
    return (yield from _run(plan, user_id, conn, ef_search))


# -- writes ----------------------------------------------------------------------------


def add_memory(
    self: StoreBase[Any],
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
    conn: Conn | None = None,
) -> Op[str]:
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
        context: text that frames it, such as the question a turn answers: embedded
            and indexed with it (its words count ``RankingSettings.lexical_context_weight``
            of its own), so a search finds "Yes, last Friday" through what it answered;
            returned as ``context``. A ``dialogue`` turn with ``metadata["session_id"]``
            gets the turn before it by default (:mod:`memory_pg.plans.turns`; ``""``: none).
        conn: the caller's connection, to write inside its transaction.
    """
    item = MemoryInput(
        text, memory_type, metadata, topic, importance, event_time, expires_at, context, private
    )
    return (yield from add_memories(self, [item], user_id=user_id, agent_id=agent_id, conn=conn))[0]


def add_memories(
    self: StoreBase[Any],
    items: Iterable[MemoryInput | Mapping[str, Any] | str],
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    conn: Conn | None = None,
) -> Op[list[str]]:
    """Store many memories: one embedding batch, one statement per 500 rows.

    Items are :class:`MemoryInput`, dicts with the same keys, or plain text
    (a ``dialogue`` memory). Either every item is valid and all are stored, or
    a typed error names the first bad one and nothing is stored.
    """
    prepared = write.prepare(self.settings, _scope(self, user_id), items, agent_id)
    if not prepared.texts:
        return []
    if first := turns.from_batch(prepared, self.settings.session_context):
        yield from _run(turns.plan_fill(prepared, first), prepared.user_id, conn)
    rows = yield from _rows(self, prepared)
    plan = write.plan_insert(rows, _writer(self))
    # Planned for the user, with the search's HNSW settings (the lookup of what it may
    # replace is a nearest-neighbour query); not in the caller's transaction, which
    # they would outlast.
    ef = None if conn is not None else self.ef_search
    ids = yield from _run(plan, prepared.user_id, conn, ef)
    if conn is None:  # the caller's transaction: theirs to end before any analyze
        yield from _run(setup.plan_analyze(len(rows)), None, best_effort=True)
    return ids


def replace_memory(
    self: StoreBase[Any],
    memory_id: str,
    text: str,
    *,
    user_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    importance: float | None = None,
    agent_id: str | None = None,
) -> Op[str]:
    """Update by replacement: a new memory with ``text`` replaces ``memory_id``.

    The new memory keeps the old one's type, topic and (unless given) metadata
    and importance; the old row stays, marked superseded by the new one, for
    history. Returns the new id (the old id if the text is the same).
    :class:`MemoryNotFound` if there is no such memory, :class:`MemoryConflict`
    if it is no longer current.
    """
    uid = _scope(self, user_id)
    old_id = parse_memory_id(memory_id)
    old = yield from get(self, str(old_id), user_id=uid, agent_id=agent_id)
    item, writer = write.replacement(old, old_id, text, metadata, importance, agent_id)
    rows = yield from _rows(self, write.prepare(self.settings, uid, [item], writer))
    plan = write.plan_replace(old_id, rows, _writer(self), agent_id)
    return (yield from _run(plan, uid, None, self.ef_search))


def restore(
    self: StoreBase[Any], memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
) -> Op[dict[str, Any]]:
    """Undo a wrong replacement: the replaced memory ``memory_id`` is current again.

    The memory that replaced it stays current too (both facts are kept), unless the
    memory was merged into a consolidation's summary: then every fragment of that
    summary comes back and the summary is retired. Each memory made current gets a
    ``restored`` event in :meth:`history` naming ``agent_id``; a search finds it again,
    and later writes replace it only through what they say.

    Example::

        old = store.add_memory("We deploy on Fridays", "key_decision")
        store.add_memory("We deploy on Mondays now", "key_decision")  # replaces it
        store.restore(old)  # both are current; history(old) ends with "restored"

    Returns:
        ``{"id", "restored", "replaced_by", "replacement"}``: the memory, every memory
        made current (it first), what had replaced it, and what became of that
        (``kept``, ``retired``, ``erased``, ``not current``, or None).

    Raises:
        MemoryNotFound: the user has no such memory (for an agent: none it may see).
        NothingToRestore: it is current already, or it expired (write it again).
        MemoryConflict: a current memory reads the same.
    """
    uid = _scope(self, user_id)
    return (yield from _run(plan_restore(uid, memory_id, self.settings, agent_id), uid))


def delete_memory(
    self: StoreBase[Any], memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
) -> Op[bool]:
    """Erase one memory and its history for good; False if there was none."""
    uid = _scope(self, user_id)
    erased = yield from _run(write.plan_delete(uid, memory_id, self.settings, agent_id), uid)
    if erased.reframed:  # turns it framed: their vectors, without its text
        vectors = yield from _blocking(_embed, self, [text for _, text in erased.reframed])
        yield from _run(write.plan_vectors(uid, erased.reframed, vectors), uid)
    return erased.deleted


def clear_user_memory(self: StoreBase[Any], user_id: str | None = None) -> Op[int]:
    """Erase every memory, buffered turn and history event of a user; returns memories gone."""
    uid = _scope(self, user_id)
    return (yield from _run(write.plan_clear(uid), uid))


# -- dialogue buffer ---------------------------------------------------------------------


def append_turn(
    self: StoreBase[Any],
    role: str,
    content: str,
    *,
    user_id: str | None = None,
    session_id: str | None = None,
) -> Op[int]:
    """Buffer one dialogue turn (``user``, ``assistant``, ``system``, ``tool``); returns its id.

    Buffered turns wait in PostgreSQL for :meth:`commit_compaction`, so a crash
    between a turn and its compaction loses nothing.
    """
    uid = _scope(self, user_id)
    session, role, content = buffer.prepare_turn(role, content, session_id, self.settings)
    return (yield from _run(buffer.plan_append(uid, session, role, content), uid))


def pending_turns(
    self: StoreBase[Any],
    *,
    user_id: str | None = None,
    session_id: str | None = None,
    limit: int | None = None,
) -> Op[list[dict[str, Any]]]:
    """Turns not yet compacted, oldest first: dicts with id, session_id, role, content."""
    uid = _scope(self, user_id)
    return (yield from _run(buffer.plan_pending_turns(uid, session_id, limit, self.settings), uid))


def commit_compaction(
    self: StoreBase[Any],
    turn_ids: Sequence[int],
    memories: Iterable[Any],
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
) -> Op[list[str]]:
    """Write the memories compacted from ``turn_ids`` and mark those turns consumed.

    One transaction: if any of the turns was consumed by another worker (or
    erased) first, nothing is written and ``[]`` comes back, so concurrent
    compactions never duplicate a memory. Memories are what
    :meth:`add_memories` takes, or the compactor's ``CompactedMemory``; each
    records the turns it came from in ``metadata["source_turns"]``.
    """
    uid = _scope(self, user_id)
    ids, prepared = buffer.prepare_commit(uid, turn_ids, memories, agent_id, self.settings)
    insert_plan = None
    if prepared.texts:
        rows = yield from _rows(self, prepared)
        insert_plan = write.plan_insert(rows, _writer(self))
    plan = buffer.plan_commit(uid, ids, insert_plan)
    ef = None if insert_plan is None else self.ef_search
    return (yield from _run(plan, uid, None, ef))


# -- reads -------------------------------------------------------------------------------


def search(
    self: StoreBase[Any],
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
) -> Op[list[dict[str, Any]]]:
    """The ``top_k`` memories of a user that best match ``query``, best first.

    Each result is a dict with at least ``text``, ``metadata``, ``distance``
    (cosine), ``score``, ``id``, ``memory_type`` and the timestamps, and the
    parts of its score so a user can see why it ranked: ``similarity``,
    ``lexical`` (full-text), ``rrf`` (rank fusion), ``relevance``, ``recency``,
    ``importance``, ``reinforcement`` (see :class:`RankingSettings`). Returned
    memories count as used (``access_count``, ``last_accessed_at``) in one
    batched write on the primary within ``StoreSettings.use_flush_s`` seconds
    (:meth:`flush_uses` writes them at once) unless ``track_access=False``: the search
    itself only reads, so it may run on a replica (``read_urls``).

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
        expand: also rank memories up to this many links (0..3) from the best hits
            (``related``), below the hit they hang from, marked ``via``.

    The vector leg weighs as much as the embedding model reads of the query
    (``readability`` in each result: 1.0 for English, about 0 for Chinese with
    the bundled all-MiniLM-L6-v2, whose vocabulary has no Chinese words).
    """
    uid = _scope(self, user_id)
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
    depth = relations.check_depth(expand, "expand")
    vector, readable = None, 0.0  # without a query vector the vector leg reads nothing
    if not full_text_only:
        known = _known_query(self, text)
        vector, readable = known or (yield from _blocking(_query, self, text))
    inline = self.settings.use_flush_s == 0  # the search counts its uses (the old way)

    def plan() -> Plan[list[dict[str, Any]]]:
        return read.plan_search(
            uid,
            text,
            vector,
            k,
            filters,
            track_access and inline,
            self.ranking,
            readability=readable,
            now=at,
            expand=depth,
            heavy_users=self._heavy_users,
        )

    if inline:
        return (yield from _run(plan(), uid, ef_search=self.ef_search))
    found = yield from _read(plan, uid, self.ef_search)
    if track_access and filters.as_of is None and found:  # a look into the past is no use
        # The direct hits, as a search counting its own uses counts them.
        full = self._uses.note(uid, (r["id"] for r in found if r.get("via") is None))
        self._uses_noted(full)
    return found


def flush_uses(self: StoreBase[Any]) -> Op[int]:
    """Write the uses of search results noted so far (see ``StoreSettings.use_flush_s``)
    now, on the primary; returns how many memories were counted. A store does this on
    its own every ``use_flush_s`` seconds and when it closes."""
    batch = self._uses.take()
    if not batch:
        return 0
    try:
        return (yield from _run(plan_flush(batch), None))
    except BaseException:
        self._uses.put_back(batch)
        raise


def get(
    self: StoreBase[Any], memory_id: str, *, user_id: str | None = None, agent_id: str | None = None
) -> Op[dict[str, Any] | None]:
    """One memory of the user by id (current or not), or None."""
    uid = _scope(self, user_id)
    return (yield from _read(lambda: read.plan_get(uid, memory_id, self.settings, agent_id), uid))


def list_memories(
    self: StoreBase[Any],
    *,
    user_id: str | None = None,
    memory_types: Sequence[str] | None = None,
    include_inactive: bool = False,
    limit: int | None = None,
    agent_id: str | None = None,
    agent_ids: Sequence[str] | None = None,
) -> Op[list[dict[str, Any]]]:
    """A user's memories, newest first (superseded ones only if asked)."""
    uid = _scope(self, user_id)
    return (
        yield from _read(
            lambda: read.plan_list(
                uid, self.settings, memory_types, include_inactive, limit, agent_id, agent_ids
            ),
            uid,
        )
    )


def history(
    self: StoreBase[Any],
    memory_id: str | None = None,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    limit: int | None = None,
) -> Op[list[dict[str, Any]]]:
    """Lifecycle events (added, superseded, merged, restored, expired, deleted) oldest
    first; with ``limit``, only the latest that many (a user's whole history can be long).

    Each event is a dict with ``memory_id``, ``event``, ``at`` and ``detail``; the
    detail says why: a ``superseded`` event's ``reason`` (``change``, ``topic``,
    ``similar``, ``judge``, ``replaced``...) and ``by``, a ``restored`` event's ``agent``
    (None: the user's own call), ``replaced_by`` and ``replacement``."""
    uid = _scope(self, user_id)
    return (
        yield from _read(
            lambda: read.plan_history(uid, memory_id, self.settings, agent_id, limit), uid
        )
    )


def stats(
    self: StoreBase[Any], *, user_id: str | None = None, agent_id: str | None = None
) -> Op[dict[str, Any]]:
    """Counts per memory type, for one user or (with no user) the whole database; with
    ``agent_id``, of the user's memories that agent may see (another agent's private
    memories are not counted).

    Raises:
        RoleRequired: with no user, the role does not see every user (it is not
            in ``memory_pg_maintenance``, a superuser or ``BYPASSRLS``): row-level
            security would show it nothing, and the counts would read 0.
    """
    uid = _scope(self, user_id) if (user_id or self.user_id) else None
    return (yield from _read(lambda: read.plan_stats(uid, self.settings, agent_id), uid))


def healthcheck(self: StoreBase[Any]) -> Op[dict[str, Any]]:
    """Connection, pgvector version, schema revision and embedding model, as a dict."""
    found = yield from _run(setup.plan_health(), None)
    revision = yield from _session(schema.current_revision)
    head = schema.head_revision()
    return setup.health_dict(found, revision, head, self.url, self.embedding)


__all__ = ["StoreBase"]
