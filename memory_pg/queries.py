"""Pure statement builders: each returns a SQLAlchemy statement; none does I/O.

The sync and async stores execute the same statements, so the I/O is the only
difference between them. Every statement on user data filters on ``user_id``
first: with row-level security on, it is also what the policy checks.
"""

from __future__ import annotations

import dataclasses
import functools
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cache
from typing import Any, NamedTuple

import numpy as np
from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    ColumnElement,
    DateTime,
    Delete,
    Executable,
    Float,
    Insert,
    Integer,
    Select,
    Text,
    TextClause,
    Update,
    and_,
    bindparam,
    case,
    cast,
    delete,
    false,
    func,
    literal,
    literal_column,
    or_,
    select,
    text,
    union_all,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSQUERY, insert
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.sql.selectable import TableValuedAlias
from sqlalchemy.types import TypeEngine

from memory_pg._segment import segment, term_queries
from memory_pg.config import RankingSettings
from memory_pg.scoring import (
    BM25_AVG_LENGTH,
    BM25_B,
    BM25_K1,
    MAX_E_FOLDS,
    MAX_HALVINGS,
    TIME_MAX_SPANS,
)
from memory_pg.tables import dialogue_buffer, history, memories, settings
from memory_pg.timespan import find_timespan

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
    m.c.context,
    m.c.agent_id,
    m.c.private,
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
    context: str | None = None
    #: The agent that wrote it; ``private``: seen by that agent only.
    agent_id: str | None = None
    private: bool = False
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
    "context",
    "agent_id",
    "private",
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


class _QueryVector(Vector):
    """The column's vector type, sent in :func:`vector_literal`'s form: pgvector's own
    conversion of 384 floats costs more than all of a search's other values.

    The value stays a typed parameter: a ``CAST`` of text in the statement would be
    parsed again for every row that the exact scan compares.
    """

    cache_ok = True

    def bind_processor(self, dialect: Any) -> Any:
        return lambda value: None if value is None else vector_literal(value)


#: What :func:`tsvector_expr` indexes of a memory: one array each in an insert.
TSV_INPUTS = ("tsv_words", "tsv_cjk", "tsv_context_words", "tsv_context_cjk")


def tsvector_words(row: NewMemory) -> dict[str, str]:
    """The words of a memory that :func:`tsvector_expr` indexes, by :data:`TSV_INPUTS` name."""
    seg = segment(row.text)
    ctx = segment(row.context or "")
    return {
        "tsv_words": seg.words_text,
        "tsv_cjk": seg.cjk_text,
        "tsv_context_words": ctx.words_text,
        "tsv_context_cjk": ctx.cjk_text,
    }


def tsvector_expr(words: Mapping[str, ColumnElement[Any]]) -> ColumnElement[Any]:
    """``to_tsvector('english', words) || to_tsvector('simple', chinese words)``, and
    the context's words after them with weight ``C`` (the memory's own keep ``D``).

    ``words`` maps each name of :data:`TSV_INPUTS` to an SQL expression; an empty
    context adds nothing.
    """
    own = func.to_tsvector(_ENGLISH, words["tsv_words"]).op("||")(
        func.to_tsvector(_SIMPLE, words["tsv_cjk"])
    )
    framed = func.to_tsvector(_ENGLISH, words["tsv_context_words"]).op("||")(
        func.to_tsvector(_SIMPLE, words["tsv_context_cjk"])
    )
    return own.op("||")(func.setweight(framed, literal_column("'C'::\"char\"")))


_TENANT = "set_config('memory_pg.user_id', :user_id, true)"
_HNSW = (
    "set_config('hnsw.iterative_scan', 'relaxed_order', true), "
    "set_config('hnsw.ef_search', :ef, true)"
)
_TIMEOUT = "set_config('statement_timeout', :timeout, true)"


def set_tenant(
    user_id: str | None, ef_search: int | None = None, *, statement_timeout_ms: int | None = None
) -> TextClause:
    """Bind the tenant for this transaction only (``SET LOCAL``: safe under PgBouncer).

    With ``ef_search``, the same statement sets :func:`search_tuning`'s HNSW settings:
    a search starts with one round trip instead of two. With ``statement_timeout_ms``,
    it sets the transaction's ``statement_timeout`` too (behind a pooler, where the
    timeout cannot be set when the connection starts).
    """
    params: dict[str, str] = {"user_id": user_id or ""}
    sql = "SELECT " + _TENANT
    if ef_search is not None:
        sql += ", " + _HNSW
        params["ef"] = str(ef_search)
    if statement_timeout_ms is not None:
        sql += ", " + _TIMEOUT
        params["timeout"] = str(int(statement_timeout_ms))
    return text(sql).bindparams(**params)


def search_tuning(ef_search: int) -> TextClause:
    """HNSW settings for this transaction: iterative scans keep per-user filters exact enough."""
    return text("SELECT " + _HNSW).bindparams(ef=str(ef_search))


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


def find_current_by_hash(
    user_id: str,
    pairs: Sequence[tuple[str, str]],
    *,
    private: bool = False,
    agent_id: str | None = None,
) -> Select[Any]:
    """Current memories of a user matching (memory_type, content_hash) pairs, in one
    scope: the shared memories, or (``private``) the private ones of ``agent_id``."""
    conditions = [and_(m.c.memory_type == t, m.c.content_hash == h) for t, h in pairs]
    scope = m.c.private.is_(False) if not private else and_(m.c.private, m.c.agent_id == agent_id)
    return select(m.c.id, m.c.memory_type, m.c.content_hash).where(
        m.c.user_id == user_id, m.c.superseded_at.is_(None), scope, or_(*conditions)
    )


def visible_to(agent_id: str | BindParameter[Any] | None) -> ColumnElement[bool]:
    """What an agent sees of its user's memories: the shared ones and its own private
    ones. With no agent, the shared ones only."""
    if agent_id is None:
        return m.c.private.is_(False)
    return or_(m.c.private.is_(False), m.c.agent_id == agent_id)


def owned_by(agent_id: str | None) -> list[ColumnElement[bool]]:
    """By-id access (get, replace, delete, history): an agent may not reach another
    agent's private memory; with no agent, the user reaches all of theirs."""
    return [] if agent_id is None else [visible_to(agent_id)]


def get_memory(user_id: str, memory_id: uuid.UUID, agent_id: str | None = None) -> Select[Any]:
    """One memory of a user, current or not (and, with an agent, one it may see)."""
    return select(*MEMORY_COLUMNS).where(
        m.c.user_id == user_id, m.c.id == memory_id, *owned_by(agent_id)
    )


def list_memories(
    user_id: str,
    *,
    memory_types: Sequence[str] | None = None,
    include_inactive: bool = False,
    limit: int | None = None,
    agent_id: str | None = None,
    agent_ids: Sequence[str] | None = None,
) -> Select[Any]:
    """Memories of a user that ``agent_id`` sees (:func:`visible_to`), newest first."""
    stmt = select(*MEMORY_COLUMNS).where(m.c.user_id == user_id, visible_to(agent_id))
    if agent_ids:
        stmt = stmt.where(m.c.agent_id.in_(list(agent_ids)))
    if memory_types:
        stmt = stmt.where(m.c.memory_type.in_(list(memory_types)))
    if not include_inactive:
        stmt = stmt.where(*current_conditions(None))
    stmt = stmt.order_by(m.c.created_at.desc(), m.c.id)
    if limit is not None:
        stmt = stmt.limit(limit)
    return stmt


def current_conditions(as_of: datetime | BindParameter[Any] | None) -> list[ColumnElement[bool]]:
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


#: Document frequencies come from the user's most recent memories, this many: exact
#: for a user with fewer, a sample (the recent vocabulary) for a larger one, at a
#: bounded cost either way (the frequency of a common word is never counted over
#: the whole GIN posting list). 1000 rather than 500: at 500, three of LoCoMo's five
#: conversations (630-680 turns) fell under the ``PULL_MAX_SHARE`` rule below and
#: Recall@5 dropped 67.6% -> 65.4%; at 100k memories 1000 costs ~0.5 ms more.
IDF_SAMPLE = 1000
#: For a user with more memories than the sample, a word in more than this share of
#: the sample no longer pulls full-text candidates (at 100k memories, 2% is about
#: 2000 rows to score); it still scores. A query of only such words keeps its rarest.
PULL_MAX_SHARE = 0.02
#: For a user with more memories than the sample, the full-text leg scores at most
#: this many matching memories, the most recent (the user's (user_id, created_at)
#: index walks them newest first). Scoring every match of a word found in a few
#: percent of a million memories cost ~275 ms; an older match beyond the bound
#: is left to the vector leg (recency decay ranks it lower anyway). Measured at
#: 100k (benchmarks/lexical_bound.py): queries of only common words p95 165 -> 97 ms,
#: 0.963 of the unbounded top 10 kept when all rows share one time (the worst case).
LEXICAL_SCAN_MAX = 4000


def _lexical_leg(
    conds: list[ColumnElement[bool]], english: bool, cjk: bool, rs: RankingSettings
) -> Any:
    """The full-text candidates, ranked by BM25 with per-user document frequencies.

    PostgreSQL's ``ts_rank`` has no inverse document frequency: a speaker's name in
    half the memories weighs as much as a rare word. Here each query word's
    document frequency is counted in the user's ``IDF_SAMPLE`` most recent current
    memories (all of them for most users), so a rare word dominates a common one.
    Counting over the GIN index instead cost a user with 100k memories about 3 ms
    per common word (the whole posting list is read before any LIMIT); the sample
    costs one short index scan for all words. A word found only in a memory's
    context (weight ``C``) counts
    ``rs.lexical_context_weight`` of a word in its own text. Scores are scaled by
    the best candidate's, so ``lexical`` is 1.0 for the best full-text match.

    ``english`` and ``cjk`` say which word lists the query has; the lists themselves
    are the parameters ``lex_{en,cjk}_{any,own}`` (from ``term_queries``).
    """
    words = []
    for config, present, name in ((_ENGLISH, english, "en"), (_SIMPLE, cjk, "cjk")):
        if not present:
            continue
        toks = (
            func.unnest(
                bindparam(f"lex_{name}_any", type_=ARRAY(Text)),
                bindparam(f"lex_{name}_own", type_=ARRAY(Text)),
            )
            .table_valued("any_q", "own_q")
            .render_derived(name=f"tok_{name}")
        )
        words.append(
            select(
                func.to_tsquery(config, toks.c.any_q).label("q_any"),
                func.to_tsquery(config, toks.c.own_q).label("q_own"),
            ).select_from(toks)
        )
    if not words:
        # No word to look for: an empty leg with the columns the fusion joins on.
        empty = select(
            m.c.id,
            literal(0.0, Float).label("lex_score"),
            literal(0, Integer).label("rank"),
        ).where(false())
        return empty.cte("lex")
    raw = (words[0] if len(words) == 1 else union_all(*words)).subquery("term_raw")
    # Stop words become empty queries; two words with one stem count once.
    nth = func.row_number().over(partition_by=func.querytree(raw.c.q_any)).label("nth")
    numbered = (
        select(raw.c.q_any, raw.c.q_own, nth)
        .where(func.numnode(raw.c.q_any) > 0)
        .subquery("numbered")
    )
    terms0 = select(numbered.c.q_any, numbered.c.q_own).where(numbered.c.nth == 1).cte("terms0")
    # The user's most recent memories under the same filters: the IDF's collection.
    recent = (
        select(m.c.id, m.c.search_tsv)
        .where(*conds)
        .order_by(m.c.created_at.desc())
        .limit(IDF_SAMPLE)
        .cte("recent")
        .prefix_with("MATERIALIZED")
    )
    n_recent = select(func.count()).select_from(recent).scalar_subquery()
    df = (
        select(func.count())
        .select_from(recent)
        .where(recent.c.search_tsv.op("@@")(terms0.c.q_own))
        .correlate(terms0)
        .scalar_subquery()
    )
    # Materialised: each frequency is counted once, not once per use of ``df``.
    counted = (
        select(terms0.c.q_any, terms0.c.q_own, df.label("df"), n_recent.label("n"))
        .cte("counted")
        .prefix_with("MATERIALIZED")
    )
    terms = select(
        counted.c.q_any,
        counted.c.q_own,
        counted.c.df,
        counted.c.n,
        # scoring.idf, in SQL.
        func.ln(1.0 + (counted.c.n - counted.c.df + 0.5) / (counted.c.df + 0.5)).label("idf"),
    ).cte("terms")
    # Words that pull candidates: for a user larger than the sample, all but the ones
    # common for this user, unless every word is that common.
    rarest = select(func.min(terms.c.df)).scalar_subquery()
    pulling = (
        select(
            func.coalesce(
                func.string_agg(func.querytree(terms.c.q_any), literal(" | ")), literal("")
            ).cast(TSQUERY)
        )
        .where(
            or_(
                terms.c.n < IDF_SAMPLE,
                terms.c.df <= terms.c.n * PULL_MAX_SHARE,
                terms.c.df == rarest,
            )
        )
        .scalar_subquery()
    )
    # A user with fewer memories than the sample has them all in ``recent``: they are
    # scored there, and the GIN index is never read (its posting lists span every
    # user: a common word's grows with the table, not with this user). A larger user's
    # candidates come from the GIN index. One branch runs; the other's one-time
    # filter is false before it reads a row.
    whole = n_recent < IDF_SAMPLE
    pulled = (
        select(m.c.id, m.c.search_tsv)
        .where(*conds, ~whole, m.c.search_tsv.op("@@")(pulling))
        .order_by(m.c.created_at.desc())
        .limit(LEXICAL_SCAN_MAX)
        .subquery("pulled")
    )
    scored = []
    for source, where in ((recent, [whole]), (pulled, [])):
        tsv = source.c.search_tsv
        own_len = func.length(func.ts_filter(tsv, literal_column("'{d}'::\"char\"[]")))
        per_term = case(
            (tsv.op("@@")(terms.c.q_own), 1.0),
            (tsv.op("@@")(terms.c.q_any), literal(float(rs.lexical_context_weight))),
            else_=0.0,
        )
        matched = select(func.sum(terms.c.idf * per_term)).scalar_subquery()
        # scoring.bm25, in SQL.
        length_norm = (BM25_K1 + 1.0) / (
            1.0 + BM25_K1 * (1.0 - BM25_B + BM25_B * own_len / BM25_AVG_LENGTH)
        )
        scored.append(
            select(source.c.id, (matched * length_norm).label("bm25")).where(
                *where, tsv.op("@@")(pulling)
            )
        )
    both = union_all(*scored).subquery("lex_scored")
    lex_inner = (
        select(both.c.id, both.c.bm25)
        .order_by(both.c.bm25.desc(), both.c.id)
        .limit(rs.candidates)
        .subquery("lex_inner")
    )
    best = func.max(lex_inner.c.bm25).over()
    return select(
        lex_inner.c.id,
        (lex_inner.c.bm25 / func.nullif(best, literal(0.0, Float), type_=Float)).label("lex_score"),
        func.row_number().over(order_by=(lex_inner.c.bm25.desc(), lex_inner.c.id)).label("rank"),
    ).cte("lex")


@dataclass(frozen=True)
class SearchShape:
    """What decides the text of a search statement; everything else is a parameter.

    Two searches of one shape run the same statement with different values (user,
    vector, words, filter values, ``top_k``, gate thresholds). The ranking settings
    stay literals of the statement: they change between deployments, not searches.
    """

    memory_types: bool = False
    since: bool = False
    until: bool = False
    metadata: bool = False
    as_of: bool = False
    min_similarity: bool = False
    min_lexical: bool = False
    english: bool = False
    cjk: bool = False
    #: The query names a time (:mod:`memory_pg.timespan`): the score has a time part.
    timespan: bool = False
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


def _ranking_key(rs: RankingSettings) -> tuple[tuple[str, Any], ...]:
    return tuple(
        (f.name, tuple(sorted(rs.half_life_days.items())) if f.name == "half_life_days" else v)
        for f in dataclasses.fields(rs)
        for v in (getattr(rs, f.name),)
    )


def search_statement(
    user_id: str,
    query_text: str,
    query_vector: np.ndarray[Any, Any] | None,
    *,
    top_k: int,
    filters: SearchFilters,
    ranking: RankingSettings | None = None,
    touch: bool = False,
    readability: float = 1.0,
    now: datetime | None = None,
) -> tuple[Select[Any], dict[str, Any]]:
    """The hybrid search (see :func:`search_memories`) and the values to run it with.

    The statement is built once per :class:`SearchShape` and shared, by every thread,
    with every search of that shape; execute it as ``conn.execute(stmt, values)``.
    It carries no value of any search: the user, the vector and the words are in
    ``values`` alone, and a value left out fails the execution.

    ``readability`` is the share of the query the embedding model reads
    (:func:`memory_pg.embedding.readability`): the vector leg's share of its weight.
    ``now`` is the time that relative dates in the query ("上周", "last Friday")
    are resolved against; without it, ``filters.as_of``, else the current time.
    """
    rs = ranking or RankingSettings()
    reference = now or filters.as_of or datetime.now(timezone.utc)
    span = find_timespan(query_text, reference)
    # The words that named the time are not content words.
    en_any, en_own, cjk_any, cjk_own = term_queries(span.rest if span else query_text)
    shape = SearchShape(
        *_filter_shape(filters),
        min_similarity=filters.min_similarity is not None,
        min_lexical=filters.min_lexical is not None,
        english=bool(en_any),
        cjk=bool(cjk_any),
        timespan=span is not None,
        touch=touch,
        **_scope_shape(filters),
        ranking_key=_ranking_key(rs),
        ranking=rs,
        lexical_constants=(
            BM25_K1,
            BM25_B,
            BM25_AVG_LENGTH,
            IDF_SAMPLE,
            PULL_MAX_SHARE,
            LEXICAL_SCAN_MAX,
        ),
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
    if en_any:
        values["lex_en_any"], values["lex_en_own"] = en_any, en_own
    if cjk_any:
        values["lex_cjk_any"], values["lex_cjk_own"] = cjk_any, cjk_own
    if filters.min_similarity is not None:
        values["min_similarity"] = filters.min_similarity
    if filters.min_lexical is not None:
        values["min_lexical"] = filters.min_lexical
    return build_search(shape), values


def search_memories(
    user_id: str,
    query_text: str,
    query_vector: np.ndarray[Any, Any] | None,
    *,
    top_k: int,
    filters: SearchFilters,
    ranking: RankingSettings | None = None,
    touch: bool = False,
    readability: float = 1.0,
    now: datetime | None = None,
) -> Select[Any]:
    """Hybrid search in one statement: candidates, fusion and the final score.

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
    stmt, values = search_statement(
        user_id,
        query_text,
        query_vector,
        top_k=top_k,
        filters=filters,
        ranking=ranking,
        touch=touch,
        readability=readability,
        now=now,
    )
    return stmt.params(values)


@functools.lru_cache(maxsize=64)
def build_search(shape: SearchShape) -> Select[Any]:
    """The search statement of one shape, without values; built once, then cached.

    Building it costs more than PostgreSQL takes to run it (SQLAlchemy's column
    proxies, CTEs and operators), and a reused statement also reuses SQLAlchemy's
    compiled form. 64 shapes: a process uses a handful.
    """
    rs = shape.ranking
    conds = _filter_conditions(
        shape.memory_types,
        shape.since,
        shape.until,
        shape.metadata,
        shape.as_of,
        viewer=shape.viewer,
        writers=shape.writers,
    )
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

    lex = _lexical_leg(conds, shape.english, shape.cjk, rs)

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
    now = _P_AS_OF if shape.as_of else func.now()
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
        )
        .select_from(fused.join(m, and_(m.c.user_id == _P_USER_ID, m.c.id == fused.c.id)))
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
    stmt = select(*parts.c, *extra, score.label("score"))
    gates = []
    if shape.min_similarity:
        # The similarity of a query the model cannot read is no evidence of relevance.
        gates.append(parts.c.similarity * parts.c.readability >= _P_MIN_SIMILARITY)
    if shape.min_lexical:
        gates.append(parts.c.lexical >= _P_MIN_LEXICAL)
    if gates:
        stmt = stmt.where(or_(*gates))
    stmt = stmt.order_by(score.desc(), parts.c.event_time.desc(), parts.c.id).limit(_P_TOP_K)
    if not shape.touch:
        return stmt
    ranked = stmt.cte("ranked")
    touched = (
        _touch(_P_USER_ID).where(m.c.id.in_(select(ranked.c.id))).returning(m.c.id).cte("touched")
    )
    # PostgreSQL runs a data-modifying CTE whether or not the query reads it.
    return (
        select(*ranked.c)
        .add_cte(touched)
        .order_by(ranked.c.score.desc(), ranked.c.event_time.desc(), ranked.c.id)
    )


#: The largest ``access_count`` the integer column holds.
MAX_ACCESS_COUNT = 2**31 - 1


def _touch(user_id: str | BindParameter[Any]) -> Update:
    return (
        update(m)
        .where(m.c.user_id == user_id)
        # The count stops at the column's maximum rather than failing every later search.
        .values(
            access_count=func.least(m.c.access_count, MAX_ACCESS_COUNT - 1) + 1,
            last_accessed_at=func.now(),
        )
    )


def touch_memories(user_id: str, ids: Sequence[uuid.UUID]) -> Update:
    """Record that memories were returned: one statement for all of them."""
    return _touch(user_id).where(m.c.id.in_(list(ids)))


def delete_memory(user_id: str, memory_id: uuid.UUID, agent_id: str | None = None) -> Executable:
    """Erase one memory for good (with an agent: one it may see); returns its id."""
    return (
        delete(m)
        .where(m.c.user_id == user_id, m.c.id == memory_id, *owned_by(agent_id))
        .returning(m.c.id)
    )


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


def history_of(
    user_id: str, memory_id: uuid.UUID | None = None, agent_id: str | None = None
) -> Select[Any]:
    """Lifecycle events of a user (or of one memory), oldest first; with an agent,
    none of another agent's private memories."""
    stmt = select(history.c.memory_id, history.c.event, history.c.at, history.c.detail).where(
        history.c.user_id == user_id
    )
    if agent_id is not None:
        others = select(m.c.id).where(m.c.user_id == user_id, m.c.private, m.c.agent_id != agent_id)
        stmt = stmt.where(history.c.memory_id.not_in(others))
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


def record_embedding(model: str, dimension: int) -> TextClause:
    """Record the embedding model unless one is recorded; returns the recorded ``value``.

    Runs ``memory_pg_record_embedding_v1`` (migration 0005), a ``SECURITY DEFINER``
    function: the application role may read the settings but never write them.
    """
    return text("SELECT memory_pg_record_embedding_v1(:model, :dimension) AS value").bindparams(
        model=model, dimension=dimension
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
