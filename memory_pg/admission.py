"""Admission to a store's pool: calls take its connections in the order they asked.

SQLAlchemy's pool hands a returned connection to whoever asks next, and a thread
that has just returned one asks again at once: it wins the race against a thread
that has been waiting. Under a mix of fast searches and slower writes on one
:class:`~memory_pg.store.MemoryStore`, the searching threads kept every
connection and the writers waited until the pool's timeout (issue 38: 96 write
calls beside 51,476 searches in 90 s, 46 of them failed with
``DatabaseUnavailable``). A gate with as many places as the pool has connections
stands in front of it: a call that finds it full waits in line, and a returned
place goes to the first in line, never to a later arrival. Holding a place, a
call finds a connection free in the pool (unless code outside the store uses the
same engine).

A call that has waited :func:`warn_after` seconds is logged at WARNING (at most
once a minute per store) before any call fails: the store has more callers than
connections for its load. Past ``pool_timeout_s`` the call fails with
:class:`~memory_pg.errors.DatabaseUnavailable`, having written nothing.

Only engines a :class:`~memory_pg.store.MemoryStore` opens have a gate: a host
application's engine is shared with its own code, whose connections the store
cannot count. :class:`~memory_pg.async_store.AsyncMemoryStore` has none: there,
tasks that wait for asyncio's pool queue were not overtaken for long (the HTTP
service with 32 clients: 0 errors, write p99 0.5 s), and handing each returned
connection to the first in line left it idle until that task's turn in the
event loop, which cost a quarter of the service's throughput
(``benchmarks/service_load.py``, 32 clients: 126 against 168 operations a second).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import threading
import time
from collections.abc import Iterator

from memory_pg.errors import DatabaseUnavailable

logger = logging.getLogger(__name__)

__all__ = ["Gate", "warn_after"]

#: At most one warning per this many seconds per gate.
WARN_EVERY_S = 60.0


def warn_after(timeout_s: float) -> float:
    """Seconds of waiting after which a call is worth a warning (before it fails)."""
    return min(1.0, timeout_s / 2)


class Gate:
    """First come, first served places for threads (see the module's docstring)."""

    def __init__(self, capacity: int, timeout_s: float) -> None:
        if capacity < 1:
            raise ValueError("a gate needs at least one place")
        self.capacity = capacity
        self.timeout_s = timeout_s
        self.free = capacity
        self._warned_at: float | None = None
        self._lock = threading.Lock()
        self._line: collections.deque[threading.Event] = collections.deque()

    @contextlib.contextmanager
    def place(self) -> Iterator[None]:
        """Hold a place while the block runs.

        Raises:
            DatabaseUnavailable: none came free within the timeout.
        """
        self._acquire()
        try:
            yield
        finally:
            self._release()

    def waiting(self) -> int:
        """Calls in line now."""
        return len(self._line)

    def _acquire(self) -> None:
        with self._lock:
            if self.free > 0 and not self._line:
                self.free -= 1
                return
            turn = threading.Event()
            self._line.append(turn)
        started = time.monotonic()
        first = warn_after(self.timeout_s)
        if not turn.wait(first):
            self._warn(time.monotonic() - started, len(self._line))
            turn.wait(max(0.0, self.timeout_s - first))
        with self._lock:
            if turn.is_set():  # given a place, perhaps just as the wait ended
                return
            self._line.remove(turn)
        raise self._timed_out()

    def _release(self) -> None:
        with self._lock:
            if self._line:
                # Handed over, not put back: a later arrival cannot take it first.
                self._line.popleft().set()
            else:
                self.free += 1

    def _warn(self, waited_s: float, waiting: int) -> None:
        now = time.monotonic()
        if self._warned_at is not None and now - self._warned_at < WARN_EVERY_S:
            return
        self._warned_at = now
        logger.warning(
            "memory-pg: a call waited %.1f s for one of the pool's %d connections "
            "(%d calls waiting); at %.0f s a call fails with DatabaseUnavailable: make fewer "
            "calls at once, or raise StoreSettings(pool_size=..., max_overflow=...) "
            "within PostgreSQL's max_connections",
            waited_s,
            self.capacity,
            waiting,
            self.timeout_s,
        )

    def _timed_out(self) -> DatabaseUnavailable:
        return DatabaseUnavailable(
            f"no pooled connection free within {self.timeout_s:g} s: all {self.capacity} "
            "are in use by other calls of this store; make fewer calls at once, or raise "
            "StoreSettings(pool_size=..., max_overflow=..., pool_timeout_s=...)"
        )
