"""Consolidation: clusters of near-duplicate fragments of one user become one summary.

The originals are not lost: each is marked superseded by the summary, with a
``merged`` history event naming it, so ``as_of`` queries and history still see them.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection, func, select

from memory_pg import lifecycle, queries
from memory_pg.config import ConsolidatePolicy
from memory_pg.errors import InvalidArgument
from memory_pg.tables import memories

if TYPE_CHECKING:
    from memory_pg.store import MemoryStore

logger = logging.getLogger(__name__)

m = memories

#: Turns a cluster of fragments (oldest first) into one text: an LLM, or :func:`merge_fragments`.
Summarize = Callable[[list[str]], str]

#: The session advisory lock that one ``consolidate`` run holds.
CONSOLIDATE_LOCK = "memory_pg:job:consolidate"

_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s*|\n+")


def merge_fragments(fragments: list[str]) -> str:
    """The offline summary: the longest fragment, then each other sentence not yet in it.

    Deterministic and lossless for distinct sentences: sentences are split on
    ``. ! ? 。 ！ ？ ;`` and new lines, and one already contained (ignoring case and
    spacing) is left out.
    """
    if not fragments:
        raise InvalidArgument("nothing to merge")
    longest = max(fragments, key=len)
    parts = [longest.strip()]
    seen = _norm(longest)
    for fragment in fragments:
        if fragment is longest:
            continue
        for sentence in _SENTENCE_END.split(fragment):
            key = _norm(sentence)
            if key and key not in seen:
                parts.append(sentence.strip())
                seen += " " + key
    return " ".join(parts)


SUMMARY_PROMPT = (
    "These are fragments of one user's long-term memory that say related things.\n"
    "Merge them into one concise memory that keeps every distinct fact, in the "
    "fragments' own language. Answer with the merged text only.\n\n{fragments}"
)


def llm_summarizer(llm: Callable[[str], str]) -> Summarize:
    """A :data:`Summarize` hook that asks ``llm`` (any ``Callable[[str], str]``).

    An empty answer or an exception falls back to :func:`merge_fragments`, so a run
    never loses fragments to a model outage.
    """

    def summarize(fragments: list[str]) -> str:
        listing = "\n".join(f"- {f}" for f in fragments)
        try:
            answer = str(llm(SUMMARY_PROMPT.format(fragments=listing))).strip()
        except Exception as exc:  # a model outage must not stop the job
            logger.warning("consolidate: LLM failed (%s), offline merge", type(exc).__name__)
            answer = ""
        return answer or merge_fragments(fragments)

    return summarize


def _norm(value: str) -> str:
    return " ".join(value.lower().split()).strip(" .!?。！？;；")


def clusters(
    vectors: np.ndarray[Any, Any],
    threshold: float,
    min_size: int,
    texts: Sequence[str] | None = None,
    min_overlap: float = 0.0,
) -> list[list[int]]:
    """Groups of rows whose vectors are linked by cosine similarity ``>= threshold``.

    With ``texts``, two rows are linked only if their words also overlap by
    ``min_overlap`` (see :func:`memory_pg.lifecycle.word_overlap`): the bundled
    model gives every short Chinese text nearly the same vector.

    Connected components of the similarity graph (single linkage), each sorted,
    largest first; only groups of at least ``min_size`` rows.
    """
    n = len(vectors)
    if n == 0:
        return []
    sims = vectors @ vectors.T
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in zip(*np.nonzero(np.triu(sims >= threshold, k=1)), strict=True):
        if texts is not None and lifecycle.word_overlap(texts[i], texts[j]) < min_overlap:
            continue
        parent[root(int(i))] = root(int(j))
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(root(i), []).append(i)
    found = [sorted(g) for g in groups.values() if len(g) >= min_size]
    return sorted(found, key=lambda g: (-len(g), g[0]))


@dataclass
class ConsolidateReport:
    """What one ``consolidate`` run did (or, dry, would do).

    Attributes:
        run_id: this run's id, also in each ``merged`` history event.
        dry_run: nothing was written.
        skipped: another run held the lock.
        users: users examined.
        clusters: summaries written (or that would be).
        merged: fragments replaced by a summary.
        by_type: fragments merged per memory type.
        summaries: ids of the summaries written.
    """

    run_id: str
    dry_run: bool
    skipped: bool = False
    users: int = 0
    clusters: int = 0
    merged: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    summaries: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict."""
        return asdict(self)


def consolidate(
    store: MemoryStore,
    policy: ConsolidatePolicy | None = None,
    *,
    summarize: Summarize | None = None,
    user_id: str | None = None,
    dry_run: bool = False,
) -> ConsolidateReport:
    """Merge clusters of near-duplicate fragments into one summary memory each.

    Each cluster is written in its own short transaction under the same
    per-(user, type) lock as writes; a cluster whose fragments changed meanwhile
    (one was replaced or deleted) is left for the next run. A second run started
    while one holds the session lock returns at once with ``skipped=True``.

    Args:
        store: the store (its engine and embedder embed the summaries).
        policy: types, threshold and limits (default :class:`ConsolidatePolicy`).
        summarize: fragments (oldest first) → summary text; default :func:`merge_fragments`.
        user_id: only this user; default every user with fragments.
        dry_run: count clusters, write nothing.
    """
    policy = policy or ConsolidatePolicy()
    summarize = summarize or merge_fragments
    report = ConsolidateReport(run_id=str(uuid.uuid4()), dry_run=dry_run)
    started = time.monotonic()
    with store.engine.connect() as conn:
        locked = bool(conn.execute(lifecycle.try_session_lock(CONSOLIDATE_LOCK)).scalar())
        conn.commit()
        if not locked:
            report.skipped = True
            report.message = "another consolidate run holds the lock; nothing done"
            return report
        try:
            users = [store._scope(user_id)] if user_id is not None else _users(conn, policy)
            for uid in users:
                report.users += 1
                for memory_type in policy.memory_types:
                    _consolidate_one(conn, store, policy, summarize, uid, memory_type, report)
        finally:
            conn.execute(lifecycle.session_unlock(CONSOLIDATE_LOCK))
            conn.commit()
    report.duration_s = round(time.monotonic() - started, 3)
    logger.info("consolidate: %d fragments into %d summaries", report.merged, report.clusters)
    return report


def _users(conn: Connection, policy: ConsolidatePolicy) -> list[str]:
    with conn.begin():
        stmt = (
            select(m.c.user_id)
            .where(m.c.memory_type.in_(list(policy.memory_types)), m.c.superseded_at.is_(None))
            .group_by(m.c.user_id)
            .having(func.count() >= policy.min_cluster)
            .order_by(m.c.user_id)
        )
        return [str(r[0]) for r in conn.execute(stmt)]


def _consolidate_one(
    conn: Connection,
    store: MemoryStore,
    policy: ConsolidatePolicy,
    summarize: Summarize,
    user_id: str,
    memory_type: str,
    report: ConsolidateReport,
) -> None:
    with conn.begin():
        conn.execute(queries.set_tenant(user_id))
        stmt = (
            select(m.c.id, m.c.text, m.c.embedding, m.c.importance, m.c.event_time, m.c.metadata)
            .where(
                m.c.user_id == user_id,
                m.c.memory_type == memory_type,
                *queries.current_conditions(None),
                # A summary is shared: an agent's private notes never go into one.
                queries.visible_to(None),
            )
            .order_by(m.c.created_at, m.c.id)
            .limit(policy.max_rows_per_type)
        )
        rows = [r._mapping for r in conn.execute(stmt)]
    if len(rows) < policy.min_cluster:
        return
    vectors = np.asarray([np.asarray(r["embedding"], dtype=np.float32) for r in rows])
    texts = [str(r["text"]) for r in rows]
    for group in clusters(
        vectors, policy.threshold, policy.min_cluster, texts, policy.min_word_overlap
    ):
        members = [rows[i] for i in group]
        report.clusters += 1
        report.merged += len(members)
        report.by_type[memory_type] = report.by_type.get(memory_type, 0) + len(members)
        if report.dry_run:
            continue
        summary = summarize([str(r["text"]) for r in members])
        summary_id = _write_summary(conn, store, user_id, memory_type, members, summary, report)
        if summary_id is None:
            report.clusters -= 1
            report.merged -= len(members)
            report.by_type[memory_type] -= len(members)
        else:
            report.summaries.append(str(summary_id))


class _Changed(Exception):
    """A fragment was replaced or deleted between the read and the write."""


def _write_summary(
    conn: Connection,
    store: MemoryStore,
    user_id: str,
    memory_type: str,
    members: Sequence[Any],
    summary: str,
    report: ConsolidateReport,
) -> uuid.UUID | None:
    prepared = store._prepare(
        user_id,
        [
            {
                "text": summary,
                "memory_type": memory_type,
                "metadata": {"consolidated_from": len(members)},
                "importance": max(float(r["importance"]) for r in members),
                "event_time": max(r["event_time"] for r in members),
            }
        ],
    )
    row = store._rows(prepared, store.embedder.embed_documents(prepared.embed_texts))[0]
    ids = [r["id"] for r in members]
    try:
        with conn.begin():
            conn.execute(queries.set_tenant(user_id))
            conn.execute(lifecycle.xact_lock(lifecycle.write_lock_key(user_id, memory_type)))
            # Mark the originals first: the summary may equal one of them word for word,
            # and the unique index only covers current rows.
            marked = conn.execute(lifecycle.mark_superseded(user_id, ids, row.id)).all()
            if len(marked) != len(ids):
                raise _Changed
            inserted = conn.execute(*queries.insert_memories([row])).all()
            if not inserted:
                raise _Changed
            detail = {"reason": "consolidated", "into": str(row.id), "job_run": report.run_id}
            conn.execute(*lifecycle.history_events(user_id, [(i, "merged", detail) for i in ids]))
    except _Changed:
        logger.info("consolidate: a cluster changed during the run; left for the next one")
        return None
    return row.id


__all__ = [
    "ConsolidateReport",
    "Summarize",
    "clusters",
    "consolidate",
    "llm_summarizer",
    "merge_fragments",
]
