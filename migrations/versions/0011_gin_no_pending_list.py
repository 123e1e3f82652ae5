"""The full-text index takes each write at once: ``fastupdate = off``, no pending list.

A GIN index with ``fastupdate`` on (PostgreSQL's default) puts new entries in an
unordered pending list, merged into the index when it passes
``gin_pending_list_limit`` (4 MB), or by a vacuum, or by an ANALYZE that
autovacuum runs (after 10% of the table changed). Every search that reads the
index scans the whole list first. A heavy user's full-text leg reads it (a light
user's, under the 1000-memory sample, does not), so its cost grew with the
writes since the last merge, and the write that pushed the list past 4 MB merged
all of it while its caller waited.

Measured on one user holding 100k memories (EXPLAIN ANALYZE of the store's
search, 60 queries; ``benchmarks/gin_pending.py`` for the same under traffic):
after 10k more rows the list held 190 pages and execution took 10.2-10.9 ms p50;
with the list merged, 5.8-6.2 ms. Without the list each insert updates the
index's posting trees itself: 10k single-row inserts into a copy of the index
took 298 ms, against 62 ms plus 35 ms to merge with the list: about 0.02 ms more
per memory written (and per row that a non-HOT update rewrites, as ``reembed``
and imports do: an estimated 20 s more per million rows), where the model embeds
a text in about 5 ms and pgvector's HNSW insert takes 1-2 ms.

The upgrade merges the list (``gin_clean_pending_list``, which blocks no
reader), turns it off, and merges what arrived in between. ``ALTER INDEX ... SET
(fastupdate)`` takes an ACCESS EXCLUSIVE lock on the index, which every query
and write of the table needs: while it waits for the transactions that hold the
table, later queries wait behind it. So it gives up after 5 s
(``lock_timeout``): queries stall for at most that long, and the migration fails
(``memory-pg migrate`` says so with ``QueryTimeout``); run it again in a quieter
moment. The downgrade turns the
list on again (``RESET``).

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
    # Merged before the lock (the merge takes no lock a reader waits for) and after it
    # (entries already in the list stay there, and are scanned, until merged).
    op.execute("SELECT gin_clean_pending_list('memory_pg_memories_search_tsv_idx'::regclass)")
    op.execute("SET LOCAL lock_timeout = '5s'")
    op.execute("ALTER INDEX memory_pg_memories_search_tsv_idx SET (fastupdate = off)")
    op.execute("SET LOCAL lock_timeout TO DEFAULT")
    op.execute("SELECT gin_clean_pending_list('memory_pg_memories_search_tsv_idx'::regclass)")


def downgrade() -> None:
    op.execute("SET LOCAL lock_timeout = '5s'")
    op.execute("ALTER INDEX memory_pg_memories_search_tsv_idx RESET (fastupdate)")
    op.execute("SET LOCAL lock_timeout TO DEFAULT")
