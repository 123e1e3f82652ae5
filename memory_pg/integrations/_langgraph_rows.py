"""LangGraph items as memory rows: the mapping, and the plans that read and write them.

No LangGraph import here: :mod:`memory_pg.integrations.langgraph` turns LangGraph's ops
into these calls and their results into LangGraph's items. An item ``(namespace, key,
value)`` of one user is one current memory row whose metadata holds, under
:data:`META`, the namespace, the key, the value (a JSON object, as given), its
prefixes (for prefix search), whether it is indexed, its ``ttl`` and its first write
time. Its topic key is a hash of ``(namespace, key)``: a later put of the same key
supersedes the row (it stays, marked, in the history); a delete erases every version.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Float,
    Select,
    bindparam,
    cast,
    delete,
    func,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import JSONB

from memory_pg.integrations._langgraph_values import check_filter, is_operator_dict
from memory_pg.plans import relations, write
from memory_pg.plans.protocol import Plan
from memory_pg.sql import locks, supersede
from memory_pg.sql.memories import (
    MEMORY_COLUMNS,
    NewMemory,
    current_conditions,
    insert_memories,
    visible_to,
)
from memory_pg.tables import history, memories

m = memories

#: The metadata key under which an item's namespace, key and value are kept.
META = "langgraph"

#: Where a topic key of an item starts: an item's topic never equals one a person wrote.
TOPIC_PREFIX = "langgraph:"


def encode_namespace(namespace: Sequence[str]) -> str:
    """One namespace (or prefix) as one string that no other namespace shares."""
    return json.dumps(list(namespace), ensure_ascii=False, separators=(",", ":"))


def topic_of(namespace: Sequence[str], key: str) -> str:
    """The topic key of an item: the same for every put of ``(namespace, key)``."""
    address = json.dumps([list(namespace), key], ensure_ascii=False, separators=(",", ":"))
    return TOPIC_PREFIX + hashlib.sha256(address.encode("utf-8")).hexdigest()[:40]


@dataclass(frozen=True)
class NewItem:
    """One put of an item, validated: what its memory row will hold."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    text: str
    indexed: bool
    ttl: float | None
    expires_at: datetime | None

    @property
    def topic(self) -> str:
        return topic_of(self.namespace, self.key)

    def metadata(self) -> dict[str, Any]:
        """The row's metadata: the item's address, value and settings under :data:`META`."""
        prefixes = [encode_namespace(self.namespace[:i]) for i in range(1, len(self.namespace) + 1)]
        block: dict[str, Any] = {
            "namespace": list(self.namespace),
            "key": self.key,
            "value": self.value,
            "prefixes": prefixes,
            "indexed": self.indexed,
        }
        if self.ttl is not None:
            block["ttl"] = self.ttl
        return {META: block}

    def content_hash(self) -> str:
        """What tells two puts of the same key apart: the value, its text and settings.

        Not :func:`memory_pg._validate.content_hash` of the text alone: two keys may
        hold the same text, and each is its own item.
        """
        body = [list(self.namespace), self.key, self.value, self.text, self.indexed, self.ttl]
        encoded = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return TOPIC_PREFIX + hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def with_item_hashes(rows: Sequence[NewMemory], items: Sequence[NewItem]) -> list[NewMemory]:
    """The rows of ``items`` (in order) with each item's own content hash."""
    return [
        dataclasses.replace(row, content_hash=item.content_hash())
        for row, item in zip(rows, items, strict=True)
    ]


# -- statements ------------------------------------------------------------------------


def _block(*path: str) -> ColumnElement[Any]:
    """A field of an item's metadata block, as JSONB."""
    return m.c.metadata[(META, *path)]


def _item_rows(user_id: str, memory_type: str, agent_id: str | None) -> list[ColumnElement[bool]]:
    return [
        m.c.user_id == user_id,
        m.c.memory_type == memory_type,
        m.c.topic.like(TOPIC_PREFIX + "%"),
        visible_to(agent_id),
    ]


def current_by_topic(user_id: str, memory_type: str, topics: Sequence[str]) -> Select[Any]:
    """The rows that hold these items now (expired or not), locked for the write."""
    return (
        select(m.c.id, m.c.topic, m.c.content_hash, m.c.created_at, m.c.metadata)
        .where(
            m.c.user_id == user_id,
            m.c.memory_type == memory_type,
            m.c.topic.in_(list(topics)),
            m.c.superseded_at.is_(None),
        )
        .with_for_update()
    )


def filter_conditions(filters: Mapping[str, Any] | None) -> list[ColumnElement[bool]]:
    """LangGraph's ``filter`` on the value's fields, as SQL on the stored value.

    A field is a top-level key or a dotted path (``"a.b"``); its condition a value
    (equality) or a dict of :data:`OPERATORS`. Values compare as JSON (numbers as
    numbers, strings as strings).
    """
    conditions: list[ColumnElement[bool]] = []
    for field_name, wanted in check_filter(filters).items():
        target = _block("value", *field_name.split("."))
        tests = wanted if is_operator_dict(wanted) else {"$eq": wanted}
        for op, operand in tests.items():
            given = bindparam(None, operand, type_=JSONB)
            if op == "$eq":
                conditions.append(target == given)
            elif op == "$ne":
                conditions.append(target.is_distinct_from(given))
            elif op == "$gt":
                conditions.append(target > given)
            elif op == "$gte":
                conditions.append(target >= given)
            elif op == "$lt":
                conditions.append(target < given)
            else:
                conditions.append(target <= given)
    return conditions


def containment(prefix: Sequence[str], indexed_only: bool = False) -> dict[str, Any]:
    """A metadata filter (JSON containment) for items under ``prefix``."""
    block: dict[str, Any] = {}
    if prefix:
        block["prefixes"] = [encode_namespace(prefix)]
    if indexed_only:
        block["indexed"] = True
    return {META: block}


def get_statement(
    user_id: str, memory_type: str, topics: Sequence[str], agent_id: str | None
) -> Select[Any]:
    """The current rows (not expired) of the items with these topics."""
    return select(*MEMORY_COLUMNS).where(
        *_item_rows(user_id, memory_type, agent_id),
        m.c.topic.in_(list(topics)),
        *current_conditions(None),
    )


def list_statement(
    user_id: str,
    memory_type: str,
    prefix: Sequence[str],
    filters: Mapping[str, Any] | None,
    limit: int,
    offset: int,
    agent_id: str | None,
) -> Select[Any]:
    """Current items under ``prefix`` passing ``filters``, most recently updated first."""
    stmt = select(*MEMORY_COLUMNS).where(
        *_item_rows(user_id, memory_type, agent_id),
        *current_conditions(None),
        *filter_conditions(filters),
    )
    if prefix:
        stmt = stmt.where(m.c.metadata.contains(containment(prefix)))
    return stmt.order_by(m.c.updated_at.desc(), m.c.id.desc()).limit(limit).offset(offset)


def namespaces_statement(
    user_id: str, memory_type: str, prefix: Sequence[str], agent_id: str | None
) -> Select[Any]:
    """The distinct namespaces of current items under ``prefix`` (no wildcard in it)."""
    namespace = _block("namespace").label("namespace")
    stmt = select(namespace).where(
        *_item_rows(user_id, memory_type, agent_id), *current_conditions(None)
    )
    if prefix:
        stmt = stmt.where(m.c.metadata.contains(containment(prefix)))
    return stmt.distinct()


def refresh_ttl_statement(user_id: str, ids: Sequence[uuid.UUID]) -> Any:
    """Move the expiry of these items (those with a ``ttl``, not yet expired) to now + ttl."""
    seconds = cast(m.c.metadata[(META, "ttl")].astext, Float) * 60
    return (
        update(m)
        .where(
            m.c.user_id == user_id,
            m.c.id.in_(list(ids)),
            m.c.expires_at > func.now(),
            m.c.metadata[META].has_key("ttl"),
        )
        .values(expires_at=func.now() + func.make_interval(0, 0, 0, 0, 0, 0, seconds))
    )


# -- plans -----------------------------------------------------------------------------


def plan_put(
    user_id: str,
    memory_type: str,
    rows: Sequence[NewMemory],
    items: Sequence[NewItem],
    deletes: Sequence[str],
    model: str,
) -> Plan[None]:
    """Write ``items`` (their ``rows``) and erase the items whose topics are ``deletes``,
    in one transaction.

    A key already held is superseded by its new row (a ``superseded`` event); a put of
    the same value again only moves its ``updated_at`` (and expiry). Every version of a
    deleted key goes for good, with its history.
    """
    yield from write.plan_model_unchanged(model)
    for lock in locks.write_locks(user_id, [memory_type]):  # noqa: UP028 (send() needs a generator)
        yield lock
    if deletes:
        yield from _erase(user_id, memory_type, deletes)
    if not rows:
        return None
    found = yield current_by_topic(user_id, memory_type, [i.topic for i in items])
    current = {r["topic"]: r for r in found}
    to_insert: list[NewMemory] = []
    replaced: dict[uuid.UUID, uuid.UUID] = {}
    for row, item in zip(rows, items, strict=True):
        old = current.get(item.topic)
        if old is not None and old["content_hash"] == row.content_hash:
            # The same value again: not a new version, only a newer write time.
            yield (
                update(m)
                .where(m.c.user_id == user_id, m.c.id == old["id"])
                .values(updated_at=func.now(), expires_at=row.expires_at)
            )
            continue
        if old is not None:
            # The item was created by its first put: later versions carry that time.
            first = old["metadata"].get(META, {}).get("created_at")
            first = first or old["created_at"].isoformat()
            meta = {META: {**row.metadata[META], "created_at": first}}
            row = dataclasses.replace(row, metadata=meta)
            replaced[old["id"]] = row.id
        to_insert.append(row)
    if replaced:
        # First: the unique index of current texts would keep an equal new row out.
        yield supersede.supersede_many(user_id, replaced)
    if to_insert:
        yield insert_memories(to_insert)
    if replaced:
        events = [
            (old, "superseded", {"reason": "langgraph_put", "by": str(new)})
            for old, new in replaced.items()
        ]
        yield supersede.history_events(user_id, events)
    yield from relations.plan_record(user_id, to_insert, replaced)
    return None


def _erase(user_id: str, memory_type: str, topics: Sequence[str]) -> Plan[None]:
    gone = yield (
        delete(m)
        .where(
            m.c.user_id == user_id,
            m.c.memory_type == memory_type,
            m.c.topic.in_(list(topics)),
        )
        .returning(m.c.id)
    )
    ids = [r["id"] for r in gone]
    if ids:
        # The erased text may be quoted in the history: it goes too.
        yield delete(history).where(history.c.user_id == user_id, history.c.memory_id.in_(ids))
    return None


def plan_get(
    user_id: str, memory_type: str, topics: Sequence[str], refresh: bool, agent_id: str | None
) -> Plan[dict[str, dict[str, Any]]]:
    """The current rows of these items by topic; with ``refresh``, their expiry moved on."""
    rows = yield get_statement(user_id, memory_type, list(dict.fromkeys(topics)), agent_id)
    found = {r["topic"]: dict(r) for r in rows}
    expiring = [r["id"] for r in found.values() if _has_ttl(r)]
    if refresh and expiring:
        yield refresh_ttl_statement(user_id, expiring)
    return found


def _has_ttl(row: Mapping[str, Any]) -> bool:
    """Whether a row is an item with a ``ttl`` (the others have no expiry to move)."""
    block = row["metadata"].get(META)
    return isinstance(block, dict) and block.get("ttl") is not None


def plan_list(stmt: Select[Any], user_id: str, refresh: bool) -> Plan[list[dict[str, Any]]]:
    """The rows of a listing; with ``refresh``, their expiry moved on."""
    rows = yield stmt
    listed = [dict(r) for r in rows]
    expiring = [r["id"] for r in listed if _has_ttl(r)]
    if refresh and expiring:
        yield refresh_ttl_statement(user_id, expiring)
    return listed


def plan_refresh(user_id: str, ids: Sequence[uuid.UUID]) -> Plan[None]:
    """Move the expiry of the items a search returned."""
    yield refresh_ttl_statement(user_id, ids)
    return None


def plan_namespaces(stmt: Select[Any]) -> Plan[list[tuple[str, ...]]]:
    """The namespaces a :func:`namespaces_statement` finds, as tuples."""
    rows = yield stmt
    return [tuple(r["namespace"]) for r in rows if isinstance(r["namespace"], list)]
