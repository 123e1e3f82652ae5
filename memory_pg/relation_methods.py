"""The stores' relation methods (issue 19), written once like :mod:`memory_pg.methods`.

``related``, ``entity``, ``entities`` and ``graph`` read the entity and link tables
(:mod:`memory_pg.plans.relations`); both stores wrap these operations with
:func:`~memory_pg.methods.sync_method` or :func:`~memory_pg.methods.async_method`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory_pg._validate import check_agent_id, check_text, check_top_k
from memory_pg.methods import Op, StoreBase, run_plan
from memory_pg.plans import relations
from memory_pg.plans.write import parse_memory_id, scope_user


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
    uid = scope_user(user_id, self.user_id, self.settings)
    plan = relations.plan_related(
        uid,
        parse_memory_id(memory_id),
        relations.check_depth(depth),
        check_agent_id(agent_id, self.settings),
        check_top_k(limit),
    )
    return (yield from run_plan(self, plan, uid))


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
    uid = scope_user(user_id, self.user_id, self.settings)
    plan = relations.plan_entity(
        uid,
        check_text(name, self.settings, what="name"),
        check_agent_id(agent_id, self.settings),
        include_inactive,
        check_top_k(limit),
    )
    return (yield from run_plan(self, plan, uid))


def entities(
    self: StoreBase[Any],
    *,
    kinds: Sequence[str] | None = None,
    limit: int = 100,
    user_id: str | None = None,
    agent_id: str | None = None,
) -> Op[list[dict[str, Any]]]:
    """A user's entities, most mentioned first (``mentions``: current memories naming it)."""
    uid = scope_user(user_id, self.user_id, self.settings)
    plan = relations.plan_entities(
        uid,
        check_agent_id(agent_id, self.settings),
        relations.check_kinds(kinds),
        check_top_k(limit),
    )
    return (yield from run_plan(self, plan, uid))


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
    uid = scope_user(user_id, self.user_id, self.settings)
    plan = relations.plan_graph(
        uid,
        check_text(name, self.settings, what="name"),
        check_agent_id(agent_id, self.settings),
        check_top_k(limit),
    )
    return (yield from run_plan(self, plan, uid))
