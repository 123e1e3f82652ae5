"""Faults: a database that is down, goes away mid-call, stalls or runs out of connections.

Every fault ends in a typed error (never a hang, never a driver exception), writes
nothing half-way, and the next call after the fault is cleared succeeds by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import create_engine

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.config import StoreSettings
from memory_pg.errors import DatabaseUnavailable, QueryTimeout
from memory_pg.sql import locks
from memory_pg.store import MemoryStore
from tests.integration._security_support import row_counts

#: Generous bound for "it did not hang": far above connect_timeout, far below forever.
NO_HANG_S = 60


def _in_thread(call: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed to the test thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def _wait_for(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + NO_HANG_S
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


@contextlib.contextmanager
def _table_locked(raw: psycopg.Connection[Any]) -> Iterator[None]:
    """Another session holding an exclusive lock on the memories table."""
    info = raw.info
    with psycopg.connect(
        host=info.host, port=info.port, dbname=info.dbname, user=info.user, password=info.password
    ) as locker:
        locker.execute("LOCK TABLE memory_pg_memories IN ACCESS EXCLUSIVE MODE")
        yield
        locker.rollback()


@contextlib.contextmanager
def _user_locked(raw: psycopg.Connection[Any], user_id: str) -> Iterator[None]:
    """Another session holding the user's advisory lock, as an erase of the user does:
    a write of the user waits for it after its first network exchange (which, planning
    the write for the user's size, reads the memories table)."""
    info = raw.info
    with psycopg.connect(
        host=info.host, port=info.port, dbname=info.dbname, user=info.user, password=info.password
    ) as locker:
        key = locks.user_lock_key(user_id)
        locker.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
        yield
        locker.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))


def _store_waiting_on_lock(raw: psycopg.Connection[Any]) -> bool:
    row = raw.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND application_name = 'memory-pg' AND wait_event_type = 'Lock'"
    ).fetchone()
    return bool(row and row[0])


def _terminate_store_backends(raw: psycopg.Connection[Any]) -> int:
    rows = raw.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = current_database() AND application_name = 'memory-pg'"
    ).fetchall()
    return len(rows)


@pytest.fixture
def blackhole() -> Iterator[int]:
    """A TCP port that accepts connections and never says a word."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                accepted.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    server.close()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_no_server_behind_the_socket_is_database_unavailable(tmp_path: Path, embedder):
    url = f"postgresql+psycopg://postgres@/memory_pg?host={tmp_path}"
    with pytest.raises(DatabaseUnavailable):
        MemoryStore(url, embedder=embedder)


def test_a_closed_port_is_database_unavailable(embedder):
    url = f"postgresql+psycopg://postgres@127.0.0.1:{_closed_port()}/memory_pg"
    with pytest.raises(DatabaseUnavailable):
        MemoryStore(url, embedder=embedder)


def test_a_server_that_never_answers_is_given_up_on(blackhole, embedder):
    url = f"postgresql+psycopg://postgres@127.0.0.1:{blackhole}/memory_pg"
    settings = StoreSettings(connect_timeout_s=2)
    thread, outcome = _in_thread(lambda: MemoryStore(url, embedder=embedder, settings=settings))
    thread.join(NO_HANG_S)
    assert not thread.is_alive(), "connect_timeout did not bound the wait"
    assert isinstance(outcome.get("error"), DatabaseUnavailable)


def test_the_async_store_reports_a_missing_server_the_same_way(tmp_path: Path, embedder):
    url = f"postgresql+psycopg://postgres@/memory_pg?host={tmp_path}"

    async def open_it() -> None:
        async with AsyncMemoryStore(url, embedder=embedder) as store:
            await store.search("anything", user_id="alice")

    with pytest.raises(DatabaseUnavailable):
        asyncio.run(open_it())


def test_a_backend_killed_mid_write_is_a_typed_error_and_the_next_call_works(store, raw):
    store.add_memory("before the fault")
    before = row_counts(raw)
    with _user_locked(raw, "alice"):
        thread, outcome = _in_thread(lambda: store.add_memory("written during the fault"))
        _wait_for(lambda: _store_waiting_on_lock(raw), "the write to wait on the lock")
        assert _terminate_store_backends(raw) >= 1
        thread.join(NO_HANG_S)
    assert isinstance(outcome.get("error"), DatabaseUnavailable)
    assert row_counts(raw) == before
    store.add_memory("after the fault")
    texts = sorted(m["text"] for m in store.list_memories())
    assert texts == ["after the fault", "before the fault"]


def test_idle_connections_killed_between_calls_go_unnoticed(store, raw):
    store.add_memory("kept")
    for _ in range(3):
        _terminate_store_backends(raw)
        assert store.search("kept", top_k=1)[0]["text"] == "kept"


def test_a_statement_past_its_timeout_is_query_timeout(make_store, raw):
    quick = make_store(user_id="alice", settings=StoreSettings(statement_timeout_ms=300))
    quick.add_memory("already there")
    before = row_counts(raw)
    with _table_locked(raw):
        with pytest.raises(QueryTimeout):
            quick.add_memory("waits behind a lock")
        with pytest.raises(QueryTimeout):
            quick.search("already there")
    assert row_counts(raw) == before
    assert quick.search("already there", top_k=1)[0]["text"] == "already there"


def test_an_exhausted_pool_is_database_unavailable_not_a_hang(db_url, embedder, raw):
    engine = create_engine(db_url, pool_size=1, max_overflow=0, pool_timeout=1)
    try:
        store = MemoryStore(engine=engine, user_id="alice", embedder=embedder)
        with engine.connect():  # the only connection, held elsewhere
            thread, outcome = _in_thread(lambda: store.search("anything"))
            thread.join(NO_HANG_S)
            assert isinstance(outcome.get("error"), DatabaseUnavailable)
        store.add_memory("the pool is free again")
        assert row_counts(raw)["memory_pg_memories"] == 1
    finally:
        engine.dispose()
