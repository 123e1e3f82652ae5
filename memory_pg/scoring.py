"""Ranking maths as pure functions: the search statement computes exactly these in SQL.

Kept here, unit-tested, so the formula can be read and checked without a
database; ``tests/integration/test_ranking.py`` checks the SQL gives the same
numbers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from memory_pg.config import RankingSettings

__all__ = [
    "MAX_E_FOLDS",
    "MAX_HALVINGS",
    "QUESTION_PATTERN",
    "asks",
    "bm25",
    "dialogue_score",
    "entity_boost",
    "final_score",
    "fused_rrf",
    "idf",
    "recency",
    "reinforcement",
    "relevance",
    "rrf",
    "time_boost",
    "time_match",
]


#: Caps on the decay exponents, so every decay stays above about 1e-150. PostgreSQL
#: raises ``underflow`` where a float result rounds to zero (``exp(-3726 / 5)``,
#: ``0.5 ** 1075``), which a memory used 3,726 times or a todo 21 years old reached,
#: and a product of the floor with a weight must not reach it either. Past the caps a
#: part adds less than float precision to the score, so ranking is unchanged.
MAX_HALVINGS = 498.0  # 0.5 ** 498 = 1.2e-150
MAX_E_FOLDS = 345.0  # exp(-345) = 1.5e-150


def recency(age_days: float, half_life_days: float) -> float:
    """``0.5 ** (age / half_life)``: 1 for now, 0.5 one half-life ago; the future counts as now.

    The exponent stops at :data:`MAX_HALVINGS` half-lives.
    """
    return math.pow(0.5, min(max(age_days, 0.0) / half_life_days, MAX_HALVINGS))


def reinforcement(
    access_count: int, days_since_access: float | None, settings: RankingSettings
) -> float:
    """Use as evidence of value: saturating in the count, fading since the last use.

    ``(1 - exp(-count / saturation)) * 0.5 ** (days_since_access / access_half_life)``;
    0 for a memory never returned. The exponents stop at :data:`MAX_E_FOLDS` and
    :data:`MAX_HALVINGS`.
    """
    if access_count <= 0 or days_since_access is None:
        return 0.0
    folds = min(access_count / settings.reinforcement_saturation, MAX_E_FOLDS)
    saturation = 1.0 - math.exp(-folds)
    return saturation * recency(days_since_access, settings.access_half_life_days)


def rrf(
    ranks: Iterable[int | None], k: int, lists: int = 2, weights: Iterable[float] | None = None
) -> float:
    """Reciprocal-rank fusion scaled to 0..1: 1 when first in every list.

    ``sum(w / (k + rank)) / (sum(w) / (k + 1))``; a missing rank adds nothing. Each
    list weighs 1 unless ``weights`` says otherwise (a search gives the vector list
    the query's readability, see :func:`fused_rrf`).
    """
    ranks = list(ranks)
    ws = [1.0] * len(ranks) if weights is None else list(weights)
    total = sum(w / (k + r) for r, w in zip(ranks, ws, strict=True) if r is not None)
    norm = (sum(ws) if weights is not None else lists) / (k + 1)
    return total / norm if norm > 0 else 0.0


def fused_rrf(
    vector_rank: int | None, lexical_rank: int | None, k: int, readability: float = 1.0
) -> float:
    """A search's ``rrf``: the vector list weighs the query's readability, the full-text 1."""
    return rrf([vector_rank, lexical_rank], k, weights=[readability, 1.0])


#: BM25's term-frequency saturation and length normalisation. Every term counts once
#: per memory (turns and facts are short), so ``k1`` only shapes the length factor;
#: ``b`` is low because a longer memory holding the answer should not lose to a
#: short chit-chat line (measured on LoCoMo, ``benchmarks/locomo.py``).
BM25_K1 = 1.2
BM25_B = 0.3
#: Distinct words of a typical memory, the length BM25 normalises against.
BM25_AVG_LENGTH = 12.0


def idf(collection: int, df: int) -> float:
    """A word's inverse document frequency among ``collection`` memories, ``df`` of
    which hold it: ``ln(1 + (n - df + 0.5) / (df + 0.5))``, always positive."""
    return math.log(1.0 + (collection - df + 0.5) / (df + 0.5))


def bm25(matched_idf: float, own_length: int) -> float:
    """A memory's full-text score: the IDF of the query words it holds (a word only in
    its context counts ``RankingSettings.lexical_context_weight`` of its IDF), scaled
    by BM25's length factor for ``own_length`` distinct words of its own text.

    A search reports ``lexical`` as this divided by the best candidate's (0..1).
    """
    norm = (BM25_K1 + 1.0) / (
        1.0 + BM25_K1 * (1.0 - BM25_B + BM25_B * own_length / BM25_AVG_LENGTH)
    )
    return matched_idf * norm


def relevance(
    rrf_value: float,
    similarity: float,
    lexical_value: float,
    s: RankingSettings,
    readability: float = 1.0,
) -> float:
    """How well a memory matches the query, 0..1: a weighted mean of the three signals.

    ``readability`` (0..1, the share of the query the embedding model reads) scales
    the similarity's weight: a model that cannot read the query gets none, and the
    mean is taken over the signals that can.
    """
    total = s.rrf_weight + s.lexical_weight + s.similarity_weight * readability
    weighted = (
        s.rrf_weight * rrf_value
        + s.similarity_weight * readability * max(similarity, 0.0)
        + s.lexical_weight * lexical_value
    )
    return weighted / total if total > 0 else 0.0


#: The farthest a time boost looks past its span, in span lengths (beyond: 0).
TIME_MAX_SPANS = 60.0


def time_match(gap_days: float, span_days: float) -> float:
    """How well a memory's event time fits the span the query names, 0..1.

    1 inside the span; outside, halved for every span length (at least one day)
    away from it: "last week" still lifts the day after it, "in May" a bit of June.
    """
    if gap_days <= 0:
        return 1.0
    return math.pow(0.5, min(gap_days / max(span_days, 1.0), TIME_MAX_SPANS))


def time_boost(time_match_value: float, s: RankingSettings) -> float:
    """The factor a named time applies to a score: 1 in the span, ``1 / (1 + time_weight)``
    far from it."""
    return (1.0 + s.time_weight * time_match_value) / (1.0 + s.time_weight)


def entity_boost(entity_match_value: float | None, s: RankingSettings) -> float:
    """The factor a named entity applies to a score, from a result's ``entity_match``:
    1 for a memory that names one of the query's entities (1.0), ``1 / (1 +
    entity_weight)`` for the rest (0.0); 1 when no candidate named one (None)."""
    if entity_match_value is None:
        return 1.0
    return (1.0 + s.entity_weight * entity_match_value) / (1.0 + s.entity_weight)


def attribute_boost(attribute_match_value: float | None, s: RankingSettings) -> float:
    """The factor an asked attribute applies to a score, from a result's
    ``attribute_match``: 1 for a memory that states the attribute a question asks for
    and shares a word with it (1.0), a little less for one that states only a related
    attribute (:data:`memory_pg.sql.attributes.RELATED_MATCH`), ``1 / (1 +
    attribute_weight)`` for the rest (0.0); 1 when no candidate did (None)."""
    if attribute_match_value is None:
        return 1.0
    return (1.0 + s.attribute_weight * attribute_match_value) / (1.0 + s.attribute_weight)


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


#: A memory that asks a question: its text ends with a question mark (ASCII or
#: full-width), blanks after it aside. The search statement uses the same pattern,
#: so the blanks are spelled out (the characters themselves, not ``\s``, whose
#: meaning in PostgreSQL follows the database's locale): space, tab, new lines,
#: no-break space, ideographic space.
QUESTION_PATTERN = "[?？][ \t\n\r\f\v\u00a0\u3000]*$"
_QUESTION = re.compile(QUESTION_PATTERN)


def asks(text: str) -> bool:
    """Whether a memory's text asks a question (:data:`QUESTION_PATTERN`)."""
    return _QUESTION.search(text) is not None


def dialogue_score(
    score: float, question: bool, answer_score: float | None, s: RankingSettings
) -> float:
    """A score after the turns of a conversation are weighed: a question loses
    ``question_discount`` of it; the turn answering a question ranks at least
    ``answer_score`` (``answer_share`` of that question's score)."""
    if question:
        score *= 1.0 - s.question_discount
    return max(score, answer_score or 0.0)
