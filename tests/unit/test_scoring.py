"""The ranking maths: decay, fusion and the final score."""

from __future__ import annotations

import math

import pytest

from memory_pg import scoring
from memory_pg.config import RankingSettings
from memory_pg.errors import ConfigurationError


def test_recency_halves_every_half_life() -> None:
    assert scoring.recency(0, 30) == 1.0
    assert scoring.recency(30, 30) == pytest.approx(0.5)
    assert scoring.recency(60, 30) == pytest.approx(0.25)
    assert scoring.recency(-5, 30) == 1.0  # a future event time counts as now


def test_profile_fades_slower_than_todo_by_default() -> None:
    s = RankingSettings()
    assert s.half_life("user_profile") > s.half_life("key_decision") > s.half_life("todo")
    assert s.half_life("team_type") == s.default_half_life_days


def test_reinforcement_grows_with_use_and_fades_with_time() -> None:
    s = RankingSettings()
    assert scoring.reinforcement(0, None, s) == 0.0
    once = scoring.reinforcement(1, 0, s)
    often = scoring.reinforcement(20, 0, s)
    assert 0 < once < often < 1
    assert scoring.reinforcement(20, 90, s) < often


def test_rrf_is_one_when_first_everywhere() -> None:
    assert scoring.rrf([1, 1], 60) == pytest.approx(1.0)
    assert scoring.rrf([1, None], 60) == pytest.approx(0.5)
    assert scoring.rrf([2, 3], 60) < scoring.rrf([1, 3], 60)


def test_relevance_is_a_weighted_mean() -> None:
    s = RankingSettings(rrf_weight=1, similarity_weight=1, lexical_weight=0)
    assert scoring.relevance(1.0, 0.5, 0.9, s) == pytest.approx(0.75)
    assert scoring.relevance(1.0, -0.2, 0.0, s) == pytest.approx(0.5)  # negative cosine is 0


def test_final_score_keeps_relevance_first() -> None:
    s = RankingSettings()
    old_relevant = scoring.final_score(0.8, scoring.recency(400, 30), 0.5, 0.0, s)
    new_barely = scoring.final_score(0.4, 1.0, 0.5, 0.0, s)
    assert old_relevant > new_barely
    assert scoring.final_score(0.6, 1.0, 0.5, 0, s) > scoring.final_score(0.6, 0.1, 0.5, 0, s)
    assert scoring.final_score(1.0, 1.0, 1.0, 1.0, s) == pytest.approx(1.0)
    assert scoring.final_score(0.0, 1.0, 1.0, 1.0, s) == 0.0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"candidates": 0},
        {"recency_weight": -1},
        {"rrf_weight": 0, "similarity_weight": 0, "lexical_weight": 0},
        {"half_life_days": {"todo": 0}},
        {"rrf_k": -1},
        {"entity_weight": -0.1},
        # Either would make every score NaN.
        {"entity_weight": float("nan")},
        {"time_weight": float("inf")},
        {"similarity_weight": float("nan")},
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError):
        RankingSettings(**kwargs)  # type: ignore[arg-type]


def test_settings_stay_frozen_when_the_callers_dict_changes() -> None:
    lives = {"todo": 3.0}
    s = RankingSettings(half_life_days=lives)
    lives["todo"] = 300.0
    assert s.half_life("todo") == 3.0


def test_idf_weighs_a_rare_word_above_a_common_one_and_stays_positive() -> None:
    assert scoring.idf(100, 1) > scoring.idf(100, 50) > scoring.idf(100, 100) > 0


def test_bm25_prefers_the_shorter_memory_for_the_same_words() -> None:
    assert scoring.bm25(2.0, 3) > scoring.bm25(2.0, 30) > 0
    assert scoring.bm25(0.0, 3) == 0.0


def test_decay_stays_positive_where_postgres_would_underflow() -> None:
    """The caps the search statement applies: past them a part stops shrinking."""
    s = RankingSettings()
    assert 0 < scoring.recency(739_000.0, 7.0) < 1e-100
    assert scoring.recency(739_000.0, 7.0) == scoring.recency(10**9, 0.5)
    assert scoring.reinforcement(2**31 - 1, 0.0, s) == 1.0
    assert 0 < scoring.reinforcement(10**6, 146_000.0, s) < 1e-100
    # Normal values are untouched by the caps.
    assert scoring.recency(7.0, 7.0) == 0.5
    assert scoring.reinforcement(5, 0.0, s) == pytest.approx(1 - math.exp(-1))


def test_a_leg_that_cannot_read_the_query_gets_no_weight() -> None:
    s = RankingSettings()
    # Fully readable: the plain formulas.
    assert scoring.fused_rrf(1, 3, 10) == pytest.approx(scoring.rrf([1, 3], 10))
    assert scoring.relevance(0.5, 0.8, 0.3, s, readability=1.0) == pytest.approx(
        scoring.relevance(0.5, 0.8, 0.3, s)
    )
    # Unreadable: the vector rank and the similarity count for nothing.
    assert scoring.fused_rrf(1, 3, 10, readability=0.0) == pytest.approx(scoring.rrf([3], 10, 1))
    blind = scoring.relevance(scoring.fused_rrf(1, None, 10, 0.0), 0.99, 0.0, s, readability=0.0)
    assert blind == 0.0
    lexical = scoring.relevance(scoring.fused_rrf(None, 1, 10, 0.0), 0.0, 1.0, s, readability=0.0)
    assert lexical == pytest.approx(1.0)


def test_a_time_named_in_the_query_favours_memories_in_its_span() -> None:
    s = RankingSettings()
    assert scoring.time_match(0.0, 7.0) == 1.0
    assert scoring.time_match(7.0, 7.0) == pytest.approx(0.5)
    assert scoring.time_match(1e9, 1.0) == pytest.approx(0.5**scoring.TIME_MAX_SPANS)
    assert scoring.time_boost(1.0, s) == 1.0
    assert scoring.time_boost(0.0, s) == pytest.approx(1 / (1 + s.time_weight))
    # Soft: a far clearly more relevant memory can still beat an in-span barely relevant one.
    assert 0.9 * scoring.time_boost(0.0, s) > 0.3 * scoring.time_boost(1.0, s)


def test_a_question_is_a_text_ending_with_a_question_mark() -> None:
    from memory_pg.scoring import asks

    assert asks("What are their names?") and asks("他们叫什么名字？  ")
    assert not asks("Luna and Oliver!") and not asks("Is it? Yes, it is.")


def test_a_question_loses_a_share_and_its_answer_ranks_on_it() -> None:
    from memory_pg.config import RankingSettings
    from memory_pg.scoring import dialogue_score

    s = RankingSettings(question_discount=0.2, answer_share=0.9)
    assert dialogue_score(0.5, True, None, s) == pytest.approx(0.4)
    assert dialogue_score(0.3, False, 0.45, s) == pytest.approx(0.45)
    assert dialogue_score(0.6, False, 0.45, s) == pytest.approx(0.6)
