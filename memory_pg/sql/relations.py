"""Statements of the relations between memories: entities, mentions, links, and walks over them.

Pure builders (SQLAlchemy Core), no I/O. Every statement names its user: the keys
of the three tables start with ``user_id`` and row-level security checks it again.
The walks are recursive CTEs over both directions of the links and over memories
that name the same (rare enough) entity, so recall across links is one statement;
each hop lands only on a memory the walking agent may see. Reads of entities as an
agent sees them are in :mod:`memory_pg.sql.entities`.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    Float,
    Integer,
    Select,
    Text,
    Uuid,
    and_,
    bindparam,
    case,
    cast,
    func,
    literal,
    null,
    select,
    union_all,
)
from sqlalchemy.dialects.postgresql import ARRAY, distinct_on, insert
from sqlalchemy.sql.elements import BindParameter, ColumnElement
from sqlalchemy.sql.selectable import FromClause, Subquery
from sqlalchemy.sql.sqltypes import NullType
from sqlalchemy.sql.util import ClauseAdapter

from memory_pg.sql.core import array_param, unnest_rows, vector_literal
from memory_pg.sql.memories import MEMORY_COLUMNS, visible_to
from memory_pg.sql.search import FilterShape, shape_conditions
from memory_pg.tables import entities, memories, memory_entities, memory_links

m = memories
e = entities
me = memory_entities
ml = memory_links

#: An entity named by more memories than this joins none of them in a walk: a
#: speaker's own name, or "PostgreSQL" in a database team's notes, links everything.
MAX_ENTITY_MENTIONS = 40

#: In a walk, at most this many memories are reached through one memory's entities
#: (the most relevant first when there is a query, else the newest).
MAX_ENTITY_NEIGHBOURS = 8

#: How a link reads from its other end.
_INVERSE = {
    "supersedes": "superseded_by",
    "merged_into": "merged_from",
    "derived_from": "source_of",
    "follows": "followed_by",
}


class QueryVector(Vector):
    """The search's query vector parameter, sent in pgvector's text form (as the search
    itself sends it: both name the parameter ``query_vector``)."""

    cache_ok = True

    def bind_processor(self, dialect: Any) -> Any:
        return lambda value: None if value is None else vector_literal(value)


@dataclass(frozen=True)
class NewEntity:
    """An entity one new memory names (the extractor's output, with its memory)."""

    memory_id: uuid.UUID
    name: str
    key: str
    kind: str
    aliases: tuple[str, ...] = ()


def same_user(left: ColumnElement[Any], right: ColumnElement[Any]) -> ColumnElement[bool]:
    """``left = right`` within one user: a join on these tables always matches user_id too
    (every key starts with it, so the join stays on the user's index entries)."""
    return and_(left.table.c.user_id == right.table.c.user_id, left == right)


def record_mentions(user_id: str, found: Sequence[NewEntity]) -> tuple[Any, dict[str, Any]]:
    """Upsert the entities and insert the mentions of new memories: one statement.

    An entity already known by its key keeps its id, name and kind and gains the new
    spellings as aliases. Keys go in sorted order, so two writers of one user lock
    entity rows in the same order and never deadlock.
    """
    by_key: dict[str, NewEntity] = {}
    for f in sorted(found, key=lambda f: f.key):
        known = by_key.get(f.key)
        if known is None:
            by_key[f.key] = f
        else:
            spellings = {*known.aliases, *f.aliases, f.name} - {known.name}
            by_key[f.key] = NewEntity(
                known.memory_id, known.name, known.key, known.kind, tuple(sorted(spellings))
            )
    keys = list(by_key)
    values: dict[str, Any] = {
        "rel_user_id": user_id,
        "ent_names": [by_key[k].name for k in keys],
        "ent_keys": keys,
        "ent_kinds": [by_key[k].kind for k in keys],
        # One text per entity (arrays of arrays must be rectangular): a unit separator.
        "ent_aliases": ["\x1f".join(by_key[k].aliases) for k in keys],
    }
    # What each memory itself called each entity (every spelling of one key, when a
    # memory lists it twice): an agent is shown only these of the memories it may see.
    spelled: dict[tuple[uuid.UUID, str], dict[str, None]] = {}
    for f in found:
        spelled.setdefault((f.memory_id, f.key), {}).update(dict.fromkeys((f.name, *f.aliases)))
    values |= {
        "mention_memory_ids": [memory_id for memory_id, _ in spelled],
        "mention_keys": [key for _, key in spelled],
        # One text per mention, as for the aliases.
        "mention_spellings": ["\x1f".join(names) for names in spelled.values()],
    }
    return _record_mentions(), values


@functools.cache
def _record_mentions() -> Any:
    user = literal_user()
    u = unnest_rows(
        name=array_param("ent_names", Text()),
        key=array_param("ent_keys", Text()),
        kind=array_param("ent_kinds", Text()),
        aliases=array_param("ent_aliases", Text()),
    )
    new_aliases = func.string_to_array(func.nullif(u.c.aliases, ""), "\x1f", type_=ARRAY(Text))
    ins = insert(e).from_select(
        ["user_id", "name", "key", "kind", "aliases"],
        select(
            user, u.c.name, u.c.key, u.c.kind, func.coalesce(new_aliases, cast([], ARRAY(Text)))
        ),
    )
    excluded = ins.excluded
    # Every spelling seen so far, once, without the entity's own name.
    spelling = func.unnest(
        func.array_append(func.array_cat(e.c.aliases, excluded.aliases), excluded.name)
    ).column_valued("spelling")
    merged = (
        select(func.coalesce(func.array_agg(spelling.distinct()), cast([], ARRAY(Text))))
        .where(spelling != e.c.name)
        .scalar_subquery()
    )
    upsert = (
        ins.on_conflict_do_update(index_elements=[e.c.user_id, e.c.key], set_={"aliases": merged})
        .returning(e.c.id, e.c.key)
        .cte("upserted")
    )
    mentions = unnest_rows(
        memory_id=array_param("mention_memory_ids", Uuid()),
        key=array_param("mention_keys", Text()),
        spellings=array_param("mention_spellings", Text()),
    )
    spellings = func.string_to_array(mentions.c.spellings, "\x1f", type_=ARRAY(Text))
    return (
        insert(me)
        .from_select(
            ["user_id", "memory_id", "entity_id", "spellings"],
            select(user, mentions.c.memory_id, upsert.c.id, spellings)
            .select_from(mentions.join(upsert, upsert.c.key == mentions.c.key))
            .distinct(),
        )
        .on_conflict_do_nothing()
        .returning(me.c.entity_id)
    )


def literal_user() -> ColumnElement[Any]:
    """The user of a relations statement, as a parameter."""
    return bindparam("rel_user_id", type_=Text())


def insert_links(
    user_id: str, links: Sequence[tuple[uuid.UUID, str, uuid.UUID]]
) -> tuple[Any, dict[str, Any]]:
    """Insert ``(src, relation, dst)`` links of one user; a link already there is kept."""
    values: dict[str, Any] = {
        "rel_user_id": user_id,
        "link_src": [s for s, _, _ in links],
        "link_relation": [r for _, r, _ in links],
        "link_dst": [d for _, _, d in links],
    }
    return _insert_links(), values


@functools.cache
def _insert_links() -> Any:
    u = unnest_rows(
        src=array_param("link_src", Uuid()),
        relation=array_param("link_relation", Text()),
        dst=array_param("link_dst", Uuid()),
    )
    return (
        insert(ml)
        .from_select(
            ["user_id", "src", "relation", "dst"],
            select(literal_user(), u.c.src, u.c.relation, u.c.dst).where(u.c.src != u.c.dst),
        )
        .on_conflict_do_nothing()
    )


def supersedes_links(user_id: str, new_ids: Sequence[uuid.UUID]) -> Any:
    """Links ``a supersedes b`` for each of ``new_ids`` (b) that records ``superseded_by``
    (a) an existing memory: an import's rows, replaced as they were when exported.

    Where ``a`` is a consolidation's summary (its metadata holds ``consolidated_from``,
    which :mod:`memory_pg.jobs.consolidate` always writes), the links are the ones the
    consolidation made: ``a derived_from b`` and ``b merged_into a``.
    """
    newer = m.alias("newer")
    ids = list(new_ids)
    pairs = (
        select(
            m.c.user_id,
            m.c.superseded_by.label("newer_id"),
            m.c.id.label("older_id"),
            newer.c.metadata.has_key(CONSOLIDATED_FROM).label("summary"),
        )
        .select_from(m.join(newer, same_user(newer.c.id, m.c.superseded_by)))
        .where(m.c.user_id == user_id, m.c.id.in_(ids))
        .cte("replaced_pairs")
    )
    p = pairs.c
    sel = union_all(
        select(p.user_id, p.newer_id, literal("supersedes"), p.older_id).where(~p.summary),
        select(p.user_id, p.newer_id, literal("derived_from"), p.older_id).where(p.summary),
        select(p.user_id, p.older_id, literal("merged_into"), p.newer_id).where(p.summary),
    )
    return (
        insert(ml).from_select(["user_id", "src", "relation", "dst"], sel).on_conflict_do_nothing()
    )


#: The metadata key that marks a consolidation's summary (the count of its fragments).
CONSOLIDATED_FROM = "consolidated_from"


# -- walks ------------------------------------------------------------------------------


#: Who walks: an agent (a value, or the parameter of a cached statement), or None (no
#: agent: shared memories only), as :func:`memory_pg.sql.memories.visible_to` takes it.
Walker = str | BindParameter[Any] | None


def _seen_by(agent_id: Walker, memory: FromClause) -> ColumnElement[bool]:
    """:func:`~memory_pg.sql.memories.visible_to` of ``memory`` (an alias of the memories
    table): the one rule of what an agent sees, adapted, not copied."""
    return ClauseAdapter(memory).traverse(visible_to(agent_id))


def _neighbours(
    user_id: ColumnElement[Any],
    node: ColumnElement[Any],
    agent_id: Walker,
    query_vector: ColumnElement[Any] | None,
) -> Any:
    """The memories one link from ``node`` that ``agent_id`` may see: (id, relation,
    entity), as a LATERAL subquery."""
    m_out, m_back = m.alias("m_out"), m.alias("m_back")
    out = select(ml.c.dst.label("id"), ml.c.relation.label("relation"), null().label("entity"))
    out = out.select_from(ml.join(m_out, same_user(m_out.c.id, ml.c.dst)))
    out = out.where(ml.c.user_id == user_id, ml.c.src == node, _seen_by(agent_id, m_out))
    inverse = case(
        *((ml.c.relation == k, literal(v)) for k, v in _INVERSE.items()), else_=ml.c.relation
    )
    back = (
        select(ml.c.src, inverse, null())
        .select_from(ml.join(m_back, same_user(m_back.c.id, ml.c.src)))
        .where(ml.c.user_id == user_id, ml.c.dst == node, _seen_by(agent_id, m_back))
    )
    me1, me2, m2 = me.alias("me1"), me.alias("me2"), m.alias("m2")
    me3, m3 = me.alias("me3"), m.alias("m3")
    # An entity named by more than MAX_ENTITY_MENTIONS memories the agent sees joins
    # none (counting another agent's private notes would let them cut a link); the
    # count stops one past the limit.
    common = (
        select(literal(1))
        .select_from(me3.join(m3, same_user(m3.c.id, me3.c.memory_id)))
        .where(
            me3.c.user_id == user_id,
            me3.c.entity_id == me1.c.entity_id,
            _seen_by(agent_id, m3),
        )
        .offset(MAX_ENTITY_MENTIONS)
        .limit(1)
        .correlate(me1)
        .exists()
    )
    order = (
        m2.c.embedding.cosine_distance(query_vector)
        if query_vector is not None
        else m2.c.event_time.desc()
    )
    shared = (
        # Named as the neighbour (a memory the agent sees) spells it: the entity's
        # recorded name is its first writer's, perhaps another agent's private memory.
        select(me2.c.memory_id, literal("mentions"), func.coalesce(me2.c.spellings[1], e.c.name))
        .select_from(
            me1.join(me2, same_user(me2.c.entity_id, me1.c.entity_id))
            .join(e, same_user(e.c.id, me1.c.entity_id))
            .join(m2, same_user(m2.c.id, me2.c.memory_id))
        )
        .where(
            me1.c.user_id == user_id,
            me1.c.memory_id == node,
            me2.c.memory_id != node,
            # Before the limit: a memory the agent may not see takes no place.
            _seen_by(agent_id, m2),
            ~common,
        )
        .order_by(order)
        .limit(MAX_ENTITY_NEIGHBOURS)
        .correlate(node.table)
    )
    shared_q = select(*shared.lateral("shared").c)
    return union_all(out, back, shared_q).subquery("nb").lateral("nb")


def walk(
    user_id: ColumnElement[Any],
    seeds: Subquery,
    depth: ColumnElement[Any],
    agent_id: Walker,
    query_vector: ColumnElement[Any] | None = None,
) -> Any:
    """Recursive CTE ``walk(id, seed, relation, entity, hops, weight)`` from ``seeds``
    (``id``, ``weight``) up to ``depth`` links away (each hop halves nothing: the
    caller weighs hops).

    Every hop lands on a memory ``agent_id`` may see (with no agent: a shared one), so
    another agent's private memory neither appears nor links two memories; superseded
    and expired memories are walked through (a replacement's ``supersedes`` chain is
    history the agent may read): the caller filters what it returns.
    """
    start = select(
        seeds.c.id.label("id"),
        seeds.c.id.label("seed"),
        cast(null(), Text).label("relation"),
        cast(null(), Text).label("entity"),
        literal(0, Integer).label("hops"),
        seeds.c.weight.label("weight"),
    )
    w = start.cte("walk", recursive=True)
    nb = _neighbours(user_id, w.c.id, agent_id, query_vector)
    step = (
        select(nb.c.id, w.c.seed, nb.c.relation, nb.c.entity, w.c.hops + 1, w.c.weight)
        .select_from(w.join(nb, literal(True)))
        .where(w.c.hops < depth)
    )
    return w.union_all(step)


def related_statement(
    user_id: str, memory_id: uuid.UUID, depth: int, agent_id: str | None, limit: int
) -> Select[Any]:
    """Memories up to ``depth`` links from ``memory_id``, nearest first, then newest."""
    uid = bindparam("rel_user_id", user_id, type_=Text())
    seed = select(
        literal(memory_id, Uuid).label("id"), literal(1.0, Float).label("weight")
    ).subquery("seed")
    w = walk(uid, select(*seed.c).subquery("seeds"), literal(depth, Integer), agent_id)
    first = (
        select(w.c.id, func.min(w.c.hops).label("hops"))
        .where(w.c.hops > 0, w.c.id != memory_id)
        .group_by(w.c.id)
        .subquery("first")
    )
    how = (
        select(w.c.id, w.c.hops, w.c.relation, w.c.entity)
        .ext(distinct_on(w.c.id))
        .where(w.c.hops > 0)
        # Of two paths, the nearer, then a link of its own before a shared entity.
        .order_by(w.c.id, w.c.hops, w.c.relation == "mentions", w.c.relation)
        .subquery("how")
    )
    return (
        select(*MEMORY_COLUMNS, first.c.hops, how.c.relation, how.c.entity)
        .select_from(
            first.join(how, how.c.id == first.c.id).join(
                m, and_(m.c.user_id == uid, m.c.id == first.c.id)
            )
        )
        .where(visible_to(agent_id))
        .order_by(first.c.hops, m.c.event_time.desc(), m.c.id)
        .limit(limit)
    )


def export_mentions(user_id: str) -> Select[Any]:
    """Every entity each memory of a user names (name, kind, and the spellings that
    memory gave it), for an export: by memory, then in the order the entities were
    first recorded."""
    return (
        select(me.c.memory_id, e.c.name, e.c.kind, me.c.spellings)
        .select_from(me.join(e, same_user(e.c.id, me.c.entity_id)))
        .where(me.c.user_id == user_id)
        .order_by(me.c.memory_id, e.c.created_at, e.c.key)
    )


# -- search expansion ----------------------------------------------------------------------

#: An expanded memory's score: this share of the score of the hit it hangs from (so it
#: ranks below that hit), times its own similarity to the query (so a relevant
#: neighbour ranks above a barely relevant one).
EXPAND_DECAY = 0.9

#: The best hits a search expands from.
EXPAND_SEEDS = 3


def expand_search(
    base: Select[Any],
    conditions: Sequence[ColumnElement[bool]],
    *,
    depth: int,
    query_vector: ColumnElement[Any],
    user_id: ColumnElement[Any],
    top_k: ColumnElement[Any],
    decay: float = EXPAND_DECAY,
    seeds: int = EXPAND_SEEDS,
    agent_id: Walker = None,
) -> Select[Any]:
    """``base`` (a ranked search) with the memories ``depth`` links from its best hits.

    One statement: the search becomes a CTE, its ``seeds`` best rows start a walk
    (:func:`walk`), and each memory the walk reaches that passes ``conditions`` (the
    search's filters: current, visible to the agent, types ...) and is not a direct
    hit scores ``seed score × decay^hops × (½ + ½·similarity)``, so it ranks below
    the hit it came from. The result keeps ``base``'s columns, plus ``via`` (the hit
    it came from, NULL for a direct hit), ``via_relation`` and ``via_entity``.
    ``agent_id``: the searching agent, whose visibility ``conditions`` hold too: the
    walk passes only through memories it may see (None: shared ones only).
    """
    hits = base.cte("hits")
    best = (
        select(hits.c.id, hits.c.score.label("weight"))
        .order_by(hits.c.score.desc())
        .limit(seeds)
        .subquery("best")
    )
    w = walk(
        user_id, select(*best.c).subquery("seeds"), literal(depth, Integer), agent_id, query_vector
    )
    distance = m.c.embedding.cosine_distance(query_vector)
    similarity = func.coalesce(1.0 - distance, 0.0)
    score = (
        w.c.weight
        * func.power(literal(decay, Float), w.c.hops)
        * (0.5 + 0.5 * func.greatest(similarity, 0.0))
    )
    reached = (
        select(
            m.c.id.label("reached_id"),
            w.c.seed,
            w.c.relation,
            w.c.entity,
            distance.label("reached_distance"),
            score.label("reached_score"),
        )
        .ext(distinct_on(m.c.id))
        .select_from(w.join(m, and_(m.c.user_id == user_id, m.c.id == w.c.id)))
        .where(w.c.hops > 0, *conditions, m.c.id.not_in(select(hits.c.id)))
        .order_by(m.c.id, score.desc())
        .subquery("reached")
    )
    direct = select(
        *hits.c,
        cast(null(), Uuid).label("via"),
        cast(null(), Text).label("via_relation"),
        cast(null(), Text).label("via_entity"),
    )
    columns = {c.name for c in MEMORY_COLUMNS}
    extra: list[ColumnElement[Any]] = []
    for c in hits.c:
        if c.name in columns:
            extra.append(m.c[c.name])
        elif c.name == "score":
            extra.append(reached.c.reached_score.label("score"))
        elif c.name == "distance":
            extra.append(reached.c.reached_distance.label("distance"))
        elif c.name == "similarity":
            extra.append((1.0 - reached.c.reached_distance).label("similarity"))
        elif isinstance(c.type, NullType):
            extra.append(null().label(c.name))
        else:
            extra.append(cast(null(), c.type).label(c.name))
    expanded = select(
        *extra,
        reached.c.seed.label("via"),
        reached.c.relation.label("via_relation"),
        reached.c.entity.label("via_entity"),
    ).select_from(reached.join(m, and_(m.c.user_id == user_id, m.c.id == reached.c.reached_id)))
    both = union_all(direct, expanded).subquery("both")
    return (
        select(*both.c)
        .order_by(both.c.score.desc(), both.c.event_time.desc(), both.c.id)
        .limit(top_k)
    )


def expanded_search(base: Select[Any], filters: FilterShape, depth: int) -> Select[Any]:
    """:func:`expand_search` of a statement of :func:`memory_pg.sql.search.search_statement`
    with ``filters`` of that shape, its values left to the execution (the search's own
    values fill it): built once per shape, then shared, as the search statement is.

    The key is the search statement (one per :class:`~memory_pg.sql.search.SearchShape`,
    itself cached), the filter shape, ``depth``, and :data:`EXPAND_DECAY`,
    :data:`EXPAND_SEEDS`, :data:`MAX_ENTITY_MENTIONS` and :data:`MAX_ENTITY_NEIGHBOURS`
    as they are now (a tuner that changes one gets a new statement).
    """
    limits = (MAX_ENTITY_MENTIONS, MAX_ENTITY_NEIGHBOURS)  # read by the walk as it is built
    return _expanded_search(base, filters, depth, EXPAND_DECAY, EXPAND_SEEDS, limits)


@functools.lru_cache(maxsize=64)
def _expanded_search(
    base: Select[Any],
    filters: FilterShape,
    depth: int,
    decay: float,
    seeds: int,
    limits: tuple[int, int],
) -> Select[Any]:
    viewer = filters[5]  # the search has an agent (FilterShape's scope: viewer, writers)
    # The parameter the search's own visibility condition takes, so one value fills both.
    agent = bindparam("viewer_agent", type_=m.c.agent_id.type) if viewer else None
    return expand_search(
        base,
        shape_conditions(filters),
        depth=depth,
        query_vector=bindparam("query_vector", type_=QueryVector()),
        user_id=bindparam("search_user_id", type_=Text()),
        top_k=bindparam("top_k", type_=Integer()),
        decay=decay,
        seeds=seeds,
        agent_id=agent,
    )


def link_values(
    links: Mapping[uuid.UUID, uuid.UUID], relation: str
) -> list[tuple[uuid.UUID, str, uuid.UUID]]:
    """``{src: dst}`` as link triples of one relation."""
    return [(src, relation, dst) for src, dst in links.items()]


__all__ = [
    "EXPAND_DECAY",
    "EXPAND_SEEDS",
    "MAX_ENTITY_MENTIONS",
    "MAX_ENTITY_NEIGHBOURS",
    "NewEntity",
    "Walker",
    "expand_search",
    "expanded_search",
    "export_mentions",
    "insert_links",
    "link_values",
    "literal_user",
    "record_mentions",
    "related_statement",
    "same_user",
    "supersedes_links",
    "walk",
]
