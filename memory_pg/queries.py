"""Pure statement builders: each returns a SQLAlchemy statement; none does I/O.

The sync and async stores execute the same statements, so the I/O is the only
difference between them. Every statement on user data filters on ``user_id``
first: with row-level security on, it is also what the policy checks.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any, NamedTuple

import numpy as np
from sqlalchemy import (
    ColumnElement,
    DateTime,
    Delete,
    Executable,
    Float,
    Insert,
    Select,
    Text,
    TextClause,
    Update,
    and_,
    bindparam,
    case,
    cast,
    delete,
    func,
    literal,
    literal_column,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, insert
from sqlalchemy.sql.selectable import TableValuedAlias
from sqlalchemy.types import TypeEngine

from memory_pg._segment import query_terms, segment
from memory_pg.config import RankingSettings
from memory_pg.tables import dialogue_buffer, history, memories, settings

m = memories

_ENGLISH: ColumnElement[Any] = literal_column("'english'::regconfig")
_SIMPLE: ColumnElement[Any] = literal_column("'simple'::regconfig")

#: Columns a caller sees for a memory (never the vector or the tsvector).
MEMORY_COLUMNS = (
    m.c.id,
    m.c.user_id,
    m.c.memory_type,
    m.c.text,
    m.c.metadata,
    m.c.topic,
    m.c.importance,
    m.c.created_at,
    m.c.updated_at,
    m.c.event_time,
    m.c.last_accessed_at,
    m.c.access_count,
    m.c.valid_from,
    m.c.superseded_at,
    m.c.superseded_by,
    m.c.expires_at,
    m.c.embedding_model,
)


@dataclass(frozen=True)
class NewMemory:
    """One validated memory ready to insert."""

    id: uuid.UUID
    user_id: str
    memory_type: str
    text: str
    embedding: np.ndarray[Any, Any]
    embedding_model: str
    content_hash: str
    metadata: dict[str, Any]
    topic: str | None
    importance: float
    event_time: datetime | None
    expires_at: datetime | None = None
    #: Columns an import restores as exported (id, timestamps, validity, use).
    overrides: dict[str, Any] = field(default_factory=dict)


_OVERRIDE_DEFAULTS: dict[str, Any] = {
    "created_at": func.now(),
    "updated_at": func.now(),
    "valid_from": func.now(),
    "last_accessed_at": None,
    "access_count": 0,
    "superseded_at": None,
    "superseded_by": None,
}

#: Columns an insert stores as each row gives them (a ``NewMemory`` field of the same
#: name). A new column of that kind is one line here.
_PLAIN_COLUMNS = (
    "id",
    "user_id",
    "memory_type",
    "text",
    "embedding_model",
    "content_hash",
    "metadata",
    "topic",
    "importance",
    "expires_at",
)


def vector_literal(vector: np.ndarray[Any, Any]) -> str:
    """A vector in pgvector's text form, ``[0.1,0.2]``.

    Nine significant digits give back the exact float32 (pgvector reads it with
    ``strtof``) in about half the characters of ``repr``, and faster.
    """
    values = np.asarray(vector, dtype=np.float32).tolist()
    return "[" + ("%.9g," * len(values))[:-1] % tuple(values) + "]"


def vector_array(vectors: Sequence[np.ndarray[Any, Any]]) -> str:
    """Vectors as one PostgreSQL array literal, for ``CAST(... AS vector[])``.

    One string rather than a list: the driver would scan every element of a list
    for characters to escape, and a vector's text form has none.
    """
    return "{" + ",".join(['"' + vector_literal(v) + '"' for v in vectors]) + "}"


#: What :func:`tsvector_expr` indexes of a memory: one array each in an insert.
TSV_INPUTS = ("tsv_words", "tsv_cjk")


def tsvector_words(row: NewMemory) -> dict[str, str]:
    """The words of a memory that :func:`tsvector_expr` indexes, by :data:`TSV_INPUTS` name."""
    seg = segment(row.text)
    return {"tsv_words": seg.words_text, "tsv_cjk": seg.cjk_text}


def tsvector_expr(words: Mapping[str, ColumnElement[Any]]) -> ColumnElement[Any]:
    """``to_tsvector('english', words) || to_tsvector('simple', chinese words)``.

    ``words`` maps each name of :data:`TSV_INPUTS` to an SQL expression.
    """
    return func.to_tsvector(_ENGLISH, words["tsv_words"]).op("||")(
        func.to_tsvector(_SIMPLE, words["tsv_cjk"])
    )


def set_tenant(user_id: str | None) -> TextClause:
    """Bind the tenant for this transaction only (``SET LOCAL``: safe under PgBouncer)."""
    return text("SELECT set_config('memory_pg.user_id', :user_id, true)").bindparams(
        user_id=user_id or ""
    )


def search_tuning(ef_search: int) -> TextClause:
    """HNSW settings for this transaction: iterative scans keep per-user filters exact enough."""
    return text(
        "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
        "set_config('hnsw.ef_search', :ef, true)"
    ).bindparams(ef=str(ef_search))


class Bound(NamedTuple):
    """A statement built once and the values of one execution: ``conn.execute(*bound)``.

    Building and cache-keying a statement of many parts costs more than running it
    for one row; one statement object is built, keyed and compiled once.
    """

    statement: Executable
    params: dict[str, Any]


def insert_memories(rows: Sequence[NewMemory], event: str = "added") -> Bound:
    """Insert new memories and their ``added`` history in one statement.

    An exact duplicate of a current memory (same user, type and content hash) is
    skipped by ``ON CONFLICT``; the statement returns the ids actually inserted.
    Each column travels as one array (``unnest``), so the statement is the same for
    any number of rows: built and compiled once, prepared once by the server.
    """
    words = [tsvector_words(r) for r in rows]
    params: dict[str, Any] = {c: [getattr(r, c) for r in rows] for c in _PLAIN_COLUMNS}
    params["embedding"] = vector_array([r.embedding for r in rows])
    params["event_time"] = [r.event_time for r in rows]
    for key in TSV_INPUTS:
        params[key] = [w[key] for w in words]
    # An import restores some columns as exported; NULL elsewhere, so the default applies.
    for key in _OVERRIDE_DEFAULTS:
        params[key] = [r.overrides.get(key) for r in rows]
    params["event"] = event
    return Bound(_insert_statement(), params)


@cache
def _insert_statement() -> Insert:
    names = (*_PLAIN_COLUMNS, "event_time", *TSV_INPUTS, *_OVERRIDE_DEFAULTS)
    arrays = {name: _array(name) for name in names}
    # pgvector's text form, made by vector_array(): the Vector type's own is much slower.
    arrays["embedding"] = cast(bindparam("embedding", type_=Text()), ARRAY(m.c.embedding.type))
    u = unnest_rows(**arrays)
    values: dict[str, Any] = {c: u.c[c] for c in _PLAIN_COLUMNS}
    values["embedding"] = u.c.embedding
    values["search_tsv"] = tsvector_expr({key: u.c[key] for key in TSV_INPUTS})
    values["event_time"] = func.coalesce(u.c.event_time, func.now())
    for key, default in _OVERRIDE_DEFAULTS.items():
        values[key] = u.c[key] if default is None else func.coalesce(u.c[key], default)
    ins = (
        insert(m)
        .from_select(list(values), select(*values.values()))
        # Skips an exact duplicate of a current memory (the unique partial index on
        # user, type and content hash) and, on import, an id that is already there.
        .on_conflict_do_nothing()
        .returning(m.c.user_id, m.c.id)
        .cte("inserted")
    )
    event = bindparam("event", type_=Text())
    return (
        insert(history)
        .from_select(
            ["user_id", "memory_id", "event", "detail"],
            select(ins.c.user_id, ins.c.id, event, literal({}, JSONB)),
        )
        .returning(history.c.memory_id)
    )


def _array(column: str) -> ColumnElement[Any]:
    """The parameter of one column's values, as an array of the column's type."""
    return array_param(column, m.c[column].type if column in m.c else Text())


def array_param(name: str, element: TypeEngine[Any]) -> ColumnElement[Any]:
    """The parameter ``name``: an array of ``element`` (cast, so typed even when all NULL)."""
    return cast(bindparam(name, type_=ARRAY(element)), ARRAY(element))


def unnest_rows(**arrays: ColumnElement[Any]) -> TableValuedAlias:
    """``unnest(a, b, ...) AS anon(name_a, name_b, ...)``: parallel arrays as rows."""
    return func.unnest(*arrays.values()).table_valued(*arrays).render_derived()


def find_current_by_hash(user_id: str, pairs: Sequence[tuple[str, str]]) -> Select[Any]:
    """Current memories of a user matching (memory_type, content_hash) pairs."""
    conditions = [and_(m.c.memory_type == t, m.c.content_hash == h) for t, h in pairs]
    return select(m.c.id, m.c.memory_type, m.c.content_hash).where(
        m.c.user_id == user_id, m.c.superseded_at.is_(None), or_(*conditions)
    )


def get_memory(user_id: str, memory_id: uuid.UUID) -> Select[Any]:
    """One memory of a user, current or not."""
    return select(*MEMORY_COLUMNS).where(m.c.user_id == user_id, m.c.id == memory_id)


def list_memories(
    user_id: str,
    *,
    memory_types: Sequence[str] | None = None,
    include_inactive: bool = False,
    limit: int | None = None,
) -> Select[Any]:
    """Memories of a user, newest first."""
    stmt = select(*MEMORY_COLUMNS).where(m.c.user_id == user_id)
    if memory_types:
        stmt = stmt.where(m.c.memory_type.in_(list(memory_types)))
    if not include_inactive:
        stmt = stmt.where(*current_conditions(None))
    stmt = stmt.order_by(m.c.created_at.desc(), m.c.id)
    if limit is not None:
        stmt = stmt.limit(limit)
    return stmt


def current_conditions(as_of: datetime | None) -> list[ColumnElement[bool]]:
    """What "current" means: not superseded, not expired; or, ``as_of``, what was then."""
    if as_of is None:
        return [
            m.c.superseded_at.is_(None),
            or_(m.c.expires_at.is_(None), m.c.expires_at > func.now()),
        ]
    return [
        m.c.valid_from <= as_of,
        or_(m.c.superseded_at.is_(None), m.c.superseded_at > as_of),
        or_(m.c.expires_at.is_(None), m.c.expires_at > as_of),
    ]


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
            result is kept if its cosine similarity reaches ``min_similarity`` or
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


def filter_conditions(user_id: str, filters: SearchFilters) -> list[ColumnElement[bool]]:
    """The WHERE conditions of a search: the user first, then the filters."""
    conds: list[ColumnElement[bool]] = [m.c.user_id == user_id]
    conds.extend(current_conditions(filters.as_of))
    if filters.memory_types:
        conds.append(m.c.memory_type.in_(list(filters.memory_types)))
    if filters.since is not None:
        conds.append(m.c.event_time >= filters.since)
    if filters.until is not None:
        conds.append(m.c.event_time < filters.until)
    if filters.metadata:
        conds.append(m.c.metadata.op("@>")(bindparam("meta_filter", filters.metadata, JSONB)))
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


def _days_between(later: ColumnElement[Any], earlier: ColumnElement[Any]) -> ColumnElement[Any]:
    return func.greatest(func.extract("epoch", later - earlier) / 86400.0, 0.0)


def search_memories(
    user_id: str,
    query_text: str,
    query_vector: np.ndarray[Any, Any],
    *,
    top_k: int,
    filters: SearchFilters,
    ranking: RankingSettings | None = None,
) -> Select[Any]:
    """Hybrid search in one statement: candidates, fusion and the final score.

    Candidates come from the HNSW index (cosine) and from the GIN full-text index
    over the same rows, ``ranking.candidates`` from each; the union is scored by
    relevance (rank fusion and/or raw similarity and ``ts_rank_cd``), recency with a
    half-life per memory type, importance and reinforcement by use, exactly as
    :mod:`memory_pg.scoring` computes them. Each row carries its score parts.
    """
    rs = ranking or RankingSettings()
    conds = filter_conditions(user_id, filters)
    qvec = bindparam("query_vector", query_vector, type_=m.c.embedding.type)
    distance = m.c.embedding.cosine_distance(qvec)

    vec_inner = (
        select(m.c.id, distance.label("distance"))
        .where(*conds)
        .order_by(distance)
        .limit(rs.candidates)
        .subquery("vec_inner")
    )
    vec = select(
        vec_inner.c.id,
        func.row_number().over(order_by=vec_inner.c.distance).label("rank"),
    ).cte("vec")

    words_q, cjk_q = query_terms(query_text)
    tsq = func.to_tsquery(_ENGLISH, literal(words_q)).op("||")(
        func.to_tsquery(_SIMPLE, literal(cjk_q))
    )
    # Cover density (how close the matched words sit) with normalisation 32 only,
    # rank / (rank + 1): no length division, which on LoCoMo (benchmarks/locomo.py)
    # favoured short chit-chat turns over the longer turns holding the answer.
    lex_score = func.ts_rank_cd(m.c.search_tsv, tsq, literal(32))
    lex_inner = (
        select(m.c.id, lex_score.label("lex_score"))
        .where(*conds, m.c.search_tsv.op("@@")(tsq))
        .order_by(lex_score.desc())
        .limit(rs.candidates)
        .subquery("lex_inner")
    )
    lex = select(
        lex_inner.c.id,
        lex_inner.c.lex_score,
        func.row_number().over(order_by=lex_inner.c.lex_score.desc()).label("rank"),
    ).cte("lex")

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
    now = literal(filters.as_of, DateTime(timezone=True)) if filters.as_of else func.now()
    rrf = (
        func.coalesce(1.0 / (k + fused.c.vector_rank), 0.0)
        + func.coalesce(1.0 / (k + fused.c.lexical_rank), 0.0)
    ) * ((k + 1.0) / 2.0)
    similarity = 1.0 - distance
    rel_total = rs.rrf_weight + rs.similarity_weight + rs.lexical_weight
    relevance = (
        literal(rs.rrf_weight) * rrf
        + literal(rs.similarity_weight) * func.greatest(similarity, 0.0)
        + literal(rs.lexical_weight) * fused.c.lexical
    ) / literal(rel_total)
    recency = func.power(0.5, _days_between(now, m.c.event_time) / _half_life_expr(rs))
    reinforcement = case(
        (
            and_(m.c.access_count > 0, m.c.last_accessed_at.is_not(None)),
            (1.0 - func.exp(-m.c.access_count / literal(float(rs.reinforcement_saturation))))
            * func.power(
                0.5,
                _days_between(now, m.c.last_accessed_at) / literal(float(rs.access_half_life_days)),
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
            relevance.label("relevance"),
            recency.label("recency"),
            reinforcement.label("reinforcement"),
        )
        .select_from(fused.join(m, and_(m.c.user_id == user_id, m.c.id == fused.c.id)))
        .cte("parts")
    )
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
    stmt = select(*parts.c, score.label("score"))
    gates = []
    if filters.min_similarity is not None:
        gates.append(parts.c.similarity >= literal(filters.min_similarity))
    if filters.min_lexical is not None:
        gates.append(parts.c.lexical >= literal(filters.min_lexical))
    if gates:
        stmt = stmt.where(or_(*gates))
    return stmt.order_by(score.desc(), parts.c.event_time.desc(), parts.c.id).limit(top_k)


def touch_memories(user_id: str, ids: Sequence[uuid.UUID]) -> Update:
    """Record that memories were returned: one statement for all of them."""
    return (
        update(m)
        .where(m.c.user_id == user_id, m.c.id.in_(list(ids)))
        .values(access_count=m.c.access_count + 1, last_accessed_at=func.now())
    )


def delete_memory(user_id: str, memory_id: uuid.UUID) -> Executable:
    """Erase one memory for good; returns its id if it existed."""
    return delete(m).where(m.c.user_id == user_id, m.c.id == memory_id).returning(m.c.id)


def delete_history_of(user_id: str, memory_id: uuid.UUID) -> Delete:
    """Erase the history of one memory (its text may be quoted in ``detail``)."""
    return delete(history).where(history.c.user_id == user_id, history.c.memory_id == memory_id)


def clear_user(user_id: str) -> list[Delete]:
    """Erase everything of a user: memories, buffer and history."""
    return [
        delete(m).where(m.c.user_id == user_id),
        delete(dialogue_buffer).where(dialogue_buffer.c.user_id == user_id),
        delete(history).where(history.c.user_id == user_id),
    ]


def history_of(user_id: str, memory_id: uuid.UUID | None = None) -> Select[Any]:
    """Lifecycle events of a user (or of one memory), oldest first."""
    stmt = select(history.c.memory_id, history.c.event, history.c.at, history.c.detail).where(
        history.c.user_id == user_id
    )
    if memory_id is not None:
        stmt = stmt.where(history.c.memory_id == memory_id)
    return stmt.order_by(history.c.at, history.c.id)


def read_setting(key: str) -> Select[Any]:
    """One row of the settings table."""
    return select(settings.c.value).where(settings.c.key == key)


def write_setting(key: str, value: dict[str, Any]) -> Insert:
    """Insert or replace one row of the settings table."""
    stmt = insert(settings).values(key=key, value=value)
    return stmt.on_conflict_do_update(
        index_elements=[settings.c.key],
        set_={"value": stmt.excluded.value, "updated_at": func.now()},
    )


def embedding_column_dim() -> TextClause:
    """The declared dimension of the embedding column (NULL when unconstrained)."""
    return text(
        "SELECT NULLIF(a.atttypmod, -1) AS dim FROM pg_attribute a "
        "WHERE a.attrelid = 'memory_pg_memories'::regclass AND a.attname = 'embedding'"
    )


def resize_embedding_column(dim: int) -> list[TextClause]:
    """Resize the (empty) embedding column; the HNSW index is rebuilt with it."""
    return [
        text("SELECT set_config('memory_pg.embedding_dim', :dim, true)").bindparams(dim=str(dim)),
        text(
            "DO $$ BEGIN EXECUTE format("
            "'ALTER TABLE memory_pg_memories ALTER COLUMN embedding TYPE vector(%s)', "
            "current_setting('memory_pg.embedding_dim')::int); END $$"
        ),
    ]


def count_rows() -> TextClause:
    """Whether the memories table has any row at all."""
    return text("SELECT EXISTS (SELECT 1 FROM memory_pg_memories) AS any_rows")


def stats(user_id: str | None) -> Select[Any]:
    """Counts per memory type (current and superseded), for one user or all."""
    stmt = select(
        m.c.memory_type,
        func.count().filter(m.c.superseded_at.is_(None)).label("current"),
        func.count().filter(m.c.superseded_at.is_not(None)).label("superseded"),
        func.count(func.distinct(m.c.user_id)).label("users"),
    ).group_by(m.c.memory_type)
    if user_id is not None:
        stmt = stmt.where(m.c.user_id == user_id)
    return stmt.order_by(m.c.memory_type)


def health() -> TextClause:
    """Server version and pgvector version, for the healthcheck."""
    return text(
        "SELECT current_setting('server_version') AS server_version, "
        "(SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vector_version"
    )


def export_rows(user_id: str, include_inactive: bool) -> Select[Any]:
    """Every column an export carries, vector included, oldest first."""
    stmt = select(*MEMORY_COLUMNS, m.c.embedding).where(m.c.user_id == user_id)
    if not include_inactive:
        stmt = stmt.where(*current_conditions(None))
    return stmt.order_by(m.c.created_at, m.c.id)
