"""An entity that a concurrent write names is not dropped as an orphan.

``memory_pg_drop_orphan_entities_v1`` (0007) runs after a statement deletes
mentions (a memory deleted, forgotten or erased, through ``ON DELETE CASCADE``)
and deletes the entities no memory mentions any more, in one ``DELETE ... WHERE
NOT EXISTS (a mention)``. A write that names such an entity upserts its row and
holds it until it commits, so the ``DELETE`` waits for that write; PostgreSQL
then rechecks the row it waited for, but the ``NOT EXISTS`` still reads the
snapshot taken before the wait, in which the write's new mention is not there.
The entity was deleted, and the cascade took the new memory's mention with it:
``forget`` removing the last stale memory that named "Denver" while the user wrote
"We fly to Denver on Monday" left that memory with no entity
(``tests/integration/test_relations_race.py``). A user's own deletes and erases
wait for the user's writes on an advisory lock first, so it took ``forget`` (or a
DBA's ``DELETE``) to meet it.

The function now first locks the entities whose mentions went (``FOR UPDATE``),
waiting there for a write that holds one, and deletes in a second statement,
which in ``READ COMMITTED`` takes a new snapshot and sees what that write
committed. Locking them all, not only those that look orphaned, also serialises
two deletes that each take one of an entity's last two mentions: the second sees
the first's and drops the entity, where each alone saw the other's mention and
kept it. It locks them in the order writers do (by key, byte order: the store
sorts an upsert's keys in Python, by code point, which UTF-8 bytes keep), so a
write naming two of them and a delete cannot deadlock over them (a caller who
writes them in two statements of one transaction can still; PostgreSQL then
aborts one with 40P01). Under ``REPEATABLE READ`` (a delete in a
caller's own transaction at that level) the second statement keeps the first
snapshot: the lock then fails with a serialization error (40001) instead of the
mention going missing; retry the transaction. Same name, same trigger; the
downgrade puts 0007's body back.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Constant text, no '%' (Alembic's offline SQL would double it).
_HEAD = """
CREATE OR REPLACE FUNCTION memory_pg_drop_orphan_entities_v1() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
"""
_LOCK = """
    -- Wait here for a write that names one of them (it holds the row until it
    -- commits) or another delete of their mentions; in the order writers lock them.
    PERFORM 1 FROM memory_pg_entities e
      JOIN (SELECT DISTINCT user_id, entity_id FROM gone) g
        ON e.user_id = g.user_id AND e.id = g.entity_id
     ORDER BY e.user_id, e.key COLLATE "C"
       FOR UPDATE OF e;
    -- A new statement, a new snapshot: the mentions that write added are seen.
"""
# 0007's body: the delete alone.
_DELETE = """
    DELETE FROM memory_pg_entities e
    USING (SELECT DISTINCT user_id, entity_id FROM gone) g
    WHERE e.user_id = g.user_id AND e.id = g.entity_id
      AND NOT EXISTS (
          SELECT 1 FROM memory_pg_memory_entities me
          WHERE me.user_id = e.user_id AND me.entity_id = e.id
      );
    RETURN NULL;
END $$
"""


def upgrade() -> None:
    op.execute(_HEAD + _LOCK + _DELETE)


def downgrade() -> None:
    op.execute(_HEAD + _DELETE)
