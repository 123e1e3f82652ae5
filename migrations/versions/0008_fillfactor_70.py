"""Room on each page for a light user's whole top 10 to record its use in place.

``fillfactor = 70`` on ``memory_pg_memories`` (it was 80, migration 0004). A search
adds one to ``access_count`` of every memory it returns. A row with a 384-d vector
is about 1.95 kB; at 80 a page holds three and keeps room for one new row version,
so when a search returns all of a light user's memories (three on each of their
pages), one update per page stays on the page (HOT) and the others move to another
page and write a new entry into every index, the HNSW graph included. At 70 a page
holds two and keeps room for two new versions. Measured with
``benchmarks/search_use_cost.py`` (1000 users of 10 memories, 600 searches per way,
2 cores): HOT updates 54% -> 98%, a search that records its use 8.2 -> 4.8 ms p50
(one that records nothing: 3.0-3.3 ms). A heap written from empty is half as large
again (two rows a page instead of three), but after those 12,500 uses the table
at 80 had outgrown the one at 70 (63.8 vs 60.7 MB with its indexes: the moved
versions and their index entries). For rows of about that size (a 384-d vector and
a short text); a row over ~2 kB has its vector moved out of line (TOAST, pgvector's
storage is ``external``) and becomes small, so many fit a page at either setting.

The setting applies to pages written from now on; ``VACUUM FULL`` (or pg_repack)
applies it to existing rows. The downgrade sets 80 again.

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
    op.execute("ALTER TABLE memory_pg_memories SET (fillfactor = 70)")


def downgrade() -> None:
    op.execute("ALTER TABLE memory_pg_memories SET (fillfactor = 80)")
