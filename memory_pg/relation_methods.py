"""The stores' relation methods (issue 19), written once like :mod:`memory_pg.methods`.

``related``, ``entity``, ``entities`` and ``graph`` read the entity and link tables
(:mod:`memory_pg.plans.relations`); both stores wrap these operations with
:func:`~memory_pg.operations.sync_method` or :func:`~memory_pg.operations.async_method`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory_pg._validate import check_agent_id, check_text, check_top_k
from memory_pg.methods import StoreBase
from memory_pg.operations import Op, read
from memory_pg.plans import relations
from memory_pg.plans.shapes import parse_memory_id
from memory_pg.plans.write import scope_user


def _who(
    store: StoreBase[Any], user_id: str | None, agent_id: str | None
) -> tuple[str, str | None]:
    """The user a call reads as (the store's rule) and its agent, validated."""
    return scope_user(user_id, store.user_id, store.settings), check_agent_id(
        agent_id, store.settings
    )


def related(
    self: StoreBase[Any],
    memory_id: str,
    depth: int = 2,
    *,
    limit: int = 50,
    user_id: str | None = None,
    agent_id: str | None = None,
) -> Op[list[dict[str, Any]]]:
    """Memories up to ``depth`` links from ``memory_id``: the next and previous turn,
    what it replaced, what a summary came from, memories naming the same entity.

    Nearest first, then newest; each dict has ``hops``, ``relation`` (how the first
    hop to it reads: ``follows``, ``superseded_by``, ``mentions`` ...) and ``entity``
    (for ``mentions``: the shared entity's name).
    """
    ref, hops, top = (
        parse_memory_id(memory_id),
        relations.check_depth(depth),
        check_top_k(limit, what="limit"),
    )
    uid, agent = _who(self, user_id, agent_id)
    return (yield from read(lambda: relations.plan_related(uid, ref, hops, agent, top), uid))


def entity(
    self: StoreBase[Any],
    name: str,
    *,
    limit: int = 50,
    include_inactive: bool = False,
    user_id: str | None = None,
    agent_id: str | None = None,
) -> Op[dict[str, Any] | None]:
    """Everything about one entity (by name or alias, "小王"), newest first, or None.

    A dict with ``id``, ``name``, ``kind``, ``aliases`` and ``memories`` (the
    memories naming it, newest event first; superseded ones only if asked).
    """
    who, top = check_text(name, self.settings, what="name"), check_top_k(limit, what="limit")
    uid, agent = _who(self, user_id, agent_id)
    return (
        yield from read(lambda: relations.plan_entity(uid, who, agent, include_inactive, top), uid)
    )


def entities(
    self: StoreBase[Any],
    *,
    kinds: Sequence[str] | None = None,
    limit: int = 100,
    user_id: str | None = None,
    agent_id: str | None = None,
) -> Op[list[dict[str, Any]]]:
    """A user's entities, most mentioned first (``mentions``: current memories naming it)."""
    which, top = relations.check_kinds(kinds), check_top_k(limit, what="limit")
    uid, agent = _who(self, user_id, agent_id)
    return (yield from read(lambda: relations.plan_entities(uid, agent, which, top), uid))


def graph(
    self: StoreBase[Any],
    name: str,
    *,
    limit: int = 25,
    user_id: str | None = None,
    agent_id: str | None = None,
) -> Op[dict[str, Any] | None]:
    """An entity's neighbourhood: :meth:`entity` plus ``related_entities`` (the
    entities named in the same memories, most shared first). Render it with
    :func:`memory_pg.plans.relations.graph_text` or ``graph_dot``."""
    who, top = check_text(name, self.settings, what="name"), check_top_k(limit, what="limit")
    uid, agent = _who(self, user_id, agent_id)
    return (yield from read(lambda: relations.plan_graph(uid, who, agent, top), uid))
