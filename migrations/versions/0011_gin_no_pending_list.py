"""The full-text index takes each write at once: ``fastupdate = off``, no pending list.

A GIN index with ``fastupdate`` on (PostgreSQL's default) puts new entries in an
unordered pending list, merged into the index when it passes
``gin_pending_list_limit`` (4 MB) or when (auto)vacuum runs, which waits for 20%
of the table to be new. Every search that reads the index scans the whole list
first. A heavy user's full-text leg reads it on every search (a light user's does
not), so its cost grew with the writes since the last vacuum, and the write that
pushed the list past 4 MB merged all of it while its caller waited.

Measured on one user holding 100k memories (EXPLAIN ANALYZE of the store's
search, 60 queries, ``benchmarks/gin_pending.py`` for the same under traffic):
after 10k more writes the list held 190 pages and execution took 10.2-10.9 ms
p50; with the list merged, 5.8-6.2 ms. Without the list each insert updates the
index's posting trees itself: 10k single-row inserts into a copy of the index
took 298 ms against 98 ms (62 ms and 35 ms for the merge) with the list, about
0.02 ms more per memory, where its model embeds a text in about 5 ms and pgvector's
HNSW insert takes about 2.

The upgrade turns the list off and merges what it holds
(``gin_clean_pending_list``), under ``lock_timeout`` (``ALTER INDEX ... SET
(fastupdate)`` locks the index, and every query on the table, for its duration;
a busy table fails the migration after five seconds instead of queueing
searches behind it: run it again). The downgrade turns it on again
(``RESET``).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    op.execute("ALTER INDEX memory_pg_memories_search_tsv_idx SET (fastupdate = off)")
    # Entries already in the list stay there (and are scanned) until merged.
    op.execute("SELECT gin_clean_pending_list('memory_pg_memories_search_tsv_idx'::regclass)")


def downgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    op.execute("ALTER INDEX memory_pg_memories_search_tsv_idx RESET (fastupdate)")
