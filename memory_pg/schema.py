"""Run memory-pg's Alembic migrations from a checkout or an installed wheel."""

from __future__ import annotations

import importlib.resources
import io
import logging
from functools import lru_cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, text

from memory_pg.tables import VERSION_TABLE

logger = logging.getLogger(__name__)

#: Any constant would do; it only has to be the same in every process.
MIGRATION_LOCK_KEY = 7_363_104_871_150_001


def migrations_dir() -> Path:
    """The folder of the Alembic revisions (shipped in the wheel as ``memory_pg._migrations``)."""
    # A checkout (or a git worktree) runs its own revisions from ``migrations/``
    # beside the package; an installed wheel has them as ``memory_pg._migrations``.
    checkout = Path(__file__).resolve().parent.parent / "migrations"
    if (checkout / "versions" / "0001_vector_extension.py").is_file():
        return checkout
    return Path(str(importlib.resources.files("memory_pg._migrations")))


def alembic_config(
    *, embedding_dim: int | None = None, stdout: io.StringIO | None = None
) -> Config:
    """An Alembic config pointing at the shipped revisions; no alembic.ini needed."""
    cfg = Config(stdout=stdout) if stdout is not None else Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    cfg.set_main_option("path_separator", "os")
    if embedding_dim is not None:
        cfg.attributes["embedding_dim"] = embedding_dim
    return cfg


@lru_cache(maxsize=1)
def head_revision() -> str:
    """The newest revision this version of the library knows."""
    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    if len(heads) != 1:  # pragma: no cover - guarded by a test
        raise RuntimeError(f"memory-pg migrations have {len(heads)} heads: {heads}")
    return heads[0]


def current_revision(conn: Connection) -> str | None:
    """The revision the database is at (None when memory-pg was never migrated there)."""
    ctx = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
    return ctx.get_current_revision()


def _run(engine: Engine, action: str, revision: str, embedding_dim: int | None) -> None:
    from memory_pg import pooling

    pooling.require_session(engine, "migrate")
    with engine.connect() as conn:
        _run_on(conn, action, revision, embedding_dim)


def _run_on(conn: Connection, action: str, revision: str, embedding_dim: int | None) -> None:
    cfg = alembic_config(embedding_dim=embedding_dim)
    # One migrator at a time, even when several hosts start at once.
    conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
    conn.commit()
    try:
        cfg.attributes["connection"] = conn
        if action == "upgrade":
            command.upgrade(cfg, revision)
        else:
            command.downgrade(cfg, revision)
        conn.commit()
    finally:
        conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATION_LOCK_KEY})
        conn.commit()


def upgrade(engine: Engine, revision: str = "head", *, embedding_dim: int | None = None) -> None:
    """Apply revisions up to ``revision`` (``embedding_dim`` sizes a new vector column)."""
    logger.info("migrating memory-pg schema to %s", revision)
    _run(engine, "upgrade", revision, embedding_dim)


def upgrade_on(
    conn: Connection, revision: str = "head", *, embedding_dim: int | None = None
) -> None:
    """:func:`upgrade` on a session connection the caller holds, such as an async
    engine's through ``await conn.run_sync(upgrade_on)`` (not behind a transaction pooler)."""
    logger.info("migrating memory-pg schema to %s", revision)
    _run_on(conn, "upgrade", revision, embedding_dim)


def downgrade(engine: Engine, revision: str) -> None:
    """Revert revisions down to ``revision`` (``base`` removes everything)."""
    logger.info("downgrading memory-pg schema to %s", revision)
    _run(engine, "downgrade", revision, None)


def offline_sql(
    revision: str = "head", *, embedding_dim: int | None = None, downgrade_to: str | None = None
) -> str:
    """The SQL of an upgrade to ``revision``, or with ``downgrade_to`` of the downgrade
    from ``revision`` down to that one (``base``: everything), for a DBA to review;
    touches no database."""
    out = io.StringIO()
    cfg = alembic_config(embedding_dim=embedding_dim, stdout=out)
    cfg.output_buffer = out
    if downgrade_to is None:
        command.upgrade(cfg, revision, sql=True)
    else:
        start = head_revision() if revision == "head" else revision
        command.downgrade(cfg, f"{start}:{downgrade_to}", sql=True)
    return out.getvalue()


__all__ = [
    "alembic_config",
    "current_revision",
    "downgrade",
    "head_revision",
    "migrations_dir",
    "offline_sql",
    "upgrade",
    "upgrade_on",
]
