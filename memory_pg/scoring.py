"""Ranking maths as pure functions: the search statement computes exactly these in SQL.

Kept here, unit-tested, so the formula can be read and checked without a
database; ``tests/integration/test_ranking.py`` checks the SQL gives the same
numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from memory_pg.config import RankingSettings

__all__ = [
    "final_score",
    "lexical",
    "recency",
    "reinforcement",
    "relevance",
    "rrf",
]


def recency(age_days: float, half_life_days: float) -> float:
    """``0.5 ** (age / half_life)``: 1 for now, 0.5 one half-life ago; the future counts as now."""
    return math.pow(0.5, max(age_days, 0.0) / half_life_days)


def reinforcement(
    access_count: int, days_since_access: float | None, settings: RankingSettings
) -> float:
    """Use as evidence of value: saturating in the count, fading since the last use.

    ``(1 - exp(-count / saturation)) * 0.5 ** (days_since_access / access_half_life)``;
    0 for a memory never returned.
    """
    if access_count <= 0 or days_since_access is None:
        return 0.0
    saturation = 1.0 - math.exp(-access_count / settings.reinforcement_saturation)
    return saturation * recency(days_since_access, settings.access_half_life_days)


def rrf(ranks: Iterable[int | None], k: int, lists: int = 2) -> float:
    """Reciprocal-rank fusion scaled to 0..1: 1 when first in every list.

    ``sum(1 / (k + rank)) / (lists / (k + 1))``; a missing rank adds nothing.
    """
    total = sum(1.0 / (k + r) for r in ranks if r is not None)
    return total * (k + 1) / lists


def lexical(ts_rank: float) -> float:
    """A full-text score in 0..1: ``ts_rank`` with normalisation 32 (``rank / (rank + 1)``)."""
    return ts_rank / (ts_rank + 1.0)


def relevance(
    rrf_value: float, similarity: float, lexical_value: float, s: RankingSettings
) -> float:
    """How well a memory matches the query, 0..1: a weighted mean of the three signals."""
    total = s.rrf_weight + s.similarity_weight + s.lexical_weight
    weighted = (
        s.rrf_weight * rrf_value
        + s.similarity_weight * max(similarity, 0.0)
        + s.lexical_weight * lexical_value
    )
    return weighted / total


def final_score(
    relevance_value: float,
    recency_value: float,
    importance: float,
    reinforcement_value: float,
    s: RankingSettings,
) -> float:
    """Relevance scaled by recency, importance and use, 0..1 (see :class:`RankingSettings`)."""
    boost = (
        1.0
        + s.recency_weight * recency_value
        + s.importance_weight * importance
        + s.reinforcement_weight * reinforcement_value
    )
    most = 1.0 + s.recency_weight + s.importance_weight + s.reinforcement_weight
    return relevance_value * boost / most
