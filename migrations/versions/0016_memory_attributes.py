"""The attributes a memory states (age, occupation, home …), for the ranking.

``memory_pg_memories.attributes`` (nullable ``text[]``): the names of the
attributes its text states, as :func:`memory_pg.text.attributes.stated` reads them
when the memory is written ("我堂哥今年四十岁" → ``{age}``). A search that asks for
an attribute ("我堂哥今年多大？") ranks the memories stating it above other facts
about the same subject.

Adding a nullable column with no default rewrites nothing: instant on a large
table, with a short ACCESS EXCLUSIVE lock (waited for at most 5 s, as 0011).
Existing rows get NULL: they rank as before (no attribute matched); a memory
written, imported or replaced from now on is analysed. A migration holds no
analysis of its own (a frozen revision must not change with the rules), so the
backfill of old rows is left to a job, not written yet (CHANGELOG). The downgrade
drops the column (the analysis is derived from the text: nothing is lost).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-05
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    op.add_column(
        "memory_pg_memories",
        sa.Column("attributes", postgresql.ARRAY(sa.Text()), nullable=True),
    )
    op.execute("SET LOCAL lock_timeout TO DEFAULT")


def downgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    op.drop_column("memory_pg_memories", "attributes")
    op.execute("SET LOCAL lock_timeout TO DEFAULT")
