"""A heavy user's full-text leg scores a bounded number of matches, the most recent."""

from __future__ import annotations

from typing import Any

import pytest

from memory_pg.sql import lexical

QUERIES = ["coffee", "coffee tea", "Berlin bakery", "tea with Anna", "piano lesson friday"]


def _ranked(store: Any, query: str) -> list[tuple[str, float, float]]:
    hits = store.search(query, top_k=10, track_access=False)
    return [(h["id"], round(h["score"], 6), round(h["lexical"], 6)) for h in hits]


def test_the_bound_keeps_the_ranking_of_the_unbounded_leg(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A sample of 5 puts this user among the heavy ones, whose candidates come from
    # the GIN index: the branch the bound applies to.
    monkeypatch.setattr(lexical, "IDF_SAMPLE", 5)
    monkeypatch.setattr(lexical, "PULL_MAX_SHARE", 0.25)
    store.add_memories(
        [f"coffee with Anna, visit {i}" for i in range(6)]
        + [
            "a tea ceremony in Kyoto",
            "moved to Berlin to open a bakery",
            "piano lesson every friday",
            "tea with Anna after the piano lesson",
            "Berlin has the best coffee",
        ]
    )
    monkeypatch.setattr(lexical, "LEXICAL_SCAN_MAX", 10**9)
    unbounded = {q: _ranked(store, q) for q in QUERIES}
    monkeypatch.setattr(lexical, "LEXICAL_SCAN_MAX", 100)
    bounded = {q: _ranked(store, q) for q in QUERIES}
    assert bounded == unbounded
    assert all(unbounded[q] for q in QUERIES)


def test_beyond_the_bound_only_the_most_recent_matches_score(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lexical, "IDF_SAMPLE", 5)
    monkeypatch.setattr(lexical, "LEXICAL_SCAN_MAX", 3)
    # One call each: each memory is newer than the one before.
    for i in range(8):
        store.add_memory(f"coffee with Anna, visit {i}")
    hits = store.search("coffee", top_k=8, track_access=False)
    by_text = {h["text"]: h["lexical"] for h in hits}
    matched = sorted(text for text, lexical in by_text.items() if lexical > 0)
    assert matched == [f"coffee with Anna, visit {i}" for i in (5, 6, 7)]
