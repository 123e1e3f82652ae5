"""Search ranks like memory: relevance first, then recency, importance and use."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from memory_pg import scoring
from memory_pg.config import RankingSettings
from memory_pg.errors import EmptyText, InvalidText, TextTooLong
from memory_pg.plans import read
from memory_pg.sql import lexical as sql_lexical
from memory_pg.sql import search as sql_search
from memory_pg.text.query import analyse
from tests.conftest import count_rows


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
    store.flush_uses()
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


def test_full_text_score_is_bm25_as_the_scoring_module_computes_it(store: Any, raw: Any) -> None:
    short = store.add_memory("the team chose PostgreSQL")
    long = store.add_memory("PostgreSQL replication lag worried the team on the old server")
    store.add_memory("buy milk tomorrow")
    store.add_memory("the cat sleeps all day")
    hits = {h["id"]: h for h in store.search("PostgreSQL team", top_k=4, track_access=False)}
    own = {}
    for memory_id in (short, long):
        row = raw.execute(
            "SELECT length(search_tsv) FROM memory_pg_memories WHERE id = %s", (memory_id,)
        ).fetchone()
        own[memory_id] = row[0]
    # Both words are in 2 of the user's 4 memories; both memories hold both words.
    matched = 2 * scoring.idf(4, 2)
    best = scoring.bm25(matched, own[short])
    assert own[short] < own[long]
    assert hits[short]["lexical"] == pytest.approx(1.0)
    assert hits[long]["lexical"] == pytest.approx(scoring.bm25(matched, own[long]) / best, rel=1e-6)
    assert hits[long]["lexical"] < 1.0


def test_of_two_equally_relevant_memories_the_newer_ranks_first(store: Any) -> None:
    store.add_memory("Alex's favourite colour is blue", event_time=_ago(200))
    store.add_memory("Alex's favourite colour is green", event_time=_ago(1))
    hits = store.search("What is Alex's favourite colour?", top_k=2)
    assert [h["text"] for h in hits] == [
        "Alex's favourite colour is green",
        "Alex's favourite colour is blue",
    ]
    assert hits[0]["recency"] > hits[1]["recency"]


def test_a_clearly_more_relevant_old_memory_beats_a_barely_relevant_new_one(store: Any) -> None:
    store.add_memory(
        "The team chose PostgreSQL as the production database",
        "key_decision",
        event_time=_ago(400),
    )
    store.add_memory("We talked about the weekend and the database meetup", event_time=_ago(0))
    hits = store.search("Which production database did the team choose?", top_k=2)
    assert hits[0]["text"] == "The team chose PostgreSQL as the production database"
    assert hits[0]["recency"] < hits[1]["recency"]


def test_a_todo_fades_faster_than_a_profile(make_store: Any) -> None:
    store = make_store(user_id="alice")
    store.add_memory("Call the dentist about the appointment", "todo", event_time=_ago(60))
    store.add_memory("Alex sees the dentist every six months", "user_profile", event_time=_ago(60))
    hits = {h["memory_type"]: h for h in store.search("dentist appointment", top_k=2)}
    assert hits["todo"]["recency"] < hits["user_profile"]["recency"]
    faster = make_store(
        user_id="alice", ranking=RankingSettings(half_life_days={"user_profile": 1.0})
    )
    again = {h["memory_type"]: h for h in faster.search("dentist appointment", top_k=2)}
    assert again["user_profile"]["recency"] < 0.01


def test_superseded_and_expired_memories_are_hidden_unless_asked(store: Any, raw: Any) -> None:
    old = store.add_memory("We use MySQL as the database", "key_decision")
    new = store.add_memory("We use PostgreSQL as the database", "key_decision")
    gone = store.add_memory("The database sprint ends Friday", "todo", expires_at=_ago(-1))
    raw.execute(
        "UPDATE memory_pg_memories SET superseded_at = now(), superseded_by = %s WHERE id = %s",
        (new, old),
    )
    raw.execute("UPDATE memory_pg_memories SET expires_at = now() WHERE id = %s", (gone,))
    ids = {h["id"] for h in store.search("database", top_k=10)}
    assert ids == {new}
    # Just after the writes, before the supersession and the expiry: both were current.
    written = store.get(gone)["created_at"]
    past = {h["id"] for h in store.search("database", top_k=10, as_of=written)}
    assert old in past and gone in past


def test_filters_by_type_time_and_metadata(store: Any) -> None:
    store.add_memory(
        "Deploy the API on Kubernetes", "key_decision", {"project": "api"}, event_time=_ago(40)
    )
    store.add_memory(
        "Deploy the web app on Vercel", "key_decision", {"project": "web"}, event_time=_ago(5)
    )
    store.add_memory("Deploy the API before Friday", "todo", {"project": "api"}, event_time=_ago(2))
    q = "where do we deploy"
    assert {h["memory_type"] for h in store.search(q, memory_types=["todo"])} == {"todo"}
    recent = store.search(q, since=_ago(10))
    assert {h["text"] for h in recent} == {
        "Deploy the web app on Vercel",
        "Deploy the API before Friday",
    }
    old = store.search(q, until=_ago(10))
    assert [h["text"] for h in old] == ["Deploy the API on Kubernetes"]
    api = store.search(q, metadata_filter={"project": "api"})
    assert {h["metadata"]["project"] for h in api} == {"api"}
    assert len(api) == 2


def test_results_never_cross_users(make_store: Any) -> None:
    alice = make_store(user_id="alice")
    bob = make_store(user_id="bob")
    alice.add_memory("Alice's password hint is the name of her cat")
    bob.add_memory("Bob likes hiking")
    texts = [h["text"] for h in bob.search("password hint cat", top_k=10)]
    assert texts == ["Bob likes hiking"]
    texts = [h["text"] for h in alice.search("hiking", top_k=10, user_id="alice")]
    assert texts == ["Alice's password hint is the name of her cat"]


def test_returned_memories_are_marked_used_in_one_statement(store: Any, raw: Any) -> None:
    store.add_memory("I prefer tea over coffee")
    store.add_memory("The office is in Berlin")
    hits = store.search("tea or coffee?", top_k=1)
    store.flush_uses()
    rows = dict(
        raw.execute(
            "SELECT text, access_count FROM memory_pg_memories WHERE user_id = 'alice'"
        ).fetchall()
    )
    assert rows[hits[0]["text"]] == 1
    assert sorted(rows.values()) == [0, 1]
    store.search("tea or coffee?", top_k=1, track_access=False)
    again = store.search("tea or coffee?", top_k=2)
    assert again[0]["access_count"] == 1  # as it was before this search
    store.flush_uses()
    assert (
        raw.execute(
            "SELECT access_count FROM memory_pg_memories WHERE text = %s", (hits[0]["text"],)
        ).fetchone()[0]
        == 2
    )


def test_uses_written_later_rank_as_uses_counted_by_the_search(make_store: Any) -> None:
    """The same searches of the same memories, their uses counted by each search
    (``use_flush_s=0``) or batched and written after: once written, the counts, and
    so the rankings, are the same."""
    from memory_pg.config import StoreSettings

    inline = make_store(user_id="inline", settings=StoreSettings(use_flush_s=0))
    batched = make_store(user_id="batched")
    texts = [
        "We deploy with Kubernetes on GCP",
        "The deploy pipeline runs on GitHub Actions",
        "Deploys are frozen on Fridays",
        "The staging cluster is deployed nightly",
        "I like hiking on weekends",
    ]
    for store in (inline, batched):
        store.add_memories([{"text": t, "memory_type": "key_decision"} for t in texts])
    queries = ["how do we deploy", "deploy pipeline", "Fridays", "how do we deploy", "staging"]
    for query in queries:
        for store in (inline, batched):
            store.search(query, top_k=2)
    assert batched.flush_uses() > 0
    assert inline.pending_uses == 0  # nothing waits: each search wrote its own

    def seen(store: Any) -> list[tuple[str, int, float]]:
        hits = store.search("deploy", top_k=5, track_access=False)
        return [(h["text"], h["access_count"], round(h["reinforcement"], 3)) for h in hits]

    assert seen(batched) == seen(inline)
    assert {count for _, count, _ in seen(batched)} != {0}


def test_the_touch_rides_in_the_search_statement(store: Any) -> None:
    import numpy as np
    from sqlalchemy.dialects import postgresql

    # One statement ranks and marks what it returns: a single UPDATE, no second trip.
    vector = np.zeros(store.embedder.dimension, dtype=np.float32)
    stmt = sql_search.search_memories(
        "alice", analyse("tea"), vector, top_k=5, filters=sql_search.SearchFilters(), touch=True
    )
    sql = str(stmt.compile(dialect=postgresql.dialect()))
    assert sql.count("UPDATE memory_pg_memories SET") == 1
    assert "access_count" in sql and "last_accessed_at" in sql
    assert "FOR NO KEY UPDATE SKIP LOCKED" in sql  # it never waits on a row another one holds
    plan = read.plan_search("alice", "tea", vector, 5, sql_search.SearchFilters(), True)
    statements = [next(plan)]
    with pytest.raises(StopIteration):
        plan.send([])
    # The store runs the shared statement of the search's shape with this search's values.
    shared, values = statements[-1]
    assert values["search_user_id"] == "alice"
    assert "UPDATE" in str(shared.compile(dialect=postgresql.dialect()))


def test_a_search_runs_with_the_hnsw_settings_set_beside_the_tenant(store: Any) -> None:
    from sqlalchemy import text

    from memory_pg.plans.protocol import final
    from tests.integration._exchanges import traced

    store.add_memory("The production database is PostgreSQL 16")
    with traced(store.engine) as trace:
        assert store.search("database", top_k=1)
    # One exchange (memory_pg.exchange): BEGIN, the settings, the user's plan mode
    # (memory_pg.sql.setup.plan_for_user), the search, COMMIT.
    (exchange,) = trace.exchanges
    statements = exchange.statements()
    assert "BEGIN" in statements[0] and "COMMIT" in statements[-1]
    assert "'relaxed_order'" in statements[1] and "plan_cache_mode" in statements[2]
    assert "access_count" in statements[3]
    binds = [body for kind, body in exchange.sent if kind == "Bind"]
    assert f"'{store.user_id}'" in binds[1] and f"'{store.ef_search}'" in binds[1]

    # What a statement pipelined after them sees, the search's place in the transaction.
    def plan() -> Any:
        rows = yield final(
            text(
                "SELECT current_setting('memory_pg.user_id') AS tenant, "
                "current_setting('hnsw.iterative_scan') AS scan, "
                "current_setting('hnsw.ef_search') AS ef"
            )
        )
        return tuple(rows[0].values())

    seen = store.run_plan(plan(), store.user_id, ef_search=store.ef_search)
    # Iterative scans keep a user's filter exact on the HNSW path; set for this transaction.
    assert seen == (store.user_id, "relaxed_order", str(store.ef_search))
    with store.engine.connect() as conn:  # the same pooled connection, after the commit
        outside = conn.exec_driver_sql("SELECT current_setting('hnsw.iterative_scan')").scalar()
    # pgvector's default, or the empty placeholder in a session that has not loaded it.
    assert outside in ("off", "")


def test_relevance_gates_drop_unrelated_results(store: Any) -> None:
    store.add_memory("The production database is PostgreSQL 16")
    store.add_memory("Alex's cat is called Miso")
    kept = store.search("database version", top_k=5, min_similarity=0.35, min_lexical=0.01)
    assert [h["text"] for h in kept] == ["The production database is PostgreSQL 16"]
    assert (
        store.search(
            "quantum chromodynamics lecture", top_k=5, min_similarity=0.35, min_lexical=0.01
        )
        == []
    )


def test_a_rare_query_word_outweighs_a_common_one(make_store: Any) -> None:
    # "Caroline" is in every memory of this user, "pottery" in one: BM25 weighs the rare
    # word, where a plain word count would tie them and let the longer text win.
    store = make_store(user_id="mel")
    store.add_memories(
        [f"Caroline talked about her day at work, number {i}, with friends" for i in range(12)]
        + ["Caroline took a pottery class", "Caroline and Caroline's friends went hiking"]
    )
    hits = store.search("Caroline pottery", top_k=3, track_access=False)
    assert hits[0]["text"] == "Caroline took a pottery class"
    assert hits[0]["lexical"] == pytest.approx(1.0)
    assert all(h["lexical"] < 0.5 for h in hits[1:])


def test_a_memory_is_found_through_its_context(store: Any) -> None:
    # The answer alone shares no word with the question; the question it answered does.
    store.add_memory("some filler about the weather being nice today")
    answer = store.add_memory(
        "Yes, last Friday, it was great!",
        context="Did you go to the LGBTQ support group meeting?",
    )
    hits = store.search("When did she go to the support group?", top_k=2, track_access=False)
    assert hits[0]["id"] == answer
    assert hits[0]["text"] == "Yes, last Friday, it was great!"
    assert hits[0]["context"] == "Did you go to the LGBTQ support group meeting?"
    assert hits[0]["lexical"] > 0


def test_a_word_of_the_memory_itself_beats_the_same_word_in_a_context(store: Any) -> None:
    own = store.add_memory("I adopted a puppy named Oscar")
    framed = store.add_memory("That sounds lovely", context="I adopted a puppy named Oscar")
    hits = {h["id"]: h for h in store.search("puppy Oscar", top_k=5, track_access=False)}
    assert hits[own]["lexical"] == pytest.approx(1.0)
    assert 0 < hits[framed]["lexical"] < hits[own]["lexical"]
    assert hits[own]["score"] > hits[framed]["score"]


def test_context_is_checked_like_text_and_a_bad_one_writes_nothing(store: Any, raw: Any) -> None:
    before = count_rows(raw, "memory_pg_memories")
    with pytest.raises(InvalidText, match="context"):
        store.add_memory("fine", context=42)
    with pytest.raises(EmptyText, match="context"):
        store.add_memories(["fine", {"text": "also fine", "context": "   "}])
    with pytest.raises(TextTooLong, match="context"):
        store.add_memory("fine", context="x" * 9000)
    assert count_rows(raw, "memory_pg_memories") == before


def test_a_query_of_only_common_words_still_matches_them(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # For a user with more memories than the IDF sample, a word in more than
    # PULL_MAX_SHARE of the sample stops pulling full-text candidates (that bounds a
    # heavy user's search) unless every word of the query is that common.
    monkeypatch.setattr(sql_lexical, "IDF_SAMPLE", 5)
    monkeypatch.setattr(sql_lexical, "PULL_MAX_SHARE", 0.25)
    store.add_memories([f"coffee with Anna, visit {i}" for i in range(5)] + ["a tea ceremony"])
    common_only = store.search("coffee", top_k=5, track_access=False)
    assert len(common_only) == 5 and all(h["lexical"] > 0 for h in common_only[:5])
    mixed = store.search("coffee tea", top_k=6, track_access=False)
    assert mixed[0]["text"] == "a tea ceremony"
    # "coffee" pulled nothing: the full-text leg alone finds the tea memory only (in
    # the hybrid search the coffee memories come from the vector leg, and score there).
    alone = store.search("coffee tea", top_k=6, full_text_only=True, track_access=False)
    assert [h["text"] for h in alone] == ["a tea ceremony"]
