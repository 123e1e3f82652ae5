"""Advisory locks: what serialises writes of one user and type, erases, and cron jobs."""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable

from sqlalchemy import (
    String,
    TextClause,
    bindparam,
    text,
)

logger = logging.getLogger(__name__)


# -- locks --------------------------------------------------------------------------


def write_lock_key(user_id: str, memory_type: str) -> str:
    """The advisory-lock key serialising writes of one user and memory type.

    The key is (user, type) rather than (user, type, topic): a memory with no topic
    key can replace one that has a key (detected by similarity), so two writers of
    one type must see each other's rows whatever their topics.
    """
    return "memory_pg:write:" + user_id + "\x1f" + memory_type


def user_lock_key(user_id: str) -> str:
    """The advisory-lock key of one user: every write holds it shared, an erase alone.

    An erase deletes memories, buffer and history in three statements; a write that
    committed between them would leave a memory whose history was erased (or a
    history row of a user who asked to be forgotten). Writes of one user still run
    side by side; an erase waits for them, and they wait for it.
    """
    return "memory_pg:user:" + user_id


def xact_lock_shared(key: str) -> TextClause:
    """Wait for the shared transaction-level advisory lock of ``key`` (released at commit)."""
    return text("SELECT pg_advisory_xact_lock_shared(hashtextextended(:key, 0))").bindparams(
        key=key
    )


def write_locks(user_id: str, memory_types: Iterable[str]) -> list[TextClause]:
    """The locks a write of ``memory_types`` takes, in the one order every writer uses:
    the user's (shared, against an erase), then one per type (against each other).

    One statement takes them all, left to right as PostgreSQL evaluates a select list:
    one round trip where there was one per lock (a list, for the callers that yield
    each statement of it)."""
    keys = sorted({write_lock_key(user_id, t) for t in memory_types})
    values = {"user": user_lock_key(user_id), **{f"k{i}": k for i, k in enumerate(keys)}}
    return [_write_locks(len(keys)).bindparams(**values)]


@functools.cache
def _write_locks(types: int) -> TextClause:
    names = [f"k{i}" for i in range(types)]
    sql = "SELECT pg_advisory_xact_lock_shared(hashtextextended(:user, 0))" + "".join(
        f", pg_advisory_xact_lock(hashtextextended(:{name}, 0))" for name in names
    )
    return text(sql).bindparams(*(bindparam(name, type_=String) for name in ["user", *names]))


def xact_lock(key: str) -> TextClause:
    """Wait for the transaction-level advisory lock of ``key`` (released at commit)."""
    return text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))").bindparams(key=key)


def try_session_lock(key: str) -> TextClause:
    """Try the session-level advisory lock of ``key``; returns ``locked``."""
    return text("SELECT pg_try_advisory_lock(hashtextextended(:key, 0)) AS locked").bindparams(
        key=key
    )


def session_unlock(key: str) -> TextClause:
    """Release the session-level advisory lock of ``key``."""
    return text("SELECT pg_advisory_unlock(hashtextextended(:key, 0))").bindparams(key=key)
