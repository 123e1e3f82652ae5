"""Revision 0015: the history's ``restored`` event, kept through a downgrade and back."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import create_engine

from memory_pg import schema
from tests.conftest import count_rows


@pytest.fixture
def engine(db_url):
    engine = create_engine(db_url)
    yield engine
    engine.dispose()


def _forced(raw):
    return raw.execute(
        "SELECT relforcerowsecurity FROM pg_class WHERE relname = 'memory_pg_history'"
    ).fetchone()[0]


def test_a_downgrade_keeps_each_restored_event_as_an_update_and_the_upgrade_allows_it_again(
    make_store, engine, raw
):
    store = make_store(user_id="alice")
    old = store.add_memory("The user prefers dark mode", "user_profile")
    store.add_memory("The user prefers light mode", "user_profile")
    store.restore(old)
    store.close()
    before = count_rows(raw, "memory_pg_history")

    schema.downgrade(engine, "0014")

    assert count_rows(raw, "memory_pg_history") == before
    events = raw.execute(
        "SELECT event, detail FROM memory_pg_history WHERE memory_id = %s ORDER BY id", (old,)
    ).fetchall()
    assert [e for e, _ in events] == ["added", "superseded", "updated"]
    assert events[-1][1]["restored"] is True and events[-1][1]["reason"] == "restored"
    assert _forced(raw)
    with pytest.raises(psycopg.errors.CheckViolation):
        raw.execute(
            "INSERT INTO memory_pg_history (user_id, memory_id, event) "
            "VALUES ('alice', %s, 'restored')",
            (old,),
        )

    schema.upgrade(engine)

    again = make_store(user_id="alice")
    mysql = again.add_memory("use MySQL", "key_decision", topic="database")
    again.add_memory("use PostgreSQL", "key_decision", topic="database")
    again.restore(mysql)
    assert again.history(mysql)[-1]["event"] == "restored"
    assert _forced(raw)


@pytest.mark.slow  # waits out the migration's 5 s lock_timeout
def test_it_gives_up_on_a_history_another_transaction_reads_and_runs_again_later(engine, db_url):
    from sqlalchemy import text

    from tests.acceptance.test_cli import run as run_installed

    schema.downgrade(engine, "0014")
    reader = create_engine(db_url)
    try:
        with reader.connect() as conn:
            conn.execute(text("SELECT count(*) FROM memory_pg_history"))  # holds its locks
            proc = run_installed(["migrate"], {"MEMORY_PG_DATABASE_URL": db_url}, check=False)
            conn.rollback()
    finally:
        reader.dispose()
    assert proc.returncode == 1, proc.stderr
    assert "lock_timeout" in proc.stderr and "Traceback" not in proc.stderr
    with engine.connect() as conn:
        assert schema.current_revision(conn) == "0014"
    run_installed(["migrate"], {"MEMORY_PG_DATABASE_URL": db_url})
    with engine.connect() as conn:
        assert schema.current_revision(conn) == schema.head_revision()
