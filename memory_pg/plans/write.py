"""Write plans: validate memories, then insert, replace, delete or clear (no I/O).

A write runs under advisory locks in one transaction: writes of one user and type
wait for each other, an erase of the user waits for all of them. Each new row meets
the current memories it may replace or repeat (:mod:`memory_pg.supersession`).
"""

from __future__ import annotations

import dataclasses
import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np

from memory_pg._ids import ordered_ids
from memory_pg._segment import index_words
from memory_pg._validate import (
    check_agent_id,
    check_importance,
    check_memory_type,
    check_metadata,
    check_text,
    check_time,
    check_topic,
    check_user_id,
    content_hash,
)
from memory_pg.config import StoreSettings, SupersedePolicy
from memory_pg.embedding import Embedder, unusable_rows
from memory_pg.entities import KINDS, MAX_NAME_CHARS, Entity, entity_key
from memory_pg.errors import (
    EmbeddingModelMismatch,
    InvalidArgument,
    MemoryConflict,
    MemoryNotFound,
    TenantMismatch,
)
from memory_pg.plans import relations, turns
from memory_pg.plans.protocol import Plan
from memory_pg.plans.shapes import MemoryInput, Prepared, parse_memory_id
from memory_pg.sql import locks, memories, setup, supersede
from memory_pg.sql import turns as sql_turns
from memory_pg.sql.memories import NewMemory
from memory_pg.supersession import Candidate, Decision, Judge, decide_batch
from memory_pg.text import changes
from memory_pg.text.attributes import stated

#: Rows per INSERT statement in a batch write.
INSERT_CHUNK = 500


@dataclass(frozen=True)
class Writer:
    """What a write plan needs of the store that runs it."""

    #: The embedding model of the store's vectors (refused if the database records another).
    model: str
    #: How new memories replace or merge with current ones.
    supersede: SupersedePolicy = field(default_factory=SupersedePolicy)
    #: Confirms detected supersessions: any ``Callable[[str], str]`` (an LLM client).
    judge: Judge | None = None


def scope_user(user_id: str | None, bound: str | None, settings: StoreSettings) -> str:
    """The user of a call: ``user_id``, else the bound one; a bound store refuses others."""
    if user_id is None:
        return check_user_id(bound, settings)
    uid = check_user_id(user_id, settings)
    if bound is not None and uid != bound:
        raise TenantMismatch(
            f"this store is bound to user {bound!r} and refuses user {uid!r}: open a "
            "store per user, or one with no user_id and pass user_id= per call"
        )
    return uid


def coerce_item(item: object) -> MemoryInput:
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
    raise InvalidArgument(f"a memory is a str, a dict or a MemoryInput, not {type(item).__name__}")


def prepare(
    settings: StoreSettings,
    user_id: str,
    items: Iterable[object],
    agent_id: str | None = None,
    *,
    restoring: bool = False,
) -> Prepared:
    """Validate the memories of one write of ``user_id`` (already in scope, see
    :func:`scope_user`): a typed error names the first bad item, nothing is written.

    ``restoring``: the items come back from an export, as they were; one whose expiry
    has passed is restored expired (an import supersedes nothing), not refused.
    """
    uid = user_id
    agent = check_agent_id(agent_id, settings)
    # A str is iterable too: add_memories("hello") must not store "h", "e", "l", "o".
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise InvalidArgument(
            f"memories are a list of texts, dicts or MemoryInput, not {type(items).__name__}"
        )
    coerced = [coerce_item(item) for item in items]
    now = datetime.now(timezone.utc)
    prepared = Prepared(uid, [], [], [], [], [], agent_id=agent)
    for item in coerced:
        if not isinstance(item.private, bool):
            raise InvalidArgument("private must be true or false")
        if item.private and agent is None:
            raise InvalidArgument("a private memory needs the agent_id of the agent it belongs to")
        text = check_text(item.text, settings)
        check_memory_type(item.memory_type, settings)
        # The times as checked: an offset PostgreSQL cannot store becomes UTC.
        event_time = check_time(item.event_time, "event_time")
        expires = check_time(item.expires_at, "expires_at")
        if event_time is not item.event_time or expires is not item.expires_at:
            item = dataclasses.replace(item, event_time=event_time, expires_at=expires)
        prepared.items.append(item)
        prepared.texts.append(text)
        prepared.metadata.append(check_metadata(item.metadata, settings))
        prepared.topics.append(check_topic(item.topic))
        prepared.importances.append(check_importance(item.importance, settings))
        prepared.contexts.append(
            None
            if item.context is None or item.context == ""
            else check_text(item.context, settings, what="context")
        )
        if expires is not None and expires <= now and not restoring:
            # Never current, it would still replace the current memory it supersedes.
            raise InvalidArgument(
                f"expires_at {expires.isoformat()} has passed: the memory would never be "
                "current; nothing was written"
            )
        prepared.entities.append(check_entities(item.entities))
    return prepared


def check_entities(value: object) -> tuple[Entity, ...] | None:
    """A memory's given entities as :class:`Entity` values, else :class:`InvalidArgument`.

    Each is an :class:`Entity` or a dict with a ``name``, a ``kind`` among
    :data:`memory_pg.entities.KINDS` and optionally ``aliases`` (a list of names).
    """
    if value is None:
        return None
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise InvalidArgument("entities must be a list of entities or None")
    checked: list[Entity] = []
    for item in value:
        # An Entity is checked as its dict would be (its key is worked out again).
        name: Any
        kind: Any
        aliases: Any
        if isinstance(item, Entity):
            name, kind, aliases = item.name, item.kind, item.aliases
        elif isinstance(item, Mapping):
            name, kind, aliases = item.get("name"), item.get("kind"), item.get("aliases", [])
        else:
            name = kind = aliases = None
        if (
            not isinstance(name, str)
            or not entity_key(name)
            or len(name) > MAX_NAME_CHARS
            or len(entity_key(name)) > MAX_KEY_CHARS
            or not isinstance(kind, str)
            or kind not in KINDS
            or not isinstance(aliases, (list, tuple))
            or len(aliases) > MAX_ALIASES
            or not all(isinstance(a, str) and a.strip() for a in aliases)
            or not all(len(a) <= MAX_NAME_CHARS for a in aliases)
            or not all(_storable_name(s) for s in (name, *aliases))
        ):
            raise InvalidArgument(
                f"an entity is a dict with a name, a kind among {list(KINDS)} and a list of "
                f"aliases, not {item!r}"
            )
        checked.append(Entity(name.strip(), kind, entity_key(name), tuple(aliases)))
    return tuple(checked)


#: Longest entity key the table takes (its ``key`` check): NFKC can lengthen a name.
MAX_KEY_CHARS = 200

#: Most spellings one given entity may carry besides its name.
MAX_ALIASES = 32


def _storable_name(value: str) -> bool:
    """A name PostgreSQL text holds (no NUL, valid UTF-8) and that survives the unit
    separator :func:`memory_pg.sql.relations.record_mentions` joins aliases with."""
    if "\x00" in value or "\x1f" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


def replacement(
    old: Mapping[str, Any] | None,
    old_id: uuid.UUID,
    text: str,
    metadata: Mapping[str, Any] | None,
    importance: float | None,
    agent_id: str | None = None,
) -> tuple[MemoryInput, str | None]:
    """The new memory that replaces ``old`` (its type, topic, context and scope, new
    text), and the agent that writes it: the caller's, or the owner of a private one."""
    if old is None:
        raise MemoryNotFound(f"no memory {old_id} for this user")
    item = MemoryInput(
        text,
        old["memory_type"],
        old["metadata"] if metadata is None else metadata,
        old["topic"],
        old["importance"] if importance is None else importance,
        # A corrected turn still answers what it answered.
        context=old.get("context") or None,
        private=bool(old.get("private")),
    )
    return item, old.get("agent_id") if item.private else agent_id


def new_rows(
    prepared: Prepared, vectors: np.ndarray[Any, Any], embedder: Embedder
) -> list[NewMemory]:
    """The rows to insert: each validated memory with its vector (checked for shape and
    direction) and a new id."""
    if vectors.shape != (len(prepared.texts), embedder.dimension):
        raise InvalidArgument(
            f"embedder returned vectors of shape {vectors.shape}, expected "
            f"({len(prepared.texts)}, {embedder.dimension})"
        )
    bad = unusable_rows(vectors)
    if bad:
        raise InvalidArgument(
            f"embedder returned a vector with no direction (zero, NaN or infinite) "
            f"for item {bad[0]}: {embedder.model_name} is not fit to store it"
        )
    rows = []
    # In the order given: a write's turns share their times, their ids tell the order.
    ids = ordered_ids(len(prepared.items))
    for i, item in enumerate(prepared.items):
        rows.append(
            NewMemory(
                id=ids[i],
                user_id=prepared.user_id,
                memory_type=item.memory_type,
                text=prepared.texts[i],
                embedding=vectors[i],
                embedding_model=embedder.model_name,
                content_hash=content_hash(prepared.texts[i]),
                metadata=prepared.metadata[i],
                topic=prepared.topics[i],
                importance=prepared.importances[i],
                event_time=item.event_time,
                expires_at=item.expires_at,
                context=prepared.contexts[i],
                agent_id=prepared.agent_id,
                private=item.private,
                entities=prepared.entities[i] if prepared.entities else None,
                words=index_words(prepared.texts[i], prepared.contexts[i]),
                attributes=stated(prepared.texts[i]),
            )
        )
    return rows


def plan_insert(rows: list[NewMemory], writer: Writer) -> Plan[list[str]]:
    """Insert rows, replacing or merging with current memories (one transaction).

    Writes of one user and type wait for each other (a transaction advisory
    lock), then each new row is compared with the current memories it may
    replace or repeat (:func:`memory_pg.supersession.decide`): exact and near
    duplicates resolve to the existing id (a ``merged`` event), replaced rows are
    marked ``superseded_at``/``superseded_by`` (a ``superseded`` event).
    """
    if not rows:
        return []
    user_id = rows[0].user_id
    policy = writer.supersede
    yield from plan_model_unchanged(writer.model)
    # Not ``yield from``: the driver send()s results, which a list iterator refuses.
    for lock in locks.write_locks(user_id, [r.memory_type for r in rows]):  # noqa: UP028
        yield lock
    found: list[list[Candidate]] = [[] for _ in rows]
    if policy.enabled:
        for start in range(0, len(rows), INSERT_CHUNK):
            chunk = rows[start : start + INSERT_CHUNK]
            result = yield supersede.candidates_statement(
                user_id,
                [r.embedding for r in chunk],
                [r.memory_type for r in chunk],
                [r.topic for r in chunk],
                policy.candidates,
                [
                    changes.word_queries(r.text)
                    if r.memory_type in policy.detect_types or r.memory_type != "dialogue"
                    else None
                    for r in chunk
                ],
                [r.private for r in chunk],
                rows[0].agent_id,
            )
            for c in result:
                found[start + c["i"]].append(
                    Candidate(
                        c["id"],
                        c["topic"],
                        c["text"],
                        c["content_hash"],
                        float(c["similarity"]),
                        bool(c["same_topic"]),
                    )
                )
    decisions = decide_batch(rows, found, policy, writer.judge)
    # One statement for all repeats and one for all replacements, not one per row.
    merged: dict[uuid.UUID, float] = {}
    for row, d in zip(rows, decisions, strict=True):
        if d.action == "merge":
            merged[d.targets[0]] = max(merged.get(d.targets[0], 0.0), row.importance)
    batch = {row.id for row in rows}
    stored = {target: v for target, v in merged.items() if target not in batch}
    if stored:
        # First, and checked: a repeat of a memory that a ``forget`` deleted (or a
        # job replaced) since the candidates were read is stored after all.
        result = yield supersede.refresh_merged(user_id, stored)
        alive = {r["id"] for r in result}
        decisions = [
            Decision("add", topic=d.topic)
            if d.action == "merge" and d.targets[0] in stored and d.targets[0] not in alive
            else d
            for d in decisions
        ]
    to_insert = [row for row, d in zip(rows, decisions, strict=True) if d.action != "merge"]
    inserted: set[uuid.UUID] = set()
    for start in range(0, len(to_insert), INSERT_CHUNK):
        result = yield memories.insert_memories(to_insert[start : start + INSERT_CHUNK])
        inserted.update(r["memory_id"] for r in result)
    kept_out = [r for r in to_insert if r.id not in inserted]
    if kept_out:
        # The unique index of current texts kept these out. Where its row is one whose
        # expiry has passed, that row is retired and the new one goes in.
        for private in sorted({r.private for r in kept_out}):
            pairs = sorted(
                {(r.memory_type, r.content_hash) for r in kept_out if r.private == private}
            )
            yield memories.retire_expired(
                user_id, pairs, private=private, agent_id=rows[0].agent_id
            )
        # Again, whether or not one was retired here: a forget or a delete may have
        # taken the expired row away since the first insert (ON CONFLICT takes no
        # lock), and then nothing holds the text any more.
        result = yield memories.insert_memories(kept_out)
        inserted.update(r["memory_id"] for r in result)
    # A repeat of an earlier row of this batch, now stored.
    repeats = {target: v for target, v in merged.items() if target in batch}
    if repeats:
        yield supersede.refresh_merged(user_id, repeats)
    replaced: dict[uuid.UUID, uuid.UUID] = {}
    for row, d in zip(rows, decisions, strict=True):
        if d.action == "supersede" and row.id in inserted:
            for old in d.targets:
                replaced.setdefault(old, row.id)
    marked: set[uuid.UUID] = set()
    if replaced:
        result = yield supersede.supersede_many(user_id, replaced)
        marked = {r["id"] for r in result}
    events: list[tuple[uuid.UUID, str, dict[str, Any]]] = []
    ids: list[uuid.UUID] = []
    for row, d in zip(rows, decisions, strict=True):
        detail: dict[str, Any] = {"reason": d.reason}
        if d.similarity is not None:
            detail["similarity"] = round(d.similarity, 4)
        if d.evidence:
            detail["evidence"] = d.evidence
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
        yield supersede.history_events(user_id, events)
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
        pairs = sorted({(r.memory_type, r.content_hash) for r in missing if r.private == private})
        rows_found = yield memories.find_current_by_hash(
            user_id, pairs, private=private, agent_id=rows[0].agent_id
        )
        resolved.update(
            {(f["memory_type"], f["content_hash"], private): f["id"] for f in rows_found}
        )
    unresolved = [r for r in missing if (r.memory_type, r.content_hash, r.private) not in resolved]
    if unresolved:
        # Kept out by a memory that is gone now (erased while this write ran): never an
        # id of nothing. The transaction rolls back; the write can be made again.
        raise MemoryConflict(
            "a memory with the same text was erased while this write ran: nothing was "
            "written; write it again"
        )
    # Again after the writes: a reembed that swapped the model while this transaction
    # waited is visible now, and its swap waits for this transaction (table locks).
    yield from plan_model_unchanged(writer.model)
    return [
        str(resolved[(r.memory_type, r.content_hash, r.private)] if r.id in missing_ids else i)
        for r, i in zip(rows, ids, strict=True)
    ]


def plan_replace(
    old_id: uuid.UUID, rows: list[NewMemory], writer: Writer, agent_id: str | None = None
) -> Plan[str]:
    """Write ``rows[0]`` and mark the current memory ``old_id`` replaced by it.

    The old row is locked first; a row already replaced (or expired) raises
    :class:`MemoryConflict` and nothing is written.
    """
    user_id = rows[0].user_id
    found = yield memories.get_memory(user_id, old_id, agent_id).with_for_update()
    if not found:
        raise MemoryNotFound(f"no memory {old_id} for this user")
    old = found[0]
    if old["superseded_at"] is not None or (
        old["expires_at"] is not None and old["expires_at"] <= datetime.now(timezone.utc)
    ):
        raise MemoryConflict(
            f"memory {old_id} is no longer current"
            + (f" (replaced by {old['superseded_by']})" if old["superseded_by"] else "")
            + ": replace its current successor"
        )
    # The caller says what the memory now reads: a text that reads almost as another
    # one ("…never with breakfast" for "…with breakfast") is still written, not
    # merged away; only the very same text resolves to the memory that holds it.
    exact = dataclasses.replace(
        writer, supersede=dataclasses.replace(writer.supersede, merge_threshold=math.inf)
    )
    ids = yield from plan_insert(rows, exact)
    new_id = uuid.UUID(ids[0])
    if new_id != old_id:
        marked = yield supersede.supersede_many(user_id, {old_id: new_id})
        if marked:
            detail = {"reason": "replaced", "by": str(new_id)}
            yield supersede.history_events(user_id, [(old_id, "superseded", detail)])
            yield relations.supersedes_step(user_id, {old_id: new_id})
    return ids[0]


@dataclass(frozen=True)
class Erased:
    """What :func:`plan_delete` erased."""

    #: Whether there was such a memory (for an agent: one it may see).
    deleted: bool
    #: ``(id, text)`` of the turns that held its text as their context: they lost it,
    #: and their vectors, computed with it, are to be computed again (:func:`plan_vectors`).
    reframed: list[tuple[uuid.UUID, str]] = field(default_factory=list)


def plan_delete(
    user_id: str, memory_id: object, settings: StoreSettings, agent_id: object = None
) -> Plan[Erased]:
    """Erase one memory and its history for good, and its text from the context of the
    turns it framed (:mod:`memory_pg.plans.turns`)."""
    return _delete(user_id, parse_memory_id(memory_id), check_agent_id(agent_id, settings))


def _delete(user_id: str, memory_id: uuid.UUID, agent_id: str | None) -> Plan[Erased]:
    # Alone among the user's writes: one that merged into this memory must not log
    # an event after its history is gone.
    yield locks.xact_lock(locks.user_lock_key(user_id))
    rows = yield memories.delete_memory(user_id, memory_id, agent_id)
    if agent_id is not None and not rows:
        # Another agent's private memory (or none): its history is not this agent's.
        return Erased(False)
    # The erased text may be quoted in the history: it goes too.
    yield memories.delete_history_of(user_id, memory_id)
    reframed: list[tuple[uuid.UUID, str]] = []
    for row in rows:
        if (session := turns.session_of(row["metadata"])) is not None:
            framed = yield sql_turns.unframe(user_id, session, row, turns.tail(row["text"]))
            reframed.extend((r["id"], r["text"]) for r in framed)
    return Erased(bool(rows), reframed)


def plan_vectors(user_id: str, rows: Sequence[tuple[uuid.UUID, str]], vectors: Any) -> Plan[None]:
    """Store the vectors of ``rows``, computed again (in order): one statement."""
    yield sql_turns.set_vectors(user_id, [memory_id for memory_id, _ in rows], vectors)
    return None


def plan_clear(user_id: str) -> Plan[int]:
    """Erase every memory, buffered turn and history event of a user; returns memories gone."""
    # Alone among the user's writes: see locks.user_lock_key.
    yield locks.xact_lock(locks.user_lock_key(user_id))
    counts = []
    for stmt in memories.clear_user(user_id):
        result = yield stmt
        counts.append(result.rowcount)
    return counts[0]


def plan_model_unchanged(model: str) -> Plan[None]:
    """Refuse to write vectors of a model the database no longer records.

    ``memory-pg reembed`` to another model of the same dimension swaps the
    recorded model under stores that are already open; their vectors would
    still fit the column but mean nothing next to the new ones. One primary-key
    read per write transaction.
    """
    rows = yield setup.bound_read_setting(setup.EMBEDDING_SETTING)
    recorded = rows[0]["value"] if rows else None
    if recorded is not None and recorded.get("model") != model:
        raise EmbeddingModelMismatch(
            f"the database now records embedding model {recorded.get('model')} "
            f"(memory-pg reembed ran after this store opened with {model}): nothing "
            "was written; open the store again with the recorded model (the default "
            "when no model is configured)"
        )
