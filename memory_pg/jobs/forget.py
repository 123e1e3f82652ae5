"""The forget job: expired, long-superseded and stale memories removed in small batches.

Each batch is its own transaction, with ``FOR UPDATE SKIP LOCKED``; a session
advisory lock makes a second concurrent run (cron on several hosts) exit at once.
An expired memory leaves one ``expired`` history event without its text, so "why
was this forgotten" has an answer; erasing (``delete_memory``,
``clear_user_memory``) removes history too.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
)

from memory_pg.config import ForgetPolicy
from memory_pg.roles import require_every_user
from memory_pg.sql.forget import (
    FORGET_LOCK,
    FORGET_REASONS,
    forget_batch,
    forget_counts,
    purge_turns_batch,
    purge_turns_count,
)
from memory_pg.sql.locks import session_unlock, try_session_lock

logger = logging.getLogger(__name__)


@dataclass
class ForgetReport:
    """What one ``forget`` run did (or, dry, would do).

    Attributes:
        run_id: this run's id, also in each ``expired`` history event.
        dry_run: nothing was deleted; counts are what would be.
        skipped: another run held the lock; this one did nothing.
        deleted: memories removed (or removable, dry).
        by_reason: counts per reason (``expired``, ``superseded``, ``stale``).
        by_type: counts per memory type.
        turns_deleted: dialogue turns removed from the buffer (or removable, dry):
            those compacted into memories more than
            ``policy.consumed_turn_retention_days`` ago.
        batches: delete transactions run.
        complete: False when ``max_runtime_s`` stopped the run early.
        duration_s: wall-clock seconds.
    """

    run_id: str
    dry_run: bool
    skipped: bool = False
    deleted: int = 0
    by_reason: dict[str, int] = field(default_factory=dict)
    by_type: dict[str, int] = field(default_factory=dict)
    turns_deleted: int = 0
    batches: int = 0
    complete: bool = True
    duration_s: float = 0.0
    user_id: str | None = None
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict."""
        return asdict(self)

    def _count(self, reason: str, memory_type: str, n: int) -> None:
        self.deleted += n
        self.by_reason[reason] = self.by_reason.get(reason, 0) + n
        self.by_type[memory_type] = self.by_type.get(memory_type, 0) + n


def forget(
    engine: Engine,
    policy: ForgetPolicy | None = None,
    *,
    dry_run: bool = False,
    batch_size: int = 1000,
    max_runtime_s: float | None = None,
    user_id: str | None = None,
    pause_s: float = 0.0,
) -> ForgetReport:
    """Remove expired, long-superseded and stale memories in small batches.

    Safe to start from cron on several hosts at once: a run that cannot take the
    session advisory lock returns at once with ``skipped=True``. Each batch is
    its own short transaction; running it again removes nothing more (idempotent).

    Args:
        engine: the database; its role must see every user's rows, even for one
            user (a member of ``memory_pg_maintenance``, a superuser or ``BYPASSRLS``),
            else :class:`~memory_pg.errors.RoleRequired` before anything is done.
        policy: what counts as forgettable (default :class:`ForgetPolicy`).
        dry_run: count what would go, delete nothing.
        batch_size: rows per delete transaction.
        max_runtime_s: start no new batch after this many seconds (``complete=False``).
        user_id: only this user's memories.
        pause_s: sleep between batches, leaving the CPU and I/O to searches on a
            busy server (the run takes longer, searches slow down less).
    """
    policy = policy or ForgetPolicy()
    from memory_pg.errors import InvalidArgument

    if batch_size < 1:
        raise InvalidArgument("batch_size must be at least 1")
    days = policy.consumed_turn_retention_days
    if days is not None and days < 0:
        raise InvalidArgument(
            f"consumed_turn_retention_days must be 0 or more (None keeps the turns), not {days}"
        )
    # A negative age would forget what was written (or replaced) a moment ago.
    ages = {
        "max_age_days": policy.max_age_days,
        "superseded_retention_days": policy.superseded_retention_days,
        **{f"max_age_days_by_type[{t!r}]": d for t, d in policy.max_age_days_by_type.items()},
    }
    for name, value in ages.items():
        if value is not None and (isinstance(value, bool) or not value >= 0):
            raise InvalidArgument(f"{name} must be 0 or more days, not {value!r}")
    if isinstance(policy.importance_below, bool) or not 0 <= policy.importance_below <= 1:
        raise InvalidArgument(
            f"importance_below must lie between 0 and 1, not {policy.importance_below!r}"
        )
    from memory_pg import pooling

    pooling.require_session(engine, "forget")
    report = ForgetReport(run_id=str(uuid.uuid4()), dry_run=dry_run, user_id=user_id)
    started = time.monotonic()
    with engine.connect() as conn:
        # Its statements set no tenant: one user or all, only such a role sees the rows.
        require_every_user(conn, "forget")
        locked = bool(conn.execute(try_session_lock(FORGET_LOCK)).scalar())
        conn.commit()
        if not locked:
            report.skipped = True
            report.message = "another forget run holds the lock; nothing done"
            logger.info("forget: another run holds the lock, exiting")
            return _finish(report, started)
        try:
            if dry_run:
                for reason in FORGET_REASONS:
                    with conn.begin():
                        for row in conn.execute(forget_counts(reason, policy, user_id)):
                            report._count(reason, row.memory_type, int(row.n))
                if policy.consumed_turn_retention_days is not None:
                    with conn.begin():
                        count = conn.execute(purge_turns_count(policy, user_id)).scalar()
                        report.turns_deleted = int(count or 0)
            else:
                pace = _Pace(batch_size, max_runtime_s, started, pause_s)
                if _forget_batches(conn, policy, report, pace):
                    _purge_turns(conn, policy, report, pace)
        finally:
            conn.execute(session_unlock(FORGET_LOCK))
            conn.commit()
    logger.info(
        "forget: %d memories and %d compacted turns removed in %d batches",
        report.deleted,
        report.turns_deleted,
        report.batches,
    )
    return _finish(report, started)


@dataclass(frozen=True)
class _Pace:
    """How a run spaces its delete transactions."""

    batch_size: int
    max_runtime_s: float | None
    started: float
    pause_s: float


def _forget_batches(
    conn: Connection, policy: ForgetPolicy, report: ForgetReport, pace: _Pace
) -> bool:
    """Each reason's memories in batches; False when the run's time ran out."""
    for reason in FORGET_REASONS:

        def batch(reason: str = reason) -> Sequence[Any]:
            stmt = forget_batch(reason, policy, pace.batch_size, report.run_id, report.user_id)
            rows = conn.execute(stmt).all()
            for row in rows:
                report._count(reason, row.memory_type, 1)
            return rows

        if not _in_batches(conn, report, pace, batch):
            return False
    return True


def _purge_turns(conn: Connection, policy: ForgetPolicy, report: ForgetReport, pace: _Pace) -> None:
    """Compacted turns past their retention, in batches (after the memories)."""
    if policy.consumed_turn_retention_days is None:
        return
    after: tuple[str, int] | None = None

    def batch() -> Sequence[Any]:
        nonlocal after
        gone = conn.execute(purge_turns_batch(policy, pace.batch_size, report.user_id, after)).all()
        report.turns_deleted += len(gone)
        if gone:  # in key order: the next batch starts after the last
            after = (gone[-1].user_id, gone[-1].id)
        return gone

    _in_batches(conn, report, pace, batch)


def _in_batches(
    conn: Connection, report: ForgetReport, pace: _Pace, batch: Callable[[], Sequence[Any]]
) -> bool:
    """``batch()`` in a transaction of its own until it deletes less than a batch;
    False when ``pace.max_runtime_s`` ran out first (the report says so)."""
    limit = pace.max_runtime_s
    while limit is None or time.monotonic() - pace.started < limit:
        with conn.begin():
            rows = batch()
        report.batches += 1
        if len(rows) < pace.batch_size:
            return True
        if pace.pause_s > 0:
            time.sleep(pace.pause_s)
    report.complete = False
    report.message = "stopped at --max-runtime; run again to continue"
    return False


def _finish(report: ForgetReport, started: float) -> ForgetReport:
    report.duration_s = round(time.monotonic() - started, 3)
    return report
