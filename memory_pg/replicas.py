"""Reads on PostgreSQL streaming-replication hot standbys, with read-your-writes.

A store given ``read_urls`` sends its reads (search, get, list, history, stats,
export, related, entity, entities, graph) to those replicas in turn, and its writes,
erases and jobs to the primary. A search only reads (:mod:`memory_pg.usage`), so
every read can run on a standby.

Read-your-writes: after a write of a user commits, the store asks the primary for
its WAL position (``pg_current_wal_lsn()``: one more statement per write, only where
replicas are configured). A later read of that user goes to a replica that has
replayed that far: one whose last replay position seen is enough, else one that
catches up within ``StoreSettings.replica_wait_ms``; else the read runs on the
primary. What another process wrote is read as the replica has it (as for any
reader of a standby).

A replica that cannot be reached, or that answers with an error, is left alone for
``replica_retry_s`` with a warning, and the read runs on the next one or the
primary; one further behind than ``replica_max_lag_s`` is skipped with a warning
until it catches up. Row-level security and roles are the primary's on a physical
replica: the tenant is set per transaction there as on the primary.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, create_engine, text
from sqlalchemy.ext.asyncio import create_async_engine

from memory_pg import exchange, opening, pooling
from memory_pg.admission import Gate
from memory_pg.config import StoreSettings
from memory_pg.errors import DatabaseError, DatabaseUnavailable, MemoryPgError
from memory_pg.plans.protocol import translate_errors
from memory_pg.server import sqlalchemy_url

logger = logging.getLogger(__name__)

#: The primary's WAL position after a write committed, in bytes.
WAL_POSITION = text("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn AS lsn")

#: Where a replica stands: still a standby, how far it has replayed, how far behind
#: (0 when it has replayed all it received).
REPLICA_STATE = text(
    "SELECT pg_is_in_recovery() AS standby,"
    " coalesce(pg_last_wal_replay_lsn() - '0/0'::pg_lsn, 0) AS replayed,"
    " CASE WHEN NOT pg_is_in_recovery() OR pg_last_wal_receive_lsn() IS NULL"
    " OR pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0"
    " ELSE extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())"
    " END AS lag_s"
)

#: A replica's state is read again at most this often, unless a read needs more.
CHECK_EVERY_S = 1.0
#: Between two looks at a replica that is catching up with a write.
POLL_S = 0.01
#: Users whose last write a store remembers (the oldest goes first).
WRITERS_KEPT = 10_000

#: SQLSTATE serialization_failure: a standby cancelled a query that conflicted with
#: the WAL it replays; the read runs again on the primary.
RECOVERY_CONFLICT = "40001"


@dataclass
class Replica:
    """One read URL, its pool, and what was last seen of it."""

    name: str  # the URL, password masked
    engine: Any  # Engine or AsyncEngine
    pooler: str = "auto"
    gate: Gate | None = None
    standby: bool = True
    replayed: int = 0
    lag_s: float = 0.0
    checked_at: float = float("-inf")
    down_until: float = 0.0
    warned: str = ""

    def place(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext() if self.gate is None else self.gate.place()


@dataclass
class Reads:
    """A store's replicas and the writes its reads must see."""

    replicas: list[Replica]
    settings: StoreSettings
    _written: collections.OrderedDict[str, int] = field(default_factory=collections.OrderedDict)
    _turn: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- what a read must see ------------------------------------------------------------

    def wrote(self, user_id: str, lsn: int) -> None:
        """A write of ``user_id`` committed at ``lsn`` (a WAL position, in bytes)."""
        with self._lock:
            self._written[user_id] = max(lsn, self._written.pop(user_id, 0))
            if len(self._written) > WRITERS_KEPT:
                self._written.popitem(last=False)

    def needed(self, user_id: str | None) -> int:
        """The WAL position a read of ``user_id`` must find replayed."""
        return self._written.get(user_id, 0) if user_id else 0

    # -- which replica ---------------------------------------------------------------------

    def order(self) -> list[Replica]:
        """The replicas not left alone, starting with the next in turn."""
        now = time.monotonic()
        with self._lock:
            self._turn = (self._turn + 1) % len(self.replicas)
            turn = self._turn
        ring = self.replicas[turn:] + self.replicas[:turn]
        return [r for r in ring if r.down_until <= now]

    def ready(self, replica: Replica, need: int) -> bool:
        """Known, from a recent look, to serve a read that must see ``need``."""
        fresh = time.monotonic() - replica.checked_at < CHECK_EVERY_S
        return fresh and self._fits(replica, need)

    def _fits(self, replica: Replica, need: int) -> bool:
        caught_up = not replica.standby or replica.replayed >= need
        return caught_up and replica.lag_s <= self.settings.replica_max_lag_s

    def saw(self, replica: Replica, row: Any) -> None:
        """What a look at ``replica`` found (a row of :data:`REPLICA_STATE`)."""
        replica.standby = bool(row.standby)
        replica.replayed = int(row.replayed or 0)
        replica.lag_s = float(row.lag_s or 0)
        replica.checked_at = time.monotonic()
        if replica.lag_s > self.settings.replica_max_lag_s:
            self._warn(replica, f"is {replica.lag_s:.1f} s behind its primary")
        elif replica.warned:
            logger.warning("memory-pg: replica %s serves reads again", replica.name)
            replica.warned = ""

    def next_step(self, replica: Replica, need: int, deadline: float) -> str:
        """After a look: ``use`` it, ``wait`` for it to replay more, or ``skip`` it."""
        if self._fits(replica, need):
            return "use"
        if replica.lag_s > self.settings.replica_max_lag_s or time.monotonic() >= deadline:
            return "skip"
        return "wait"

    def failed(self, replica: Replica, exc: BaseException) -> None:
        """``replica`` could not serve a read: leave it alone for a while."""
        replica.down_until = time.monotonic() + self.settings.replica_retry_s
        replica.checked_at = float("-inf")
        self._warn(replica, f"failed ({exc}); reads go elsewhere")

    def _warn(self, replica: Replica, what: str) -> None:
        if replica.warned != what.split(" ")[0]:
            logger.warning("memory-pg: replica %s %s", replica.name, what)
            replica.warned = what.split(" ")[0]

    def deadline(self) -> float:
        return time.monotonic() + self.settings.replica_wait_ms / 1000


def retry_on_primary(exc: MemoryPgError) -> bool:
    """A read a replica failed that the primary may serve: the replica is gone, or
    it cancelled the read for a conflict with the WAL it replays."""
    if isinstance(exc, DatabaseUnavailable):
        return True
    cause = getattr(exc.__cause__, "orig", None)
    return isinstance(exc, DatabaseError) and getattr(cause, "sqlstate", "") == RECOVERY_CONFLICT


def _replica_url(url: str, settings: StoreSettings) -> tuple[str, str]:
    """A read URL (checked: :func:`memory_pg.opening.read_urls`) as a SQLAlchemy URL,
    and the pooler in front of it."""
    found, from_url = pooling.split_url(url)
    return sqlalchemy_url(found), pooling.resolve(from_url, settings.pooler)


def open_sync(urls: list[str] | tuple[str, ...], settings: StoreSettings) -> Reads | None:
    """The replicas of a :class:`~memory_pg.store.MemoryStore` (None: no read URL)."""
    replicas = []
    for url in urls:
        found, pooler = _replica_url(url, settings)
        engine = create_engine(found, **opening.engine_options(settings, pooler))
        pooling.watch(engine, pooler)
        exchange.watch_liveness(engine)
        gate = Gate(opening.gate_places(settings), settings.pool_timeout_s)
        replicas.append(Replica(opening.redact_url(found), engine, pooler, gate))
    return Reads(replicas, settings) if replicas else None


def open_async(urls: list[str] | tuple[str, ...], settings: StoreSettings) -> Reads | None:
    """The replicas of an :class:`~memory_pg.async_store.AsyncMemoryStore`."""
    replicas = []
    for url in urls:
        found, pooler = _replica_url(url, settings)
        engine = create_async_engine(found, **opening.engine_options(settings, pooler))
        pooling.watch(engine.sync_engine, pooler)
        exchange.watch_liveness(engine.sync_engine)
        replicas.append(Replica(opening.redact_url(found), engine, pooler))
    return Reads(replicas, settings) if replicas else None


def pick(reads: Reads, user_id: str | None) -> Replica | None:
    """The replica a read of ``user_id`` runs on (None: the primary)."""
    need = reads.needed(user_id)
    deadline = reads.deadline()
    for replica in reads.order():
        if reads.ready(replica, need):
            return replica
        try:
            while True:
                with translate_errors(), replica.engine.connect() as conn:
                    reads.saw(replica, conn.execute(REPLICA_STATE).one())
                step = reads.next_step(replica, need, deadline)
                if step == "use":
                    return replica
                if step == "skip":
                    break
                time.sleep(POLL_S)
        except MemoryPgError as exc:
            reads.failed(replica, exc)
    return None


async def pick_async(reads: Reads, user_id: str | None) -> Replica | None:
    """:func:`pick` for an async store."""
    need = reads.needed(user_id)
    deadline = reads.deadline()
    for replica in reads.order():
        if reads.ready(replica, need):
            return replica
        try:
            while True:
                with translate_errors():
                    async with replica.engine.connect() as conn:
                        reads.saw(replica, (await conn.execute(REPLICA_STATE)).one())
                step = reads.next_step(replica, need, deadline)
                if step == "use":
                    return replica
                if step == "skip":
                    break
                await asyncio.sleep(POLL_S)
        except MemoryPgError as exc:
            reads.failed(replica, exc)
    return None


def wal_position(conn: Connection) -> int:
    """The primary's WAL position now (after a write committed)."""
    return int(conn.execute(WAL_POSITION).scalar_one())


def close_sync(reads: Reads | None) -> None:
    if reads is not None:
        for replica in reads.replicas:
            replica.engine.dispose()


async def close_async(reads: Reads | None) -> None:
    if reads is not None:
        for replica in reads.replicas:
            await replica.engine.dispose()


__all__ = [
    "REPLICA_STATE",
    "Reads",
    "Replica",
    "close_async",
    "close_sync",
    "open_async",
    "open_sync",
    "pick",
    "pick_async",
    "retry_on_primary",
    "wal_position",
]
