"""The hybrid search statement: vector and full-text legs fused and scored in one query."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, ParamSpec

import numpy as np
from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    Boolean,
    ColumnElement,
    DateTime,
    Float,
    Integer,
    Select,
    Text,
    and_,
    bindparam,
    case,
    cast,
    func,
    literal,
    null,
    select,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.sql.elements import BindParameter

from memory_pg.config import RankingSettings
from memory_pg.scoring import (
    BM25_AVG_LENGTH,
    BM25_B,
    BM25_K1,
    MAX_E_FOLDS,
    MAX_HALVINGS,
    TIME_MAX_SPANS,
)
from memory_pg.sql import dialogue, lexical
from memory_pg.sql.attributes import attribute_factor, names_subject, states_asked
from memory_pg.sql.core import vector_literal
from memory_pg.sql.memories import MEMORY_COLUMNS, current_conditions, visible_to
from memory_pg.sql.mentions import entity_factor, names_entity
from memory_pg.sql.use import record_use
from memory_pg.tables import memories

if TYPE_CHECKING:
    from memory_pg.text.query import Query

m = memories
P = ParamSpec("P")


class _QueryVector(Vector):
    """The column's vector type, sent in :func:`vector_literal`'s form: pgvector's own
    conversion of 384 floats costs more than all of a search's other values.

    The value stays a typed parameter: a ``CAST`` of text in the statement would be
    parsed again for every row that the exact scan compares.
    """

    cache_ok = True

    def bind_processor(self, dialect: Any) -> Any:
        return lambda value: None if value is None else vector_literal(value)


@dataclass(frozen=True)
class SearchFilters:
    """Filters of a search; all optional.

    Attributes:
        memory_types: only these types.
        since: only memories whose event time is at or after this.
        until: only memories whose event time is before this.
        metadata: only memories whose metadata contains this JSON object (``@>``).
        as_of: what was current at this past time, instead of now.
        min_similarity: with ``min_lexical``, the relevance gate of a search: a
            result is kept if its cosine similarity (times the query's
            readability) reaches ``min_similarity`` or
            its full-text score reaches ``min_lexical`` (either alone when only it
            is set). None for both: no gate.
        min_lexical: see ``min_similarity``.
    """

    memory_types: tuple[str, ...] | None = None
    since: datetime | None = None
    until: datetime | None = None
    metadata: dict[str, Any] | None = None
    as_of: datetime | None = None
    min_similarity: float | None = None
    min_lexical: float | None = None
    #: The agent searching: it sees the shared memories and its own private ones
    #: (none: the shared ones only).
    agent_id: str | None = None
    #: Only memories written by these agents.
    agent_ids: tuple[str, ...] | None = None


def filter_conditions(user_id: str, filters: SearchFilters) -> list[ColumnElement[bool]]:
    """The WHERE conditions of a search: the user first, then the filters (values bound)."""
    values = {"search_user_id": user_id, **_filter_values(filters)}
    return _filter_conditions(*_filter_shape(filters), values=values, **_scope_shape(filters))


#: Which filters a search has (memory types, since, until, metadata, as_of) and its agent
#: scope (a searching agent, a filter on writers): what of them decides a statement's text.
FilterShape = tuple[bool, bool, bool, bool, bool, bool, bool]


def filter_shape(filters: SearchFilters) -> FilterShape:
    """The :data:`FilterShape` of ``filters``, a key to cache statements by."""
    scope = _scope_shape(filters)
    return (*_filter_shape(filters), scope["viewer"], scope["writers"])


def shape_conditions(shape: FilterShape) -> list[ColumnElement[bool]]:
    """:func:`filter_conditions` of a shape, values left to the execution: the same
    parameters as :func:`search_statement`'s statement, which its values fill."""
    types, since, until, metadata, as_of, viewer, writers = shape
    return _filter_conditions(types, since, until, metadata, as_of, viewer=viewer, writers=writers)


#: The search's parameters: declared once, given their values at execution. None has
#: a default, so a value left out is an error, never a previous search's value.
#: Not "user_id": the touch's UPDATE would take a value named after a column as a
#: column to SET.
_P_USER_ID = bindparam("search_user_id", type_=m.c.user_id.type)
_P_VECTOR = bindparam("query_vector", type_=_QueryVector())
_P_TOP_K = bindparam("top_k", type_=Integer)
_P_TYPES = bindparam("memory_types", type_=m.c.memory_type.type, expanding=True)
_P_SINCE = bindparam("since", type_=m.c.event_time.type)
_P_UNTIL = bindparam("until", type_=m.c.event_time.type)
_P_META = bindparam("meta_filter", type_=JSONB)
_P_AS_OF = bindparam("as_of", type_=DateTime(timezone=True))
_P_MIN_SIMILARITY = bindparam("min_similarity", type_=Float)
_P_MIN_LEXICAL = bindparam("min_lexical", type_=Float)
#: Share of the query the embedding model reads (``embedding.readability``): the
#: vector leg's share of its weight.
_P_READABILITY = bindparam("query_readability", type_=Float)
_P_TIME_START = bindparam("time_start", type_=DateTime(timezone=True))
_P_TIME_END = bindparam("time_end", type_=DateTime(timezone=True))
_P_VIEWER = bindparam("viewer_agent", type_=m.c.agent_id.type)
_P_WRITERS = bindparam("writer_agents", type_=m.c.agent_id.type, expanding=True)
#: The keys of the entities the query names (:func:`memory_pg.entities.extract`).
_P_ENTITY_KEYS = bindparam("entity_keys", type_=ARRAY(Text))
_P_ENTITY_PATTERN = bindparam("entity_pattern", type_=Text)
_P_ASKED_ATTRIBUTES = bindparam("asked_attributes", type_=ARRAY(Text))


def _scope_shape(filters: SearchFilters) -> dict[str, bool]:
    return {"viewer": filters.agent_id is not None, "writers": bool(filters.agent_ids)}


def _filter_shape(filters: SearchFilters) -> tuple[bool, bool, bool, bool, bool]:
    return (
        bool(filters.memory_types),
        filters.since is not None,
        filters.until is not None,
        bool(filters.metadata),
        filters.as_of is not None,
    )


def _filter_values(filters: SearchFilters) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if filters.memory_types:
        values["memory_types"] = list(filters.memory_types)
    if filters.since is not None:
        values["since"] = filters.since
    if filters.until is not None:
        values["until"] = filters.until
    if filters.metadata:
        values["meta_filter"] = filters.metadata
    if filters.as_of is not None:
        values["as_of"] = filters.as_of
    if filters.agent_id is not None:
        values["viewer_agent"] = filters.agent_id
    if filters.agent_ids:
        values["writer_agents"] = list(filters.agent_ids)
    return values


def _filter_conditions(
    types: bool,
    since: bool,
    until: bool,
    metadata: bool,
    as_of: bool,
    values: dict[str, Any] | None = None,
    *,
    viewer: bool = False,
    writers: bool = False,
) -> list[ColumnElement[bool]]:
    """The conditions of a filter shape; with ``values``, each parameter carries its value."""

    def p(param: BindParameter[Any]) -> BindParameter[Any]:
        if values is None:
            return param
        return bindparam(param.key, values[param.key], type_=param.type, expanding=param.expanding)

    conds: list[ColumnElement[bool]] = [m.c.user_id == p(_P_USER_ID)]
    conds.extend(current_conditions(p(_P_AS_OF) if as_of else None))
    if types:
        conds.append(m.c.memory_type.in_(p(_P_TYPES)))
    if since:
        conds.append(m.c.event_time >= p(_P_SINCE))
    if until:
        conds.append(m.c.event_time < p(_P_UNTIL))
    if metadata:
        conds.append(m.c.metadata.op("@>")(p(_P_META)))
    conds.append(visible_to(p(_P_VIEWER) if viewer else None))
    if writers:
        conds.append(m.c.agent_id.in_(p(_P_WRITERS)))
    return conds


def _half_life_expr(ranking: RankingSettings) -> ColumnElement[Any]:
    """The recency half-life (days) of each row's type, from the settings (bound values)."""
    whens = {t: float(v) for t, v in sorted(ranking.half_life_days.items())}
    default = literal(float(ranking.default_half_life_days), Float)
    if not whens:
        return default
    return case(
        {t: literal(v, Float) for t, v in whens.items()}, value=m.c.memory_type, else_=default
    )


def _halve(halvings: ColumnElement[Any]) -> ColumnElement[Any]:
    """``0.5 ** halvings``, the exponent capped as :func:`memory_pg.scoring.recency` caps it."""
    return func.power(0.5, func.least(halvings, literal(MAX_HALVINGS, Float)))


def _days_between(later: ColumnElement[Any], earlier: ColumnElement[Any]) -> ColumnElement[Any]:
    return func.greatest(func.extract("epoch", later - earlier) / 86400.0, 0.0)


@dataclass(frozen=True)
class SearchShape:
    """What decides the text of a search statement; everything else is a parameter.

    Two searches of one shape run the same statement with different values (user,
    vector, words, filter values, ``top_k``, gate thresholds). The ranking settings
    stay literals of the statement: they change between deployments, not searches.
    """

    #: Which filters the search has: memory types, since, until, metadata, as_of
    #: (:func:`_filter_shape`).
    filters: tuple[bool, bool, bool, bool, bool] = (False, False, False, False, False)
    min_similarity: bool = False
    min_lexical: bool = False
    english: bool = False
    cjk: bool = False
    #: The query names a time (:mod:`memory_pg.timespan`): the score has a time part.
    timespan: bool = False
    #: The query names an entity (and the ranking weighs it): the score has an entity part.
    entities: bool = False
    #: The question asks for an attribute (:mod:`memory_pg.text.attributes`), of a
    #: subject it names: the score has an attribute part.
    attributes: bool = False
    attribute_subject: bool = False
    #: The subject is also named by its words' sounds ("游泳" for a typed "游勇").
    subject_sounds: bool = False
    touch: bool = False
    #: Agent scope (see :func:`visible_to`): a searching agent, a filter on writers.
    viewer: bool = False
    writers: bool = False
    #: ``RankingSettings`` as a hashable key; ``ranking`` is what it was made from.
    ranking_key: tuple[tuple[str, Any], ...] = ()
    ranking: RankingSettings = field(
        default_factory=RankingSettings, compare=False, hash=False, repr=False
    )
    #: The module's BM25 and IDF constants when the search was made: a tuner (or a
    #: test) that changes them gets a statement that uses the new ones.
    lexical_constants: tuple[float, ...] = ()
    #: The full-text leg's time window (:data:`memory_pg.sql.lexical.PULL_WINDOW`):
    #: for a user known to hold more memories than its sample.
    window: bool = False


def _ranking_key(rs: RankingSettings) -> tuple[tuple[str, Any], ...]:
    return tuple(
        (f.name, tuple(sorted(rs.half_life_days.items())) if f.name == "half_life_days" else v)
        for f in dataclasses.fields(rs)
        for v in (getattr(rs, f.name),)
    )


def search_statement(
    user_id: str,
    query: Query,
    query_vector: np.ndarray[Any, Any] | None,
    *,
    top_k: int,
    filters: SearchFilters,
    ranking: RankingSettings | None = None,
    touch: bool = False,
    readability: float = 1.0,
    window: bool = False,
) -> tuple[Select[Any], dict[str, Any]]:
    """The hybrid search (see :func:`search_memories`) and the values to run it with.

    The statement is built once per :class:`SearchShape` and shared, by every thread,
    with every search of that shape; execute it as ``conn.execute(stmt, values)``.
    It carries no value of any search: the user, the vector and the words are in
    ``values`` alone, and a value left out fails the execution.

    ``readability`` is the share of the query the embedding model reads
    (:func:`memory_pg.embedding.readability`): the vector leg's share of its weight.
    ``query`` is the query analysed (:func:`memory_pg.text.query.analyse`): the time
    it names, its words, the entities it names, the attribute it asks for and of
    whom. ``window``: the user is known to hold more memories than the full-text
    leg's sample, so it reads their matches in a time window first (the same
    results). Each row carries ``user_heavy``: whether the user holds at least the
    sample under these filters (NULL for a query with no word), for the next
    search's ``window``.
    """
    rs = ranking or RankingSettings()
    span = query.span
    en_any, en_own, cjk_any, cjk_own = query.en_any, query.en_own, query.cjk_any, query.cjk_own
    entity_keys = [key for key, _ in query.entities] if rs.entity_weight > 0 else []
    asked_attributes = list(query.asked) if rs.attribute_weight > 0 else []
    subject = query.subject if asked_attributes else ""
    sounds = query.subject_sounds if subject else ""
    shape = SearchShape(
        _filter_shape(filters),
        min_similarity=filters.min_similarity is not None,
        min_lexical=filters.min_lexical is not None,
        english=bool(en_any),
        cjk=bool(cjk_any),
        timespan=span is not None,
        entities=bool(entity_keys),
        attributes=bool(asked_attributes),
        attribute_subject=bool(subject),
        subject_sounds=bool(sounds),
        touch=touch,
        **_scope_shape(filters),
        ranking_key=_ranking_key(rs),
        ranking=rs,
        lexical_constants=(
            BM25_K1,
            BM25_B,
            BM25_AVG_LENGTH,
            lexical.IDF_SAMPLE,
            lexical.PULL_MAX_SHARE,
            lexical.SMALL_PULL_MAX_SHARE,
            lexical.SMALL_PULL_MIN,
            lexical.LEXICAL_SCAN_MAX,
            lexical.FULL_MATCHES_ENOUGH,
            lexical.PULL_WINDOW,
            lexical.WINDOW_MAX_SHARE,
        ),
        window=window and lexical.PULL_WINDOW > 0 and bool(en_any or cjk_any),
    )
    values: dict[str, Any] = {
        "search_user_id": user_id,
        "query_vector": query_vector,
        "top_k": top_k,
        "query_readability": min(max(float(readability), 0.0), 1.0),
        **_filter_values(filters),
    }
    if span is not None:
        values["time_start"], values["time_end"] = span.start, span.end
    if entity_keys:
        values["entity_keys"] = entity_keys
        values["entity_pattern"] = query.entity_pattern
    if asked_attributes:
        values["asked_attributes"] = asked_attributes
        values["asked_itself"] = list(query.asked_itself)
    if subject:
        values["attribute_subject"] = subject
    if sounds:
        values["subject_sounds"] = sounds
    if en_any:
        values["lex_en_any"], values["lex_en_own"] = en_any, en_own
    if cjk_any:
        values["lex_cjk_any"], values["lex_cjk_own"] = cjk_any, cjk_own
    if filters.min_similarity is not None:
        values["min_similarity"] = filters.min_similarity
    if filters.min_lexical is not None:
        values["min_lexical"] = filters.min_lexical
    return build_search(shape), values


def _with_values(
    build: Callable[P, tuple[Select[Any], dict[str, Any]]],
) -> Callable[P, Select[Any]]:
    def bound(*args: P.args, **kwargs: P.kwargs) -> Select[Any]:
        stmt, values = build(*args, **kwargs)
        return stmt.params(values)

    return bound


#: Hybrid search in one statement (:func:`search_statement`'s, values bound).
search_memories = _with_values(search_statement)
search_memories.__doc__ = """Hybrid search in one statement: candidates, fusion and the final score.

    With ``touch``, the same statement also records the use of the rows it returns
    (``access_count + 1``, ``last_accessed_at = now()``) in a data-modifying CTE:
    one round trip, one UPDATE for all of them. The rows show their use as it was
    before this search.

    Candidates come from the HNSW index (cosine) and from the GIN full-text index
    over the same rows, ``ranking.candidates`` from each; the union is scored by
    relevance (rank fusion, raw similarity and the BM25 full-text score), recency with a
    half-life per memory type, importance and reinforcement by use, exactly as
    :mod:`memory_pg.scoring` computes them. Each row carries its score parts.

    The statement comes back with its values bound, ready for ``execute(stmt)`` or
    ``compile()``. Binding copies the statement: where searches are frequent, run
    :func:`search_statement`'s shared statement with its values instead.
    """


@functools.lru_cache(maxsize=256)
def build_search(shape: SearchShape) -> Select[Any]:
    """The search statement of one shape, without values; built once, then cached.

    Building it costs more than PostgreSQL takes to run it (SQLAlchemy's column
    proxies, CTEs and operators), and a reused statement also reuses SQLAlchemy's
    compiled form. 256 shapes: a process uses a few dozen (see ``warm_up``).
    """
    rs = shape.ranking
    conds = _filter_conditions(*shape.filters, viewer=shape.viewer, writers=shape.writers)
    distance = m.c.embedding.cosine_distance(_P_VECTOR)

    vec_inner = (
        select(m.c.id, distance.label("distance"))
        # No query vector (the model is still loading): the full-text leg ranks alone.
        .where(*conds, _P_VECTOR.is_not(None))
        .order_by(distance)
        .limit(rs.candidates)
        .subquery("vec_inner")
    )
    vec = select(
        vec_inner.c.id,
        func.row_number().over(order_by=vec_inner.c.distance).label("rank"),
    ).cte("vec")

    lex, held = lexical.lexical_leg(
        conds, shape.english, shape.cjk, rs, select(vec.c.id), window=shape.window
    )

    fused = (
        select(
            func.coalesce(vec.c.id, lex.c.id).label("id"),
            vec.c.rank.label("vector_rank"),
            lex.c.rank.label("lexical_rank"),
            func.coalesce(lex.c.lex_score, 0.0).label("lexical"),
        )
        .select_from(vec.join(lex, vec.c.id == lex.c.id, full=True))
        .cte("fused")
    )

    k = float(rs.rrf_k)
    as_of = shape.filters[4]
    now = _P_AS_OF if as_of else func.now()
    # scoring.rrf and scoring.relevance with the vector leg weighted by how much of
    # the query its model reads (1.0: the plain formulas).
    readable = _P_READABILITY
    rrf = (
        readable * func.coalesce(1.0 / (k + fused.c.vector_rank), 0.0)
        + func.coalesce(1.0 / (k + fused.c.lexical_rank), 0.0)
    ) * ((k + 1.0) / (1.0 + readable))
    # A vector with no length has NaN distance to everything, and PostgreSQL sorts NaN
    # above every number and passes it through any >= gate: count it as unrelated.
    # With no query vector (full text only) the distance stays NULL: no similarity.
    distance = func.coalesce(
        func.nullif(distance, literal(float("nan"), Float)),
        case((_P_VECTOR.is_not(None), literal(1.0, Float))),
    )
    similarity = 1.0 - distance
    relevance = (
        literal(rs.rrf_weight) * rrf
        + literal(rs.similarity_weight) * readable * func.greatest(similarity, 0.0)
        + literal(rs.lexical_weight) * fused.c.lexical
    ) / func.nullif(
        literal(rs.rrf_weight + rs.lexical_weight) + literal(rs.similarity_weight) * readable,
        0.0,
    )
    # No weight left (a vector-only ranking of a query its model cannot read): 0.
    relevance = func.coalesce(relevance, 0.0)
    recency = _halve(_days_between(now, m.c.event_time) / _half_life_expr(rs))
    reinforcement = case(
        (
            and_(m.c.access_count > 0, m.c.last_accessed_at.is_not(None)),
            (
                1.0
                - func.exp(
                    -func.least(
                        m.c.access_count / literal(float(rs.reinforcement_saturation)),
                        literal(MAX_E_FOLDS, Float),
                    )
                )
            )
            * _halve(
                _days_between(now, m.c.last_accessed_at) / literal(float(rs.access_half_life_days))
            ),
        ),
        else_=literal(0.0),
    )
    parts = (
        select(
            *MEMORY_COLUMNS,
            distance.label("distance"),
            similarity.label("similarity"),
            fused.c.lexical,
            fused.c.vector_rank,
            fused.c.lexical_rank,
            rrf.label("rrf"),
            readable.label("readability"),
            relevance.label("relevance"),
            recency.label("recency"),
            reinforcement.label("reinforcement"),
            *(
                [
                    names_entity(
                        m.c.id, m.c.text, _P_USER_ID, _P_ENTITY_KEYS, _P_ENTITY_PATTERN
                    ).label("names_entity")
                ]
                if shape.entities
                else []
            ),
            *(
                [states_asked(m.c.attributes, _P_ASKED_ATTRIBUTES).label("states_asked")]
                if shape.attributes
                else []
            ),
            *(
                [names_subject(m.c.text, m.c.search_tsv, shape.subject_sounds).label("about")]
                if shape.attribute_subject
                else []
            ),
        )
        .select_from(fused.join(m, and_(m.c.user_id == _P_USER_ID, m.c.id == fused.c.id)))
        .cte("parts")
    )
    if shape.entities:  # worked out once a candidate, not once per use of the column
        parts = parts.prefix_with("MATERIALIZED")
    most = 1.0 + rs.recency_weight + rs.importance_weight + rs.reinforcement_weight
    score = (
        parts.c.relevance
        * (
            1.0
            + literal(rs.recency_weight) * parts.c.recency
            + literal(rs.importance_weight) * parts.c.importance
            + literal(rs.reinforcement_weight) * parts.c.reinforcement
        )
        / literal(most)
    )
    extra: list[ColumnElement[Any]] = []
    if shape.timespan:
        # scoring.time_match and scoring.time_boost, in SQL.
        span_days = func.greatest(_days_between(_P_TIME_END, _P_TIME_START), 1.0)
        gap_days = func.greatest(
            _days_between(_P_TIME_START, parts.c.event_time),
            _days_between(parts.c.event_time, _P_TIME_END),
        )
        time_match = case(
            (gap_days <= 0.0, literal(1.0)),
            else_=func.power(0.5, func.least(gap_days / span_days, TIME_MAX_SPANS)),
        )
        score = score * (1.0 + literal(rs.time_weight) * time_match) / literal(1.0 + rs.time_weight)
        extra.append(time_match.label("time_match"))
    if shape.entities:
        factor, entity_match = entity_factor(parts.c.names_entity, rs)
        score = score * factor
        extra.append(entity_match.label("entity_match"))
    if shape.attributes:
        about = parts.c.about if shape.attribute_subject else None
        factor, attribute_match = attribute_factor(parts.c.states_asked, about, rs)
        score = score * factor
        extra.append(attribute_match.label("attribute_match"))
    heavy = (held if held is not None else cast(null(), Boolean)).label("user_heavy")
    gates = []
    if shape.min_similarity:
        # The similarity of a query the model cannot read is no evidence of relevance.
        gates.append(parts.c.similarity * parts.c.readability >= _P_MIN_SIMILARITY)
    if shape.min_lexical:
        gates.append(parts.c.lexical >= _P_MIN_LEXICAL)
    stmt = dialogue.questions_answered(
        parts, [*extra, heavy], score, gates, rs, user_id=_P_USER_ID, top_k=_P_TOP_K
    )
    if not shape.touch:
        return stmt
    ranked = stmt.cte("ranked")
    return (
        select(*ranked.c)
        .add_cte(record_use(_P_USER_ID, select(ranked.c.id)).returning(m.c.id).cte("touched"))
        .order_by(ranked.c.score.desc(), ranked.c.event_time.desc(), ranked.c.id)
    )
