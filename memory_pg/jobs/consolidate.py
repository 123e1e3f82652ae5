"""Consolidation: clusters of near-duplicate fragments of one user become one summary.

The originals are not lost: each is marked superseded by the summary, with a
``merged`` history event naming it, so ``as_of`` queries and history still see them.

A summary keeps what its fragments share, so later writes treat it as they would have
treated them: the topic key they share (fragments with different topic keys are never
merged together), the latest expiry when every fragment expires (none when one does
not), and their metadata merged (see :func:`merge_metadata`).
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection

from memory_pg import pooling
from memory_pg.config import ConsolidatePolicy
from memory_pg.errors import (
    DatabaseUnavailable,
    EmbeddingModelMismatch,
    InvalidArgument,
    MemoryPgError,
    RoleRequired,
)
from memory_pg.plans import relations, write
from memory_pg.plans.protocol import split_step, translate_errors
from memory_pg.roles import require_every_user
from memory_pg.sql import locks, memories, setup, supersede
from memory_pg.sql.relations import CONSOLIDATED_FROM
from memory_pg.supersession import word_overlap

if TYPE_CHECKING:
    from memory_pg.store import MemoryStore

logger = logging.getLogger(__name__)

#: Turns a cluster of fragments (oldest first) into one text: an LLM, or :func:`merge_fragments`.
Summarize = Callable[[list[str]], str]

#: The session advisory lock that one ``consolidate`` run holds.
CONSOLIDATE_LOCK = "memory_pg:job:consolidate"

_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s*|\n+")

#: Where a capped summary may end: after sentence punctuation or a line break.
_CUT_AFTER = re.compile(r"[.!?。！？；;\n]")


def cap_summary(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, at a sentence end where there is one.

    A summary longer than the store's ``max_text_chars`` would be refused, and with
    it the whole cluster, on every run. The cut falls after the last sentence end
    within the limit if that keeps at least half of it, else at the last space,
    else at ``limit`` characters.
    """
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[:limit]
    cut = max((m.end() for m in _CUT_AFTER.finditer(head)), default=0)
    if cut < limit // 2:
        space = head.rfind(" ")
        cut = space if space >= limit // 2 else limit
    return head[:cut].rstrip()


def merge_fragments(fragments: list[str]) -> str:
    """The offline summary: the longest fragment, then each other sentence not yet in it.

    Deterministic and lossless for distinct sentences: sentences are split on
    ``. ! ? 。 ！ ？ ;`` and new lines, and one already contained in one sentence
    (ignoring case and spacing) as a whole is left out: not part of a Latin word or a
    number there ("给王总转账100" is not in "给王总转账1000元房租", "Python 3" not in
    "Python 3.12", "I like tea" not in "I like teapots"; "每天早上喝咖啡" is in
    "用户每天早上喝咖啡": Chinese has no spaces between words).

    Each part of a merge ends a sentence, so that the summary reads as sentences and
    not as one run-on line: a part without closing punctuation gets "。" if it is
    Chinese, "." otherwise ("Deploy on Friday. Finish the payment module next week.",
    "下周完成支付模块。周五上线。").
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
            if key and not _contained(key, seen):
                parts.append(sentence.strip())
                seen += "\n" + key  # a match never spans two sentences
    return parts[0] if len(parts) == 1 else _sentences(parts)


#: Punctuation that ends a sentence already (a closing quote or bracket after it too).
_ENDED = re.compile(r"[.!?。！？;；…][\"'”’)）」』]*$")
#: The last Han character or Latin letter of a text: its language, where a sentence ends.
_LAST_WORD_CHAR = re.compile(
    r"([\u3400-\u9fff\uf900-\ufaff]|[A-Za-z])[^\u3400-\u9fffA-Za-z\uf900-\ufaff]*$"
)


def _sentences(parts: list[str]) -> str:
    """``parts`` as consecutive sentences: each ended, Chinese ones joined without a space."""
    out = ""
    for part in parts:
        part = part.strip()
        last = _LAST_WORD_CHAR.search(part)
        chinese = last is not None and not last.group(1).isascii()
        if not _ENDED.search(part):
            part += "。" if chinese else "."
        if out and not (chinese and out[-1] in "。！？；"):
            out += " "
        out += part
    return out


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


def _contained(key: str, text: str) -> bool:
    """Whether ``key`` is in ``text`` as a whole: not joined to a Latin letter or digit
    on either side, nor a digit to a digit or to a decimal point before one."""
    start = text.find(key)
    while start >= 0:
        end = start + len(key)
        if not _joins(text[start - 2 : start], key[0]) and not _joins(
            text[end : end + 2][::-1], key[-1]
        ):
            return True
        start = text.find(key, start + 1)
    return False


def _joins(beside: str, edge: str) -> bool:
    """Whether ``edge`` (a key's first or last character) continues into ``beside``,
    the two characters next to it, nearest last ("3" into "12." of "3.12")."""
    if not beside:
        return False
    near = beside[-1]
    latin = near.isascii() and near.isalnum() and edge.isascii() and edge.isalnum()
    digits = near.isdigit() and edge.isdigit()
    decimal = near in ".," and edge.isdigit() and len(beside) == 2 and beside[0].isdigit()
    return latin or digits or decimal


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
    ``min_overlap`` (see :func:`memory_pg.supersession.word_overlap`): the bundled
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
        if texts is not None and word_overlap(texts[i], texts[j]) < min_overlap:
            continue
        parent[root(int(i))] = root(int(j))
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(root(i), []).append(i)
    found = [sorted(g) for g in groups.values() if len(g) >= min_size]
    return sorted(found, key=lambda g: (-len(g), g[0]))


def split_by_topic(
    group: Sequence[int],
    topics: Sequence[str | None],
    vectors: np.ndarray[Any, Any],
    threshold: float,
    min_size: int,
    texts: Sequence[str] | None = None,
    min_overlap: float = 0.0,
) -> list[list[int]]:
    """``group`` as clusters that each carry at most one topic key.

    A group whose members share one topic key (fragments with none join it) stays
    whole. Otherwise each topic's members are clustered again on their own (see
    :func:`clusters`), and the fragments with no topic key are left out: which topic
    they belong to is not known, and a summary under the wrong key would be replaced
    by, or replace, the wrong memory.
    """
    keys = sorted({key for key in (topics[i] for i in group) if key is not None})
    if len(keys) <= 1:
        return [list(group)]
    found: list[list[int]] = []
    for key in keys:
        idx = [i for i in group if topics[i] == key]
        sub_texts = [texts[i] for i in idx] if texts is not None else None
        for sub in clusters(vectors[idx], threshold, min_size, sub_texts, min_overlap):
            found.append([idx[k] for k in sub])
    return sorted(found, key=lambda g: (-len(g), g[0]))


def latest_expiry(expiries: Sequence[datetime | None]) -> datetime | None:
    """When a summary expires: the latest of its fragments' expiries, or None (never)
    when any fragment has none (what does not expire must not start to)."""
    if not expiries or any(e is None for e in expiries):
        return None
    return max(e for e in expiries if e is not None)


def merge_metadata(
    metadatas: Sequence[Mapping[str, Any] | None], count: int, max_bytes: int
) -> dict[str, Any]:
    """A summary's metadata: its fragments' (oldest first) merged, key by key.

    Where fragments hold different values for one key, the newest fragment's value
    wins. ``consolidated_from`` is always the number of fragments merged. Keys that
    would take the JSON past ``max_bytes`` (the store's ``max_metadata_bytes``) are
    left out, the older fragments' first, so a summary is never refused for its
    metadata.
    """
    merged: dict[str, Any] = {CONSOLIDATED_FROM: count}
    for metadata in reversed(metadatas):  # newest first: the first value seen wins
        for key, value in (metadata or {}).items():
            if key in merged:
                continue
            merged[key] = value
            if _json_size(merged) > max_bytes:
                del merged[key]
    return merged


def _json_size(value: Mapping[str, Any]) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


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
        capped: summaries cut to the store's ``max_text_chars``.
        failed: users whose consolidation failed, each ``{"user_id", "error",
            "message"}``; the run goes on with the next user.
    """

    run_id: str
    dry_run: bool
    skipped: bool = False
    users: int = 0
    clusters: int = 0
    merged: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    summaries: list[str] = field(default_factory=list)
    capped: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
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
    A summary longer than the store's ``max_text_chars`` is cut at a sentence end
    (:func:`cap_summary`); a user whose consolidation fails all the same is listed
    in ``failed`` and the run goes on with the next user.

    Raises:
        RoleRequired: for every user (no ``user_id``), the store's role does not
            see every user (``memory_pg_maintenance``, superuser or ``BYPASSRLS``).

    Args:
        store: the store (its engine and embedder embed the summaries).
        policy: types, threshold and limits (default :class:`ConsolidatePolicy`).
        summarize: fragments (oldest first) → summary text; default :func:`merge_fragments`.
        user_id: only this user; default every user with fragments (a store bound
            to a user consolidates that user only, and refuses another).
        dry_run: count clusters, write nothing.
    """
    policy = policy or ConsolidatePolicy()
    summarize = summarize or merge_fragments
    if user_id is None:
        user_id = store.user_id
    pooling.require_session(store.engine, "consolidate")
    report = ConsolidateReport(run_id=str(uuid.uuid4()), dry_run=dry_run)
    started = time.monotonic()
    with store.engine.connect() as conn:
        if user_id is None:
            require_every_user(conn, "consolidate")
        locked = bool(conn.execute(locks.try_session_lock(CONSOLIDATE_LOCK)).scalar())
        conn.commit()
        if not locked:
            report.skipped = True
            report.message = "another consolidate run holds the lock; nothing done"
            return report
        try:
            users = (
                [write.scope_user(user_id, store.user_id, store.settings)]
                if user_id is not None
                else _users(conn, policy)
            )
            for uid in users:
                report.users += 1
                try:
                    with translate_errors():
                        for memory_type in policy.memory_types:
                            _consolidate_one(
                                conn, store, policy, summarize, uid, memory_type, report
                            )
                except (DatabaseUnavailable, RoleRequired):
                    raise  # nothing the next user could do better
                except MemoryPgError as exc:
                    logger.warning("consolidate: a user failed with %s", type(exc).__name__)
                    report.failed.append(
                        {"user_id": uid, "error": type(exc).__name__, "message": str(exc)[:300]}
                    )
        finally:
            conn.execute(locks.session_unlock(CONSOLIDATE_LOCK))
            conn.commit()
    report.duration_s = round(time.monotonic() - started, 3)
    logger.info("consolidate: %d fragments into %d summaries", report.merged, report.clusters)
    return report


def _users(conn: Connection, policy: ConsolidatePolicy) -> list[str]:
    with conn.begin():
        stmt = memories.users_with_current(policy.memory_types, policy.min_cluster)
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
        conn.execute(setup.set_tenant(user_id))
        stmt = memories.fragments(user_id, memory_type, policy.max_rows_per_type)
        rows = [r._mapping for r in conn.execute(stmt)]
    if len(rows) < policy.min_cluster:
        return
    vectors = np.asarray([np.asarray(r["embedding"], dtype=np.float32) for r in rows])
    texts = [str(r["text"]) for r in rows]
    topics = [r["topic"] for r in rows]
    groups = [
        split
        for group in clusters(
            vectors, policy.threshold, policy.min_cluster, texts, policy.min_word_overlap
        )
        for split in split_by_topic(
            group,
            topics,
            vectors,
            policy.threshold,
            policy.min_cluster,
            texts,
            policy.min_word_overlap,
        )
    ]
    now = datetime.now(timezone.utc)
    for group in groups:
        members = [rows[i] for i in group]
        expires = latest_expiry([r["expires_at"] for r in members])
        if expires is not None and expires <= now:
            continue  # expiring as we read them: forget's, not ours
        report.clusters += 1
        report.merged += len(members)
        report.by_type[memory_type] = report.by_type.get(memory_type, 0) + len(members)
        if report.dry_run:
            continue
        summary = summarize([str(r["text"]) for r in members])
        capped = len(summary.strip()) > store.settings.max_text_chars
        if capped:
            summary = cap_summary(summary, store.settings.max_text_chars)
        summary_id: uuid.UUID | None = None
        try:
            summary_id = _write_summary(conn, store, user_id, memory_type, members, summary, report)
        finally:
            if summary_id is None:  # left for the next run, or failed: not counted
                report.clusters -= 1
                report.merged -= len(members)
                report.by_type[memory_type] -= len(members)
        if summary_id is not None:
            report.capped += capped
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
    prepared = write.prepare(
        store.settings,
        user_id,
        [
            {
                "text": summary,
                "memory_type": memory_type,
                "metadata": merge_metadata(
                    [r["metadata"] for r in members],
                    len(members),
                    store.settings.max_metadata_bytes,
                ),
                "topic": next((r["topic"] for r in members if r["topic"] is not None), None),
                "expires_at": latest_expiry([r["expires_at"] for r in members]),
                "importance": max(float(r["importance"]) for r in members),
                "event_time": max(r["event_time"] for r in members),
            }
        ],
    )
    vectors = store.embedder.embed_documents(prepared.embed_texts)
    # Its entities found before the transaction: no lock waits for the extraction.
    row = relations.with_entities(write.new_rows(prepared, vectors, store.embedder))[0]
    ids = [r["id"] for r in members]
    try:
        with conn.begin():
            conn.execute(setup.set_tenant(user_id))
            for lock in locks.write_locks(user_id, [memory_type]):
                conn.execute(lock)
            # Mark the originals first: the summary may equal one of them word for word,
            # and the unique index only covers current rows.
            marked = conn.execute(
                *supersede.supersede_many(user_id, dict.fromkeys(ids, row.id))
            ).all()
            if len(marked) != len(ids):
                raise _Changed
            inserted = conn.execute(*memories.insert_memories([row])).all()
            if not inserted:
                raise _Changed
            for step in relations.summary_steps(user_id, row, ids):  # issue 19
                conn.execute(*split_step(step))
            _check_model(conn, store)
            detail = {"reason": "consolidated", "into": str(row.id), "job_run": report.run_id}
            conn.execute(*supersede.history_events(user_id, [(i, "merged", detail) for i in ids]))
    except _Changed:
        logger.info("consolidate: a cluster changed during the run; left for the next one")
        return None
    return row.id


def _check_model(conn: Connection, store: MemoryStore) -> None:
    """The summary's vector is the store's model: refuse it if a reembed switched models."""
    found = conn.execute(setup.read_setting(setup.EMBEDDING_SETTING)).first()
    recorded = found[0] if found else None
    if recorded is not None and recorded.get("model") != store.embedder.model_name:
        raise EmbeddingModelMismatch(
            f"the database now records embedding model {recorded.get('model')}, this "
            f"store embeds with {store.embedder.model_name}: run consolidate again"
        )


__all__ = [
    "ConsolidateReport",
    "Summarize",
    "cap_summary",
    "clusters",
    "consolidate",
    "latest_expiry",
    "llm_summarizer",
    "merge_fragments",
    "merge_metadata",
    "split_by_topic",
]
