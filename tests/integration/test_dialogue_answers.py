"""A conversation kept turn by turn: a question's answer, not the question, ranks first.

A question ("What are their names?") shares the query's words; the turn after it
("Luna and Oliver!") holds the fact. The search lowers the question and lifts the
turn that follows it (see RankingSettings.question_discount / answer_share).
"""

from __future__ import annotations

from typing import Any

import pytest

from memory_pg import scoring
from memory_pg.config import RankingSettings

TURNS = [
    "Caroline: Your cats are adorable! What are the names of your cats?",
    "Melanie: Luna and Oliver! They are so sweet and playful.",
    "Caroline: I went hiking in the mountains last weekend.",
    "Melanie: Sounds lovely, I went to a pottery class myself.",
]


def _conversation(store: Any) -> list[str]:
    return store.add_memories([{"text": t, "metadata": {"session_id": "s1"}} for t in TURNS])


def test_the_answer_to_a_question_ranks_above_the_question(store: Any) -> None:
    ids = _conversation(store)
    hits = store.search("What are the names of Melanie's cats?", top_k=3, track_access=False)
    by_id = {h["id"]: h for h in hits}
    assert hits[0]["id"] == ids[1]  # the answer
    assert by_id[ids[0]]["question"] is True and by_id[ids[1]]["question"] is False
    # It ranks on the question's score: answer_share of it, as the scoring module says.
    assert by_id[ids[1]]["answer_score"] is not None
    assert by_id[ids[1]]["score"] >= by_id[ids[1]]["answer_score"]
    assert by_id[ids[0]]["answer_score"] is None


def test_without_the_weighing_the_question_ranks_first(make_store: Any) -> None:
    plain = make_store(
        user_id="alice", ranking=RankingSettings(question_discount=0.0, answer_share=0.0)
    )
    ids = _conversation(plain)
    hits = plain.search("What are the names of Melanie's cats?", top_k=3, track_access=False)
    assert hits[0]["id"] == ids[0]
    assert all(h["answer_score"] is None for h in hits)


def test_an_answer_is_lifted_only_for_its_own_question(store: Any) -> None:
    # The same words in another conversation: no link, so no lift across sessions.
    store.add_memories(
        [
            {"text": "Caroline: What are the names of your cats?", "metadata": {"session_id": "a"}},
            {"text": "Melanie: I went to a pottery class.", "metadata": {"session_id": "b"}},
        ]
    )
    hits = store.search("names of the cats", top_k=2, track_access=False)
    assert all(h["answer_score"] is None for h in hits)


def test_the_sql_score_is_the_scoring_modules(store: Any) -> None:
    _conversation(store)
    ranking = store.ranking
    for hit in store.search("What are the names of Melanie's cats?", top_k=4, track_access=False):
        assert hit["question"] is scoring.asks(hit["text"])
        plain = scoring.final_score(
            hit["relevance"], hit["recency"], hit["importance"], hit["reinforcement"], ranking
        )
        # The query names Melanie: the entity part comes before the turns are weighed.
        plain *= scoring.entity_boost(hit["entity_match"], ranking)
        expected = scoring.dialogue_score(plain, hit["question"], hit["answer_score"], ranking)
        assert hit["score"] == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize(
    "text",
    [
        "好吗？\u3000",  # an ideographic space after it
        "Names of the cats?\u00a0",  # a no-break space
        "Names of the cats?\x1c",  # a separator, not a blank
        "Is it? Yes, it is.",
    ],
)
def test_postgresql_and_python_agree_on_what_asks(store: Any, text: str) -> None:
    store.add_memory(text)
    [hit] = store.search(text, top_k=1, track_access=False)
    assert hit["question"] is scoring.asks(text)
