-- Named blocks of lifecycle SQL, loaded by memory_pg.lifecycle (one block per "-- name:").
-- Every value is a bound parameter; identifiers are fixed.

-- name: insert_candidates
-- For each new memory (q.i), the current memories of the same user and type it may
-- replace or repeat: those with the same topic key, and the nearest by cosine.
SELECT q.i, c.id, c.topic, c.text, c.content_hash, c.similarity, c.same_topic
FROM unnest(
        CAST(:idx AS int[]), CAST(:vecs AS text[]),
        CAST(:types AS text[]), CAST(:topics AS text[])
     ) AS q(i, v, memory_type, topic)
CROSS JOIN LATERAL (
    (SELECT m.id, m.topic, m.text, m.content_hash,
            1 - (m.embedding <=> CAST(q.v AS vector)) AS similarity, true AS same_topic
       FROM memory_pg_memories m
      WHERE m.user_id = :user_id AND m.memory_type = q.memory_type
        AND q.topic IS NOT NULL AND m.topic = q.topic
        AND m.superseded_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > now()))
    UNION ALL
    (SELECT m.id, m.topic, m.text, m.content_hash,
            1 - (m.embedding <=> CAST(q.v AS vector)) AS similarity, false AS same_topic
       FROM memory_pg_memories m
      WHERE m.user_id = :user_id AND m.memory_type = q.memory_type
        AND m.superseded_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > now())
      ORDER BY m.embedding <=> CAST(q.v AS vector)
      LIMIT :k)
) AS c
