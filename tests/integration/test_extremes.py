"""Searches stay finite at the extremes the columns and arguments allow.

PostgreSQL raises ``underflow`` where a float result rounds to zero; before the
decay exponents were capped, one memory used 3,726 times, or a very old one,
broke every later search of its user.
"""

from __future__ import annotations

import io
import json
import math
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from memory_pg.retrieval import MemoryRetriever
from memory_pg.wrapper import MemoryWrapper

NOW = datetime.now(timezone.utc)


def _import(store: Any, records: list[dict[str, Any]]) -> None:
    lines = "".join(json.dumps(r) + "\n" for r in records)
    assert store.import_user_memory(io.StringIO(lines)) == len(records)


def _assert_finite(hits: list[dict[str, Any]]) -> None:
    assert hits
    for hit in hits:
        for key in ("score", "recency", "reinforcement", "relevance"):
            assert math.isfinite(hit[key]), (key, hit[key])
        assert 0.0 <= hit["score"] <= 1.0


class EchoAgent:
    def __init__(self) -> None:
        self.prompts: list[str] = []

    def chat(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return "ok"


@pytest.mark.parametrize("uses", [3726, 10**4, 10**6, 2**31 - 1])
def test_a_memory_used_very_often_keeps_every_search_working(store, uses):
    _import(
        store,
        [
            {
                "text": "my name is Alice",
                "memory_type": "user_profile",
                "access_count": uses,
                "last_accessed_at": NOW.isoformat(),
            }
        ],
    )
    store.add_memory("the team chose PostgreSQL", "key_decision")
    for query in ("what is my name", "database", "完全无关的问题"):
        _assert_finite(store.search(query, top_k=5))
    hit = store.search("what is my name", top_k=1)[0]
    assert hit["text"] == "my name is Alice"
    assert hit["reinforcement"] == pytest.approx(1.0, rel=1e-3)
    assert "my name is Alice" in MemoryRetriever(store).retrieve_context("what is my name")
    agent = EchoAgent()
    MemoryWrapper(agent, store).chat("what is my name?")
    assert "my name is Alice" in agent.prompts[0]


def test_very_old_memories_and_far_future_as_of_keep_searches_working(store):
    store.add_memory("buy a new laptop", "todo", event_time=NOW - timedelta(days=21 * 366))
    store.add_memory(
        "we talked about the laptop", "dialogue", event_time=datetime(1, 1, 2, tzinfo=timezone.utc)
    )
    _import(
        store,
        [
            {
                "text": "the laptop should be light",
                "memory_type": "user_profile",
                "access_count": 10**4,
                "last_accessed_at": "1900-01-01T00:00:00+00:00",
            }
        ],
    )
    hits = store.search("laptop", top_k=5)
    _assert_finite(hits)
    assert len(hits) == 3
    # Searches that touch the memories, then one 400 years ahead.
    _assert_finite(store.search("laptop", top_k=5))
    later = store.search("laptop", top_k=5, as_of=NOW + timedelta(days=400 * 366))
    _assert_finite(later)
    assert all(h["recency"] > 0 for h in later)
    assert "laptop" in MemoryRetriever(store).retrieve_context("laptop")
