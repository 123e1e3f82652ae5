"""A batch write decides each memory as if it were written alone, after the ones before it."""

from __future__ import annotations

import dataclasses
import random
import uuid
from typing import Any

import numpy as np
import pytest

from memory_pg import supersession
from memory_pg.config import SupersedePolicy
from memory_pg.sql import memories as sql_memories

TEXTS = [
    "The user prefers dark mode",
    "The user prefers light mode",
    "We will use MySQL as the database",
    "We will use MySQL as our database",
    "note about item 3",
    "note about item 4",
    "我喜欢猫",
    "我讨厌狗",
    "数据库使用 MySQL",
    "数据库改用 PostgreSQL，不再使用 MySQL",
    "We switched the frontend from React to Svelte",
    "Our frontend uses React",
    "Which database did we decide to use?",
]


class _Core:
    def __init__(self, policy: SupersedePolicy, judge: supersession.Judge | None = None) -> None:
        self.supersede = policy
        self.judge = judge

    def decide_batch(
        self, rows: list[sql_memories.NewMemory], found: list[list[supersession.Candidate]]
    ) -> list[supersession.Decision]:
        return supersession.decide_batch(rows, found, self.supersede, self.judge)


def _reference(
    core: _Core, rows: list[sql_memories.NewMemory], found: list[list[supersession.Candidate]]
) -> list[supersession.Decision]:
    """Every earlier row of the batch compared with every later one (the first design)."""
    decisions: list[supersession.Decision] = []
    for i, row in enumerate(rows):
        cands = list(found[i])
        for j in range(i):
            earlier, dj = rows[j], decisions[j]
            if dj.action == "merge" or earlier.memory_type != row.memory_type:
                continue
            sim = float(np.dot(earlier.embedding, row.embedding))
            same_topic = row.topic is not None and dj.topic == row.topic
            cands.append(
                supersession.Candidate(
                    earlier.id, dj.topic, earlier.text, earlier.content_hash, sim, same_topic
                )
            )
        gone = {t for d in decisions if d.action == "supersede" for t in d.targets}
        cands = [c for c in cands if c.id not in gone]
        d = supersession.decide(
            memory_type=row.memory_type,
            topic=row.topic,
            content_hash=row.content_hash,
            new_text=row.text,
            candidates=cands,
            policy=core.supersede,
            judge=core.judge,
        )
        if d.topic != row.topic:
            rows[i] = dataclasses.replace(row, topic=d.topic)
        decisions.append(d)
    return decisions


def _batch(rng: random.Random, n: int) -> tuple[list[sql_memories.NewMemory], list[Any]]:
    """Rows whose vectors repeat, nearly repeat and tie, with shared texts and topics."""
    base = np.random.default_rng(rng.randrange(1 << 30)).normal(size=(6, 16)).astype(np.float32)
    rows, found = [], []
    old = [uuid.uuid4() for _ in range(3)]
    for _ in range(n):
        v = base[rng.randrange(len(base))].copy()
        if rng.random() < 0.5:  # a near repeat; otherwise exactly the same vector (a tie)
            v += np.float32(rng.choice([0.01, 0.05, 0.3])) * rng.random()
        v /= np.linalg.norm(v)
        text = rng.choice(TEXTS)
        rows.append(
            sql_memories.NewMemory(
                id=uuid.uuid4(),
                user_id="alice",
                memory_type=rng.choice(["key_decision", "user_profile", "dialogue"]),
                text=text,
                embedding=v,
                embedding_model="m",
                content_hash=text if rng.random() < 0.8 else text + "!",
                metadata={},
                topic=rng.choice([None, None, "db", "ui"]),
                importance=0.5,
                event_time=None,
                words=(text, "", "", "", ""),
                attributes=(),
            )
        )
        found.append(
            [
                supersession.Candidate(
                    rng.choice(old),
                    rng.choice([None, "db"]),
                    rng.choice(TEXTS),
                    rng.choice(TEXTS),
                    rng.choice([0.5, 0.85, 0.97, 1.0]),
                    rng.random() < 0.2,
                )
                for _ in range(rng.randrange(3))
            ]
        )
    return rows, found


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("judged", [False, True])
def test_batch_decisions_match_comparing_every_pair(seed: int, judged: bool) -> None:
    def judge(prompt: str) -> str:
        return ["CONTRADICTS", "SAME", "DIFFERENT"][len(prompt) % 3]

    core = _Core(SupersedePolicy(merge_threshold=0.97), judge if judged else None)
    rng = random.Random(seed)
    rows, found = _batch(rng, rng.choice([2, 10, 60]))
    expected_rows = list(rows)
    expected = _reference(core, expected_rows, found)
    got_rows = list(rows)
    assert core.decide_batch(got_rows, found) == expected
    assert got_rows == expected_rows  # the same topics inherited


def test_supersession_off_adds_everything() -> None:
    rows, found = _batch(random.Random(1), 30)
    decisions = _Core(SupersedePolicy(enabled=False)).decide_batch(list(rows), found)
    assert [d.action for d in decisions] == ["add"] * 30
    assert [d.topic for d in decisions] == [r.topic for r in rows]
