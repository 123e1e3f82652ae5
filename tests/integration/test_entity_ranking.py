"""A query that names someone prefers what was said of them (RankingSettings.entity_weight).

Through the public store: the memories that name an entity the query names carry
``entity_match`` 1.0 and rank above the same words said of someone else; the score
is the scoring module's (:func:`memory_pg.scoring.entity_boost`).
"""

from __future__ import annotations

from typing import Any

import pytest

from memory_pg import scoring
from memory_pg.config import RankingSettings

#: One conversation: each turn names its speaker, as a kept dialogue does, so the
#: names weigh little in the full-text score.
TURNS = [
    "Caroline: I finally painted the sunset over the lake last weekend",
    "Melanie: That sounds lovely, Caroline! Mine was a horse in the barn, in watercolour",
    "Caroline: Thanks, I am going to the support group on Friday",
    "Melanie: Good luck Caroline, my kids and I are going camping",
    "Caroline: I bought new brushes for the sunset series",
    "Melanie: The kids loved the camping trip, Caroline",
]


def test_a_memory_naming_the_person_asked_about_ranks_first(make_store: Any) -> None:
    plain = make_store(user_id="alice", ranking=RankingSettings(entity_weight=0.0))
    plain.add_memories([{"text": t, "memory_type": "dialogue"} for t in TURNS])
    query = "What did Melanie paint?"
    before = plain.search(query, top_k=3)
    # Caroline's sunset reads closer to the question than Melanie's horse.
    assert before[0]["text"].startswith("Caroline:")
    assert all("entity_match" not in h for h in before)

    weighed = make_store(user_id="alice", ranking=RankingSettings(entity_weight=1.0))
    after = weighed.search(query, top_k=3)
    # Melanie's own turns now come first; Caroline's sunset is no answer about her.
    assert all(h["text"].startswith("Melanie:") for h in after[:2])
    k = weighed.ranking
    for hit in after:
        named = "Melanie" in hit["text"]
        assert hit["entity_match"] == (1.0 if named else 0.0)
        base = scoring.dialogue_score(
            scoring.final_score(
                hit["relevance"], hit["recency"], hit["importance"], hit["reinforcement"], k
            ),
            hit["question"],
            None,
            k,
        )
        assert hit["score"] == pytest.approx(
            base * scoring.entity_boost(hit["entity_match"] == 1.0, k), rel=1e-3
        )


def test_a_chinese_name_in_the_query_prefers_that_person(store: Any) -> None:
    store.add_memory("小李周末喜欢去西湖边跑步", "user_profile")
    store.add_memory("小王喜欢跑步", "user_profile")
    hits = store.search("小王周末喜欢做什么？", top_k=2)
    assert hits[0]["text"] == "小王喜欢跑步"
    assert [h["entity_match"] for h in hits] == [1.0, 0.0]


def test_the_default_ranking_weighs_named_entities(store: Any) -> None:
    assert store.ranking.entity_weight > 0
    store.add_memory("Tom moved the team standup to Tuesdays", "project_status")
    hit = store.search("When is Tom's standup?", top_k=1)[0]
    assert hit["entity_match"] == 1.0


def test_a_negative_entity_weight_is_refused() -> None:
    from memory_pg.errors import ConfigurationError

    with pytest.raises(ConfigurationError):
        RankingSettings(entity_weight=-0.1)
