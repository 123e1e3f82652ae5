"""Search ranks like memory: relevance first, then recency, importance and use."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from memory_pg import scoring
from memory_pg.config import RankingSettings


def _ago(days: float) -> datetime:
    return datetime.now(timezone.utc) - timedelta(days=days)


def test_results_carry_their_score_parts(store: Any) -> None:
    store.add_memory("使用 PostgreSQL 作为数据库", "key_decision", importance=0.9)
    hit = store.search("PostgreSQL 数据库", top_k=1)[0]
    for key in ("text", "metadata", "distance", "score", "id", "memory_type", "created_at"):
        assert key in hit
    for key in (
        "similarity",
        "lexical",
        "rrf",
        "relevance",
        "recency",
        "importance",
        "reinforcement",
    ):
        assert isinstance(hit[key], float), key
    assert 0 < hit["score"] <= 1
    assert hit["lexical"] > 0


def test_sql_score_matches_scoring_module(make_store: Any) -> None:
    ranking = RankingSettings(similarity_weight=0.5, lexical_weight=0.5)
    store = make_store(user_id="alice", ranking=ranking)
    store.add_memory(
        "the team chose PostgreSQL", "key_decision", importance=0.8, event_time=_ago(90)
    )
    store.add_memory("buy milk tomorrow", "todo", event_time=_ago(3))
    store.search("PostgreSQL", top_k=2)  # one use, so reinforcement is non-zero next time
    for hit in store.search("PostgreSQL team", top_k=2, track_access=False):
        age = (datetime.now(timezone.utc) - hit["event_time"]).total_seconds() / 86400
        rec = scoring.recency(age, ranking.half_life(hit["memory_type"]))
        assert hit["recency"] == pytest.approx(rec, rel=1e-3)
        since = (datetime.now(timezone.utc) - hit["last_accessed_at"]).total_seconds() / 86400
        reinf = scoring.reinforcement(hit["access_count"], since, ranking)
        assert hit["reinforcement"] == pytest.approx(reinf, rel=1e-3, abs=1e-9)
        rel = scoring.relevance(hit["rrf"], hit["similarity"], hit["lexical"], ranking)
        assert hit["relevance"] == pytest.approx(rel, rel=1e-6)
        score = scoring.final_score(rel, rec, hit["importance"], reinf, ranking)
        assert hit["score"] == pytest.approx(score, rel=1e-3)
