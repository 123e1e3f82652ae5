"""Agent scope on memories, and service tokens bound to tenants.

``memory_pg_memories.agent_id`` (nullable text: the agent that wrote the memory)
and ``private`` (boolean, default false: shared with all of the user's agents;
true: seen only by its agent, which must then be named). Adding a nullable column
and a column with a constant default rewrites nothing; the two CHECK constraints
read the table once. The duplicate guard becomes two partial unique indexes, one
over shared memories and one over each agent's private ones, so a private note
never stands in for a shared memory of the same text (or the other way round).
Rebuilding it reads the table once, under a lock that blocks writes: on a large
table run this revision in a quiet hour. Keys stay ``user_id`` first (Citus).
The downgrade deletes nothing: private rows become shared ones (the guard over
all current rows is rebuilt and fails if a private note and a shared memory of
one user hold the same text; delete one of them first).

``memory_pg_tokens``: the bearer tokens of the service (``memory-pg serve``, the
MCP server over HTTP). Only the sha256 of a token is kept; the token itself is
printed once by ``memory-pg token create``. A row fixes the user (and optionally
the agent) of every request made with the token, whether it may write, when it
expires and when it was revoked. ``scope = 'admin'`` marks a maintenance token
for cross-user operations; none exists unless an operator creates one.

Row-level security as on the other tables of user data (migration 0003):

* policy ``memory_pg_tenant``: the rows of the transaction's tenant
  (``memory_pg.user_id``), to create, list and revoke a user's tokens;
* policy ``memory_pg_token_lookup`` (``SELECT`` only): the row whose hash equals
  ``current_setting('memory_pg.token_hash', true)``. The service sets it to the
  hash of the token a request presents, so the application role can find a
  token it was shown, and list nobody else's;
* policy ``memory_pg_maintenance`` and the grants of ``memory_pg_app`` and
  ``memory_pg_maintenance``, for the roles that exist (as in 0003).

Creating an empty table rewrites nothing. The downgrade drops the table: every
token stops working.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TOKEN_POLICIES = (
    "ALTER TABLE memory_pg_tokens ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE memory_pg_tokens FORCE ROW LEVEL SECURITY",
    "CREATE POLICY memory_pg_tenant ON memory_pg_tokens "
    "USING (user_id = current_setting('memory_pg.user_id', true)) "
    "WITH CHECK (user_id = current_setting('memory_pg.user_id', true))",
    "CREATE POLICY memory_pg_token_lookup ON memory_pg_tokens FOR SELECT "
    "USING (token_hash = current_setting('memory_pg.token_hash', true))",
)

# Constant text; role names go through quote_ident. No '%': offline SQL would double it.
_TOKEN_GRANTS = """
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['memory_pg_app', 'memory_pg_maintenance'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r);
        EXECUTE 'GRANT SELECT, INSERT, UPDATE, DELETE ON memory_pg_tokens TO ' || quote_ident(r);
    END LOOP;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memory_pg_maintenance') THEN
        EXECUTE 'CREATE POLICY memory_pg_maintenance ON memory_pg_tokens '
                'TO memory_pg_maintenance USING (true) WITH CHECK (true)';
    END IF;
END $$
"""


def _upgrade_memories() -> None:
    op.add_column("memory_pg_memories", sa.Column("agent_id", sa.Text(), nullable=True))
    op.add_column(
        "memory_pg_memories",
        sa.Column("private", sa.Boolean(), server_default=sa.text("false"), nullable=False),
    )
    op.create_check_constraint(
        op.f("memory_pg_memories_agent_id_check"),
        "memory_pg_memories",
        "agent_id IS NULL OR (agent_id <> '' AND length(agent_id) <= 255)",
    )
    op.create_check_constraint(
        op.f("memory_pg_memories_private_check"),
        "memory_pg_memories",
        "NOT private OR agent_id IS NOT NULL",
    )
    op.drop_index("memory_pg_memories_user_type_hash_key", table_name="memory_pg_memories")
    op.create_index(
        "memory_pg_memories_user_type_hash_key",
        "memory_pg_memories",
        ["user_id", "memory_type", "content_hash"],
        unique=True,
        postgresql_where=sa.text("superseded_at IS NULL AND NOT private"),
    )
    op.create_index(
        "memory_pg_memories_user_agent_type_hash_key",
        "memory_pg_memories",
        ["user_id", "agent_id", "memory_type", "content_hash"],
        unique=True,
        postgresql_where=sa.text("superseded_at IS NULL AND private"),
    )


def _downgrade_memories() -> None:
    op.drop_index("memory_pg_memories_user_agent_type_hash_key", table_name="memory_pg_memories")
    op.drop_index("memory_pg_memories_user_type_hash_key", table_name="memory_pg_memories")
    op.create_index(
        "memory_pg_memories_user_type_hash_key",
        "memory_pg_memories",
        ["user_id", "memory_type", "content_hash"],
        unique=True,
        postgresql_where=sa.text("superseded_at IS NULL"),
    )
    op.drop_constraint(op.f("memory_pg_memories_private_check"), "memory_pg_memories")
    op.drop_constraint(op.f("memory_pg_memories_agent_id_check"), "memory_pg_memories")
    op.drop_column("memory_pg_memories", "private")
    op.drop_column("memory_pg_memories", "agent_id")


def upgrade() -> None:
    _upgrade_memories()
    op.create_table(
        "memory_pg_tokens",
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("id", sa.Uuid(), server_default=sa.text("gen_random_uuid()"), nullable=False),
        sa.Column("token_hash", sa.Text(), nullable=False),
        sa.Column("agent_id", sa.Text(), nullable=True),
        sa.Column("scope", sa.Text(), server_default=sa.text("'user'"), nullable=False),
        sa.Column("read_only", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("label", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("user_id", "id", name=op.f("memory_pg_tokens_pkey")),
        sa.CheckConstraint(
            "user_id <> '' AND length(user_id) <= 255", name=op.f("memory_pg_tokens_user_id_check")
        ),
        sa.CheckConstraint(
            "token_hash ~ '^[0-9a-f]{64}$'", name=op.f("memory_pg_tokens_token_hash_check")
        ),
        sa.CheckConstraint("scope IN ('user', 'admin')", name=op.f("memory_pg_tokens_scope_check")),
        sa.CheckConstraint(
            "agent_id IS NULL OR (agent_id <> '' AND length(agent_id) <= 255)",
            name=op.f("memory_pg_tokens_agent_id_check"),
        ),
    )
    op.create_index("memory_pg_tokens_token_hash_idx", "memory_pg_tokens", ["token_hash"])
    for statement in _TOKEN_POLICIES:
        op.execute(statement)
    op.execute(_TOKEN_GRANTS)


def downgrade() -> None:
    op.drop_table("memory_pg_tokens")
    _downgrade_memories()
