"""An index on each user's conversations: the newest current turn of a session.

A write of a dialogue turn with ``metadata["session_id"]`` looks up the newest
current turn of that conversation twice: for the turn's context
(:mod:`memory_pg.plans.turns`) and for its ``follows`` link. Without an index
that lookup reads the user's memories newest first until it meets the session;
for the first turn of a new conversation of a user with a million memories, that
is all of them. ``memory_pg_memories_user_session_idx`` on ``(user_id,
(metadata ->> 'session_id'), created_at DESC)``, over current rows that name a
session, makes it one index probe. Memories without a session are not in it.

On a large table, a DBA can build it first without blocking writes, under the
same name, and this migration then leaves it as it is::

    CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_pg_memories_user_session_idx
        ON memory_pg_memories (user_id, (metadata ->> 'session_id'), created_at DESC)
        WHERE superseded_at IS NULL AND (metadata ->> 'session_id') IS NOT NULL;

The downgrade drops the index; no row changes.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "CREATE INDEX IF NOT EXISTS memory_pg_memories_user_session_idx "
        "ON memory_pg_memories (user_id, (metadata ->> 'session_id'), created_at DESC) "
        "WHERE superseded_at IS NULL AND (metadata ->> 'session_id') IS NOT NULL"
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS memory_pg_memories_user_session_idx")
