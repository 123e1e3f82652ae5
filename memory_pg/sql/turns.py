"""Statements of a user's conversations: the newest current turn of each session.

A turn's conversation is ``metadata["session_id"]``; ``follows`` links chain its turns.
Pure builders (SQLAlchemy Core), no I/O.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from sqlalchemy import (
    Text,
    Uuid,
    and_,
    any_,
    bindparam,
    cast,
    func,
    literal,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.sql.elements import ColumnElement

from memory_pg.sql.core import Bound, array_param, unnest_rows, vector_array
from memory_pg.tables import memories, memory_links

m = memories
ml = memory_links


def last_turns(
    user_id: str,
    sessions: Sequence[str],
    exclude: Sequence[uuid.UUID],
    agent_id: str | None = None,
    private: bool = False,
) -> Any:
    """The newest current memory of each conversation (``metadata.session_id``), not one of
    ``exclude``, that a turn of this scope may follow (:func:`may_follow`): the turn the
    first new turn of that conversation follows. Another agent's private turns are
    passed over, so that they neither end a shared chain nor show where they lie."""
    current = (m.c.superseded_at.is_(None), m.c.id.not_in(list(exclude)))
    latest = _chain_end(m, user_id, agent_id, private, m.c.user_id == user_id, *current)
    return select(_SESSIONS.c.session, latest.c.id).select_from(
        _SESSIONS.join(latest, literal(True))
    ), {"sessions": list(sessions)}


def may_follow(
    before_private: bool, before_agent: str | None, private: bool, agent_id: str | None
) -> bool:
    """Whether a turn (``private``, ``agent_id``) may follow one (``before_private``,
    ``before_agent``): every turn follows a shared one; a private one only follows its
    own agent's private turns too (no agent sees another's)."""
    return not before_private or (private and agent_id is not None and agent_id == before_agent)


def _followable(table: Any, agent_id: str | None, private: bool) -> ColumnElement[bool]:
    """SQL of :func:`may_follow`: the rows of ``table`` a turn of this scope may follow."""
    shared: ColumnElement[bool] = table.c.private.is_(False)
    if private and agent_id is not None:
        own: ColumnElement[bool] = table.c.agent_id == agent_id
        return or_(shared, own)
    return shared


#: How far back, by write time, a new turn looks for the turn before it. A bound, so
#: that the first turn of a new conversation of a user with a million memories reads
#: the index entries of the last hour's writes, not all of them (row-level security
#: keeps the planner from using an index on the session: its operator is not leakproof).
RECENT_WRITES = timedelta(hours=1)


def session_turns(user_id: str, sessions: Sequence[str]) -> Any:
    """The memories of ``sessions`` written in the last :data:`RECENT_WRITES`, each with
    the memory it ``follows`` (if any): enough to find, in Python, the last turn of each
    conversation that a writer may see (:func:`memory_pg.plans.turns.plan_fill`)."""
    since = func.now() - literal(RECENT_WRITES)
    link = ml.alias("link")
    return (
        select(
            m.c.metadata["session_id"].astext.label("session"),
            m.c.id,
            m.c.text,
            m.c.memory_type,
            m.c.private,
            m.c.agent_id,
            m.c.event_time,
            m.c.created_at,
            m.c.superseded_at,
            (m.c.expires_at.is_not(None) & (m.c.expires_at <= func.now())).label("expired"),
            link.c.dst.label("follows"),
        )
        .select_from(
            m.outerjoin(
                link,
                and_(
                    link.c.user_id == m.c.user_id,
                    link.c.src == m.c.id,
                    link.c.relation == "follows",
                ),
            )
        )
        .where(
            m.c.user_id == user_id,
            m.c.created_at >= since,
            m.c.metadata["session_id"].astext == any_(array_param("sessions", Text())),
        )
    ), {"sessions": list(sessions)}


def unframe(user_id: str, session: str, erased: Mapping[str, Any], context: str) -> Any:
    """The turns of ``session`` that the erased turn ``erased`` (a row of
    :func:`memory_pg.sql.memories.delete_memory`) may have framed, and whose context is
    ``context`` (its text's tail), lose it: the context and its words (weight ``C`` in
    ``search_tsv``; their own words keep ``D``, their sounds ``B``) go. Returns their
    ids and texts, to embed again without it.

    A turn frames only turns written after it, and a private turn only its own
    agent's private turns (:func:`memory_pg.plans.turns.from_batch`): another
    agent's turn with the same context was framed by another turn, and keeps it.
    """
    own_words = func.ts_filter(m.c.search_tsv, literal_column("'{b,d}'::\"char\"[]"))
    scope: list[ColumnElement[bool]] = []
    if erased["private"]:
        scope = [m.c.private.is_(True), m.c.agent_id == erased["agent_id"]]
    return (
        update(m)
        .where(
            m.c.user_id == user_id,
            m.c.metadata["session_id"].astext == session,
            m.c.context == context,
            m.c.created_at >= erased["created_at"],
            *scope,
        )
        .values(context=None, search_tsv=own_words)
        .returning(m.c.id, m.c.text)
    )


def set_vectors(user_id: str, ids: Sequence[uuid.UUID], vectors: Any) -> Bound:
    """Store the vectors of memories, computed again: one statement for all of them
    (the vectors in pgvector's text form, as the insert sends them)."""
    return Bound(
        _set_vectors(), {"set_user": user_id, "ids": list(ids), "vecs": vector_array(vectors)}
    )


@functools.cache
def _set_vectors() -> Any:
    u = unnest_rows(
        id=array_param("ids", Uuid()),
        v=cast(bindparam("vecs", type_=Text()), ARRAY(m.c.embedding.type)),
    )
    return (
        update(m)
        .where(m.c.user_id == bindparam("set_user", type_=Text()), m.c.id == u.c.id)
        .values(embedding=u.c.v)
    )


_SESSIONS = unnest_rows(session=array_param("sessions", Text()))


def _chain_end(
    source: Any,
    user_id: str,
    agent_id: str | None,
    private: bool,
    *conditions: ColumnElement[bool],
) -> Any:
    """The newest row of ``source`` (the memories, or some of them) in each session that
    a turn of this scope may follow, meeting ``conditions``: the end of its chain of
    ``follows`` links among those rows (one batch's turns share created_at: among
    ends, the last written, :mod:`memory_pg._ids`), as a LATERAL subquery over
    :data:`_SESSIONS`."""
    c = source.c
    follower = m.alias("follower")
    followed = (
        select(ml.c.src)
        .select_from(
            ml.join(follower, and_(follower.c.user_id == ml.c.user_id, follower.c.id == ml.c.src))
        )
        .where(
            ml.c.user_id == user_id,
            ml.c.dst == c.id,
            ml.c.relation == "follows",
            _followable(follower, agent_id, private),
        )
    )
    # Followed by a turn this scope may not follow (another agent's private turn,
    # linked before such links were refused): not an end while another is.
    followed_at_all = select(ml.c.src).where(
        ml.c.user_id == user_id, ml.c.dst == c.id, ml.c.relation == "follows"
    )
    return (
        select(c.id, c.text, c.private, c.agent_id, c.memory_type, c.event_time)
        .add_columns(c.superseded_at, c.expires_at)
        .where(
            c.metadata["session_id"].astext == _SESSIONS.c.session,
            ~followed.exists(),
            _followable(source, agent_id, private),
            *conditions,
        )
        # One write's turns share their times; their ids are in the order written.
        .order_by(followed_at_all.exists(), c.created_at.desc(), c.event_time.desc(), c.id.desc())
        .limit(1)
        .lateral("latest")
    )


__all__ = ["RECENT_WRITES", "last_turns", "may_follow", "session_turns", "set_vectors", "unframe"]
