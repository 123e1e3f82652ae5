"""Session and settings statements: tenant, recorded model, vector column, health."""

from __future__ import annotations

import functools
from typing import Any

from sqlalchemy import (
    Delete,
    Insert,
    Integer,
    Select,
    String,
    TextClause,
    bindparam,
    delete,
    func,
    select,
    text,
)
from sqlalchemy.dialects.postgresql import insert

from memory_pg.sql.core import Bound
from memory_pg.tables import settings

_TENANT = "set_config('memory_pg.user_id', :user_id, true)"
_HNSW = (
    "set_config('hnsw.iterative_scan', 'relaxed_order', true), "
    "set_config('hnsw.ef_search', :ef, true)"
)
_TIMEOUT = "set_config('statement_timeout', :timeout, true)"

#: A user holding at least this many memories (superseded ones included) gets a
#: search plan made for them; a lighter user may get PostgreSQL's generic plan.
#: See :func:`plan_for_user`. About where an exact scan of the user's rows starts to
#: cost more than planning the statement (~1000 rows of 384-d: 2-3 ms each).
CUSTOM_PLAN_MIN_ROWS = 1000
_PLAN_FOR_USER = text(
    "SELECT set_config('plan_cache_mode', CASE WHEN ("
    "SELECT count(*) FROM (SELECT 1 FROM memory_pg_memories WHERE user_id = :user_id "
    "LIMIT :n) AS held) >= :n THEN 'force_custom_plan' "
    "WHEN current_setting('plan_cache_mode') = 'auto' THEN 'force_generic_plan' "
    "ELSE current_setting('plan_cache_mode') END, true)"
).bindparams(bindparam("user_id", type_=String), bindparam("n", type_=Integer))


#: The settings-table key holding the embedding model and dimension.
EMBEDDING_SETTING = "embedding"


def set_tenant(
    user_id: str | None, ef_search: int | None = None, *, statement_timeout_ms: int | None = None
) -> TextClause:
    """Bind the tenant for this transaction only (``SET LOCAL``: safe under PgBouncer).

    With ``ef_search``, the same statement sets the HNSW search settings:
    a search starts with one round trip instead of two. With ``statement_timeout_ms``,
    it sets the transaction's ``statement_timeout`` too (behind a pooler, where the
    timeout cannot be set when the connection starts).
    """
    bound = bound_tenant(user_id, ef_search, statement_timeout_ms=statement_timeout_ms)
    statement = _tenant_statement(ef_search is not None, statement_timeout_ms is not None)
    return statement.bindparams(**bound.params)


def bound_tenant(
    user_id: str | None, ef_search: int | None = None, *, statement_timeout_ms: int | None = None
) -> Bound:
    """:func:`set_tenant` as one shared statement and this transaction's values: the
    statement text is compiled once per connection's dialect (:mod:`memory_pg.exchange`)."""
    params: dict[str, str] = {"user_id": user_id or ""}
    if ef_search is not None:
        params["ef"] = str(ef_search)
    if statement_timeout_ms is not None:
        params["timeout"] = str(int(statement_timeout_ms))
    return Bound(_tenant_statement(ef_search is not None, statement_timeout_ms is not None), params)


@functools.cache
def _tenant_statement(hnsw: bool, timeout: bool) -> TextClause:
    sql = "SELECT " + _TENANT
    names = ["user_id"]
    if hnsw:
        sql += ", " + _HNSW
        names.append("ef")
    if timeout:
        sql += ", " + _TIMEOUT
        names.append("timeout")
    return text(sql).bindparams(*(bindparam(name, type_=String) for name in names))


def plan_for_user(user_id: str) -> TextClause:
    """Plan a heavy user's search for them, and a light user's once for all (after
    :func:`set_tenant`, in the same transaction).

    psycopg prepares a statement it has run five times on a connection, and in
    PostgreSQL's default ``plan_cache_mode`` (``auto``) a prepared statement then
    reuses one generic plan for every value, made for the average user, once it
    looks no dearer than the custom plans so far. Where most users hold a few
    memories, that plan reads the user's rows by the ``user_id`` b-tree and
    compares each with the query vector: right for them, but for a user holding
    100k memories an exact scan of all of them where a plan of their own walks the
    HNSW index (``benchmarks/plan_for_user.py``: a user holding 30k beside 1000
    light ones, 49.8 ms p50 on the shared plan, 18.0 ms on their own).

    This statement, sent with the search (the same network exchange), counts at
    most :data:`CUSTOM_PLAN_MIN_ROWS` of the user's rows by the b-tree. A user
    holding that many gets ``force_custom_plan`` for the transaction; a lighter one
    ``force_generic_plan`` where the server is on ``auto``, so that a heavy user's
    custom plans (cheap by the planner's estimate) do not move the light users'
    statement off its generic plan and into planning every search. A server set to
    a mode of its own keeps it for light users. The count reads through row-level
    security: run it after the tenant is set.
    """
    return _PLAN_FOR_USER.bindparams(user_id=user_id, n=CUSTOM_PLAN_MIN_ROWS)


def bound_plan_for_user(user_id: str) -> Bound:
    """:func:`plan_for_user` as one shared statement and this user's values."""
    return Bound(_PLAN_FOR_USER, {"user_id": user_id, "n": CUSTOM_PLAN_MIN_ROWS})


def read_setting(key: str) -> Select[Any]:
    """One row of the settings table."""
    return select(settings.c.value).where(settings.c.key == key)


_READ_SETTING = select(settings.c.value).where(settings.c.key == bindparam("key"))


def bound_read_setting(key: str) -> Bound:
    """:func:`read_setting` as one shared statement and the key (built once: every write
    reads the recorded model twice)."""
    return Bound(_READ_SETTING, {"key": key})


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


#: A write or import of this many rows asks the database to analyze the memories table
#: (``memory_pg_analyze_memories_v1``, migration 0009), which it does only when 2% of
#: the table (and at least this many rows) changed since the last analyze, at most
#: every ten seconds.
BULK_ROWS = 500


def analyze_after_bulk_write(written: int) -> TextClause:
    """After ``written`` rows: have the memories table analyzed if enough of it changed
    (migration 0009), so a user loaded in bulk is planned for their size. Returns
    ``analyzed``."""
    return text("SELECT memory_pg_analyze_memories_v1(:w, :n) AS analyzed").bindparams(
        w=written, n=BULK_ROWS
    )


def count_rows() -> TextClause:
    """Whether the memories table has any row at all."""
    return text("SELECT EXISTS (SELECT 1 FROM memory_pg_memories) AS any_rows")


def health() -> TextClause:
    """Server version and pgvector version, for the healthcheck."""
    return text(
        "SELECT current_setting('server_version') AS server_version, "
        "(SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vector_version"
    )


def delete_setting(key: str) -> Delete:
    """Remove one row of the settings table."""
    return delete(settings).where(settings.c.key == key)
