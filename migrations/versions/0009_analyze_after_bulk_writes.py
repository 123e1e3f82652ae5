"""Statistics that know a user loaded in bulk: ``memory_pg_analyze_memories_v1``.

The planner reads how many memories a user holds from the table's statistics. A
user written faster than autovacuum analyzes the table (it waits for 10% of the
rows to change, and looks once a minute) is planned as an average user: their
searches and the supersession lookup of their writes compare every one of their
rows where the HNSW index would serve. Measured beside 300 light users, one user
loaded with 10k memories in calls of 500 (``benchmarks/bulk_load_stats.py``):
their search 42.4 ms p50 and a write of two memories 28.6 ms without this
revision, 13.4 and 22.5 ms with it.

The application role does not own the table and may not analyze it. This
revision adds ``memory_pg_analyze_memories_v1(written bigint, min_changes bigint)
RETURNS boolean``, ``SECURITY DEFINER`` (it runs as the owner), which a store
calls after it wrote or imported ``written`` rows. It analyzes the memories table
only when

* the rows changed since the last analyze (manual or automatic), counted as the
  table's count plus ``written`` (a session reports its own changes up to a
  second late), reach ``min_changes`` and 2% of the table: a load of 10k
  memories in calls of 500 is analyzed about ten times, a table of 1M rows every
  20k changes;
* the last one is more than ten seconds old;
* no other session is analyzing it through this function (a transaction-level
  advisory lock, tried, never waited for);

and returns whether it ran ANALYZE. ANALYZE reads a sample (30k rows at the
default statistics target) whatever the table's size, and skips, with a warning,
a table another session holds (``SKIP_LOCKED``: a reembed building an index, a
VACUUM). An error inside it, other than a cancel (``statement_timeout``), is
logged and answered ``false``; the store treats any failure of the call as a
warning, since the writes it follows are committed. Every function, operator and
catalog it names, and those of the statement that pins its ``search_path``, are
qualified with ``pg_catalog``, so an object created in the schema cannot stand
in for them. Any connection of the two roles can have the table analyzed at most
every ten seconds. ``EXECUTE`` is revoked from ``PUBLIC`` and granted to the two
group roles. The downgrade drops the function.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Constant text, no '%' (Alembic's offline SQL would double it). The advisory lock's
# key is hashtextextended('memory_pg.analyze_memories', 0), like the store's own keys.
_CREATE_FUNCTION = """
CREATE FUNCTION memory_pg_analyze_memories_v1(written bigint, min_changes bigint)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
AS $$
DECLARE
    changed double precision;
    analyzed timestamptz;
    tuples double precision;
BEGIN
    IF NOT pg_catalog.pg_try_advisory_xact_lock(
            pg_catalog.hashtextextended('memory_pg.analyze_memories'::text, 0::bigint)) THEN
        RETURN false;
    END IF;
    SELECT s.n_mod_since_analyze::double precision,
           greatest(s.last_analyze, s.last_autoanalyze)
      INTO changed, analyzed
      FROM pg_catalog.pg_stat_user_tables s
     WHERE s.relid OPERATOR(pg_catalog.=) 'memory_pg_memories'::regclass::oid;
    SELECT greatest(c.reltuples::double precision, 0::double precision) INTO tuples
      FROM pg_catalog.pg_class c
     WHERE c.oid OPERATOR(pg_catalog.=) 'memory_pg_memories'::regclass::oid;
    changed := coalesce(changed, 0::double precision)
        OPERATOR(pg_catalog.+) greatest(coalesce(written, 0::bigint), 0::bigint)::double precision;
    IF changed OPERATOR(pg_catalog.<) greatest(
            coalesce(min_changes, 0::bigint)::double precision,
            tuples OPERATOR(pg_catalog.*) 0.02::double precision)
       OR analyzed OPERATOR(pg_catalog.>)
            (pg_catalog.now() OPERATOR(pg_catalog.-) '10 seconds'::interval) THEN
        RETURN false;
    END IF;
    BEGIN
        -- SKIP_LOCKED: a reembed building an index, a VACUUM or another ANALYZE holds
        -- the table; then there is nothing to wait for.
        ANALYZE (SKIP_LOCKED) memory_pg_memories;
    EXCEPTION WHEN OTHERS THEN
        RAISE LOG USING MESSAGE = 'memory-pg: analyze after a bulk write failed: '
            OPERATOR(pg_catalog.||) SQLERRM;
        RETURN false;
    END;
    RETURN true;
END
$$
"""

_PIN_AND_GRANT = """
DO $$
DECLARE
    r text;
BEGIN
    EXECUTE 'ALTER FUNCTION memory_pg_analyze_memories_v1(bigint, bigint) SET search_path = '
        OPERATOR(pg_catalog.||) pg_catalog.quote_ident(pg_catalog.current_schema()::text)
        OPERATOR(pg_catalog.||) ', pg_temp';
    REVOKE ALL ON FUNCTION memory_pg_analyze_memories_v1(bigint, bigint) FROM PUBLIC;
    FOREACH r IN ARRAY ARRAY['memory_pg_app', 'memory_pg_maintenance'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r);
        EXECUTE 'GRANT EXECUTE ON FUNCTION memory_pg_analyze_memories_v1(bigint, bigint) TO '
            || quote_ident(r);
    END LOOP;
END $$
"""


def upgrade() -> None:
    op.execute(_CREATE_FUNCTION)
    op.execute(_PIN_AND_GRANT)


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS memory_pg_analyze_memories_v1(bigint, bigint)")
