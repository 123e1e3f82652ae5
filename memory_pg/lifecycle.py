"""Lifecycle: supersession on write, expiry (``forget``), and the locks both rely on.

Supersession decides, for each new memory, whether it is new, replaces a current
memory of the same user and type (same topic key, or similar enough and confirmed
by a judge when one is configured), or repeats one (merged, nothing stored twice).
The decision is pure (:func:`decide`); the store runs it inside its insert plan,
under a per-(user, type) transaction advisory lock, so two concurrent writers on
one topic leave exactly one current row.

Expiry (:func:`forget`) deletes in small batches, each its own transaction, with
``FOR UPDATE SKIP LOCKED``; a session advisory lock makes a second concurrent run
(cron on several hosts) exit at once. An expired memory leaves one ``expired``
history event without its text, so "why was this forgotten" has an answer;
erasing (``delete_memory``, ``clear_user_memory``) removes history too.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from functools import cache
from importlib import resources
from typing import Any, Literal

import numpy as np
from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Float,
    Insert,
    Text,
    TextClause,
    Update,
    Uuid,
    and_,
    bindparam,
    func,
    literal,
    or_,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy import delete as sa_delete
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as pg_insert

from memory_pg import _facts
from memory_pg._segment import query_terms, segment
from memory_pg.config import ForgetPolicy, SupersedePolicy
from memory_pg.queries import Bound, array_param, unnest_rows, vector_array
from memory_pg.roles import require_every_user
from memory_pg.tables import history, memories

logger = logging.getLogger(__name__)

m = memories

#: Any callable that answers a prompt with text: an LLM client, or a test's function.
Judge = Callable[[str], str]

Action = Literal["add", "supersede", "merge"]


# -- named SQL blocks ---------------------------------------------------------------


@cache
def sql_blocks() -> dict[str, str]:
    """The named blocks of ``lifecycle.sql`` (``-- name: x`` starts block ``x``)."""
    source = resources.files("memory_pg").joinpath("lifecycle.sql").read_text("utf-8")
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in source.splitlines():
        found = re.match(r"--\s*name:\s*(\w+)", line)
        if found:
            current = blocks.setdefault(found.group(1), [])
        elif current is not None and not line.lstrip().startswith("--"):
            current.append(line)
    return {name: "\n".join(lines).strip() for name, lines in blocks.items()}


# -- locks --------------------------------------------------------------------------


def write_lock_key(user_id: str, memory_type: str) -> str:
    """The advisory-lock key serialising writes of one user and memory type.

    The key is (user, type) rather than (user, type, topic): a memory with no topic
    key can replace one that has a key (detected by similarity), so two writers of
    one type must see each other's rows whatever their topics.
    """
    return "memory_pg:write:" + user_id + "\x1f" + memory_type


def user_lock_key(user_id: str) -> str:
    """The advisory-lock key of one user: every write holds it shared, an erase alone.

    An erase deletes memories, buffer and history in three statements; a write that
    committed between them would leave a memory whose history was erased (or a
    history row of a user who asked to be forgotten). Writes of one user still run
    side by side; an erase waits for them, and they wait for it.
    """
    return "memory_pg:user:" + user_id


def xact_lock_shared(key: str) -> TextClause:
    """Wait for the shared transaction-level advisory lock of ``key`` (released at commit)."""
    return text("SELECT pg_advisory_xact_lock_shared(hashtextextended(:key, 0))").bindparams(
        key=key
    )


def write_locks(user_id: str, memory_types: Iterable[str]) -> list[TextClause]:
    """The locks a write of ``memory_types`` takes, in the one order every writer uses:
    the user's (shared, against an erase), then one per type (against each other)."""
    keys = sorted({write_lock_key(user_id, t) for t in memory_types})
    return [xact_lock_shared(user_lock_key(user_id)), *(xact_lock(k) for k in keys)]


def xact_lock(key: str) -> TextClause:
    """Wait for the transaction-level advisory lock of ``key`` (released at commit)."""
    return text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))").bindparams(key=key)


def try_session_lock(key: str) -> TextClause:
    """Try the session-level advisory lock of ``key``; returns ``locked``."""
    return text("SELECT pg_try_advisory_lock(hashtextextended(:key, 0)) AS locked").bindparams(
        key=key
    )


def session_unlock(key: str) -> TextClause:
    """Release the session-level advisory lock of ``key``."""
    return text("SELECT pg_advisory_unlock(hashtextextended(:key, 0))").bindparams(key=key)


# -- supersession: the pure decision --------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A current memory a new one may replace or repeat."""

    id: uuid.UUID
    topic: str | None
    text: str
    content_hash: str
    similarity: float
    same_topic: bool


@dataclass(frozen=True)
class Decision:
    """What to do with one new memory.

    Attributes:
        action: ``add`` (store it), ``supersede`` (store it, mark ``targets`` as
            replaced by it) or ``merge`` (store nothing: it repeats ``targets[0]``).
        targets: the current memories concerned.
        reason: ``new``, ``topic``, ``change``, ``similar``, ``judge``, ``duplicate`` or
            ``near_duplicate``.
        similarity: cosine similarity to the first target.
        topic: the topic key the new memory should carry (inherited when detected).
    """

    action: Action
    targets: tuple[uuid.UUID, ...] = ()
    reason: str = "new"
    similarity: float | None = None
    topic: str | None = None


JUDGE_PROMPT = (
    "You maintain an agent's long-term memory. Compare two memories of the same user.\n"
    "EXISTING: {old}\nNEW: {new}\n"
    "Answer with exactly one word:\n"
    "CONTRADICTS - the new memory updates or replaces the existing one (it is no longer true);\n"
    "SAME - both state the same fact;\n"
    "DIFFERENT - both can be true at once.\n"
)


def ask_judge(judge: Judge, old: str, new: str) -> Action:
    """Ask ``judge`` whether ``new`` replaces, repeats or sits beside ``old``.

    Any answer other than a clear CONTRADICTS or SAME (or an exception) keeps both:
    losing a fact is worse than keeping one too many.
    """
    try:
        answer = judge(JUDGE_PROMPT.format(old=old, new=new))
    except Exception as exc:  # a judge is user code or a network call: never fail the write
        logger.warning("supersession judge failed (%s): keeping both memories", type(exc).__name__)
        return "add"
    word = re.search(r"[A-Za-z]+", str(answer).upper())
    verdict = word.group(0) if word else ""
    if verdict.startswith("CONTRADICT"):
        return "supersede"
    if verdict == "SAME":
        return "merge"
    return "add"


#: English function words left out of :func:`word_overlap` (jieba's side drops Chinese ones).
_EN_STOPWORDS = frozenset(
    "a an the our my your his her their its we i you he she they it is are was were be "
    "will would shall should can could to of in on at as for with from by and or this that "
    "these those me us them".split()
)


def word_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two texts' words (jieba words for Chinese), 0..1.

    The vector alone cannot tell two facts apart when the model cannot read the
    text: all-MiniLM-L6-v2 maps "我喜欢猫" and "我讨厌狗" to the same vector (every
    character is ``[UNK]``, cosine 1.0), and "meeting at 3pm" / "meeting at 4pm"
    score 0.93. Merging or replacing also needs the words to agree.
    """
    sa, sb = segment(a), segment(b)
    wa = (set(sa.words) - _EN_STOPWORDS) | set(sa.cjk)
    wb = (set(sb.words) - _EN_STOPWORDS) | set(sb.cjk)
    if not wa and not wb:
        return 1.0
    return len(wa & wb) / len(wa | wb)


def _numbers(text: str) -> list[str]:
    seg = segment(text)
    return [w for w in seg.words if any(ch.isdigit() for ch in w)]


def decide(
    *,
    memory_type: str,
    topic: str | None,
    content_hash: str,
    new_text: str,
    candidates: Sequence[Candidate],
    policy: SupersedePolicy,
    judge: Judge | None = None,
) -> Decision:
    """Decide whether a new memory is added, replaces current ones, or repeats one.

    Rules, first match wins: the same text → merge (``duplicate``); similarity at or
    above ``merge_threshold`` → merge (``near_duplicate``); a question or other
    non-fact (:func:`memory_pg._facts.non_fact`) → add, replacing nothing; the same
    topic key → supersede (``topic``); for ``detect_types``: an explicit statement of
    change about what a current memory says (:func:`memory_pg._facts.change_applies`)
    → supersede it (``change``), or, with a ``judge``, supersede what the judge calls
    contradicted; then the nearest memory, if similar enough, is confirmed by
    ``judge`` (CONTRADICTS → supersede, SAME → merge), or, with no judge, replaced
    from ``detect_threshold`` on (``similar``).
    """
    if not policy.enabled or not candidates:
        return Decision("add", topic=topic)
    for cand in candidates:
        if cand.content_hash == content_hash:
            return Decision("merge", (cand.id,), "duplicate", cand.similarity, topic)
    nearest = max(candidates, key=lambda c: c.similarity)
    overlap = word_overlap(new_text, nearest.text)
    if (
        nearest.similarity >= policy.merge_threshold
        and overlap >= policy.merge_min_overlap
        # "item 3" is not a repeat of "item 4", however alike the rest reads.
        and _numbers(new_text) == _numbers(nearest.text)
    ):
        return Decision("merge", (nearest.id,), "near_duplicate", nearest.similarity, topic)
    if _facts.non_fact(new_text) is not None:
        return Decision("add", topic=topic)  # a question never replaces anything
    same_topic = tuple(dict.fromkeys(c.id for c in candidates if c.same_topic))
    if same_topic:
        return Decision("supersede", same_topic, "topic", None, topic)
    if memory_type not in policy.detect_types:
        return Decision("add", topic=topic)
    changed = _changed(new_text, candidates, judge)
    if changed:
        inherit = topic if topic is not None else changed[0].topic
        reason = "change" if judge is None else "judge"
        targets = tuple(dict.fromkeys(c.id for c in changed))
        return Decision("supersede", targets, reason, changed[0].similarity, inherit)
    inherit = topic if topic is not None else nearest.topic
    if judge is not None:
        if nearest.similarity < policy.judge_threshold:
            return Decision("add", topic=topic)
        verdict = ask_judge(judge, nearest.text, new_text)
        if verdict == "add":
            return Decision("add", topic=topic)
        return Decision(verdict, (nearest.id,), "judge", nearest.similarity, inherit)
    if (
        nearest.similarity >= policy.detect_threshold
        and overlap >= policy.detect_min_overlap
        # "第3个需求" and "第4个需求" are two facts, not one changed: when unsure, keep both.
        and _numbers(new_text) == _numbers(nearest.text)
        # "数据库使用 PostgreSQL" / "数据库使用 Redis 做缓存": products of two kinds, two facts.
        and not _facts.different_kinds(new_text, nearest.text)
    ):
        return Decision("supersede", (nearest.id,), "similar", nearest.similarity, inherit)
    return Decision("add", topic=topic)


def _changed(
    new_text: str, candidates: Sequence[Candidate], judge: Judge | None
) -> list[Candidate]:
    """The candidates an explicit statement of change replaces, in candidate order.

    Without a judge, the rules decide (:func:`memory_pg._facts.change_applies`); with
    one, each candidate the rules point at is put to the judge, and only those it
    calls contradicted are replaced (the vector cannot find them: a model that
    cannot read Chinese gives meaningless similarities).
    """
    if not _facts.is_change(new_text):
        return []
    seen: set[uuid.UUID] = set()
    found: list[Candidate] = []
    for cand in candidates:
        if cand.id in seen or not _facts.change_applies(new_text, cand.text):
            continue
        seen.add(cand.id)
        if judge is None or ask_judge(judge, cand.text, new_text) == "supersede":
            found.append(cand)
    return found


#: Current memories sharing words with a statement of change, compared with it.
CHANGE_CANDIDATES = 20


def candidates_statement(
    user_id: str,
    vectors: Sequence[np.ndarray[Any, Any]],
    memory_types: Sequence[str],
    topics: Sequence[str | None],
    k: int,
    word_queries: Sequence[tuple[str, str] | None] | None = None,
    privates: Sequence[bool] | None = None,
    agent_id: str | None = None,
) -> TextClause:
    """Current memories near each new one (and those sharing its topic), in one statement,
    each in the new memory's scope (shared, or private to ``agent_id``).

    ``word_queries`` (one per new memory, or None) are the English and Chinese
    tsquery texts of a statement of change (:func:`change_word_queries`): its
    candidates also include up to :data:`CHANGE_CANDIDATES` memories sharing its words.
    """
    queries_ = list(word_queries) if word_queries is not None else [None] * len(vectors)
    return text(sql_blocks()["insert_candidates"]).bindparams(
        idx=list(range(len(vectors))),
        vecs=vector_array(vectors),
        types=list(memory_types),
        topics=list(topics),
        tq_en=[q[0] if q else None for q in queries_],
        tq_zh=[q[1] if q else None for q in queries_],
        privates=list(privates) if privates is not None else [False] * len(vectors),
        user_id=user_id,
        agent_id=agent_id,
        k=k,
        k_words=CHANGE_CANDIDATES,
    )


def change_word_queries(new_text: str) -> tuple[str, str] | None:
    """The tsquery texts (English, Chinese) that find what a statement of change may
    replace, or None when ``new_text`` states no change. The words of the statement,
    the other products of the kinds it names, and for a move the words of living."""
    if not _facts.is_change(new_text):
        return None
    english, chinese = query_terms(new_text + " " + " ".join(_facts.change_words(new_text)))
    if not english and not chinese:
        return None
    return english, chinese


def mark_superseded(user_id: str, targets: Sequence[uuid.UUID], by: uuid.UUID) -> Update:
    """Mark current memories as replaced by ``by``; returns the ids actually marked."""
    return (
        update(m)
        .where(m.c.user_id == user_id, m.c.id.in_(list(targets)), m.c.superseded_at.is_(None))
        .values(superseded_at=func.now(), superseded_by=by)
        .returning(m.c.id)
    )


def supersede_many(user_id: str, replaced: Mapping[uuid.UUID, uuid.UUID]) -> Bound:
    """Mark current memories as replaced (``{old id: new id}``); returns the ids marked.

    One statement for a whole batch; a row already replaced is left as it was.
    """
    values = {"of_user": user_id, "old_ids": list(replaced), "new_ids": list(replaced.values())}
    return Bound(_supersede_many(), values)


def refresh_merged(user_id: str, importance: Mapping[uuid.UUID, float]) -> Bound:
    """Repeated memories (``{id: importance of the repeat}``): refresh ``updated_at`` and
    keep the higher importance, in one statement."""
    values = {"of_user": user_id, "ids": list(importance), "importances": list(importance.values())}
    return Bound(_refresh_merged(), values)


def history_events(user_id: str, events: Iterable[tuple[uuid.UUID, str, dict[str, Any]]]) -> Bound:
    """Append lifecycle events ``(memory_id, event, detail)``; details never hold user text.

    ``conn.execute(*history_events(...))``: the events travel as arrays.
    """
    listed = list(events)
    values = {
        "of_user": user_id,
        "memory_ids": [memory_id for memory_id, _, _ in listed],
        "events": [event for _, event, _ in listed],
        "details": [detail for _, _, detail in listed],
    }
    return Bound(_history_events(), values)


# Built once: a statement reused as one object is keyed and compiled once.


@cache
def _supersede_many() -> Update:
    pairs = unnest_rows(
        old_id=array_param("old_ids", Uuid()), new_id=array_param("new_ids", Uuid())
    )
    return (
        update(m)
        .where(
            m.c.user_id == bindparam("of_user", type_=Text()),
            m.c.id == pairs.c.old_id,
            m.c.superseded_at.is_(None),
        )
        .values(superseded_at=func.now(), superseded_by=pairs.c.new_id)
        .returning(m.c.id)
    )


@cache
def _refresh_merged() -> Update:
    given = unnest_rows(
        id=array_param("ids", Uuid()), importance=array_param("importances", Float())
    )
    return (
        update(m)
        .where(m.c.user_id == bindparam("of_user", type_=Text()), m.c.id == given.c.id)
        .values(updated_at=func.now(), importance=func.greatest(m.c.importance, given.c.importance))
        .returning(m.c.id)
    )


@cache
def _history_events() -> Insert:
    given = unnest_rows(
        memory_id=array_param("memory_ids", Uuid()),
        event=array_param("events", Text()),
        detail=array_param("details", JSONB()),
    )
    user_id = bindparam("of_user", type_=Text())
    return pg_insert(history).from_select(
        ["user_id", "memory_id", "event", "detail"],
        select(user_id, given.c.memory_id, given.c.event, given.c.detail),
    )


# -- expiry ---------------------------------------------------------------------------

#: Reasons a memory is forgotten, in the order they are applied (each excludes the earlier).
FORGET_REASONS = ("expired", "superseded", "stale")

#: The session advisory lock that one ``forget`` run holds.
FORGET_LOCK = "memory_pg:job:forget"


@dataclass
class ForgetReport:
    """What one ``forget`` run did (or, dry, would do).

    Attributes:
        run_id: this run's id, also in each ``expired`` history event.
        dry_run: nothing was deleted; counts are what would be.
        skipped: another run held the lock; this one did nothing.
        deleted: memories removed (or removable, dry).
        by_reason: counts per reason (``expired``, ``superseded``, ``stale``).
        by_type: counts per memory type.
        batches: delete transactions run.
        complete: False when ``max_runtime_s`` stopped the run early.
        duration_s: wall-clock seconds.
    """

    run_id: str
    dry_run: bool
    skipped: bool = False
    deleted: int = 0
    by_reason: dict[str, int] = field(default_factory=dict)
    by_type: dict[str, int] = field(default_factory=dict)
    batches: int = 0
    complete: bool = True
    duration_s: float = 0.0
    user_id: str | None = None
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict."""
        return asdict(self)

    def _count(self, reason: str, memory_type: str, n: int) -> None:
        self.deleted += n
        self.by_reason[reason] = self.by_reason.get(reason, 0) + n
        self.by_type[memory_type] = self.by_type.get(memory_type, 0) + n


def _not_expired(now: ColumnElement[Any]) -> ColumnElement[bool]:
    return or_(m.c.expires_at.is_(None), m.c.expires_at > now)


def forget_condition(reason: str, policy: ForgetPolicy) -> ColumnElement[bool]:
    """The rows ``reason`` removes; the three reasons never overlap."""
    now = func.now()
    if reason == "expired":
        return and_(m.c.expires_at.is_not(None), m.c.expires_at <= now)
    if reason == "superseded":
        cutoff = now - timedelta(days=policy.superseded_retention_days)
        return and_(m.c.superseded_at.is_not(None), m.c.superseded_at < cutoff, _not_expired(now))
    if reason != "stale":
        raise ValueError(reason)
    by_age: list[ColumnElement[bool]] = []
    listed = list(policy.max_age_days_by_type)
    for memory_type, days in policy.max_age_days_by_type.items():
        if days is not None:
            by_age.append(
                and_(m.c.memory_type == memory_type, m.c.created_at < now - timedelta(days=days))
            )
    by_age.append(
        and_(
            m.c.memory_type.not_in(listed) if listed else literal(True),
            m.c.created_at < now - timedelta(days=policy.max_age_days),
        )
    )
    return and_(
        m.c.superseded_at.is_(None),
        _not_expired(now),
        m.c.access_count == 0,
        m.c.importance < policy.importance_below,
        or_(*by_age),
    )


def forget_batch(
    reason: str, policy: ForgetPolicy, batch_size: int, run_id: str, user_id: str | None
) -> Insert:
    """Delete up to ``batch_size`` rows of ``reason`` and log an ``expired`` event for each.

    Rows another transaction holds are skipped (``SKIP LOCKED``), so the batch never
    waits on a writer. Returns one row per deleted memory with its type.
    """
    conds = [forget_condition(reason, policy)]
    if user_id is not None:
        conds.insert(0, m.c.user_id == user_id)
    victims = (
        select(m.c.user_id, m.c.id)
        .where(*conds)
        .limit(batch_size)
        .with_for_update(skip_locked=True)
        .cte("victims")
    )
    gone = (
        sa_delete(m)
        .where(tuple_(m.c.user_id, m.c.id).in_(select(victims.c.user_id, victims.c.id)))
        .returning(m.c.user_id, m.c.id, m.c.memory_type)
        .cte("gone")
    )
    detail = func.jsonb_build_object(
        "reason", reason, "memory_type", gone.c.memory_type, "job_run", run_id
    )
    return (
        pg_insert(history)
        .from_select(
            ["user_id", "memory_id", "event", "detail"],
            select(gone.c.user_id, gone.c.id, literal("expired"), detail),
        )
        .returning(history.c.detail["memory_type"].astext.label("memory_type"))
    )


def forget_counts(reason: str, policy: ForgetPolicy, user_id: str | None) -> Any:
    """How many rows ``reason`` would remove, per type (the dry run)."""
    stmt = select(m.c.memory_type, func.count().label("n")).where(forget_condition(reason, policy))
    if user_id is not None:
        stmt = stmt.where(m.c.user_id == user_id)
    return stmt.group_by(m.c.memory_type)


def forget(
    engine: Engine,
    policy: ForgetPolicy | None = None,
    *,
    dry_run: bool = False,
    batch_size: int = 1000,
    max_runtime_s: float | None = None,
    user_id: str | None = None,
    pause_s: float = 0.0,
) -> ForgetReport:
    """Remove expired, long-superseded and stale memories in small batches.

    Safe to start from cron on several hosts at once: a run that cannot take the
    session advisory lock returns at once with ``skipped=True``. Each batch is
    its own short transaction; running it again removes nothing more (idempotent).

    Args:
        engine: the database; its role must see every user's rows, even for one
            user (a member of ``memory_pg_maintenance``, a superuser or ``BYPASSRLS``),
            else :class:`~memory_pg.errors.RoleRequired` before anything is done.
        policy: what counts as forgettable (default :class:`ForgetPolicy`).
        dry_run: count what would go, delete nothing.
        batch_size: rows per delete transaction.
        max_runtime_s: start no new batch after this many seconds (``complete=False``).
        user_id: only this user's memories.
        pause_s: sleep between batches, leaving the CPU and I/O to searches on a
            busy server (the run takes longer, searches slow down less).
    """
    policy = policy or ForgetPolicy()
    if batch_size < 1:
        from memory_pg.errors import InvalidArgument

        raise InvalidArgument("batch_size must be at least 1")
    from memory_pg import pooling

    pooling.require_session(engine, "forget")
    report = ForgetReport(run_id=str(uuid.uuid4()), dry_run=dry_run, user_id=user_id)
    started = time.monotonic()
    with engine.connect() as conn:
        # Its statements set no tenant: one user or all, only such a role sees the rows.
        require_every_user(conn, "forget")
        locked = bool(conn.execute(try_session_lock(FORGET_LOCK)).scalar())
        conn.commit()
        if not locked:
            report.skipped = True
            report.message = "another forget run holds the lock; nothing done"
            logger.info("forget: another run holds the lock, exiting")
            return _finish(report, started)
        try:
            if dry_run:
                for reason in FORGET_REASONS:
                    with conn.begin():
                        for row in conn.execute(forget_counts(reason, policy, user_id)):
                            report._count(reason, row.memory_type, int(row.n))
            else:
                _forget_batches(conn, policy, report, batch_size, max_runtime_s, started, pause_s)
        finally:
            conn.execute(session_unlock(FORGET_LOCK))
            conn.commit()
    logger.info("forget: %d memories removed in %d batches", report.deleted, report.batches)
    return _finish(report, started)


def _forget_batches(
    conn: Connection,
    policy: ForgetPolicy,
    report: ForgetReport,
    batch_size: int,
    max_runtime_s: float | None,
    started: float,
    pause_s: float,
) -> None:
    for reason in FORGET_REASONS:
        while True:
            if max_runtime_s is not None and time.monotonic() - started >= max_runtime_s:
                report.complete = False
                report.message = "stopped at --max-runtime; run again to continue"
                return
            with conn.begin():
                rows = conn.execute(
                    forget_batch(reason, policy, batch_size, report.run_id, report.user_id)
                ).all()
            report.batches += 1
            for row in rows:
                report._count(reason, row.memory_type, 1)
            if len(rows) < batch_size:
                break
            if pause_s > 0:
                time.sleep(pause_s)


def _finish(report: ForgetReport, started: float) -> ForgetReport:
    report.duration_s = round(time.monotonic() - started, 3)
    return report


def utcnow() -> datetime:
    """Now, timezone-aware (UTC)."""
    return datetime.now(timezone.utc)


__all__ = [
    "FORGET_REASONS",
    "Candidate",
    "Decision",
    "ForgetReport",
    "Judge",
    "ask_judge",
    "decide",
    "forget",
    "history_events",
    "user_lock_key",
    "write_lock_key",
    "write_locks",
]
