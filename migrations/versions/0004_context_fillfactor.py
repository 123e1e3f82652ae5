"""A memory's context (text that frames it), and room on each page for its use counter.

``memory_pg_memories.context`` (nullable text). The store embeds a memory's
context together with its text and indexes the context's words in
``search_tsv`` with weight ``C`` (the memory's own words keep the default
weight ``D``), so a search finds a short turn such as "Yes, last Friday" through
the question it answered, while the memory itself stays the turn alone.
Measured on LoCoMo (``benchmarks/locomo.py --unit context``).

Adding a nullable column with no default rewrites nothing: instant on a large
table. Existing rows have no context and need no backfill. The downgrade drops
the column (contexts are lost; the vectors and full-text of rows that had one
keep what they were built from until ``memory-pg reembed``).

``fillfactor = 80`` on ``memory_pg_memories``: every search adds one to the
``access_count`` of what it returns. With full pages (a 384-d row is about 2 kB,
four to a page) the new row version goes to another page, and every index gets a
new entry, the HNSW graph included; with a fifth of each page left free the
update stays on its page (HOT) and no index is touched. Measured on 3000 rows,
300 searches' updates of 10 rows each: 68% HOT at 100, 99.8% at 80; the update's
p50 8.1 -> 4.0 ms; the heap is a third larger (three rows a page instead of four).
The setting applies to pages written from now on; ``VACUUM FULL`` (or pg_repack)
applies it to existing rows. The downgrade resets it.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("memory_pg_memories", sa.Column("context", sa.Text(), nullable=True))
    op.execute("ALTER TABLE memory_pg_memories SET (fillfactor = 80)")


def downgrade() -> None:
    op.execute("ALTER TABLE memory_pg_memories RESET (fillfactor)")
    op.drop_column("memory_pg_memories", "context")
