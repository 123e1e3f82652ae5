"""What the sync and async stores share: validation, row building, plans and result shapes.

A *plan* is a generator that yields SQLAlchemy statements and receives their
results. The sync store drives it on a ``Connection``, the async store on an
``AsyncConnection``; everything else is the same code. A step may also be a
``(statement, values)`` pair: a shared statement and this run's parameters.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import uuid
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any, TypeVar

import numpy as np
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url
from sqlalchemy.sql import Executable
from sqlalchemy.sql.elements import TextClause

from memory_pg import _facts, lifecycle, pooling, queries, roles
from memory_pg._validate import (
    check_agent_id,
    check_agent_ids,
    check_importance,
    check_memory_type,
    check_metadata,
    check_text,
    check_time,
    check_top_k,
    check_topic,
    check_user_id,
    content_hash,
)
from memory_pg.config import RankingSettings, StoreSettings, SupersedePolicy
from memory_pg.embedding import Embedder, embedding_text, unusable_rows
from memory_pg.errors import (
    AccessDenied,
    DatabaseError,
    DatabaseUnavailable,
    EmbeddingDimensionMismatch,
    EmbeddingModelMismatch,
    InvalidArgument,
    InvalidImport,
    InvalidInput,
    MemoryConflict,
    MemoryNotFound,
    MemoryPgError,
    QueryTimeout,
    SchemaNotReady,
    TenantMismatch,
    TenantViolation,
)
from memory_pg.plans import relations

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: The settings-table key holding the embedding model and dimension.
EMBEDDING_SETTING = "embedding"

#: Rows per INSERT statement in a batch write.
INSERT_CHUNK = 500

#: How far below the best similarity of the matrix product a row of the batch is still
#: checked with an exact dot product (float32 rounding is far smaller).
_SCREEN_SLACK = 1e-3


class Rows(list[dict[str, Any]]):
    """Rows of a statement as plain dicts, with the statement's rowcount."""

    rowcount: int = -1


#: What a plan yields: a statement, or a shared statement and the values to run it with.
Step = Executable | tuple[Executable, dict[str, Any]]
Plan = Generator[Step, Rows, T]


def split_step(step: Step) -> tuple[Executable, dict[str, Any] | None]:
    """The statement of a plan's step and its values (None: the statement carries them)."""
    if isinstance(step, tuple):
        return step
    return step, None


@dataclass(frozen=True)
class MemoryInput:
    """One memory to write, before validation. ``add_memories`` also takes plain dicts."""

    text: str
    memory_type: str = "dialogue"
    metadata: Mapping[str, Any] | None = None
    topic: str | None = None
    importance: float | None = None
    event_time: datetime | None = None
    expires_at: datetime | None = None
    #: Text that frames the memory, such as the turn a dialogue turn answers: embedded
    #: and indexed with it so a search finds the memory through it; not part of it.
    context: str | None = None
    #: Seen only by the agent that writes it (the write's ``agent_id``), not shared
    #: with the user's other agents.
    private: bool = False


@dataclass(frozen=True)
class EmbeddingInfo:
    """The model the database records, and its vector dimension."""

    model: str
    dimension: int


@dataclass
class _Prepared:
    """Validated inputs of a write, waiting for their vectors."""

    user_id: str
    items: list[MemoryInput]
    texts: list[str]
    metadata: list[dict[str, Any]]
    topics: list[str | None]
    importances: list[float]
    contexts: list[str | None] = field(default_factory=list)
    overrides: list[dict[str, Any]] = field(default_factory=list)
    #: The agent that writes these memories (None: the user's own write).
    agent_id: str | None = None

    @property
    def embed_texts(self) -> list[str]:
        """What the model embeds for each memory: its context (if any), then its text."""
        return [
            embedding_text(text, ctx) for text, ctx in zip(self.texts, self.contexts, strict=True)
        ]


def redact_url(url: str) -> str:
    """A URL safe to print: the password is masked."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<unparseable url>"


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """Turn driver errors into memory-pg's typed errors, chained ``from`` the original."""
    try:
        yield
    except MemoryPgError:
        raise
    except sa_exc.DBAPIError as exc:
        raise _translate(exc) from exc
    except sa_exc.TimeoutError as exc:  # the pool had no free connection in time
        raise DatabaseUnavailable(f"no database connection available: {exc}") from exc


def _translate(exc: sa_exc.DBAPIError) -> MemoryPgError:
    orig = exc.orig
    sqlstate = getattr(orig, "sqlstate", None) or ""
    name = type(orig).__name__
    if sqlstate == "57014":
        return QueryTimeout(f"statement cancelled (statement_timeout): {name}")
    if sqlstate == "42501":
        if "row-level security" in str(orig):
            return TenantViolation(
                "row-level security refused a row outside this transaction's tenant "
                f"(memory_pg.user_id): {str(orig).strip()[:300]}"
            )
        return AccessDenied(
            f"permission denied: {str(orig).strip()[:300]}; grant the role memory_pg_app "
            "(or memory_pg_maintenance for cross-user jobs), see docs/roles.md"
        )
    if sqlstate == "42P01":
        return SchemaNotReady(
            "memory-pg tables are missing: run `memory-pg migrate` (or `alembic upgrade head`)"
        )
    if (
        exc.connection_invalidated
        or isinstance(exc, sa_exc.OperationalError)
        or (sqlstate[:2] in ("08", "57"))
    ):
        return DatabaseUnavailable(f"database unavailable: {name}: {str(orig).strip()[:300]}")
    if sqlstate[:2] == "22" or sqlstate[:2] == "23":
        return InvalidInput(f"the database refused the value: {name}: {str(orig).strip()[:300]}")
    return DatabaseError(f"database error {sqlstate or name}: {str(orig).strip()[:300]}")


def parse_memory_id(memory_id: object) -> uuid.UUID:
    """A memory id as a UUID, or :class:`InvalidArgument`."""
    if isinstance(memory_id, uuid.UUID):
        return memory_id
    if isinstance(memory_id, str):
        try:
            return uuid.UUID(memory_id)
        except ValueError:
            pass
    raise InvalidArgument(f"not a memory id: {memory_id!r}")


def memory_dict(row: Mapping[str, Any]) -> dict[str, Any]:
    """A result row as the dict callers get (ids as str; the seed's keys first)."""
    out = dict(row)
    for key in ("id", "superseded_by", "memory_id"):
        if out.get(key) is not None:
            out[key] = str(out[key])
    if "distance" in out and out["distance"] is not None:
        out["distance"] = float(out["distance"])
        out.setdefault("similarity", 1.0 - out["distance"])
    for key in SCORE_PARTS:
        if out.get(key) is not None:
            out[key] = float(out[key])
    return out


#: Score parts a search result carries beside ``score``, so a user can see why it ranked.
SCORE_PARTS = (
    "score",
    "similarity",
    "lexical",
    "rrf",
    "relevance",
    "recency",
    "importance",
    "reinforcement",
    "readability",
    "time_match",
)


class StoreCore:
    """Validation, plans and shapes shared by :class:`MemoryStore` and its async twin."""

    settings: StoreSettings
    ranking: RankingSettings
    embedder: Embedder
    _user_id: str | None
    #: How new memories replace or merge with current ones (see :mod:`memory_pg.lifecycle`).
    supersede: SupersedePolicy = SupersedePolicy()
    #: Confirms detected supersessions: any ``Callable[[str], str]`` (an LLM client).
    judge: lifecycle.Judge | None = None

    # -- scope and validation -------------------------------------------------

    def _scope(self, user_id: str | None) -> str:
        """The user of a call: ``user_id``, else the bound one; a bound store refuses others."""
        if user_id is None:
            return check_user_id(self._user_id, self.settings)
        uid = check_user_id(user_id, self.settings)
        bound = getattr(self, "_user_id", None)  # not yet set while __init__ checks it
        if bound is not None and uid != bound:
            raise TenantMismatch(
                f"this store is bound to user {bound!r} and refuses user {uid!r}: open a "
                "store per user, or one with no user_id and pass user_id= per call"
            )
        return uid

    def _agent(self, agent_id: object) -> str | None:
        return check_agent_id(agent_id, self.settings)

    def _agents(self, agent_ids: object) -> tuple[str, ...] | None:
        return check_agent_ids(agent_ids, self.settings)

    def _check_query(self, query: object) -> str:
        return check_text(query, self.settings, what="query")

    #: ``auto``, ``none``, ``session`` or ``transaction``: see :mod:`memory_pg.pooling`.
    pooler: str = "auto"

    def _set_tenant(self, user_id: str | None, ef_search: int | None = None) -> TextClause:
        """The first statement of every transaction: the tenant, and behind a pooler
        the statement timeout (which cannot be set when the connection starts)."""
        timeout = (
            self.settings.statement_timeout_ms
            if pooling.settings_per_transaction(self.pooler)
            else None
        )
        return queries.set_tenant(user_id, ef_search, statement_timeout_ms=timeout)

    def _coerce_item(self, item: object) -> MemoryInput:
        if isinstance(item, MemoryInput):
            return item
        if isinstance(item, str):
            return MemoryInput(text=item)
        if isinstance(item, Mapping):
            unknown = set(item) - set(MemoryInput.__dataclass_fields__)
            if unknown:
                raise InvalidArgument(f"unknown memory fields: {sorted(unknown)}")
            if "text" not in item:
                raise InvalidArgument("a memory needs a 'text'")
            return MemoryInput(**item)
        raise InvalidArgument(
            f"a memory is a str, a dict or a MemoryInput, not {type(item).__name__}"
        )

    def _prepare(
        self, user_id: str | None, items: Iterable[object], agent_id: str | None = None
    ) -> _Prepared:
        uid = self._scope(user_id)
        agent = check_agent_id(agent_id, self.settings)
        coerced = [self._coerce_item(item) for item in items]
        prepared = _Prepared(uid, [], [], [], [], [], agent_id=agent)
        for item in coerced:
            if not isinstance(item.private, bool):
                raise InvalidArgument("private must be true or false")
            if item.private and agent is None:
                raise InvalidArgument(
                    "a private memory needs the agent_id of the agent it belongs to"
                )
            text = check_text(item.text, self.settings)
            check_memory_type(item.memory_type, self.settings)
            prepared.items.append(item)
            prepared.texts.append(text)
            prepared.metadata.append(check_metadata(item.metadata, self.settings))
            prepared.topics.append(check_topic(item.topic))
            prepared.importances.append(check_importance(item.importance, self.settings))
            prepared.contexts.append(
                None
                if item.context is None or item.context == ""
                else check_text(item.context, self.settings, what="context")
            )
            check_time(item.event_time, "event_time")
            check_time(item.expires_at, "expires_at")
        return prepared

    @staticmethod
    def _replacement(
        old: Mapping[str, Any] | None,
        old_id: uuid.UUID,
        text: str,
        metadata: Mapping[str, Any] | None,
        importance: float | None,
        agent_id: str | None = None,
    ) -> tuple[MemoryInput, str | None]:
        """The new memory that replaces ``old`` (its type, topic and scope, new text), and
        the agent that writes it: the caller's, or the owner of a private memory."""
        if old is None:
            raise MemoryNotFound(f"no memory {old_id} for this user")
        item = MemoryInput(
            text,
            old["memory_type"],
            old["metadata"] if metadata is None else metadata,
            old["topic"],
            old["importance"] if importance is None else importance,
            private=bool(old.get("private")),
        )
        return item, old.get("agent_id") if item.private else agent_id

    def _rows(self, prepared: _Prepared, vectors: np.ndarray[Any, Any]) -> list[queries.NewMemory]:
        if vectors.shape != (len(prepared.texts), self.embedder.dimension):
            raise InvalidArgument(
                f"embedder returned vectors of shape {vectors.shape}, expected "
                f"({len(prepared.texts)}, {self.embedder.dimension})"
            )
        bad = unusable_rows(vectors)
        if bad:
            raise InvalidArgument(
                f"embedder returned a vector with no direction (zero, NaN or infinite) "
                f"for item {bad[0]}: {self.embedder.model_name} is not fit to store it"
            )
        rows = []
        for i, item in enumerate(prepared.items):
            rows.append(
                queries.NewMemory(
                    id=uuid.uuid4(),
                    user_id=prepared.user_id,
                    memory_type=item.memory_type,
                    text=prepared.texts[i],
                    embedding=vectors[i],
                    embedding_model=self.embedder.model_name,
                    content_hash=content_hash(prepared.texts[i]),
                    metadata=prepared.metadata[i],
                    topic=prepared.topics[i],
                    importance=prepared.importances[i],
                    event_time=item.event_time,
                    expires_at=item.expires_at,
                    context=prepared.contexts[i],
                    agent_id=prepared.agent_id,
                    private=item.private,
                )
            )
        return rows

    def _search_filters(
        self,
        memory_types: Sequence[str] | None,
        since: datetime | None,
        until: datetime | None,
        metadata_filter: Mapping[str, Any] | None,
        as_of: datetime | None,
        min_similarity: float | None = None,
        min_lexical: float | None = None,
        agent_id: str | None = None,
        agent_ids: Sequence[str] | None = None,
    ) -> queries.SearchFilters:
        types = None
        if memory_types is not None:
            if isinstance(memory_types, str):
                memory_types = [memory_types]
            types = tuple(check_memory_type(t, self.settings) for t in memory_types)
        meta = check_metadata(metadata_filter, self.settings) if metadata_filter else None
        return queries.SearchFilters(
            memory_types=types,
            since=check_time(since, "since"),
            until=check_time(until, "until"),
            metadata=meta,
            as_of=check_time(as_of, "as_of"),
            min_similarity=_check_gate(min_similarity, "min_similarity"),
            min_lexical=_check_gate(min_lexical, "min_lexical"),
            agent_id=check_agent_id(agent_id, self.settings),
            agent_ids=check_agent_ids(agent_ids, self.settings),
        )

    # -- plans ------------------------------------------------------------------

    def _plan_insert(self, rows: list[queries.NewMemory]) -> Plan[list[str]]:
        """Insert rows, replacing or merging with current memories (one transaction).

        Writes of one user and type wait for each other (a transaction advisory
        lock), then each new row is compared with the current memories it may
        replace or repeat (:func:`memory_pg.lifecycle.decide`): exact and near
        duplicates resolve to the existing id (a ``merged`` event), replaced rows are
        marked ``superseded_at``/``superseded_by`` (a ``superseded`` event).
        """
        if not rows:
            return []
        user_id = rows[0].user_id
        policy = self.supersede
        yield from self._plan_model_unchanged()
        # Not ``yield from``: the driver send()s results, which a list iterator refuses.
        for lock in lifecycle.write_locks(user_id, [r.memory_type for r in rows]):  # noqa: UP028
            yield lock
        found: list[list[lifecycle.Candidate]] = [[] for _ in rows]
        if policy.enabled:
            for start in range(0, len(rows), INSERT_CHUNK):
                chunk = rows[start : start + INSERT_CHUNK]
                result = yield lifecycle.candidates_statement(
                    user_id,
                    [r.embedding for r in chunk],
                    [r.memory_type for r in chunk],
                    [r.topic for r in chunk],
                    policy.candidates,
                    [
                        lifecycle.change_word_queries(r.text)
                        if r.memory_type in policy.detect_types
                        else None
                        for r in chunk
                    ],
                    [r.private for r in chunk],
                    rows[0].agent_id,
                )
                for c in result:
                    found[start + c["i"]].append(
                        lifecycle.Candidate(
                            c["id"],
                            c["topic"],
                            c["text"],
                            c["content_hash"],
                            float(c["similarity"]),
                            bool(c["same_topic"]),
                        )
                    )
        decisions = self._decide_all(rows, found)
        to_insert = [row for row, d in zip(rows, decisions, strict=True) if d.action != "merge"]
        inserted: set[uuid.UUID] = set()
        for start in range(0, len(to_insert), INSERT_CHUNK):
            result = yield queries.insert_memories(to_insert[start : start + INSERT_CHUNK])
            inserted.update(r["memory_id"] for r in result)
        # One statement for all repeats and one for all replacements, not one per row.
        merged: dict[uuid.UUID, float] = {}
        replaced: dict[uuid.UUID, uuid.UUID] = {}
        for row, d in zip(rows, decisions, strict=True):
            if d.action == "merge":
                merged[d.targets[0]] = max(merged.get(d.targets[0], 0.0), row.importance)
            elif d.action == "supersede" and row.id in inserted:
                for old in d.targets:
                    replaced.setdefault(old, row.id)
        if merged:
            yield lifecycle.refresh_merged(user_id, merged)
        marked: set[uuid.UUID] = set()
        if replaced:
            result = yield lifecycle.supersede_many(user_id, replaced)
            marked = {r["id"] for r in result}
        events: list[tuple[uuid.UUID, str, dict[str, Any]]] = []
        ids: list[uuid.UUID] = []
        for row, d in zip(rows, decisions, strict=True):
            detail: dict[str, Any] = {"reason": d.reason}
            if d.similarity is not None:
                detail["similarity"] = round(d.similarity, 4)
            if d.action == "merge":
                events.append((d.targets[0], "merged", detail))
                ids.append(d.targets[0])
                continue
            ids.append(row.id)
            if d.action == "supersede" and row.id in inserted:
                for old in d.targets:
                    if old in marked and replaced[old] == row.id:
                        events.append((old, "superseded", {**detail, "by": str(row.id)}))
        if events:
            yield lifecycle.history_events(user_id, events)
        # Relations (issue 19): entities, mentions and links of the new rows.
        yield from relations.plan_record(
            user_id,
            [r for r in rows if r.id in inserted],
            {old: new for old, new in replaced.items() if old in marked},
        )
        # A row the unique index skipped (a concurrent exact duplicate) resolves by hash.
        missing = [r for r, i in zip(rows, ids, strict=True) if i == r.id and r.id not in inserted]
        missing_ids = {r.id for r in missing}
        resolved: dict[tuple[str, str, bool], uuid.UUID] = {}
        for private in sorted({r.private for r in missing}):
            pairs = sorted(
                {(r.memory_type, r.content_hash) for r in missing if r.private == private}
            )
            rows_found = yield queries.find_current_by_hash(
                user_id, pairs, private=private, agent_id=rows[0].agent_id
            )
            resolved.update(
                {(f["memory_type"], f["content_hash"], private): f["id"] for f in rows_found}
            )
        # Again after the writes: a reembed that swapped the model while this transaction
        # waited is visible now, and its swap waits for this transaction (table locks).
        yield from self._plan_model_unchanged()
        return [
            str(
                resolved.get((r.memory_type, r.content_hash, r.private), i)
                if r.id in missing_ids
                else i
            )
            for r, i in zip(rows, ids, strict=True)
        ]

    def _decide_all(
        self, rows: list[queries.NewMemory], found: list[list[lifecycle.Candidate]]
    ) -> list[lifecycle.Decision]:
        """Decide each row in order; a row also sees the rows of this batch before it.

        An earlier row of the batch is a candidate like a current memory when it has
        the same type and was neither merged away nor replaced. Of those, only the ones
        :func:`lifecycle.decide` can act on are passed: the first with the same text,
        the most similar (the first of equals) and those with the same topic key. The
        decision is the one all of them would give, without a Python loop over every
        pair of the batch (which made a batch of 500 cost seconds).
        """
        if not self.supersede.enabled:
            return [lifecycle.Decision("add", topic=row.topic) for row in rows]
        vectors = np.asarray([row.embedding for row in rows], dtype=np.float32)
        # A screen only: similarities are recomputed pair by pair below, as decide() saw
        # them before, so rounding in the matrix product never changes a decision.
        approx = vectors @ vectors.T
        types = np.asarray([row.memory_type for row in rows], dtype=object)
        # A memory meets only memories of its own scope (shared, or private).
        privates = np.asarray([row.private for row in rows], dtype=bool)
        hashes = np.asarray([row.content_hash for row in rows], dtype=object)
        at = {row.id: i for i, row in enumerate(rows)}
        live = np.zeros(len(rows), dtype=bool)  # earlier rows that are current memories
        by_topic: dict[tuple[str, str], list[int]] = {}
        gone: set[uuid.UUID] = set()  # replaced by this batch: no longer current
        decisions: list[lifecycle.Decision] = []
        for i, row in enumerate(rows):
            cands = [c for c in found[i] if c.id not in gone]
            eligible = live[:i] & (types[:i] == row.memory_type) & (privates[:i] == row.private)
            if eligible.any():
                picked = self._batch_candidates(rows, i, eligible, approx, hashes, by_topic, live)
                for j, sim in picked:
                    dj = decisions[j]
                    same_topic = row.topic is not None and dj.topic == row.topic
                    earlier = rows[j]
                    cands.append(
                        lifecycle.Candidate(
                            earlier.id,
                            dj.topic,
                            earlier.text,
                            earlier.content_hash,
                            sim,
                            same_topic,
                        )
                    )
            d = lifecycle.decide(
                memory_type=row.memory_type,
                topic=row.topic,
                content_hash=row.content_hash,
                new_text=row.text,
                candidates=cands,
                policy=self.supersede,
                judge=self.judge,
            )
            if d.topic != row.topic:
                rows[i] = dataclasses.replace(row, topic=d.topic)
            decisions.append(d)
            if d.action != "merge":
                live[i] = True
                if d.topic is not None:
                    by_topic.setdefault((row.memory_type, d.topic), []).append(i)
            if d.action == "supersede":
                gone.update(d.targets)
                for target in d.targets:
                    if target in at:
                        live[at[target]] = False
        return decisions

    @staticmethod
    def _batch_candidates(
        rows: list[queries.NewMemory],
        i: int,
        eligible: np.ndarray[Any, Any],
        approx: np.ndarray[Any, Any],
        hashes: np.ndarray[Any, Any],
        by_topic: dict[tuple[str, str], list[int]],
        live: np.ndarray[Any, Any],
    ) -> list[tuple[int, float]]:
        """Earlier rows of the batch that decide() can act on for row ``i``, in batch
        order, with their similarity to it."""
        row = rows[i]
        picked: set[int] = set()
        duplicates = np.flatnonzero(eligible & (hashes[:i] == row.content_hash))
        if duplicates.size:
            picked.add(int(duplicates[0]))
        if row.topic is not None:
            picked.update(j for j in by_topic.get((row.memory_type, row.topic), ()) if eligible[j])
        if _facts.is_change(row.text):
            # A statement of change may replace any earlier row, however dissimilar.
            picked.update(int(j) for j in np.flatnonzero(eligible))
        screened = np.where(eligible, approx[i, :i], -np.inf)
        near = np.flatnonzero(screened >= screened.max() - _SCREEN_SLACK)
        sims = {int(j): float(np.dot(rows[j].embedding, row.embedding)) for j in near}
        # The most similar, the first of equals winning as in decide()'s max().
        picked.add(max(sims, key=lambda j: (sims[j], -j)))
        for j in picked - sims.keys():
            sims[j] = float(np.dot(rows[j].embedding, row.embedding))
        return [(j, sims[j]) for j in sorted(picked)]

    def _plan_replace(
        self, old_id: uuid.UUID, rows: list[queries.NewMemory], agent_id: str | None = None
    ) -> Plan[str]:
        """Write ``rows[0]`` and mark the current memory ``old_id`` replaced by it.

        The old row is locked first; a row already replaced (or expired) raises
        :class:`MemoryConflict` and nothing is written.
        """
        user_id = rows[0].user_id
        found = yield queries.get_memory(user_id, old_id, agent_id).with_for_update()
        if not found:
            raise MemoryNotFound(f"no memory {old_id} for this user")
        old = found[0]
        if old["superseded_at"] is not None or (
            old["expires_at"] is not None and old["expires_at"] <= lifecycle.utcnow()
        ):
            raise MemoryConflict(
                f"memory {old_id} is no longer current"
                + (f" (replaced by {old['superseded_by']})" if old["superseded_by"] else "")
                + ": replace its current successor"
            )
        ids = yield from self._plan_insert(rows)
        new_id = uuid.UUID(ids[0])
        if new_id != old_id:
            marked = yield lifecycle.supersede_many(user_id, {old_id: new_id})
            if marked:
                detail = {"reason": "replaced", "by": str(new_id)}
                yield lifecycle.history_events(user_id, [(old_id, "superseded", detail)])
                yield relations.supersedes_step(user_id, {old_id: new_id})
        return ids[0]

    def _plan_import(self, rows: list[queries.NewMemory]) -> Plan[int]:
        """Insert exported rows as they were; ids or texts already there are skipped."""
        yield from self._plan_model_unchanged()
        count = 0
        if rows:
            yield lifecycle.xact_lock_shared(lifecycle.user_lock_key(rows[0].user_id))
        imported: set[uuid.UUID] = set()
        for start in range(0, len(rows), INSERT_CHUNK):
            result = yield queries.insert_memories(rows[start : start + INSERT_CHUNK], "imported")
            count += len(result)
            imported.update(r["memory_id"] for r in result)
        # Relations are derived again from the imported rows, as on a write.
        yield from relations.plan_record(
            rows[0].user_id if rows else "", [r for r in rows if r.id in imported]
        )
        yield from self._plan_model_unchanged()
        return count

    def _plan_model_unchanged(self) -> Plan[None]:
        """Refuse to write vectors of a model the database no longer records.

        ``memory-pg reembed`` to another model of the same dimension swaps the
        recorded model under stores that are already open; their vectors would
        still fit the column but mean nothing next to the new ones. One primary-key
        read per write transaction.
        """
        rows = yield queries.read_setting(EMBEDDING_SETTING)
        recorded = rows[0]["value"] if rows else None
        model = self.embedder.model_name
        if recorded is not None and recorded.get("model") != model:
            raise EmbeddingModelMismatch(
                f"the database now records embedding model {recorded.get('model')} "
                f"(memory-pg reembed ran after this store opened with {model}): nothing "
                "was written; open the store again with the recorded model (the default "
                "when no model is configured)"
            )

    @staticmethod
    def _plan_search(
        user_id: str,
        query: str,
        vector: np.ndarray[Any, Any] | None,
        top_k: int,
        filters: queries.SearchFilters,
        track_access: bool,
        ranking: RankingSettings | None = None,
        *,
        readability: float = 1.0,
        now: datetime | None = None,
        expand: int = 0,
    ) -> Plan[list[dict[str, Any]]]:
        """Rank, and record the use of what was returned, in one statement.

        Run it with ``_run(..., ef_search=...)``: the HNSW settings are set with the
        tenant, in the transaction's first statement. Without them, a heavy user's
        search over the HNSW index filters the user after the scan and returns too
        few rows. With no ``vector``, the full-text leg ranks alone.
        """
        # The statement is shared by every search of its shape; the values are this one's.
        step = queries.search_statement(
            user_id,
            query,
            vector,
            top_k=top_k,
            filters=filters,
            ranking=ranking,
            # A look into the past (as_of) is not a use of today's memories.
            touch=track_access and filters.as_of is None,
            readability=readability,
            now=now,
        )
        if expand:  # and the memories ``expand`` links from the best hits (issue 19)
            step = relations.expand_step(step, user_id, filters, expand)
        rows = yield step
        shape = relations.result_dict if expand else memory_dict
        return [shape(r) | {"full_text_only": vector is None} for r in rows]

    @staticmethod
    def _plan_delete(user_id: str, memory_id: uuid.UUID, agent_id: str | None = None) -> Plan[bool]:
        # Alone among the user's writes: one that merged into this memory must not log
        # an event after its history is gone.
        yield lifecycle.xact_lock(lifecycle.user_lock_key(user_id))
        rows = yield queries.delete_memory(user_id, memory_id, agent_id)
        if agent_id is not None and not rows:
            # Another agent's private memory (or none): its history is not this agent's.
            return False
        # The erased text may be quoted in the history: it goes too.
        yield queries.delete_history_of(user_id, memory_id)
        return bool(rows)

    @staticmethod
    def _plan_clear(user_id: str) -> Plan[int]:
        # Alone among the user's writes: see lifecycle.user_lock_key.
        yield lifecycle.xact_lock(lifecycle.user_lock_key(user_id))
        counts = []
        for stmt in queries.clear_user(user_id):
            result = yield stmt
            counts.append(result.rowcount)
        return counts[0]

    @staticmethod
    def _plan_stats(user_id: str | None) -> Plan[Rows]:
        if user_id is None:  # every user: only a role that sees them all gets true counts
            yield from roles.plan_require_every_user("stats")
        rows = yield queries.stats(user_id)
        return rows

    @staticmethod
    def _plan_one(stmt: Step) -> Plan[Rows]:
        rows = yield stmt
        return rows

    def _check_recorded(self, recorded: Mapping[str, Any]) -> EmbeddingInfo:
        """The recorded model, if it is this store's; else the mismatch error."""
        model = self.embedder.model_name
        info = EmbeddingInfo(str(recorded["model"]), int(recorded["dimension"]))
        if info.model == model:
            # Same model: its dimension is the recorded one; no need to load it now.
            return info
        dim = self.embedder.dimension
        if info.dimension != dim:
            raise EmbeddingDimensionMismatch(
                db_model=info.model,
                db_dim=info.dimension,
                configured_model=model,
                configured_dim=dim,
            )
        raise EmbeddingModelMismatch(
            f"database vectors come from {info.model}, configured model is {model}: "
            f"vectors of two models are not comparable. Keep {info.model} "
            f"(MEMORY_PG_EMBEDDING_MODEL={info.model}) or run "
            f"`memory-pg reembed --model {model}`"
        )

    def _plan_embedding_check(self) -> Plan[EmbeddingInfo]:
        """Record the model on a new database; refuse a model that does not match."""
        rows = yield queries.read_setting(EMBEDDING_SETTING)
        model = self.embedder.model_name
        if rows:
            return self._check_recorded(rows[0]["value"])
        dim = self.embedder.dimension
        col = yield queries.embedding_column_dim()
        column_dim = col[0]["dim"] if col else None
        if column_dim is not None and column_dim != dim:
            any_rows = yield queries.count_rows()
            if any_rows[0]["any_rows"]:
                raise EmbeddingDimensionMismatch(
                    db_model="(unrecorded)",
                    db_dim=column_dim,
                    configured_model=model,
                    configured_dim=dim,
                )
            logger.warning(
                "empty memory table declared vector(%d); resizing to vector(%d) for %s",
                column_dim,
                dim,
                model,
            )
            # Not ``yield from``: the driver send()s results, which a list iterator refuses.
            for stmt in queries.resize_embedding_column(dim):  # noqa: UP028
                yield stmt
        # Through the SECURITY DEFINER function of 0005: the app role cannot write settings,
        # and a store that raced another to a new database gets what the other recorded.
        recorded = yield queries.record_embedding(model, dim)
        return self._check_recorded(recorded[0]["value"])

    # -- export / import ----------------------------------------------------------

    @staticmethod
    def _export_line(row: Mapping[str, Any], vector: list[float] | None) -> str:
        record = {
            k: (v.isoformat() if isinstance(v, datetime) else v)
            for k, v in memory_dict(row).items()
            if k not in ("user_id",)
        }
        if vector is not None:
            record["embedding"] = vector
        return json.dumps(record, ensure_ascii=False, sort_keys=True)

    def _parse_import(
        self, user_id: str | None, lines: Iterable[str]
    ) -> tuple[_Prepared, list[list[float] | None]]:
        items: list[dict[str, Any]] = []
        vectors: list[list[float] | None] = []
        overrides: list[dict[str, Any]] = []
        uid = self._scope(user_id)
        for number, line in _numbered_lines(lines):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            # ValueError: an int past Python's digit limit; RecursionError: deep nesting.
            except (ValueError, RecursionError) as exc:
                raise InvalidImport(f"line {number} is not JSON: {exc}") from exc
            if not isinstance(record, dict) or "text" not in record:
                raise InvalidImport(f"line {number} is not a memory object with a 'text'")
            try:
                item, override = _import_record(record)
                # Agent scope as exported (not an override of the insert: NewMemory fields).
                agent = check_agent_id(record.get("agent_id"), self.settings)
                private = record.get("private", False)
                if not isinstance(private, bool) or (private and agent is None):
                    raise InvalidImport("private must be a bool, with an agent_id")
                override["agent_id"], override["private"] = agent, private
                # Each record is checked on its own, so an error can name its line.
                self._prepare(uid, [item])
                vector = _import_vector(
                    record.get("embedding"),
                    self.embedder.dimension,
                    reuse=record.get("embedding_model") == self.embedder.model_name,
                )
            except InvalidInput as exc:
                raise InvalidImport(f"line {number}: {exc}") from exc
            items.append(item)
            overrides.append(override)
            vectors.append(vector)
        prepared = self._prepare(uid, items)
        prepared.overrides = overrides
        return prepared, vectors

    def _import_rows(
        self, prepared: _Prepared, given: list[list[float] | None], embedded: np.ndarray[Any, Any]
    ) -> list[queries.NewMemory]:
        dim = self.embedder.dimension
        vectors = np.zeros((len(prepared.texts), dim), dtype=np.float32)
        j = 0
        for i, vec in enumerate(given):
            if vec is not None:
                vectors[i] = np.asarray(vec, dtype=np.float32)
            else:
                vectors[i] = embedded[j]
                j += 1
        rows = self._rows(prepared, vectors)
        out = []
        for row, override in zip(rows, prepared.overrides, strict=True):
            override = dict(override)
            memory_id = override.pop("id", row.id)
            scope = {"agent_id": override.pop("agent_id", None)}
            scope["private"] = override.pop("private", False)
            out.append(
                queries.NewMemory(
                    **{**row.__dict__, **scope, "id": memory_id, "overrides": override}
                )
            )
        return out


def _numbered_lines(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    number = 0
    try:
        for number, line in enumerate(lines, 1):
            yield number, line
    except UnicodeDecodeError as exc:
        raise InvalidImport(f"the file is not UTF-8 text after line {number}: {exc}") from exc


def _import_record(record: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A record's memory fields, and the stored fields it keeps (ids, times, use)."""
    item = {
        "text": record["text"],
        "memory_type": record.get("memory_type", "dialogue"),
        "metadata": record.get("metadata"),
        "topic": record.get("topic"),
        "importance": record.get("importance"),
        "event_time": _parse_time(record.get("event_time"), "event_time"),
        "expires_at": _parse_time(record.get("expires_at"), "expires_at"),
        "context": record.get("context"),
    }
    override: dict[str, Any] = {}
    if record.get("id"):
        override["id"] = parse_memory_id(record["id"])
    for key in ("created_at", "updated_at", "valid_from", "superseded_at", "last_accessed_at"):
        if record.get(key):
            override[key] = _parse_time(record[key], key)
    if record.get("superseded_by"):
        override["superseded_by"] = parse_memory_id(record["superseded_by"])
    if record.get("access_count") is not None:
        count = record["access_count"]
        if (
            isinstance(count, bool)
            or not isinstance(count, int)
            or not 0 <= count <= queries.MAX_ACCESS_COUNT
        ):
            raise InvalidImport(f"access_count must be a count up to {queries.MAX_ACCESS_COUNT}")
        override["access_count"] = count
    return item, override


def _import_vector(value: object, dim: int, *, reuse: bool) -> list[float] | None:
    """An exported vector to store as it is, or None to embed the text again.

    A vector that is not a list of numbers is a damaged file (:class:`InvalidImport`);
    one of another model, of the wrong length, or of no length (all zero) is
    replaced by the configured model's vector of the text. A vector of another
    length than 1 is scaled to length 1, as the model's own are.
    """
    if value is None:
        return None
    if not isinstance(value, list) or not all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in value
    ):
        raise InvalidImport("'embedding' must be a list of numbers")
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        try:
            vector = np.asarray(value, dtype=np.float64)
        except OverflowError:  # an int past float's range
            vector = np.asarray([math.inf])
        if not np.isfinite(vector).all() or not np.isfinite(vector.astype(np.float32)).all():
            raise InvalidImport("'embedding' holds NaN, infinite or out-of-range values")
        if not reuse or len(value) != dim:
            return None
        # Zero as it would be stored: components below float32's range count as 0.
        if not np.any(vector.astype(np.float32)):
            return None
        length = float(np.linalg.norm(vector))
    if abs(length - 1.0) > 1e-3:
        vector = vector / length
    return [float(x) for x in vector]


def _parse_time(value: object, what: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidImport(f"{what} must be an ISO 8601 string")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise InvalidImport(f"{what} {value!r} is not an ISO 8601 time") from exc
    return check_time(parsed, what)


def open_text(target: str | IO[str], mode: str) -> tuple[IO[str], bool]:
    """A text file for a path or an already open file; True when the caller must close it."""
    if isinstance(target, str):
        return open(target, mode, encoding="utf-8"), True
    return target, False


def _check_gate(value: object, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not -1 <= value <= 1:
        raise InvalidArgument(f"{name} must be a number between -1 and 1, got {value!r}")
    return float(value)


def validate_top_k(top_k: object) -> int:
    """Re-exported for the stores: ``top_k`` between 1 and 1000."""
    return check_top_k(top_k)
