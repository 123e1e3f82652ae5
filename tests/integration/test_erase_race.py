"""An erase and a write of the same user never interleave: no memory outlives its history.

An erase deletes memories, buffer and history in three statements. A write that
commits between the first and the last left its memory with no history row (or
history rows of a user who asked to be forgotten).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from sqlalchemy import create_engine

from tests.conftest import count_rows


def _wait_until_blocked(raw: psycopg.Connection[Any], deadline: int = 2000) -> None:
    """Until another backend of this database waits on a lock (the erase, behind the write)."""
    for _ in range(deadline):
        row = raw.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
        assert row is not None
        if row[0]:
            return
        threading.Event().wait(0.01)
    pytest.fail("the erase never waited for the open write")


def _orphans(raw: psycopg.Connection[Any]) -> list[str]:
    rows = raw.execute(
        "SELECT m.text FROM memory_pg_memories m WHERE NOT EXISTS "
        "(SELECT 1 FROM memory_pg_history h WHERE h.user_id = m.user_id AND h.memory_id = m.id)"
    ).fetchall()
    return [r[0] for r in rows]


def _race(store: Any, db_url: str, raw: Any, write: Callable[[Any], Any], erase: str) -> None:
    engine = create_engine(db_url)
    errors: list[BaseException] = []
    try:
        with engine.connect() as conn, conn.begin():
            write(conn)  # open: written, not committed

            def run_erase() -> None:
                try:
                    getattr(store, erase)()
                except BaseException as exc:  # pragma: no cover - reported below
                    errors.append(exc)

            eraser = threading.Thread(target=run_erase)
            eraser.start()
            _wait_until_blocked(raw)
        # The write commits here, while the erase waits.
        eraser.join()
    finally:
        engine.dispose()
    assert errors == []


def test_a_write_that_commits_during_an_erase_keeps_its_history_or_goes_with_it(store, db_url, raw):
    store.add_memory("we use MySQL", "key_decision", topic="database")

    def write(conn: Any) -> None:
        # Replaces the MySQL row: the erase's first DELETE waits for that row's lock.
        store.add_memory("we switched to PostgreSQL", "key_decision", topic="database", conn=conn)

    _race(store, db_url, raw, write, "clear_user_memory")
    assert _orphans(raw) == []
    # The erase ran after the write: nothing of alice is left.
    for table in ("memory_pg_memories", "memory_pg_history", "memory_pg_dialogue_buffer"):
        assert count_rows(raw, table) == 0, table
