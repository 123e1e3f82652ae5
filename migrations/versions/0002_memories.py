"""Memories, the dialogue buffer, the history and the settings table.

The embedding column's dimension comes from ``-x embedding_dim=N`` (or the
``MEMORY_PG_EMBEDDING_DIM`` variable; default 384, all-MiniLM-L6-v2). A store
opening an empty database with a model of another dimension adjusts the column
before the first row; ``memory-pg reembed`` changes it later.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import context, op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _embedding_dim() -> int:
    value = (
        context.get_x_argument(as_dictionary=True).get("embedding_dim")
        or context.config.attributes.get("embedding_dim")
        or os.environ.get("MEMORY_PG_EMBEDDING_DIM")
        or 384
    )
    dim = int(value)
    if not 1 <= dim <= 16000:
        raise ValueError(f"embedding_dim must be between 1 and 16000, got {dim}")
    return dim


def _ts(name: str, nullable: bool = False, default: bool = True) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(
        name,
        sa.DateTime(timezone=True),
        nullable=nullable,
        server_default=sa.text("now()") if default else None,
    )


def upgrade() -> None:
    op.create_table(
        "memory_pg_memories",
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("id", sa.Uuid(), server_default=sa.text("gen_random_uuid()"), nullable=False),
        sa.Column("memory_type", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("embedding", Vector(_embedding_dim()), nullable=False),
        sa.Column("embedding_model", sa.Text(), nullable=False),
        sa.Column("search_tsv", postgresql.TSVECTOR(), nullable=False),
        sa.Column("content_hash", sa.Text(), nullable=False),
        sa.Column(
            "metadata",
            postgresql.JSONB(),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.Column("topic", sa.Text(), nullable=True),
        sa.Column("importance", sa.REAL(), server_default=sa.text("0.5"), nullable=False),
        _ts("created_at"),
        _ts("updated_at"),
        _ts("event_time"),
        _ts("last_accessed_at", nullable=True, default=False),
        sa.Column("access_count", sa.Integer(), server_default=sa.text("0"), nullable=False),
        _ts("valid_from"),
        _ts("superseded_at", nullable=True, default=False),
        sa.Column("superseded_by", sa.Uuid(), nullable=True),
        _ts("expires_at", nullable=True, default=False),
        sa.CheckConstraint(
            "user_id <> '' AND length(user_id) <= 255",
            name=op.f("memory_pg_memories_user_id_check"),
        ),
        sa.CheckConstraint(
            "memory_type ~ '^[a-z][a-z0-9_]{0,63}$'",
            name=op.f("memory_pg_memories_memory_type_check"),
        ),
        sa.CheckConstraint(
            "importance >= 0 AND importance <= 1",
            name=op.f("memory_pg_memories_importance_check"),
        ),
        sa.CheckConstraint("access_count >= 0", name=op.f("memory_pg_memories_access_count_check")),
        sa.PrimaryKeyConstraint("user_id", "id", name=op.f("memory_pg_memories_pkey")),
    )
    op.create_index(
        "memory_pg_memories_user_type_created_idx",
        "memory_pg_memories",
        ["user_id", "memory_type", sa.text("created_at DESC")],
        postgresql_where=sa.text("superseded_at IS NULL"),
    )
    op.create_index(
        "memory_pg_memories_user_topic_idx",
        "memory_pg_memories",
        ["user_id", "memory_type", "topic"],
        postgresql_where=sa.text("topic IS NOT NULL AND superseded_at IS NULL"),
    )
    # An exact duplicate of a current memory is never stored twice (INSERT ... ON CONFLICT).
    op.create_index(
        "memory_pg_memories_user_type_hash_key",
        "memory_pg_memories",
        ["user_id", "memory_type", "content_hash"],
        unique=True,
        postgresql_where=sa.text("superseded_at IS NULL"),
    )
    op.create_index(
        "memory_pg_memories_user_created_idx", "memory_pg_memories", ["user_id", "created_at"]
    )
    op.create_index(
        "memory_pg_memories_expires_idx",
        "memory_pg_memories",
        ["expires_at"],
        postgresql_where=sa.text("expires_at IS NOT NULL"),
    )
    op.create_index(
        "memory_pg_memories_embedding_hnsw_idx",
        "memory_pg_memories",
        ["embedding"],
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )
    op.create_index(
        "memory_pg_memories_search_tsv_idx",
        "memory_pg_memories",
        ["search_tsv"],
        postgresql_using="gin",
    )

    op.create_table(
        "memory_pg_dialogue_buffer",
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("session_id", sa.Text(), nullable=True),
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        _ts("created_at"),
        _ts("consumed_at", nullable=True, default=False),
        sa.CheckConstraint(
            "role IN ('user', 'assistant', 'system', 'tool')",
            name=op.f("memory_pg_dialogue_buffer_role_check"),
        ),
        sa.PrimaryKeyConstraint("user_id", "id", name=op.f("memory_pg_dialogue_buffer_pkey")),
    )
    op.create_index(
        "memory_pg_dialogue_buffer_pending_idx",
        "memory_pg_dialogue_buffer",
        ["user_id", "id"],
        postgresql_where=sa.text("consumed_at IS NULL"),
    )

    op.create_table(
        "memory_pg_history",
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("memory_id", sa.Uuid(), nullable=False),
        sa.Column("event", sa.Text(), nullable=False),
        _ts("at"),
        sa.Column(
            "detail", postgresql.JSONB(), server_default=sa.text("'{}'::jsonb"), nullable=False
        ),
        sa.CheckConstraint(
            "event IN ('added', 'superseded', 'merged', 'expired', 'deleted', 'updated', "
            "'imported')",
            name=op.f("memory_pg_history_event_check"),
        ),
        sa.PrimaryKeyConstraint("user_id", "id", name=op.f("memory_pg_history_pkey")),
    )
    op.create_index(
        "memory_pg_history_user_memory_idx",
        "memory_pg_history",
        ["user_id", "memory_id", "at"],
    )

    op.create_table(
        "memory_pg_settings",
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("value", postgresql.JSONB(), nullable=False),
        _ts("updated_at"),
        sa.PrimaryKeyConstraint("key", name=op.f("memory_pg_settings_pkey")),
    )


def downgrade() -> None:
    op.drop_table("memory_pg_settings")
    op.drop_index("memory_pg_history_user_memory_idx", table_name="memory_pg_history")
    op.drop_table("memory_pg_history")
    op.drop_index("memory_pg_dialogue_buffer_pending_idx", table_name="memory_pg_dialogue_buffer")
    op.drop_table("memory_pg_dialogue_buffer")
    for name in (
        "memory_pg_memories_search_tsv_idx",
        "memory_pg_memories_embedding_hnsw_idx",
        "memory_pg_memories_expires_idx",
        "memory_pg_memories_user_created_idx",
        "memory_pg_memories_user_type_hash_key",
        "memory_pg_memories_user_topic_idx",
        "memory_pg_memories_user_type_created_idx",
    ):
        op.drop_index(name, table_name="memory_pg_memories")
    op.drop_table("memory_pg_memories")
