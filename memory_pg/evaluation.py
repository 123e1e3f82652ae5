"""Retrieval evaluation: load memories and questions into a throwaway user, measure ranking.

An evaluation set is JSON::

    {"name": "...",
     "memories": [{"key": "db", "type": "key_decision", "text": "使用 PostgreSQL",
                   "age_days": 20, "topic": "database", "superseded": false,
                   "importance": 0.5}],
     "questions": [{"question": "数据库选型？", "expected": ["db"],
                    "category": "paraphrase", "lang": "zh"}]}

``age_days`` sets the event time; a ``superseded`` memory is marked replaced by
the current memory of the same topic (or by none) so a search must not return
it. The report gives Recall@k, MRR and how often a superseded memory leaked,
overall, per category and per language, plus the same recall after the
retriever's relevance gates (:class:`~memory_pg.retrieval.RetrievalSettings`).
"""

from __future__ import annotations

import json
import logging
import statistics
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_pg.errors import InvalidEvalSet
from memory_pg.plans.protocol import one
from memory_pg.retrieval import RetrievalSettings
from memory_pg.sql.supersede import supersede_many

if TYPE_CHECKING:
    from memory_pg.store import MemoryStore

logger = logging.getLogger(__name__)

__all__ = ["EvalMemory", "EvalQuestion", "EvalSet", "evaluate", "load_eval_set"]

#: The bilingual set shipped with the package.
BUNDLED = "eval_bilingual.json"


@dataclass(frozen=True)
class EvalMemory:
    """One memory of an evaluation set."""

    key: str
    type: str
    text: str
    age_days: float = 0.0
    topic: str | None = None
    superseded: bool = False
    importance: float | None = None


@dataclass(frozen=True)
class EvalQuestion:
    """A question and the keys of the memories that answer it."""

    question: str
    expected: tuple[str, ...]
    category: str = "all"
    lang: str = "?"


@dataclass(frozen=True)
class EvalSet:
    """Memories and questions."""

    name: str
    memories: tuple[EvalMemory, ...]
    questions: tuple[EvalQuestion, ...]


def load_eval_set(path: str | Path | None = None) -> EvalSet:
    """Read an evaluation file; None reads the bundled bilingual set.

    Raises:
        InvalidEvalSet: the file is missing, not JSON, or not the documented shape.
    """
    try:
        if path is None:
            raw = resources.files("memory_pg").joinpath("data", BUNDLED).read_text("utf-8")
        else:
            raw = Path(path).read_text(encoding="utf-8")
        doc = json.loads(raw)
    except (OSError, ValueError) as exc:
        raise InvalidEvalSet(f"cannot read evaluation set {path or BUNDLED}: {exc}") from exc
    try:
        mems = tuple(
            EvalMemory(
                key=str(m["key"]),
                type=str(m.get("type", "dialogue")),
                text=str(m["text"]),
                age_days=float(m.get("age_days", 0.0)),
                topic=m.get("topic"),
                superseded=bool(m.get("superseded", False)),
                importance=m.get("importance"),
            )
            for m in doc["memories"]
        )
        questions = tuple(
            EvalQuestion(
                question=str(q["question"]),
                expected=tuple(str(k) for k in q["expected"]),
                category=str(q.get("category", "all")),
                lang=str(q.get("lang", "?")),
            )
            for q in doc["questions"]
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidEvalSet(f"evaluation set {path or BUNDLED} is malformed: {exc!r}") from exc
    keys = [m.key for m in mems]
    if len(set(keys)) != len(keys):
        raise InvalidEvalSet("memory keys must be unique")
    unknown = {k for q in questions for k in q.expected} - set(keys)
    if unknown:
        raise InvalidEvalSet(f"questions expect unknown memory keys: {sorted(unknown)[:5]}")
    if not mems or not questions:
        raise InvalidEvalSet("an evaluation set needs memories and questions")
    return EvalSet(str(doc.get("name", path or BUNDLED)), mems, questions)


def evaluate(
    store: MemoryStore,
    eval_set: EvalSet,
    *,
    top_k: Sequence[int] = (1, 5, 10),
    gates: RetrievalSettings | None = None,
    user_id: str | None = None,
) -> dict[str, Any]:
    """Load ``eval_set`` into a throwaway user, run every question, erase the user.

    Searches run with ``track_access=False``, so the order of questions does not
    change their results.

    Args:
        store: the store to measure (its ranking settings are what is measured); a
            store bound to a user refuses the scratch user: pass an unbound one.
        eval_set: from :func:`load_eval_set`.
        top_k: the k of Recall@k; MRR counts ranks up to the largest.
        gates: the retriever's relevance gates for the gated figures.
        user_id: the scratch user (default: a new random ``eval-...`` id).
            Everything of this user is erased at the end.
    """
    ks = sorted({int(k) for k in top_k})
    if not ks or ks[0] < 1 or ks[-1] > 1000:
        raise InvalidEvalSet("top_k values must be between 1 and 1000")
    gates = gates or RetrievalSettings()
    uid = user_id or f"eval-{uuid.uuid4().hex}"
    now = datetime.now(timezone.utc)
    try:
        ids = store.add_memories(
            [
                {
                    "text": m.text,
                    "memory_type": m.type,
                    "topic": m.topic,
                    "importance": m.importance,
                    "event_time": now - timedelta(days=m.age_days),
                }
                for m in eval_set.memories
            ],
            user_id=uid,
        )
        key_of = {uuid.UUID(i): m.key for i, m in zip(ids, eval_set.memories, strict=True)}
        id_of = {m.key: uuid.UUID(i) for i, m in zip(ids, eval_set.memories, strict=True)}
        current_by_topic: dict[tuple[str, str | None], uuid.UUID] = {
            (m.type, m.topic): id_of[m.key]
            for m in eval_set.memories
            if m.topic and not m.superseded
        }
        pairs = [
            (id_of[m.key], current_by_topic.get((m.type, m.topic)))
            for m in eval_set.memories
            if m.superseded
        ]
        if pairs:
            # What the write plan does on a replacing write, for a set's ``superseded`` rows.
            store.run_plan(one(supersede_many(uid, dict(pairs))), uid)
        superseded = {m.key for m in eval_set.memories if m.superseded}
        rows = []
        for q in eval_set.questions:
            hits = store.search(q.question, top_k=ks[-1], user_id=uid, track_access=False)
            found = [key_of.get(uuid.UUID(h["id"]), "?") for h in hits]
            # What a MemoryRetriever with these gates returns: gated in SQL, then top k.
            kept = store.search(
                q.question,
                top_k=ks[-1],
                user_id=uid,
                track_access=False,
                min_similarity=gates.min_similarity,
                min_lexical=gates.min_lexical,
            )
            gated = [key_of.get(uuid.UUID(h["id"]), "?") for h in kept if gates.keeps(h)]
            rows.append(_score(q, found, gated, superseded, ks))
    finally:
        store.clear_user_memory(uid)
    return {
        "name": eval_set.name,
        "memories": len(eval_set.memories),
        "questions": len(eval_set.questions),
        "embedding_model": store.embedder.model_name,
        "top_k": ks,
        "overall": _aggregate(rows, ks),
        "by_category": _grouped(rows, ks, "category"),
        "by_lang": _grouped(rows, ks, "lang"),
        "misses": [
            {"question": r["question"], "expected": r["expected"], "got": r["found"][:3]}
            for r in rows
            if r[f"recall@{ks[min(1, len(ks) - 1)]}"] < 1.0
        ],
    }


def _score(
    q: EvalQuestion, found: list[str], gated: list[str], superseded: set[str], ks: list[int]
) -> dict[str, Any]:
    expected = set(q.expected)
    row: dict[str, Any] = {
        "question": q.question,
        "expected": list(q.expected),
        "found": found,
        "category": q.category,
        "lang": q.lang,
    }
    for k in ks:
        row[f"recall@{k}"] = len(expected & set(found[:k])) / len(expected)
        row[f"gated_recall@{k}"] = len(expected & set(gated[:k])) / len(expected)
    rank = next((i for i, key in enumerate(found, 1) if key in expected), None)
    row["mrr"] = 1.0 / rank if rank else 0.0
    row["superseded_returned"] = bool(superseded & set(found))
    row["gated_kept"] = len(gated[: ks[-1]])
    return row


def _aggregate(rows: list[dict[str, Any]], ks: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {"questions": len(rows)}
    for k in ks:
        out[f"recall@{k}"] = round(statistics.fmean(r[f"recall@{k}"] for r in rows), 4)
    out["mrr"] = round(statistics.fmean(r["mrr"] for r in rows), 4)
    for k in ks:
        out[f"gated_recall@{k}"] = round(statistics.fmean(r[f"gated_recall@{k}"] for r in rows), 4)
    out["gated_kept_mean"] = round(statistics.fmean(r["gated_kept"] for r in rows), 2)
    out["superseded_returned"] = sum(r["superseded_returned"] for r in rows)
    return out


def _grouped(rows: list[dict[str, Any]], ks: list[int], key: str) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r[key]].append(r)
    return {name: _aggregate(g, ks) for name, g in sorted(groups.items())}
