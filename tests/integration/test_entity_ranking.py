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
            base * scoring.entity_boost(hit["entity_match"], k), rel=1e-3
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


def test_a_name_that_no_candidate_names_changes_no_score(make_store: Any) -> None:
    weighed = make_store(user_id="alice")
    weighed.add_memories(
        [
            {"text": "Deploys go out on Thursdays after the review", "memory_type": "key_decision"},
            {"text": "The review meeting is on Wednesdays", "memory_type": "key_decision"},
        ]
    )
    plain = make_store(user_id="alice", ranking=RankingSettings(entity_weight=0.0))
    query = "When does Priya deploy?"  # Priya is named by no memory
    before = {h["id"]: h["score"] for h in plain.search(query, top_k=2, track_access=False)}
    after = weighed.search(query, top_k=2, track_access=False)
    # Not applied: no candidate names Priya, and the results say so.
    assert [h["entity_match"] for h in after] == [None, None]
    # (recency moves on between the two searches: a millionth, not a tenth)
    assert {h["id"]: h["score"] for h in after} == pytest.approx(before, rel=1e-6)


def test_a_memory_with_no_mention_rows_still_names_the_entity_by_its_text(
    store: Any, raw: Any
) -> None:
    # Memories written before mentions were kept (migration 0007) have none.
    old = store.add_memory("Melanie painted a horse in the barn", "dialogue")
    store.add_memory("Caroline painted a sunset over the lake", "dialogue")
    raw.execute("DELETE FROM memory_pg_memory_entities WHERE memory_id = %s", (old,))
    hits = {h["id"]: h for h in store.search("What did Melanie paint?", top_k=2)}
    assert hits[old]["entity_match"] == 1.0


def test_an_entity_the_text_does_not_spell_is_found_through_its_mention(store: Any) -> None:
    # The LLM named the person of "小王 joined" 王伟: a query for 王伟 names that memory.
    ours, _ = store.add_memories(
        [
            {
                "text": "小王 joined the design team",
                "entities": [{"name": "王伟", "kind": "person", "aliases": ["小王"]}],
            },
            {"text": "小李 joined the design team"},
        ]
    )
    hits = {h["id"]: h["entity_match"] for h in store.search("王伟 joined which team?", top_k=2)}
    assert hits[ours] == 1.0 and sorted(hits.values()) == [0.0, 1.0]


def test_a_name_is_matched_with_its_capitals(store: Any) -> None:
    # "Bill" the person, not the electricity bill.
    person = store.add_memory("Bill said the budget is tight this quarter", "dialogue")
    thing = store.add_memory("I have to pay the electricity bill, the budget is tight", "dialogue")
    hits = {h["id"]: h["entity_match"] for h in store.search("What did Bill say about the budget?")}
    assert (hits[person], hits[thing]) == (1.0, 0.0)
