"""A memory's context: text that frames it (the turn before a dialogue turn).

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


def downgrade() -> None:
    op.drop_column("memory_pg_memories", "context")
