-- Named blocks of the reembed job's SQL, read by memory_pg.sql.named (one block per "-- name:").
-- Every value is a bound parameter and identifiers are fixed, except hnsw_index_create's
-- two integers (see there).

-- name: reembed_column_exists
SELECT EXISTS (
    SELECT 1 FROM pg_attribute
     WHERE attrelid = 'memory_pg_memories'::regclass
       AND attname = 'embedding_next' AND NOT attisdropped
) AS present

-- name: reembed_drop_column
ALTER TABLE memory_pg_memories DROP COLUMN IF EXISTS embedding_next

-- name: reembed_add_column
-- The dimension cannot be a bound parameter in DDL: it travels in a setting and
-- format() turns it back into an integer literal.
DO $$ BEGIN EXECUTE format(
    'ALTER TABLE memory_pg_memories ADD COLUMN embedding_next vector(%s)',
    current_setting('memory_pg.embedding_dim')::int); END $$

-- name: reembed_pending
SELECT count(*) AS n FROM memory_pg_memories WHERE embedding_next IS NULL

-- name: reembed_next_batch
-- Keyset pagination on the primary key: each batch starts where the last one
-- stopped, so a pass over the table reads it once.
SELECT user_id, id, text, context FROM memory_pg_memories
 WHERE (user_id, id) > (CAST(:after_user AS text), CAST(:after_id AS uuid))
   AND embedding_next IS NULL
 ORDER BY user_id, id
 LIMIT :n

-- name: reembed_write_batch
UPDATE memory_pg_memories AS m
   SET embedding_next = CAST(b.v AS vector)
  FROM unnest(CAST(:uids AS text[]), CAST(:ids AS uuid[]), CAST(:vecs AS text[])) AS b(u, i, v)
 WHERE m.user_id = b.u AND m.id = b.i

-- name: reembed_lock_table
LOCK TABLE memory_pg_memories IN ACCESS EXCLUSIVE MODE

-- name: reembed_swap_drop
ALTER TABLE memory_pg_memories DROP COLUMN embedding

-- name: reembed_swap_rename
ALTER TABLE memory_pg_memories RENAME COLUMN embedding_next TO embedding

-- name: reembed_swap_not_null
ALTER TABLE memory_pg_memories ALTER COLUMN embedding SET NOT NULL

-- name: reembed_swap_model
UPDATE memory_pg_memories SET embedding_model = :model WHERE embedding_model <> :model

-- name: hnsw_index_state
SELECT i.indisvalid AS valid
  FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
 WHERE c.relname = 'memory_pg_memories_embedding_hnsw_idx'

-- name: hnsw_index_drop
DROP INDEX CONCURRENTLY IF EXISTS memory_pg_memories_embedding_hnsw_idx

-- name: hnsw_index_options
-- Every HNSW index on the vector column, whatever its name, with the options a DBA
-- gave it (ALTER INDEX ... SET): the swap drops them with the column. Valid indexes
-- first (a failed CREATE INDEX CONCURRENTLY leaves an invalid one), the schema's first.
SELECT c.relname AS name, coalesce(c.reloptions, '{}') AS options
  FROM pg_index i
  JOIN pg_class c ON c.oid = i.indexrelid
  JOIN pg_am a ON a.oid = c.relam
  JOIN pg_attribute t ON t.attrelid = i.indrelid AND t.attnum = i.indkey[0]
 WHERE i.indrelid = 'memory_pg_memories'::regclass
   AND a.amname = 'hnsw'
   AND t.attname = 'embedding'
 ORDER BY NOT i.indisvalid, c.relname <> 'memory_pg_memories_embedding_hnsw_idx', c.relname

-- name: hnsw_index_create
-- CREATE INDEX CONCURRENTLY takes no bound parameter and cannot run in a DO block:
-- {m} and {ef_construction} are psycopg sql.Literal integers (jobs/reembed.py).
CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_pg_memories_embedding_hnsw_idx
    ON memory_pg_memories USING hnsw (embedding vector_cosine_ops)
    WITH (m = {m}, ef_construction = {ef_construction})

-- name: reembed_embedding_dim
SELECT set_config('memory_pg.embedding_dim', :d, true)

-- name: statement_timeout_off_local
SET LOCAL statement_timeout = 0

-- name: lock_timeout_local
SELECT set_config('lock_timeout', :timeout, true)

-- name: statement_timeout_off
SET statement_timeout = 0

-- name: statement_timeout_reset
RESET statement_timeout
