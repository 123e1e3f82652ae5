-- Named blocks of supersession SQL, read by memory_pg.sql.named (one block per "-- name:").
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
    -- would not bring them. Among the :words_scan most recent current ones of its type
    -- only: its words (any of them) match thousands of a heavy user's memories, and
    -- finding them by the GIN index cost ~19 ms per statement of change at 10k. An
    -- older one that only its words would bring (Chinese with an English model) is
    -- then not replaced: it stays current beside the new one.
    (SELECT r.id, r.topic, r.text, r.content_hash,
            1 - (r.embedding <=> q.v) AS similarity, false AS same_topic
       FROM (SELECT m.id, m.topic, m.text, m.content_hash, m.embedding, m.search_tsv,
                    m.created_at
               FROM memory_pg_memories m
              WHERE q.tq_en IS NOT NULL
                AND m.user_id = :user_id AND m.memory_type = q.memory_type
                AND m.private = q.private AND (NOT m.private OR m.agent_id = :agent_id)
                AND m.superseded_at IS NULL
                AND (m.expires_at IS NULL OR m.expires_at > now())
              ORDER BY m.created_at DESC
              LIMIT :words_scan) AS r,
            LATERAL (SELECT to_tsquery('english', q.tq_en) || to_tsquery('simple', q.tq_zh)
                     AS tsq) AS w
      WHERE r.search_tsv @@ w.tsq
      ORDER BY ts_rank(r.search_tsv, w.tsq) DESC, r.created_at DESC
      LIMIT :k_words)
) AS c
