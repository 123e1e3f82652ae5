"""A summary keeps what its fragments share: topic key, expiry and metadata.

Through the public ``consolidate`` API, as an operator's cron run would: a summary
that lost its fragments' topic would never be replaced by a later memory on that
topic, and one that lost their expiry would stay current forever.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from memory_pg.config import SupersedePolicy
from memory_pg.jobs.consolidate import consolidate, merge_metadata

RENT = "Pay the March rent to the landlord"
RENT_BANK = "Pay the March rent to the landlord by bank transfer"


def _soon(days: int) -> datetime:
    return datetime.now(timezone.utc) + timedelta(days=days)


def test_a_summary_carries_topic_latest_expiry_and_merged_metadata(store: Any) -> None:
    first, last = _soon(3), _soon(5)
    a = store.add_memory(
        RENT, "todo", topic="rent", expires_at=first, metadata={"source": "email", "id": 7}
    )
    b = store.add_memory(
        RENT_BANK, "todo", expires_at=last, metadata={"source": "chat", "priority": "high"}
    )

    report = consolidate(store, user_id="alice")

    assert (report.clusters, report.merged, report.failed) == (1, 2, [])
    (summary_id,) = report.summaries
    summary = store.get(summary_id)
    assert summary["topic"] == "rent"
    assert summary["expires_at"] == last
    # On a key both hold, the newest fragment's value wins.
    assert summary["metadata"] == {
        "source": "chat",
        "id": 7,
        "priority": "high",
        "consolidated_from": 2,
    }
    assert {store.get(a)["superseded_by"], store.get(b)["superseded_by"]} == {summary_id}

    # A later todo on the topic replaces the summary, as it would have the fragments.
    paid = store.add_memory("Rent for March is paid, nothing to do", "todo", topic="rent")
    assert store.get(summary_id)["superseded_by"] == paid
    assert [r["id"] for r in store.list_memories()] == [paid]


def test_a_summary_of_a_fragment_that_never_expires_never_expires(store: Any) -> None:
    store.add_memory(RENT, "todo", expires_at=_soon(3))
    store.add_memory(RENT_BANK, "todo")

    (summary_id,) = consolidate(store, user_id="alice").summaries

    assert store.get(summary_id)["expires_at"] is None


def test_fragments_with_different_topics_are_not_merged_together(make_store: Any) -> None:
    # Two current rows on one topic only exist with supersession off (or imported).
    store = make_store(user_id="alice", supersede=SupersedePolicy(enabled=False))
    rent = [
        store.add_memory(RENT, "todo", topic="rent"),
        store.add_memory(RENT_BANK, "todo", topic="rent"),
    ]
    other = [
        store.add_memory("Pay the March rent to the landlord today", "todo", topic="deposit"),
        store.add_memory("Pay the March rent to the landlord by card", "todo"),
    ]

    dry = consolidate(store, user_id="alice", dry_run=True)
    report = consolidate(store, user_id="alice")

    assert (dry.clusters, dry.merged) == (report.clusters, report.merged) == (1, 2)
    (summary_id,) = report.summaries
    assert store.get(summary_id)["topic"] == "rent"
    assert {store.get(i)["superseded_by"] for i in rent} == {summary_id}
    # The other topic's fragment, and the one whose topic is unknown, stay as they were.
    assert all(store.get(i)["superseded_at"] is None for i in other)


def test_metadata_past_the_limit_leaves_out_the_oldest_keys() -> None:
    merged = merge_metadata([{"old": "x" * 40}, {"new": "y" * 40}], 2, max_bytes=80)
    assert merged == {"consolidated_from": 2, "new": "y" * 40}
