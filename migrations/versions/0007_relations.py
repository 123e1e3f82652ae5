"""Relations: a user's entities, which memory names which, and links between memories.

``memory_pg_entities``: the people, places, organisations, projects and things a
user's memories name (``name`` as first written, ``key`` the NFKC-casefolded form
that surface forms are merged on, ``kind``, other ``aliases``), unique per
``(user_id, key)``.

``memory_pg_memory_entities``: which memory mentions which entity.

``memory_pg_memory_links``: links between two memories of one user, ``relation``
one of ``supersedes`` (new → old), ``merged_into`` (fragment → summary),
``derived_from`` (summary → fragment) and ``follows`` (a dialogue turn → the turn
before it in the same conversation).

Every key starts with ``user_id`` and every foreign key carries it (Citus: the
three tables are co-located with the memories). Links and mentions go with their
memory (``ON DELETE CASCADE``); a statement trigger on the mention table removes
the entities no memory mentions any more, so erase, forget and delete need no
step of their own. Row-level security, the maintenance policy and the grants
are those of the other tables of user data (migrations 0003 and 0006).

Creating empty tables rewrites nothing. Existing memories get no entities or
links: export and import the user (``memory-pg export`` / ``import``), which
derives them again. The downgrade drops the three tables and the trigger
function; the memories are untouched.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("memory_pg_entities", "memory_pg_memory_entities", "memory_pg_memory_links")

# Written out in full: constant statements a DBA reads as they are.
_POLICIES = (
    "ALTER TABLE memory_pg_entities ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE memory_pg_entities FORCE ROW LEVEL SECURITY",
    "CREATE POLICY memory_pg_tenant ON memory_pg_entities "
    "USING (user_id = current_setting('memory_pg.user_id', true)) "
    "WITH CHECK (user_id = current_setting('memory_pg.user_id', true))",
    "ALTER TABLE memory_pg_memory_entities ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE memory_pg_memory_entities FORCE ROW LEVEL SECURITY",
    "CREATE POLICY memory_pg_tenant ON memory_pg_memory_entities "
    "USING (user_id = current_setting('memory_pg.user_id', true)) "
    "WITH CHECK (user_id = current_setting('memory_pg.user_id', true))",
    "ALTER TABLE memory_pg_memory_links ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE memory_pg_memory_links FORCE ROW LEVEL SECURITY",
    "CREATE POLICY memory_pg_tenant ON memory_pg_memory_links "
    "USING (user_id = current_setting('memory_pg.user_id', true)) "
    "WITH CHECK (user_id = current_setting('memory_pg.user_id', true))",
)

# Constant text; role names go through quote_ident. No '%': offline SQL would double it.
_GRANTS = """
DO $$
DECLARE
    r text;
    t text;
BEGIN
    FOREACH r IN ARRAY ARRAY['memory_pg_app', 'memory_pg_maintenance'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r);
        EXECUTE 'GRANT SELECT, INSERT, UPDATE, DELETE ON memory_pg_entities, '
                'memory_pg_memory_entities, memory_pg_memory_links TO ' || quote_ident(r);
    END LOOP;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memory_pg_maintenance') THEN
        FOREACH t IN ARRAY ARRAY['memory_pg_entities', 'memory_pg_memory_entities',
                                 'memory_pg_memory_links'] LOOP
            EXECUTE 'CREATE POLICY memory_pg_maintenance ON ' || quote_ident(t)
                || ' TO memory_pg_maintenance USING (true) WITH CHECK (true)';
        END LOOP;
    END IF;
END $$
"""

# An entity lives while a memory mentions it. One statement trigger covers every way a
# mention goes: a memory deleted, forgotten or erased (the cascade), a mention removed.
# It runs as the caller, under the caller's row-level security.
_ORPHANS_FUNCTION = """
CREATE FUNCTION memory_pg_drop_orphan_entities_v1() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM memory_pg_entities e
    USING (SELECT DISTINCT user_id, entity_id FROM gone) g
    WHERE e.user_id = g.user_id AND e.id = g.entity_id
      AND NOT EXISTS (
          SELECT 1 FROM memory_pg_memory_entities me
          WHERE me.user_id = e.user_id AND me.entity_id = e.id
      );
    RETURN NULL;
END $$
"""

_ORPHANS_TRIGGER = (
    "CREATE TRIGGER memory_pg_drop_orphan_entities AFTER DELETE ON memory_pg_memory_entities "
    "REFERENCING OLD TABLE AS gone FOR EACH STATEMENT "
    "EXECUTE FUNCTION memory_pg_drop_orphan_entities_v1()"
)


def upgrade() -> None:
    op.create_table(
        "memory_pg_entities",
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("id", sa.Uuid(), server_default=sa.text("gen_random_uuid()"), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column(
            "aliases",
            postgresql.ARRAY(sa.Text()),
            server_default=sa.text("'{}'::text[]"),
            nullable=False,
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("user_id", "id", name=op.f("memory_pg_entities_pkey")),
        sa.CheckConstraint(
            "kind IN ('person', 'place', 'organisation', 'project', 'thing')",
            name=op.f("memory_pg_entities_kind_check"),
        ),
        sa.CheckConstraint(
            "key <> '' AND length(key) <= 200", name=op.f("memory_pg_entities_key_check")
        ),
    )
    op.create_index(
        "memory_pg_entities_user_key_key", "memory_pg_entities", ["user_id", "key"], unique=True
    )
    op.create_table(
        "memory_pg_memory_entities",
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("memory_id", sa.Uuid(), nullable=False),
        sa.Column("entity_id", sa.Uuid(), nullable=False),
        sa.PrimaryKeyConstraint(
            "user_id", "memory_id", "entity_id", name=op.f("memory_pg_memory_entities_pkey")
        ),
        sa.ForeignKeyConstraint(
            ["user_id", "memory_id"],
            ["memory_pg_memories.user_id", "memory_pg_memories.id"],
            ondelete="CASCADE",
            name=op.f("memory_pg_memory_entities_memory_fkey"),
        ),
        sa.ForeignKeyConstraint(
            ["user_id", "entity_id"],
            ["memory_pg_entities.user_id", "memory_pg_entities.id"],
            ondelete="CASCADE",
            name=op.f("memory_pg_memory_entities_entity_fkey"),
        ),
    )
    op.create_index(
        "memory_pg_memory_entities_user_entity_idx",
        "memory_pg_memory_entities",
        ["user_id", "entity_id"],
    )
    op.create_table(
        "memory_pg_memory_links",
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("src", sa.Uuid(), nullable=False),
        sa.Column("relation", sa.Text(), nullable=False),
        sa.Column("dst", sa.Uuid(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint(
            "user_id", "src", "relation", "dst", name=op.f("memory_pg_memory_links_pkey")
        ),
        sa.CheckConstraint(
            "relation IN ('supersedes', 'merged_into', 'derived_from', 'follows')",
            name=op.f("memory_pg_memory_links_relation_check"),
        ),
        sa.CheckConstraint("src <> dst", name=op.f("memory_pg_memory_links_not_self_check")),
        sa.ForeignKeyConstraint(
            ["user_id", "src"],
            ["memory_pg_memories.user_id", "memory_pg_memories.id"],
            ondelete="CASCADE",
            name=op.f("memory_pg_memory_links_src_fkey"),
        ),
        sa.ForeignKeyConstraint(
            ["user_id", "dst"],
            ["memory_pg_memories.user_id", "memory_pg_memories.id"],
            ondelete="CASCADE",
            name=op.f("memory_pg_memory_links_dst_fkey"),
        ),
    )
    op.create_index(
        "memory_pg_memory_links_user_dst_idx", "memory_pg_memory_links", ["user_id", "dst"]
    )
    for statement in _POLICIES:
        op.execute(statement)
    op.execute(_GRANTS)
    op.execute(_ORPHANS_FUNCTION)
    op.execute(_ORPHANS_TRIGGER)


def downgrade() -> None:
    op.drop_table("memory_pg_memory_links")
    op.drop_table("memory_pg_memory_entities")
    op.drop_table("memory_pg_entities")
    op.execute("DROP FUNCTION IF EXISTS memory_pg_drop_orphan_entities_v1()")
