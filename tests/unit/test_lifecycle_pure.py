"""Pure lifecycle rules: the supersession decision, the judge's answers, clustering, merging."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from memory_pg.config import SupersedePolicy
from memory_pg.errors import InvalidArgument
from memory_pg.jobs.consolidate import clusters, merge_fragments
from memory_pg.jobs.reembed import RECORD_FIX, _checked_graph
from memory_pg.sql import blocks as sql_blocks
from memory_pg.supersession import Candidate, ask_judge, decide

P = SupersedePolicy()


def cand(sim, *, topic=None, same_topic=False, h="h-old", text="old"):
    return Candidate(uuid.uuid4(), topic, text, h, sim, same_topic)


def test_decide_rules_in_order():
    assert (
        decide(
            memory_type="key_decision",
            topic=None,
            content_hash="h",
            new_text="x",
            candidates=[],
            policy=P,
        ).action
        == "add"
    )
    dup = cand(0.5, h="h")
    d = decide(
        memory_type="dialogue",
        topic=None,
        content_hash="h",
        new_text="x",
        candidates=[dup],
        policy=P,
    )
    assert (d.action, d.reason, d.targets) == ("merge", "duplicate", (dup.id,))
    d = decide(
        memory_type="dialogue",
        topic=None,
        content_hash="h",
        new_text="We use MySQL as our database",
        candidates=[cand(0.96, text="we use MySQL as the database")],
        policy=P,
    )
    assert (d.action, d.reason) == ("merge", "near_duplicate")
    d = decide(
        memory_type="dialogue",
        topic=None,
        content_hash="h",
        new_text="note about item 4",
        candidates=[cand(0.99, text="note about item 3")],
        policy=P,
    )
    assert d.action == "add"
    same = cand(0.1, topic="db", same_topic=True)
    d = decide(
        memory_type="todo",
        topic="db",
        content_hash="h",
        new_text="x",
        candidates=[same, cand(0.5)],
        policy=P,
    )
    assert (d.action, d.reason, d.targets) == ("supersede", "topic", (same.id,))
    d = decide(
        memory_type="dialogue",
        topic=None,
        content_hash="h",
        new_text="x",
        candidates=[cand(0.9)],
        policy=P,
    )
    assert d.action == "add"
    near = cand(0.85, topic="ui", text="The user prefers dark mode")
    d = decide(
        memory_type="user_profile",
        topic=None,
        content_hash="h",
        new_text="The user prefers light mode",
        candidates=[near],
        policy=P,
    )
    assert (d.action, d.reason, d.topic) == ("supersede", "similar", "ui")
    d = decide(
        memory_type="user_profile",
        topic=None,
        content_hash="h",
        new_text="x",
        candidates=[cand(0.7)],
        policy=P,
    )
    assert d.action == "add"


def test_judge_is_asked_only_above_its_threshold():
    asked = []

    def judge(prompt):
        asked.append(prompt)
        return "contradicts."

    low = decide(
        memory_type="key_decision",
        topic=None,
        content_hash="h",
        new_text="new",
        candidates=[cand(0.5)],
        policy=P,
        judge=judge,
    )
    assert low.action == "add" and not asked
    high = decide(
        memory_type="key_decision",
        topic=None,
        content_hash="h",
        new_text="new",
        candidates=[cand(0.65, text="old fact")],
        policy=P,
        judge=judge,
    )
    assert (high.action, high.reason) == ("supersede", "judge")
    assert "old fact" in asked[0] and "new" in asked[0]


def test_judge_answers_are_read_conservatively():
    assert ask_judge(lambda p: "CONTRADICTS", "a", "b") == "supersede"
    assert ask_judge(lambda p: "```\nSAME\n```", "a", "b") == "merge"
    assert ask_judge(lambda p: "DIFFERENT", "a", "b") == "add"
    assert ask_judge(lambda p: "I think they are the same", "a", "b") == "add"
    assert ask_judge(lambda p: "", "a", "b") == "add"


def test_clusters_are_connected_components_above_threshold():
    v = np.array([[1, 0, 0], [0.95, 0.31, 0], [0, 1, 0], [0, 0, 1], [0, 0.1, 0.99]], "float32")
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    assert clusters(v, 0.9, 2) == [[0, 1], [3, 4]]
    assert clusters(v, 0.9, 3) == []
    assert clusters(v[:0], 0.9, 2) == []


def test_offline_merge_keeps_every_distinct_sentence_once():
    merged = merge_fragments(
        ["Buy milk.", "Buy milk. Also buy eggs!", "买牛奶。还要买面包。", "buy MILK"]
    )
    assert merged.startswith("Buy milk. Also buy eggs!")
    assert merged.count("milk") == 1 and "买面包" in merged and "买牛奶" in merged
    assert merge_fragments(["same", "same"]) == "same"


def test_offline_merge_keeps_a_sentence_that_is_only_part_of_a_word_or_number():
    """A review found "给王总转账100" merged away: it is a substring of "…1000…"."""
    merged = merge_fragments(["给王总转账1000元房租", "给王总转账100"])
    assert merged == "给王总转账1000元房租。给王总转账100。"
    assert merge_fragments(["I like teapots", "I like tea"]) == "I like teapots. I like tea."
    assert merge_fragments(["我喜欢猫，也喜欢狗", "我喜欢猫"]) == "我喜欢猫，也喜欢狗"
    assert merge_fragments(["Call Bob, then Ann", "call bob"]) == "Call Bob, then Ann"
    # A version is a number too; a match never spans two sentences (a second review).
    assert (
        merge_fragments(["Use Python 3.12 here", "Python 3"]) == "Use Python 3.12 here. Python 3."
    )
    kept = merge_fragments(["Meeting on Monday", "Deploy Friday", "Monday deploy"])
    assert kept == "Meeting on Monday. Deploy Friday. Monday deploy."
    # Chinese has no spaces: a clause inside a longer one is a repeat, as before.
    assert merge_fragments(["用户每天早上喝咖啡", "每天早上喝咖啡"]) == "用户每天早上喝咖啡"


def test_offline_merge_reads_as_sentences_not_one_run_on_line():
    """Issue 37: "...next Friday Finish the payment module next week The payment module must be"."""
    merged = merge_fragments(
        [
            "The release is planned for next Friday",
            "Finish the payment module next week",
            "The payment module must be reviewed by Ann!",
        ]
    )
    assert merged == (
        "The payment module must be reviewed by Ann! The release is planned for next "
        "Friday. Finish the payment module next week."
    )
    assert merge_fragments(["下周完成支付模块", "周五上线", "支付模块要由小王审核；"]) == (
        "支付模块要由小王审核；下周完成支付模块。周五上线。"
    )
    # Mixed: each part by its own language; a part already ended keeps its mark.
    assert merge_fragments(["我们用 PostgreSQL 作为数据库", "Deploy with Docker (compose)"]) == (
        "Deploy with Docker (compose). 我们用 PostgreSQL 作为数据库。"
    )


def test_sql_blocks_are_named():
    blocks = sql_blocks()
    assert {"insert_candidates", "reembed_write_batch", "hnsw_index_create"} <= set(blocks)
    assert all(not b.startswith("--") and b for b in blocks.values())


def test_word_overlap_reads_chinese_words_and_numbers():
    from memory_pg.supersession import word_overlap

    assert word_overlap("我喜欢猫", "我讨厌狗") == 0.0
    assert word_overlap("meeting at 3pm", "meeting at 4pm") == 1 / 3
    assert word_overlap("We will use MySQL as the database", "we use MySQL as our database") == 1
    assert word_overlap("使用 PostgreSQL 作为数据库", "使用 postgresql 作为数据库") == 1.0


def test_reembed_takes_only_graph_settings_pgvector_can_build():
    # Options over the schema's; PostgreSQL would read 040 as octal and 0x20 as hex.
    assert _checked_graph({"ef_construction": "200"}, RECORD_FIX) == {
        "m": 16,
        "ef_construction": 200,
    }
    assert _checked_graph({}, RECORD_FIX) == {"m": 16, "ef_construction": 64}
    for bad in ({"m": "040"}, {"m": "0x20"}, {"m": "101"}, {"ef_construction": "3"}, {"m": 48}):
        with pytest.raises(InvalidArgument, match="hnsw_index"):
            _checked_graph(bad, RECORD_FIX)
