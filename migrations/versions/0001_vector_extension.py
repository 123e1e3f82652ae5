"""Create the pgvector extension.

Its own revision because ``CREATE EXTENSION`` may need a superuser: a DBA can
apply this one by hand (or have it pre-installed) and let the application role
run the rest.

Revision ID: 0001
Revises:
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = ("memory_pg",)
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")


def downgrade() -> None:
    # Other schemas on the same database may use pgvector: dropping it fails
    # loudly (rather than cascading) if anything still depends on it.
    op.execute("DROP EXTENSION IF EXISTS vector")
