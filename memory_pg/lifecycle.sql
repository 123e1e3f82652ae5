-- Named blocks of lifecycle SQL, loaded by memory_pg.lifecycle (one block per "-- name:").
-- Every value is a bound parameter; identifiers are fixed.

-- name: insert_candidates
-- For each new memory (q.i), the current memories of the same user and type it may
-- replace or repeat: those with the same topic key, and the nearest by cosine. Only
-- in its own scope: a shared memory meets shared ones, a private one the private
-- ones of its agent (:agent_id).
SELECT q.i, c.id, c.topic, c.text, c.content_hash, c.similarity, c.same_topic
FROM unnest(
        CAST(:idx AS int[]), CAST(:vecs AS vector[]),
        CAST(:types AS text[]), CAST(:topics AS text[]), CAST(:privates AS boolean[]),
        CAST(:tq_en AS text[]), CAST(:tq_zh AS text[])
     ) AS q(i, v, memory_type, topic, private, tq_en, tq_zh)
CROSS JOIN LATERAL (
    (SELECT m.id, m.topic, m.text, m.content_hash,
            1 - (m.embedding <=> q.v) AS similarity, true AS same_topic
       FROM memory_pg_memories m
      WHERE m.user_id = :user_id AND m.memory_type = q.memory_type
        AND q.topic IS NOT NULL AND m.topic = q.topic
        AND m.private = q.private AND (NOT m.private OR m.agent_id = :agent_id)
        AND m.superseded_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > now()))
    UNION ALL
    (SELECT m.id, m.topic, m.text, m.content_hash,
            1 - (m.embedding <=> q.v) AS similarity, false AS same_topic
       FROM memory_pg_memories m
      WHERE m.user_id = :user_id AND m.memory_type = q.memory_type
        AND m.private = q.private AND (NOT m.private OR m.agent_id = :agent_id)
        AND m.superseded_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > now())
      ORDER BY m.embedding <=> q.v
      LIMIT :k)
    UNION ALL
    -- A statement of change (q.tq_en/q.tq_zh given) also meets the memories that share
    -- its words: a vector that cannot read the text (Chinese with an English model)
    -- would not bring them.
    (SELECT m.id, m.topic, m.text, m.content_hash,
            1 - (m.embedding <=> q.v) AS similarity, false AS same_topic
       FROM memory_pg_memories m,
            LATERAL (SELECT to_tsquery('english', q.tq_en) || to_tsquery('simple', q.tq_zh)
                     AS tsq) AS w
      WHERE q.tq_en IS NOT NULL
        AND m.user_id = :user_id AND m.memory_type = q.memory_type
        AND m.private = q.private AND (NOT m.private OR m.agent_id = :agent_id)
        AND m.superseded_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > now())
        AND m.search_tsv @@ w.tsq
      ORDER BY ts_rank(m.search_tsv, w.tsq) DESC, m.created_at DESC
      LIMIT :k_words)
) AS c

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

-- name: hnsw_index_create
CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_pg_memories_embedding_hnsw_idx
    ON memory_pg_memories USING hnsw (embedding vector_cosine_ops)
    WITH (m = 16, ef_construction = 64)
