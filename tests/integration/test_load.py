"""Load: writers, readers and an eraser at once on a small pool; every acknowledged write is kept.

Bounded by work, not by time: 4 writers (two of them on the same user) each add
10 batches of 5 memories, 2 readers search 20 times each, and one thread adds,
deletes and clears its own user's memories, all through 3 pooled connections.
At the end the tables must hold exactly what was acknowledged, nothing more.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import create_engine

from memory_pg.store import MemoryStore

WRITERS = ("w0", "w1", "shared", "shared")
BATCHES, BATCH_SIZE = 10, 5
READERS, SEARCHES = 2, 20
CHURN_ROUNDS = 12
JOIN_TIMEOUT_S = 300  # a deadlock shows as a thread still alive, not as a slow test


class _Ledger:
    """What each thread was told was written, and what went wrong."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.acked: dict[str, set[str]] = {}
        self.errors: list[BaseException] = []
        self.operations = 0

    def record(self, user: str, ids: list[str]) -> None:
        with self.lock:
            self.acked.setdefault(user, set()).update(ids)
            self.operations += 1

    def count(self) -> None:
        with self.lock:
            self.operations += 1


def _guard(ledger: _Ledger, work: Callable[[], None]) -> Callable[[], None]:
    def run() -> None:
        try:
            work()
        except BaseException as exc:
            with ledger.lock:
                ledger.errors.append(exc)

    return run


@pytest.fixture
def pooled(db_url: str, embedder: Any):
    engine = create_engine(db_url, pool_size=3, max_overflow=0, pool_timeout=60, pool_pre_ping=True)
    store = MemoryStore(engine=engine, embedder=embedder)
    yield store
    store.close()
    engine.dispose()


def test_concurrent_writes_reads_and_erases_reconcile_exactly(pooled, raw):
    store = pooled
    ledger = _Ledger()
    churn_expected: set[str] = set()

    def writer(number: int, user: str) -> None:
        for batch in range(BATCHES):
            texts = [
                f"{user} writer {number} batch {batch} item {i}: note about topic {i * 7 + batch}"
                for i in range(BATCH_SIZE)
            ]
            ids = store.add_memories(texts, user_id=user)
            assert len(set(ids)) == BATCH_SIZE
            ledger.record(user, ids)

    def reader(number: int) -> None:
        rng = random.Random(number)
        for _ in range(SEARCHES):
            user = rng.choice(WRITERS)
            for result in store.search("note about topic", top_k=10, user_id=user):
                assert result["user_id"] == user
            ledger.count()

    def churn() -> None:
        rng = random.Random(99)
        for round_ in range(CHURN_ROUNDS):
            ids = store.add_memories(
                [f"churn round {round_} item {i}" for i in range(4)], user_id="churn"
            )
            churn_expected.update(ids)
            ledger.count()
            for gone in rng.sample(ids, 2):
                assert store.delete_memory(gone, user_id="churn")
                churn_expected.discard(gone)
                ledger.count()
            if round_ % 4 == 3:
                assert store.clear_user_memory("churn") == len(churn_expected)
                churn_expected.clear()
                ledger.count()

    threads = [
        threading.Thread(target=_guard(ledger, lambda n=n, u=u: writer(n, u)))
        for n, u in enumerate(WRITERS)
    ]
    threads += [
        threading.Thread(target=_guard(ledger, lambda n=n: reader(n))) for n in range(READERS)
    ]
    threads.append(threading.Thread(target=_guard(ledger, churn)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_TIMEOUT_S)
    assert not [t for t in threads if t.is_alive()], "a thread never finished"
    assert ledger.errors == []

    stored: dict[str, set[str]] = {}
    for user, memory_id in raw.execute("SELECT user_id, id::text FROM memory_pg_memories"):
        stored.setdefault(user, set()).add(memory_id)
    expected = {user: ids for user, ids in ledger.acked.items()}
    if churn_expected:
        expected["churn"] = churn_expected
    assert stored == expected
    added = raw.execute(
        "SELECT user_id, count(*) FROM memory_pg_history WHERE event = 'added' GROUP BY user_id"
    ).fetchall()
    assert dict(added) == {user: len(ids) for user, ids in expected.items()}
    assert len(expected["shared"]) == 2 * BATCHES * BATCH_SIZE
