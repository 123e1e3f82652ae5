"""Each mention keeps the spellings its own memory gave: ``memory_pg_memory_entities.spellings``.

An entity's aliases were one list per entity, gathered from every memory that
named it. An alias that only another agent's private memory gave (an LLM's
"小王" for 王伟) was then shown to every agent that sees a shared memory naming
王伟, and found that entity by that alias: the private memory's words reached an
agent that may not see it. Since this revision each mention stores the spellings
of its own memory (the name as written there and the aliases given with it), and
the reads show an agent only the spellings of the mentions it may see.

Existing mentions are filled in with the aliases their own memory's text holds
(a Chinese alias anywhere, any other as whole words, case-insensitive). Which memory
gave an alias was not recorded, and the entity's list keeps the aliases of memories
deleted since: an alias that no remaining text holds (most an LLM gave) is then
shown to no agent rather than to every one. An export made before this revision
lists all of an entity's aliases on each memory naming it; import it before
upgrading, or re-export after.

The fill-in runs as the tables' owner with row-level security not forced (the
policies would otherwise show it no row), in one ``DO`` block with the new column
and the forcing again: all of it commits or none, in a transaction or not. Those
``ALTER TABLE`` statements take an ACCESS EXCLUSIVE lock on the memories, entities
and mentions tables until the migration commits: searches and writes wait for the
fill-in, which reads only the mentions of entities that have aliases (10k mentions
in about 85 ms). While a lock waits for a transaction holding its table, later
queries wait behind it, so the migration gives up after 5 s (``lock_timeout``;
``memory-pg migrate`` says so with ``QueryTimeout``) and is run again in a quieter
moment.

The entity's own ``aliases`` column is kept and still written (a downgrade needs
nothing else); the downgrade drops the column.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Constant text, no '%' (Alembic's offline SQL would double it). One DO block: the
# column, the fill-in and row-level security forced again commit or fail together,
# in a transaction or not (an AUTOCOMMIT connection runs it as one statement).
# The ALTERs lock their tables until it commits; while one waits for a transaction
# that holds its table, every later query waits behind it: 5 s at most.
_UPGRADE = """
DO $$
BEGIN
    SET LOCAL lock_timeout = '5s';
    ALTER TABLE memory_pg_memory_entities
        ADD COLUMN spellings text[] DEFAULT '{}'::text[] NOT NULL;
    ALTER TABLE memory_pg_memories NO FORCE ROW LEVEL SECURITY;
    ALTER TABLE memory_pg_entities NO FORCE ROW LEVEL SECURITY;
    ALTER TABLE memory_pg_memory_entities NO FORCE ROW LEVEL SECURITY;
    SET LOCAL lock_timeout TO DEFAULT;
    -- Each mention keeps the aliases its own memory's text holds: a Chinese one
    -- anywhere, any other as whole words (runs of letters and digits compared).
    UPDATE memory_pg_memory_entities me
       SET spellings = ARRAY(
           SELECT a FROM unnest(e.aliases) AS a
            WHERE CASE WHEN a ~ '[一-鿿]'
                       THEN strpos(lower(m.text), lower(a)) > 0
                       ELSE strpos(
                           ' ' || regexp_replace(lower(m.text), '[^[:alnum:]]+', ' ', 'g') || ' ',
                           ' ' || btrim(regexp_replace(lower(a), '[^[:alnum:]]+', ' ', 'g')) || ' '
                       ) > 0
                  END)
      FROM memory_pg_entities e, memory_pg_memories m
     WHERE e.user_id = me.user_id AND e.id = me.entity_id
       AND m.user_id = me.user_id AND m.id = me.memory_id
       AND cardinality(e.aliases) > 0;
    ALTER TABLE memory_pg_memories FORCE ROW LEVEL SECURITY;
    ALTER TABLE memory_pg_entities FORCE ROW LEVEL SECURITY;
    ALTER TABLE memory_pg_memory_entities FORCE ROW LEVEL SECURITY;
END $$
"""


def upgrade() -> None:
    op.execute(_UPGRADE)


def downgrade() -> None:
    op.drop_column("memory_pg_memory_entities", "spellings")
