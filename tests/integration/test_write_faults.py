"""Writes that used to lose or hide a fact: an expired twin, a near-twin replacement,
a negated near-duplicate, and a repeat of a memory a forget run deletes meanwhile.

Through the public API; the database is only touched directly to age a row.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from sqlalchemy import text

from memory_pg.config import ForgetPolicy
from memory_pg.sql.forget import forget_batch


def _expire(raw: Any, memory_id: str) -> None:
    raw.execute(
        "UPDATE memory_pg_memories SET expires_at = now() - interval '1 hour' WHERE id = %s",
        (memory_id,),
    )


def _current(store: Any) -> list[str]:
    return sorted(m["text"] for m in store.list_memories())


def test_a_memory_written_again_after_its_expiry_is_current_again(store: Any, raw: Any) -> None:
    first = store.add_memory("Standup is at 9am", "todo")
    _expire(raw, first)
    assert _current(store) == []
    again = store.add_memory("Standup is at 9am", "todo")
    assert again != first
    assert _current(store) == ["Standup is at 9am"]
    assert [h["id"] for h in store.search("standup", top_k=3)] == [again]
    # The expired one reads as it did: current until its expiry, not after.
    old = store.get(first)
    assert old["superseded_at"] == old["expires_at"]
    assert old["superseded_by"] is None


def test_replacing_with_the_text_of_an_expired_memory_leaves_the_replacement_current(
    store: Any, raw: Any
) -> None:
    expired = store.add_memory("Weekly sync is in room B", "project_status")
    _expire(raw, expired)
    room_a = store.add_memory("Weekly sync is in room A", "project_status")
    new = store.replace_memory(room_a, "Weekly sync is in room B")
    assert new not in (expired, room_a)
    assert _current(store) == ["Weekly sync is in room B"]
    assert store.get(room_a)["superseded_by"] == new


def test_a_replacement_that_reads_almost_as_the_old_text_is_written(store: Any) -> None:
    pairs = [
        (
            "Alice prefers green tea in the morning with breakfast",
            "Alice prefers green tea in the morning, never with breakfast",
        ),
        (
            "The quarterly planning meeting with Bob is held in the main office building",
            "The quarterly planning meeting with Bob is held in the new main office building",
        ),
    ]
    for old_text, new_text in pairs:
        old = store.add_memory(old_text, "user_profile")
        new = store.replace_memory(old, new_text)
        assert new != old
        assert store.get(new)["text"] == new_text
        assert store.get(old)["superseded_by"] == new
    assert _current(store) == sorted(new for _, new in pairs)


def test_a_near_duplicate_that_negates_the_memory_is_not_merged_into_it(store: Any) -> None:
    said = "Alice takes green tea in the morning with breakfast"
    negated = "Alice takes green tea in the morning, not with breakfast"
    # A profile: the negation is the newer fact and replaces the old one.
    store.add_memory(said, "user_profile")
    store.add_memory(negated, "user_profile")
    assert _current(store) == [negated]
    # A dialogue line replaces nothing: both are kept.
    store.add_memory(said, "dialogue")
    store.add_memory(negated, "dialogue")
    assert [m["text"] for m in store.list_memories(memory_types=["dialogue"])] == [negated, said]
    # A repeat in other words still is one.
    store.add_memory(said + ".", "dialogue")
    assert len(store.list_memories(memory_types=["dialogue"])) == 2


def test_a_repeat_of_a_memory_that_forget_deletes_meanwhile_is_stored(store: Any, raw: Any) -> None:
    text_ = "Alice's dentist is Dr. Weber on Main Street"
    stale = store.add_memory(text_, "user_profile", importance=0.1)
    raw.execute(
        "UPDATE memory_pg_memories SET created_at = now() - interval '100 days' WHERE id = %s",
        (stale,),
    )
    job = store.engine.connect()
    try:
        with job.begin():  # a forget batch that deleted it and has not committed yet
            gone = job.execute(forget_batch("stale", ForgetPolicy(), 100, "run", None)).all()
            assert len(gone) == 1
            out: dict[str, Any] = {}
            writer = threading.Thread(
                target=lambda: out.setdefault("id", store.add_memory(text_, "user_profile"))
            )
            writer.start()
            # The repeat waits for the batch's row lock (it found the row as a candidate).
            deadline = time.monotonic() + 10
            while not _waiting_on_a_lock(job) and time.monotonic() < deadline:
                time.sleep(0.05)
        writer.join(30)
    finally:
        job.close()
    assert out["id"] != stale
    assert _current(store) == [text_]
    assert store.get(out["id"])["text"] == text_


def _waiting_on_a_lock(conn: Any) -> bool:
    return bool(
        conn.execute(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND pid <> pg_backend_pid()"
            )
        ).scalar()
    )


def test_a_twin_that_forget_removes_mid_write_still_leaves_the_new_memory(
    store: Any, raw: Any, monkeypatch: Any
) -> None:
    from memory_pg.jobs.forget import forget
    from memory_pg.sql import memories as sql_memories

    old = store.add_memory("Alice's locker code is 4711", "key_decision")
    _expire(raw, old)
    retire = sql_memories.retire_expired

    def forget_first(*args: Any, **kwargs: Any) -> Any:
        # After the insert the expired twin kept out, before it is retired: a forget
        # run removes that twin and commits (ON CONFLICT locked nothing).
        assert forget(store.engine, user_id="alice").deleted == 1
        return retire(*args, **kwargs)

    monkeypatch.setattr(sql_memories, "retire_expired", forget_first)
    new = store.add_memory("Alice's locker code is 4711", "key_decision")
    assert new != old and store.get(new)["text"] == "Alice's locker code is 4711"
    assert _current(store) == ["Alice's locker code is 4711"]
