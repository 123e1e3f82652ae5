"""Each mention keeps the spellings its own memory gave: ``memory_pg_memory_entities.spellings``.

An entity's aliases were one list per entity, gathered from every memory that
named it. An alias that only another agent's private memory gave (an LLM's
"小王" for 王伟) was then shown to every agent that sees a shared memory naming
王伟, and found that entity by that alias: the private memory's words reached an
agent that may not see it. Since this revision each mention stores the spellings
of its own memory (the name as written there and the aliases given with it), and
the reads show an agent only the spellings of the mentions it may see.

Existing mentions are filled in: those of an entity that no private memory names
take all of its aliases (every agent sees every memory naming it, so nothing is
shown that was hidden); those of an entity that a private memory names take the
aliases their own memory's text contains (case-insensitive). An alias such an
entity got from an LLM and that no text contains is then shown to no agent, and
an alias only a private memory's text contains only to the agent that wrote it.
The fill-in runs as the tables' owner with row-level security not forced for the
length of this transaction (the policies would otherwise show it no row). Those
``ALTER TABLE`` statements take an ACCESS EXCLUSIVE lock on the memories, entities
and mentions tables until the migration commits: searches and writes wait for the
fill-in, which reads only the mentions of entities that have aliases. While a lock
waits for a transaction holding its table, later queries wait behind it, so the
migration gives up after 5 s (``lock_timeout``; ``memory-pg migrate`` says so with
``QueryTimeout``) and is run again in a quieter moment.

The entity's own ``aliases`` column is kept and still written (a downgrade needs
nothing else); the downgrade drops the column.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out in full: constant statements a DBA reads as they are.
_NOT_FORCED = (
    "ALTER TABLE memory_pg_memories NO FORCE ROW LEVEL SECURITY",
    "ALTER TABLE memory_pg_entities NO FORCE ROW LEVEL SECURITY",
    "ALTER TABLE memory_pg_memory_entities NO FORCE ROW LEVEL SECURITY",
)
_FORCED = (
    "ALTER TABLE memory_pg_memories FORCE ROW LEVEL SECURITY",
    "ALTER TABLE memory_pg_entities FORCE ROW LEVEL SECURITY",
    "ALTER TABLE memory_pg_memory_entities FORCE ROW LEVEL SECURITY",
)

# Constant text, no '%' (Alembic's offline SQL would double it).
_FILL = """
UPDATE memory_pg_memory_entities me
   SET spellings = CASE
       WHEN NOT EXISTS (
           SELECT 1
             FROM memory_pg_memory_entities p
             JOIN memory_pg_memories pm ON pm.user_id = p.user_id AND pm.id = p.memory_id
            WHERE p.user_id = me.user_id AND p.entity_id = me.entity_id AND pm.private)
       THEN e.aliases
       ELSE ARRAY(SELECT a FROM unnest(e.aliases) AS a
                   WHERE strpos(lower(m.text), lower(a)) > 0)
       END
  FROM memory_pg_entities e, memory_pg_memories m
 WHERE e.user_id = me.user_id AND e.id = me.entity_id
   AND m.user_id = me.user_id AND m.id = me.memory_id
   AND cardinality(e.aliases) > 0
"""


def upgrade() -> None:
    op.add_column(
        "memory_pg_memory_entities",
        sa.Column(
            "spellings",
            postgresql.ARRAY(sa.Text()),
            server_default=sa.text("'{}'::text[]"),
            nullable=False,
        ),
    )
    # The ALTERs lock the tables until the migration commits; while one waits for a
    # transaction that holds its table, every later query waits behind it: 5 s at most.
    op.execute("SET LOCAL lock_timeout = '5s'")
    for statement in _NOT_FORCED:
        op.execute(statement)
    op.execute("SET LOCAL lock_timeout TO DEFAULT")
    op.execute(_FILL)
    for statement in _FORCED:
        op.execute(statement)


def downgrade() -> None:
    op.drop_column("memory_pg_memory_entities", "spellings")
