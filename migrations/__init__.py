"""memory-pg's Alembic migrations, shipped in the wheel as ``memory_pg._migrations``."""
