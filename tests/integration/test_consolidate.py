"""Consolidation: near-duplicate fragments of one user become one summary; nothing is lost."""

from __future__ import annotations

from memory_pg.config import ConsolidatePolicy
from memory_pg.jobs.consolidate import CONSOLIDATE_LOCK, consolidate

# Pairwise cosine 0.76-0.86 with the bundled model: related, but below the 0.95 at
# which a write already merges them.
FRAGMENTS = [
    "Buy milk tomorrow",
    "Pick up milk at the store tomorrow",
    "Buy milk and eggs tomorrow",
]


def test_fragments_become_one_summary_and_stay_in_history(store, make_store):
    ids = store.add_memories(FRAGMENTS)
    other = store.add_memory("The deploy is scheduled for Friday")
    bob_store = make_store(user_id="bob")
    bob = bob_store.add_memories(FRAGMENTS)

    dry = consolidate(store, user_id="alice", dry_run=True)
    assert (dry.clusters, dry.merged) == (1, 3)
    assert {r["id"] for r in store.list_memories()} == {*ids, other}

    report = consolidate(store, user_id="alice")
    assert (report.clusters, report.merged) == (1, 3)
    (summary_id,) = report.summaries
    current = {r["id"]: r for r in store.list_memories()}
    assert set(current) == {summary_id, other}
    assert "milk" in current[summary_id]["text"]
    for fragment in ids:
        row = store.get(fragment)
        assert row["superseded_by"] == summary_id
        assert store.history(fragment)[-1]["event"] == "merged"
        assert store.history(fragment)[-1]["detail"]["into"] == summary_id
    assert store.search("buy milk", top_k=1)[0]["id"] == summary_id
    # bob's fragments are bob's: untouched by alice's run
    assert {r["id"] for r in bob_store.list_memories()} == set(bob)
    assert consolidate(store, user_id="alice").clusters == 0


def test_summarize_hook_and_all_users(make_store):
    store = make_store()  # unbound: a store bound to a user consolidates only that user
    store.add_memories(FRAGMENTS, user_id="alice")
    store.add_memories(FRAGMENTS, user_id="bob")
    seen = []

    def summarize(fragments):
        seen.append(list(fragments))
        return "Buy milk tomorrow morning (summary)"

    report = consolidate(store, ConsolidatePolicy(threshold=0.8), summarize=summarize)
    assert report.users == 2 and report.clusters == 2
    assert sorted(seen[0]) == sorted(FRAGMENTS)
    texts = [r["text"] for r in store.list_memories(user_id="bob")]
    assert texts == ["Buy milk tomorrow morning (summary)"]


def test_second_run_skips_while_one_holds_the_lock(store, raw):
    import psycopg

    store.add_memories(FRAGMENTS)
    holder = psycopg.connect(raw.info.dsn, autocommit=True)
    try:
        holder.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (CONSOLIDATE_LOCK,))
        report = consolidate(store)
    finally:
        holder.close()
    assert report.skipped and report.clusters == 0
    assert len(store.list_memories()) == 3


def test_unrelated_chinese_fragments_are_not_merged(make_store):
    """All-[UNK] Chinese texts share a vector under the bundled model; words keep them apart."""
    from memory_pg.jobs.consolidate import consolidate

    store = make_store(user_id="zh")
    store.add_memories(
        [
            {"text": "明天去超市买牛奶", "memory_type": "todo"},
            {"text": "周五提交季度报告", "memory_type": "todo"},
        ]
    )
    report = consolidate(store, user_id="zh")
    assert report.clusters == 0
    assert len(store.list_memories()) == 2


def test_a_fragment_that_is_part_of_a_number_in_another_keeps_its_words(store):
    """ "给王总转账100" was marked merged, its text nowhere in the summary: it is a
    substring of "给王总转账1000元房租" (a review found it)."""
    store.add_memories(
        [
            {"text": "给王总转账1000元房租", "memory_type": "todo"},
            {"text": "给王总转账100", "memory_type": "todo"},
        ]
    )
    consolidate(store, user_id="alice")
    current = " ".join(m["text"] for m in store.list_memories())
    assert "给王总转账100" in current.replace("给王总转账1000", "")
