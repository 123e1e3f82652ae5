"""A mention's spellings hold the entity's name where its own memory's text does.

Revision 0013 filled in the spellings of existing mentions with the aliases their
memory's text holds, not the entity's name. Since the reads show an entity to an
agent by a spelling of the memories it may see (the entity's recorded name is its
first writer's, perhaps another agent's private memory), a mention filled in by 0013
showed its entity by an alias ("Zeus" for "Project Zeus"). This revision adds the
entity's name to the spellings of every mention whose memory's text holds it, by
0013's rule: a Chinese name anywhere, any other as whole words, case-insensitive.
A write since 0013 stores the name as its memory gave it already.

As 0013, it runs as the tables' owner with row-level security not forced, in one
``DO`` block, waiting at most 5 s for the locks. The downgrade changes nothing: the
spellings stay true (each is in its memory's text), and 0013's downgrade drops them.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Constant text, no '%' (see 0013).
_UPGRADE = """
DO $$
BEGIN
    SET LOCAL lock_timeout = '5s';
    ALTER TABLE memory_pg_memories NO FORCE ROW LEVEL SECURITY;
    ALTER TABLE memory_pg_entities NO FORCE ROW LEVEL SECURITY;
    ALTER TABLE memory_pg_memory_entities NO FORCE ROW LEVEL SECURITY;
    SET LOCAL lock_timeout TO DEFAULT;
    UPDATE memory_pg_memory_entities me
       SET spellings = array_prepend(e.name, me.spellings)
      FROM memory_pg_entities e, memory_pg_memories m
     WHERE e.user_id = me.user_id AND e.id = me.entity_id
       AND m.user_id = me.user_id AND m.id = me.memory_id
       AND NOT e.name = ANY(me.spellings)
       AND CASE WHEN e.name ~ '[一-鿿]'
                THEN strpos(lower(m.text), lower(e.name)) > 0
                ELSE strpos(
                    ' ' || regexp_replace(lower(m.text), '[^[:alnum:]]+', ' ', 'g') || ' ',
                    ' ' || btrim(regexp_replace(lower(e.name), '[^[:alnum:]]+', ' ', 'g')) || ' '
                ) > 0
           END;
    ALTER TABLE memory_pg_memories FORCE ROW LEVEL SECURITY;
    ALTER TABLE memory_pg_entities FORCE ROW LEVEL SECURITY;
    ALTER TABLE memory_pg_memory_entities FORCE ROW LEVEL SECURITY;
END $$
"""


def upgrade() -> None:
    op.execute(_UPGRADE)


def downgrade() -> None:
    """Nothing to undo: the names added are spellings their memories' texts hold."""
