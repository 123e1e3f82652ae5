"""Reading memories again: the attributes each one states and the words it is found by
(issue 35).

A memory's ``attributes`` (age, occupation, home ...: :mod:`memory_pg.text.attributes`)
are read from its text when it is written, for the search's attribute part, and so
are the words of its full-text index (``search_tsv``: :func:`memory_pg._segment.index_words`).
Rows written before migration 0016 have no attributes (NULL): they rank as before,
without that part. Chinese rows written before the full-text index held sounds
(pinyin) are not met by a question with a typo or a word typed in pinyin. A newer
memory-pg may also read a text differently. This job reads them again:

- by default only the rows that have no attributes; ``every=True`` (``--all``)
  every row, writing only those whose attributes or full-text words change (run it
  once after an upgrade that indexes texts differently, as the one that added
  sounds);
- in batches, each its own short transaction, ``FOR UPDATE SKIP LOCKED`` (a row a
  writer holds is left for the next run), in id order, so a run that stops at
  ``max_runtime_s`` is continued by the next;
- a session advisory lock makes a second run started at the same time (cron on
  several hosts) exit at once with ``skipped: true``;
- ``dry_run`` reads and counts, writes nothing.

Run it once after upgrading to migration 0016: ``memory-pg reanalyze``; once with
``--all`` after upgrading to the release that indexes Chinese sounds.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import (
    ARRAY,
    Engine,
    Select,
    String,
    Text,
    Update,
    bindparam,
    func,
    or_,
    select,
)
from sqlalchemy import update as sa_update
from sqlalchemy.dialects.postgresql import UUID

from memory_pg import pooling
from memory_pg._segment import index_words
from memory_pg.errors import InvalidArgument
from memory_pg.roles import require_every_user
from memory_pg.sql.locks import session_unlock, try_session_lock
from memory_pg.sql.memories import TSV_INPUTS, attributes_expr, attributes_text, tsvector_expr
from memory_pg.tables import memories as m
from memory_pg.text.attributes import stated

logger = logging.getLogger(__name__)

REANALYZE_LOCK = "memory_pg:job:reanalyze"
_FIRST_ID = uuid.UUID(int=0)


@dataclass
class ReanalyzeReport:
    """What one ``reanalyze`` run did (or, dry, would do).

    Attributes:
        dry_run: nothing was written; ``updated`` is what would be.
        skipped: another run held the lock; this one did nothing.
        every: every row was read, not only those with no attributes.
        read: memories read.
        updated: memories whose attributes or full-text words were written (or would
            be, dry).
        by_attribute: how many of the updated memories state each attribute.
        batches: transactions run.
        complete: False when ``max_runtime_s`` stopped the run early.
        duration_s: wall-clock seconds.
    """

    dry_run: bool
    every: bool
    skipped: bool = False
    read: int = 0
    updated: int = 0
    by_attribute: dict[str, int] = field(default_factory=dict)
    batches: int = 0
    complete: bool = True
    duration_s: float = 0.0
    user_id: str | None = None
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict."""
        return asdict(self)


def _batch(
    after: uuid.UUID, size: int, every: bool, user_id: str | None, lock: bool
) -> Select[Any]:
    stmt = (
        select(m.c.id, m.c.user_id, m.c.text, m.c.context, m.c.attributes)
        .where(m.c.id > after)
        .order_by(m.c.id)
        .limit(size)
    )
    if not every:
        stmt = stmt.where(m.c.attributes.is_(None))
    if user_id is not None:
        stmt = stmt.where(m.c.user_id == user_id)
    return stmt.with_for_update(skip_locked=True) if lock else stmt


def _write(
    ids: list[uuid.UUID],
    users: list[str],
    joined: list[str],
    words: list[tuple[str, ...]],
    dry_run: bool,
) -> Update | Select[Any]:
    """Each row's attributes from :func:`attributes_text`'s form and its full-text
    index from :func:`index_words`' words, where either changes (``dry_run``: the ids
    of the rows where either would)."""
    columns: dict[str, tuple[list[Any], Any]] = {
        "ids": (ids, UUID(as_uuid=True)),
        "users": (users, String),
        "joined": (joined, Text),
        **{key: ([w[i] for w in words], Text) for i, key in enumerate(TSV_INPUTS)},
    }
    new = (
        func.unnest(
            *(bindparam(name, value, type_=ARRAY(kind)) for name, (value, kind) in columns.items())
        )
        .table_valued("id", "user_id", "joined", *TSV_INPUTS)
        .render_derived(name="new")
    )
    value = attributes_expr(new.c.joined)
    tsv = tsvector_expr({key: new.c[key] for key in TSV_INPUTS})
    where = (
        m.c.id == new.c.id,
        m.c.user_id == new.c.user_id,
        or_(m.c.attributes.is_distinct_from(value), m.c.search_tsv != tsv),
    )
    if dry_run:
        return select(m.c.id).where(*where)
    return sa_update(m).where(*where).values(attributes=value, search_tsv=tsv).returning(m.c.id)


def reanalyze(
    engine: Engine,
    *,
    every: bool = False,
    dry_run: bool = False,
    batch_size: int = 500,
    max_runtime_s: float | None = None,
    user_id: str | None = None,
) -> ReanalyzeReport:
    """Read the attributes of memories again and store them (see the module).

    Args:
        engine: the database; its role must see every user's rows (a member of
            ``memory_pg_maintenance``, a superuser or ``BYPASSRLS``), else
            :class:`~memory_pg.errors.RoleRequired` before anything is done.
        every: read every memory, not only those with no attributes.
        dry_run: count what would change, write nothing.
        batch_size: rows per transaction.
        max_runtime_s: start no new batch after this many seconds (``complete=False``).
        user_id: only this user's memories.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InvalidArgument("batch_size must be a whole number of at least 1")
    pooling.require_session(engine, "reanalyze")
    report = ReanalyzeReport(dry_run=dry_run, every=every, user_id=user_id)
    started = time.monotonic()
    found: Counter[str] = Counter()
    with engine.connect() as conn:
        require_every_user(conn, "reanalyze")
        locked = bool(conn.execute(try_session_lock(REANALYZE_LOCK)).scalar())
        conn.commit()
        if not locked:
            report.skipped = True
            report.message = "another reanalyze run holds the lock; nothing done"
            return _finish(report, started)
        try:
            after = _FIRST_ID
            while True:
                if max_runtime_s is not None and time.monotonic() - started >= max_runtime_s:
                    report.complete = False
                    report.message = "stopped at --max-runtime; run again to continue"
                    break
                with conn.begin():
                    rows = conn.execute(
                        _batch(after, batch_size, every, user_id, lock=not dry_run)
                    ).all()
                    if not rows:
                        break
                    after = rows[-1].id
                    joined = [attributes_text(stated(r.text)) for r in rows]
                    written = conn.execute(
                        _write(
                            [r.id for r in rows],
                            [r.user_id for r in rows],
                            joined,
                            [index_words(r.text, r.context) for r in rows],
                            dry_run,
                        )
                    ).all()
                    done = {w.id for w in written}
                report.batches += 1
                report.read += len(rows)
                report.updated += len(done)
                found.update(
                    a
                    for r, j in zip(rows, joined, strict=True)
                    if r.id in done and (r.attributes is None or " ".join(r.attributes) != j)
                    for a in j.split()
                )
        finally:
            conn.execute(session_unlock(REANALYZE_LOCK))
            conn.commit()
    report.by_attribute = dict(found.most_common())
    logger.info("reanalyze: %d of %d memories read again changed", report.updated, report.read)
    return _finish(report, started)


def _finish(report: ReanalyzeReport, started: float) -> ReanalyzeReport:
    report.duration_s = round(time.monotonic() - started, 3)
    return report


__all__ = ["REANALYZE_LOCK", "ReanalyzeReport", "reanalyze"]
