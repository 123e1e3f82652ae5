"""The restore plan: a memory that a wrong replacement took away is current again (no I/O).

What a restore does, by what took the memory away:

* a replacement (a newer memory superseded it, by a write's decision or
  ``replace_memory``): the memory is current again and the newer one stays current
  too. The user says the replacement was wrong, not that the newer fact is: both
  are kept, as the write path keeps both when unsure. The link ``newer supersedes
  older`` goes.
* a consolidation (merged into a summary): the merge is undone. Every fragment of
  the summary that has not expired since is current again and the summary, if still
  current, is retired (``superseded`` by nothing), since it repeats them.
* an expiry: refused (:class:`~memory_pg.errors.NothingToRestore`); an expiry is
  undone by writing the memory again with a later one.

Each memory made current gets a ``restored`` event naming the agent that restored it
(``None``: the user's own call), what had replaced it and what became of that. The
restored memory meets later writes as any current memory does: a write supersedes
only through what it says, so the replacement that was undone never comes back by
itself.
"""

from __future__ import annotations

import uuid
from typing import Any

from memory_pg._validate import check_agent_id
from memory_pg.config import StoreSettings
from memory_pg.errors import MemoryConflict, MemoryNotFound, NothingToRestore
from memory_pg.plans.protocol import Plan
from memory_pg.plans.shapes import parse_memory_id
from memory_pg.sql import locks, memories, restore, supersede

#: What became of the replacing memory (``replacement`` in the result and the event).
KEPT, RETIRED, ERASED, NOT_CURRENT = "kept", "retired", "erased", "not current"


def plan_restore(
    user_id: str, memory_id: object, settings: StoreSettings, agent_id: object = None
) -> Plan[dict[str, Any]]:
    """Make the replaced memory ``memory_id`` current again; see the module's rules.

    Returns ``{"id", "restored", "replaced_by", "replacement"}``: the memory, every
    memory made current (it first), what had replaced it (or None) and what became of
    that (``kept``, ``retired``, ``erased`` or ``not current``).

    Raises:
        MemoryNotFound: no such memory of the user (for an agent: none it may see).
        NothingToRestore: the memory is current, or expired.
        MemoryConflict: a current memory holds the same text.
    """
    return _restore(user_id, parse_memory_id(memory_id), check_agent_id(agent_id, settings))


def _restore(user_id: str, memory_id: uuid.UUID, agent_id: str | None) -> Plan[dict[str, Any]]:
    found = yield restore.replaced_memory(user_id, memory_id, agent_id, lock=False)
    seen = _check(found, memory_id)
    # As a write of its type, and in a writer's order (its advisory locks, then rows):
    # the decisions of concurrent writes see it current, or replaced, never half-way.
    for lock in locks.write_locks(user_id, [seen["memory_type"]]):  # noqa: UP028
        yield lock
    # Again, locked: a restore that held the locks first may have restored it since.
    found = yield restore.replaced_memory(user_id, memory_id, agent_id)
    row = _check(found, memory_id)
    newer: uuid.UUID | None = row["newer_id"]
    merge = newer is not None and bool(row["summary"])
    ids = [memory_id]
    pairs = {(row["memory_type"], row["content_hash"])}
    if merge:
        assert newer is not None
        fragments = yield restore.fragments_of(user_id, newer)
        ids += [f["id"] for f in fragments if f["id"] != memory_id]
        pairs |= {(f["memory_type"], f["content_hash"]) for f in fragments}
        if row["newer_current"]:
            # First: the summary may read word for word as one of its fragments.
            yield supersede.supersede_many(user_id, {newer: None})
    scope = {"private": bool(row["private"]), "agent_id": row["agent_id"]}
    # A row past its expiry still holds its text in the unique index of current texts.
    yield memories.retire_expired(user_id, sorted(pairs), **scope)
    held = yield memories.find_current_by_hash(user_id, sorted(pairs), **scope)
    if held:
        raise MemoryConflict(
            f"memory {held[0]['id']} is current and reads the same: nothing was restored; "
            "it holds that fact already"
        )
    yield restore.unmark(user_id, ids)
    replacement = _fate(row, merge)
    detail: dict[str, Any] = {
        "reason": "restored",
        "agent": agent_id,
        "replaced_by": None if row["superseded_by"] is None else str(row["superseded_by"]),
        "replacement": replacement,
    }
    events = [(memory_id, "restored", detail)]
    events += [
        (i, "restored", {**detail, "reason": "merge_undone", "with": str(memory_id)})
        for i in ids[1:]
    ]
    if merge and replacement == RETIRED:
        assert newer is not None
        undone = {"reason": "merge_undone", "agent": agent_id, "restored": [str(i) for i in ids]}
        events.append((newer, "superseded", undone))
    elif newer is not None and not merge:
        yield restore.drop_supersedes_link(user_id, newer, memory_id)
    yield supersede.history_events(user_id, events)
    return {
        "id": str(memory_id),
        "restored": [str(i) for i in ids],
        "replaced_by": detail["replaced_by"],
        "replacement": replacement,
    }


def _check(found: Any, memory_id: uuid.UUID) -> Any:
    """The memory found, if a replacement took it away; else the typed error."""
    if not found:
        raise MemoryNotFound(f"no memory {memory_id} for this user")
    row = found[0]
    if row["expired"]:
        raise NothingToRestore(
            f"memory {memory_id} expired at {row['expires_at'].isoformat()}: restore undoes "
            "a replacement, not an expiry; add it again with a later expiry, or none"
        )
    if row["superseded_at"] is None:
        raise NothingToRestore(f"memory {memory_id} is current: there is no replacement to undo")
    return row


def _fate(row: Any, merge: bool) -> str | None:
    if row["superseded_by"] is None:
        return None
    if row["newer_id"] is None:
        return ERASED
    if not row["newer_current"]:
        return NOT_CURRENT
    return RETIRED if merge else KEPT


__all__ = ["plan_restore"]
