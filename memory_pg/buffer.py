"""The dialogue buffer: turns wait in PostgreSQL until a compaction consumes them.

Statement builders and plans for :class:`~memory_pg.store.MemoryStore` and its
async twin. A turn is written before the agent answers and marked consumed in
the same transaction that writes the memories compacted from it, so a process
killed at any moment loses no turn and a turn is never compacted twice.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from memory_pg._validate import check_text
from memory_pg.config import StoreSettings
from memory_pg.errors import InvalidArgument
from memory_pg.plans.protocol import Plan
from memory_pg.plans.shapes import MemoryInput, Prepared
from memory_pg.plans.write import prepare
from memory_pg.sql.buffer import consume_turns, insert_turn, lock_unconsumed, select_pending
from memory_pg.sql.locks import user_lock_key, xact_lock_shared

logger = logging.getLogger(__name__)


#: Roles a buffered turn may have (the table's check constraint says the same).
ROLES = ("user", "assistant", "system", "tool")


#: Metadata key under which a compacted memory records the turns it came from.
SOURCE_TURNS_KEY = "source_turns"


# -- validation -------------------------------------------------------------------


def check_role(role: object) -> str:
    """One of :data:`ROLES`, or :class:`InvalidArgument`."""
    if not isinstance(role, str) or role not in ROLES:
        raise InvalidArgument(f"role must be one of {', '.join(ROLES)}; got {role!r}")
    return role


def check_session_id(session_id: object, settings: StoreSettings) -> str | None:
    """A session id (any printable text up to the user-id limit), or None."""
    if session_id is None:
        return None
    if not isinstance(session_id, str) or not session_id.strip():
        raise InvalidArgument(f"session_id must be a non-empty str, got {session_id!r}")
    if len(session_id) > settings.max_user_id_chars or "\x00" in session_id:
        raise InvalidArgument(
            f"session_id must be at most {settings.max_user_id_chars} characters, without NUL"
        )
    try:
        session_id.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArgument("session_id is not valid Unicode") from exc
    return session_id


def check_turn_ids(turn_ids: object) -> list[int]:
    """Distinct positive turn ids, in ascending order; at least one."""
    if isinstance(turn_ids, (str, bytes)) or not isinstance(turn_ids, Iterable):
        raise InvalidArgument("turn_ids must be a list of turn ids (ints)")
    ids: set[int] = set()
    for turn_id in turn_ids:
        if isinstance(turn_id, bool) or not isinstance(turn_id, int) or turn_id < 1:
            raise InvalidArgument(f"not a turn id: {turn_id!r}")
        ids.add(turn_id)
    if not ids:
        raise InvalidArgument("commit_compaction needs the ids of the turns it compacted")
    return sorted(ids)


def check_limit(limit: object) -> int | None:
    """None (no limit) or a positive int."""
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidArgument(f"limit must be a positive int or None, got {limit!r}")
    return limit


def as_memory_input(item: object, turn_ids: Sequence[int]) -> object:
    """A compacted memory as the store's write input, tagged with the turns it came from.

    Takes :class:`MemoryInput`, dicts, plain text, and any object with
    ``memory_type`` and ``text`` attributes (the compactor's ``CompactedMemory``).
    Anything else goes through unchanged so the store's own check names it.
    """
    if isinstance(item, str):
        item = MemoryInput(text=item)
    elif isinstance(item, Mapping):
        meta = item.get("metadata")
        if meta is None or isinstance(meta, Mapping):
            tagged = dict(meta or {})
            tagged.setdefault(SOURCE_TURNS_KEY, [turn_ids[0], turn_ids[-1]])
            return {**item, "metadata": tagged}
        return item  # the store's check names the bad metadata
    elif not isinstance(item, MemoryInput):
        if not (hasattr(item, "text") and hasattr(item, "memory_type")):
            return item
        item = MemoryInput(
            text=item.text,
            memory_type=item.memory_type,
            metadata=getattr(item, "metadata", None),
            topic=getattr(item, "topic", None),
            importance=getattr(item, "importance", None),
            entities=getattr(item, "entities", None),
        )
    metadata = dict(item.metadata) if isinstance(item.metadata, Mapping) else item.metadata
    if isinstance(metadata, dict) or metadata is None:
        metadata = dict(metadata or {})
        metadata.setdefault(SOURCE_TURNS_KEY, [turn_ids[0], turn_ids[-1]])
    return dataclasses.replace(item, metadata=metadata)


# -- plans --------------------------------------------------------------------------


def plan_append(user_id: str, session_id: str | None, role: str, content: str) -> Plan[int]:
    """Buffer one turn and return its id (never in the middle of the user's erase)."""
    yield xact_lock_shared(user_lock_key(user_id))
    rows = yield insert_turn(user_id, session_id, role, content)
    return int(rows[0]["id"])


def plan_pending(
    user_id: str, session_id: str | None, limit: int | None
) -> Plan[list[dict[str, Any]]]:
    """The pending turns as plain dicts."""
    rows = yield select_pending(user_id, session_id, limit)
    return [dict(r) for r in rows]


def plan_pending_turns(
    user_id: str, session_id: object, limit: object, settings: StoreSettings
) -> Plan[list[dict[str, Any]]]:
    """:func:`plan_pending` of arguments validated now."""
    return plan_pending(user_id, check_session_id(session_id, settings), check_limit(limit))


def prepare_commit(
    user_id: str,
    turn_ids: object,
    memories: Iterable[object],
    agent_id: str | None,
    settings: StoreSettings,
) -> tuple[list[int], Prepared]:
    """The turn ids of a compaction and its memories, validated, each tagged with them."""
    ids = check_turn_ids(turn_ids)
    return ids, prepare(settings, user_id, [as_memory_input(m, ids) for m in memories], agent_id)


def plan_commit(
    user_id: str, turn_ids: Sequence[int], insert_plan: Plan[list[str]] | None
) -> Plan[list[str]]:
    """Consume the turns and write their memories, or, if any turn is gone, do nothing.

    Run in one transaction: either the turns are marked consumed *and* the
    memories are written, or neither. When another worker consumed (or a user
    erased) any of the turns first, nothing is written and ``[]`` comes back.
    """
    # The user's lock before the turns' row locks, in the order the insert plan and an
    # erase take them: taken after, it could deadlock with an erase.
    yield xact_lock_shared(user_lock_key(user_id))
    locked = yield lock_unconsumed(user_id, turn_ids)
    if len(locked) != len(turn_ids):
        logger.info(
            "compaction of %d turns skipped: %d already consumed or erased",
            len(turn_ids),
            len(turn_ids) - len(locked),
        )
        if insert_plan is not None:
            insert_plan.close()
        return []
    consumed = yield consume_turns(user_id, turn_ids)
    if len(consumed) != len(turn_ids):  # cannot happen under the row locks above
        raise InvalidArgument("buffered turns changed during compaction commit")
    if insert_plan is None:
        return []
    return (yield from insert_plan)


def prepare_turn(
    role: object, content: object, session_id: object, settings: StoreSettings
) -> tuple[str | None, str, str]:
    """Validate one turn before it is written: ``(session_id, role, content)``."""
    return (
        check_session_id(session_id, settings),
        check_role(role),
        check_text(content, settings, what="content"),
    )


__all__ = [
    "ROLES",
    "SOURCE_TURNS_KEY",
    "as_memory_input",
    "check_limit",
    "check_role",
    "check_session_id",
    "check_turn_ids",
    "plan_append",
    "plan_commit",
    "plan_pending",
    "plan_pending_turns",
    "prepare_commit",
    "prepare_turn",
]
