"""One store, a pool too small for its callers: a waiting writer is served before later searchers.

The store's only connection is held by a write that waits on an advisory lock
the test holds; a writer then asks, then searchers that search again as soon as
they are done. Once the lock goes, the writer gets the connection before any
searcher: order, not timing. Past ``pool_timeout_s`` a caller is warned, then
fails with a typed error having written nothing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from memory_pg.config import StoreSettings
from memory_pg.errors import DatabaseUnavailable
from memory_pg.sql.locks import user_lock_key
from tests.conftest import count_rows

TINY = StoreSettings(pool_size=1, max_overflow=0, pool_timeout_s=60)


def _until(condition: Callable[[], bool], limit_s: float = 30.0) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def _lock_user(raw: psycopg.Connection[Any], user: str) -> None:
    raw.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (user_lock_key(user),))


def _unlock_user(raw: psycopg.Connection[Any], user: str) -> None:
    raw.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (user_lock_key(user),))


def _lock_waiters(raw: psycopg.Connection[Any]) -> int:
    row = raw.execute(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
    ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_waiting_writer_gets_the_connection_before_later_searchers(
    make_store: Callable[..., Any], raw: psycopg.Connection[Any]
) -> None:
    store = make_store(settings=TINY)
    store.add_memory("we drink green tea in the morning", user_id="reader")
    store.search("tea", user_id="reader")  # the query, embedded once
    done: list[str] = []
    writer_done = threading.Event()
    _lock_user(raw, "blocked")

    def blocked() -> None:
        store.add_memory("this write waits on the lock", user_id="blocked")
        done.append("blocked")

    def writer() -> None:
        store.add_memory("the writer's memory", user_id="writer")
        done.append("writer")
        writer_done.set()

    def searcher(i: int) -> None:
        # Searches again as soon as one is done (the query is cached: no embedding
        # between two searches), as the threads that starved writers did.
        for _ in range(50):
            store.search("tea", user_id="reader")
            done.append(f"search {i}")
            if writer_done.is_set():
                return

    threads = [threading.Thread(target=blocked)]
    threads[0].start()
    _until(lambda: _lock_waiters(raw) == 1)  # it holds the only connection
    threads.append(threading.Thread(target=writer))
    threads[-1].start()
    _until(lambda: store._gate.waiting() == 1)
    for i in range(3):
        threads.append(threading.Thread(target=searcher, args=(i,)))
        threads[-1].start()
        _until(lambda i=i: store._gate.waiting() == i + 2)
    _unlock_user(raw, "blocked")
    for t in threads:
        t.join(60)
    assert done[:2] == ["blocked", "writer"], done[:6]
    assert store.get(store.list_memories(user_id="writer")[0]["id"], user_id="writer")


def test_an_outgrown_pool_warns_then_fails_typed_writing_nothing(
    make_store: Callable[..., Any],
    raw: psycopg.Connection[Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = make_store(settings=StoreSettings(pool_size=1, max_overflow=0, pool_timeout_s=1.5))
    _lock_user(raw, "blocked")
    holder = threading.Thread(target=lambda: store.add_memory("waits", user_id="blocked"))
    holder.start()
    try:
        _until(lambda: _lock_waiters(raw) == 1)
        with caplog.at_level(logging.WARNING, logger="memory_pg.admission"):
            late = r"no pooled connection free within 1\.5 s"
            with pytest.raises(DatabaseUnavailable, match=late):
                store.add_memory("never written", user_id="late")
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert any("waited" in m and "pool_size" in m for m in warnings), warnings
    finally:
        _unlock_user(raw, "blocked")
        holder.join(60)
    assert count_rows(raw, "memory_pg_memories", "late") == 0
    assert store.add_memory("written now", user_id="late")
