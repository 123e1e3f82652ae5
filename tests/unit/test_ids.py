"""New memory ids are UUIDs of version 7, each greater than the one before: a write's
turns share their times, and the chain of a conversation ends at the last by id."""

from __future__ import annotations

import threading

from memory_pg._ids import ordered_ids


def test_ids_are_version_7_and_in_the_order_made():
    ids = ordered_ids(20_000)  # more than one millisecond's 4096 counter values
    assert all(i.version == 7 for i in ids)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert ordered_ids(1)[0] > ids[-1]


def test_threads_never_make_the_same_id():
    made: list[list] = []
    threads = [threading.Thread(target=lambda: made.append(ordered_ids(2000))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for batch in made for i in batch]
    assert len(set(every)) == 8000
    assert all(batch == sorted(batch) for batch in made)
