"""The migrated database keeps to the Citus layout: every unique key of user data has user_id."""

from __future__ import annotations

from tests.unit.test_citus_layout import DISTRIBUTION_COLUMN, documented_layout

# Unique and primary-key indexes (constraints are backed by them) and exclusion
# constraints of every memory-pg table, with whether user_id is among their columns.
KEYS = """
SELECT c.relname AS table_name,
       i.relname AS index_name,
       EXISTS (
           SELECT 1 FROM unnest(ix.indkey) AS k(attnum)
           JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
           WHERE a.attname = %(col)s
       ) AS has_user_id
FROM pg_index ix
JOIN pg_class c ON c.oid = ix.indrelid
JOIN pg_class i ON i.oid = ix.indexrelid
WHERE c.relnamespace = current_schema()::regnamespace
  AND starts_with(c.relname, 'memory_pg_')
  AND (ix.indisunique OR ix.indisprimary OR ix.indisexclusion)
  AND EXISTS (
      SELECT 1 FROM pg_attribute a
      WHERE a.attrelid = c.oid AND a.attname = %(col)s AND NOT a.attisdropped
  )
ORDER BY 1, 2
"""

TABLES_WITH_USER_ID = """
SELECT c.relname FROM pg_class c
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = %(col)s AND NOT a.attisdropped
WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
  AND starts_with(c.relname, 'memory_pg_')
"""


def test_every_unique_key_of_migrated_user_tables_includes_user_id(raw):
    keys = raw.execute(KEYS, {"col": DISTRIBUTION_COLUMN}).fetchall()
    tables = {row[0] for row in keys}
    assert {"memory_pg_memories", "memory_pg_dialogue_buffer", "memory_pg_history"} <= tables
    missing = [(t, i) for t, i, has in keys if not has]
    assert missing == []


def test_the_migrated_tables_with_user_id_are_the_documented_distributed_ones(raw):
    distributed, reference = documented_layout()
    found = {r[0] for r in raw.execute(TABLES_WITH_USER_ID, {"col": DISTRIBUTION_COLUMN})}
    assert found == set(distributed)
    all_tables = {
        r[0]
        for r in raw.execute(
            "SELECT relname FROM pg_class WHERE relkind IN ('r', 'p') "
            "AND relnamespace = current_schema()::regnamespace "
            "AND starts_with(relname, 'memory_pg_')"
        )
    }
    assert all_tables == set(distributed) | reference
