"""An entity outlives the forgetting of the last memory naming it when a write names it too."""

from __future__ import annotations

import threading
import time

from sqlalchemy import create_engine

from memory_pg.jobs.forget import forget


def _wait_until_one_waits_for_a_row(raw, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        waiting = raw.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND wait_event <> 'advisory' AND datname = current_database()"
        ).fetchone()[0]
        if waiting:
            return
        time.sleep(0.02)
    raise AssertionError("forget never waited for the writer's entity")


def _forget_in_a_thread(engine):
    """A thread that runs forget once: its reports, and its errors for the assertion."""
    reports, errors = [], []

    def run():
        try:
            reports.append(forget(engine))
        except Exception as exc:  # reported by the test's assertion
            errors.append(exc)

    return threading.Thread(target=run), reports, errors


def test_a_memory_written_while_forget_takes_the_last_other_one_naming_its_entity_keeps_it(
    store, raw, db_url
):
    stale = store.add_memory("It snowed in Denver that winter")
    raw.execute(
        "UPDATE memory_pg_memories SET created_at = now() - interval '100 days', "
        "importance = 0.1 WHERE id = %s",
        (stale,),
    )
    assert [m["id"] for m in store.entity("Denver")["memories"]] == [stale]
    engine = create_engine(db_url)
    job, reports, errors = _forget_in_a_thread(engine)
    try:
        with store.engine.connect() as conn:
            tx = conn.begin()
            # A user's write names Denver too: its entity row stays locked until it commits.
            fresh = store.add_memory("We fly to Denver on Monday", conn=conn)
            job.start()
            # forget took the last mention it could see, and waits to drop the entity.
            _wait_until_one_waits_for_a_row(raw)
            tx.commit()
        job.join(30)
    finally:
        engine.dispose()
    assert errors == [] and [r.deleted for r in reports] == [1]
    # The entity lives on with the memory written meanwhile: dropping it would have
    # taken that memory's mention with it (ON DELETE CASCADE).
    denver = store.entity("Denver")
    assert denver is not None
    assert [m["id"] for m in denver["memories"]] == [fresh]


def test_two_deletes_of_an_entitys_last_two_mentions_leave_no_orphan(store, raw, db_url):
    """A DBA's delete of one memory naming Denver, still open, while forget removes
    the other: each alone sees the other's mention; the second must wait and drop it."""
    stale = store.add_memory("It snowed in Denver that winter")
    other = store.add_memory("Denver has a good airport")
    raw.execute(
        "UPDATE memory_pg_memories SET created_at = now() - interval '100 days', "
        "importance = 0.1 WHERE id = %s",
        (stale,),
    )
    engine = create_engine(db_url)
    job, reports, errors = _forget_in_a_thread(engine)
    try:
        with engine.connect() as dba:
            dba.exec_driver_sql("DELETE FROM memory_pg_memories WHERE id = %s", (other,))
            job.start()
            _wait_until_one_waits_for_a_row(raw)
            dba.commit()
        job.join(30)
    finally:
        engine.dispose()
    assert errors == [] and [r.deleted for r in reports] == [1]
    assert store.entity("Denver") is None
    assert raw.execute("SELECT count(*) FROM memory_pg_entities").fetchone()[0] == 0
