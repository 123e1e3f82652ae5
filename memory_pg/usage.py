"""The use of what searches return, recorded off the search path, in batches.

A search used to count the use of the memories it returned (``access_count``,
``last_accessed_at``) in its own statement: every read was also a write, which a
hot standby refuses, and which cost each search a WAL flush at commit, dead tuples
and lock waits (issue 40). Now a search only reads. Its store notes the ids it
returned here, in the process, and writes them to the primary in small batches:
at most ``StoreSettings.use_flush_s`` seconds later, or sooner when
``StoreSettings.max_pending_uses`` are waiting, and when the store closes (or the
process exits). One statement per user counts them all
(:func:`memory_pg.sql.use.record_uses`); ``last_accessed_at`` only moves forward,
so a batch applied late never dates a use back.

Ranking keeps its meaning: once a batch is written, ``access_count`` and
``last_accessed_at`` are what a search recording its own use would have left. What
a crash can lose is the uses not written yet, never a memory. Memory is bounded: a
log holding ``max_pending_uses`` distinct memories drops further uses (counted in
:attr:`UseLog.dropped`, warned once) until a batch is written.

``use_flush_s=0`` keeps the old way: each search counts its uses in its own
statement, on the primary (such a store reads from no replica).
"""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import Any

from memory_pg.plans.protocol import Plan
from memory_pg.sql.setup import set_tenant
from memory_pg.sql.use import record_uses

logger = logging.getLogger(__name__)

#: user id -> memory id -> [uses, last use]
Batch = dict[str, dict[Any, list[Any]]]


class UseLog:
    """Uses noted by searches and not yet written: thread-safe, at most ``limit``
    distinct memories."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._pending: Batch = {}
        self._size = 0
        self._lock = threading.Lock()
        #: Uses dropped because the log was full (the database was unreachable for long).
        self.dropped = 0

    def __len__(self) -> int:
        return self._size

    def note(self, user_id: str, ids: Iterable[Any], at: datetime | None = None) -> bool:
        """One use of each of ``ids`` (memories of ``user_id``), now. True when the log
        is full enough that a batch should be written at once."""
        when = at or datetime.now(timezone.utc)
        with self._lock:
            mine = self._pending.setdefault(user_id, {})
            for memory_id in ids:
                seen = mine.get(memory_id)
                if seen is not None:
                    seen[0] += 1
                    seen[1] = max(seen[1], when)
                elif self._size < self.limit:
                    mine[memory_id] = [1, when]
                    self._size += 1
                else:
                    self._drop(1)
            if not mine:
                del self._pending[user_id]
            return self._size >= self.limit // 2

    def take(self) -> Batch:
        """Everything noted so far; the log starts empty."""
        with self._lock:
            batch, self._pending, self._size = self._pending, {}, 0
        return batch

    def put_back(self, batch: Batch) -> None:
        """A batch that could not be written, noted again (as room allows)."""
        with self._lock:
            for user_id, uses in batch.items():
                mine = self._pending.setdefault(user_id, {})
                for memory_id, (count, when) in uses.items():
                    seen = mine.get(memory_id)
                    if seen is not None:
                        seen[0] += count
                        seen[1] = max(seen[1], when)
                    elif self._size < self.limit:
                        mine[memory_id] = [count, when]
                        self._size += 1
                    else:
                        self._drop(count)
                if not mine:
                    del self._pending[user_id]

    def _drop(self, count: int) -> None:
        if not self.dropped:
            logger.warning(
                "memory-pg: %d uses of search results are waiting to be written; further "
                "uses are not counted until the database takes them",
                self.limit,
            )
        self.dropped += count


def plan_flush(batch: Batch) -> Plan[int]:
    """Write a batch: per user, the tenant and one counting statement, in one
    transaction (run it with no user). Returns how many memories were counted; the
    memories erased meanwhile, or held by another transaction, go uncounted."""
    counted = 0
    for user_id in sorted(batch):  # one order for every writer: no deadlock between two
        uses = batch[user_id]
        ids = sorted(uses, key=str)
        yield set_tenant(user_id)
        rows = yield record_uses(user_id, ids, [uses[i][0] for i in ids], [uses[i][1] for i in ids])
        counted += len(rows)
    return counted


class Flusher:
    """Writes a sync store's use log every ``every_s`` seconds, from a daemon thread
    started on the first use, and when asked (a full log), closed, or at exit."""

    def __init__(self, flush: Callable[[], Any], every_s: float) -> None:
        self._flush = flush
        self._every = every_s
        self._wake = threading.Event()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def poke(self, now: bool = False) -> None:
        """A use was noted: make sure the thread runs (and, with ``now``, flushes now)."""
        if self._thread is None:
            with self._lock:
                if self._thread is None and not self._stop:
                    self._thread = threading.Thread(
                        target=self._loop, name="memory-pg-uses", daemon=True
                    )
                    self._thread.start()
                    _OPEN.add(self)
        if now:
            self._wake.set()

    def _loop(self) -> None:
        while not self._stop:
            self._wake.wait(self._every)
            self._wake.clear()
            if not self._stop:
                self.run_once()

    def run_once(self) -> None:
        try:
            self._flush()
        except Exception as exc:  # the uses went back into the log; try again later
            logger.warning("memory-pg: could not write the uses of search results: %s", exc)

    def close(self) -> None:
        """Stop the thread and write what is left."""
        self._stop = True
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=self._every + 30)
        _OPEN.discard(self)
        self.run_once()


#: Flushers with a thread, written out at interpreter exit if their store was not closed.
_OPEN: weakref.WeakSet[Flusher] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    for flusher in list(_OPEN):
        flusher.close()


__all__ = ["Batch", "Flusher", "UseLog", "plan_flush"]
