"""Alembic revisions of memory-pg's schema, oldest first."""
