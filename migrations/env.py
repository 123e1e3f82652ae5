"""Alembic environment for memory-pg: its own version table, URL from the environment."""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import create_engine, pool

from memory_pg.tables import PREFIX, VERSION_TABLE, metadata

config = context.config


def _url() -> str:
    url = (
        config.get_main_option("sqlalchemy.url")
        or os.environ.get("MEMORY_PG_DATABASE_URL")
        or os.environ.get("DATABASE_URL")
    )
    if not url:
        if context.is_offline_mode():
            return "postgresql+psycopg://"
        raise SystemExit(
            "no database: set MEMORY_PG_DATABASE_URL (or DATABASE_URL), "
            "or use `memory-pg migrate`, which also knows the embedded server"
        )
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def _include_object(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    # Autogenerate and schema comparison look only at memory-pg's own objects.
    if type_ == "table":
        return bool(name and name.startswith(PREFIX) and name != VERSION_TABLE)
    return True


_options = {
    "target_metadata": metadata,
    "version_table": VERSION_TABLE,
    "include_object": _include_object,
    "transaction_per_migration": True,
}


def run_migrations_offline() -> None:
    context.configure(url=_url(), literal_binds=True, **_options)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, **_options)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(_url(), poolclass=pool.NullPool)
    with engine.connect() as conn:
        context.configure(connection=conn, **_options)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
