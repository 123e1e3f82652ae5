"""Opening a database for a store: where it is, its pool, its schema, its model.

Shared by :class:`~memory_pg.store.MemoryStore` and
:class:`~memory_pg.async_store.AsyncMemoryStore`. The blocking steps (starting the
embedded server, loading a model) are plain functions that the async store runs
in a worker thread; the reads take a sync ``Connection`` (an async one's through
``run_sync``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy import Connection
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from memory_pg import pooling, schema
from memory_pg.config import (
    DATABASE_URL_FORM,
    StoreSettings,
    auto_migrate_from_env,
    database_url_from_env,
    default_home,
    embedding_model_from_env,
)
from memory_pg.embedding import Embedder, get_embedder, resolve_model_name
from memory_pg.errors import ConfigurationError, SchemaNotReady
from memory_pg.server import EmbeddedServer, sqlalchemy_url
from memory_pg.sql import setup


@dataclass
class Target:
    """A database found for a store."""

    #: SQLAlchemy URL (password included: never print it, see :func:`redact_url`).
    url: str
    #: ``auto``, ``none``, ``session`` or ``transaction``: see :mod:`memory_pg.pooling`.
    pooler: str
    #: The embedded server started for it, if any (the store stops it on close).
    server: EmbeddedServer | None
    #: Migrate to the library's head revision on open.
    auto_migrate: bool


def locate(
    url: str | None,
    home: str | os.PathLike[str] | None,
    auto_migrate: bool | None,
    settings: StoreSettings,
    *,
    engine_url: str | None = None,
) -> Target:
    """The database of a store: ``engine_url`` (the caller's engine), ``url``, the
    environment's URL, else an embedded server started in ``home`` (blocking).

    Raises:
        ConfigurationError: a bad pooler setting or a URL that is none (a
            placeholder, a typo), before any server starts or connection is tried.
    """
    pooling.resolve(None, settings.pooler)
    if auto_migrate is None and auto_migrate_from_env():
        auto_migrate = True  # as the CLI's --auto-migrate reads it
    server = None
    from_url = None
    if engine_url is not None:
        found = engine_url
    else:
        found = url or database_url_from_env() or ""
        if found:
            check_url(found)
        else:
            server = EmbeddedServer(Path(home) if home else default_home())
            found = server.start()
            auto_migrate = True if auto_migrate is None else auto_migrate
        found, from_url = pooling.split_url(found)
        found = sqlalchemy_url(found) if "://" in found else found
    return Target(found, pooling.resolve(from_url, settings.pooler), server, bool(auto_migrate))


def check_url(url: str) -> None:
    """Refuse a database URL that cannot name a PostgreSQL server, before connecting.

    A placeholder copied as is (``postgresql://...``) or a typo (``notaurl``) would
    otherwise fail deep in the driver, with an error that names neither the URL
    nor the fix.

    Raises:
        ConfigurationError: what is wrong with the URL and what to write instead.
    """
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as exc:
        raise ConfigurationError(
            f"the database URL is not a URL (no scheme://): {DATABASE_URL_FORM}"
        ) from exc
    if not parsed.drivername.startswith("postgres"):
        raise ConfigurationError(
            f"the database URL {redact_url(url)} is not a PostgreSQL URL: {DATABASE_URL_FORM}"
        )
    host = parsed.host or ""
    try:
        host.encode("idna")
    except UnicodeError as exc:
        raise ConfigurationError(
            f"the database URL {redact_url(url)} has no usable host ({host!r}): {DATABASE_URL_FORM}"
        ) from exc


def engine_options(settings: StoreSettings, pooler: str = "auto") -> dict[str, Any]:
    """Pool and connection options of an engine a store opens (sync or async)."""
    return {
        # A dead connection is replaced, not handed out: memory_pg.exchange.watch_liveness
        # looks at its socket (free) and pings only one idle for long, where a pre-ping
        # cost every call a round trip; without pipeline mode, the pre-ping as before.
        "pool_pre_ping": not psycopg.Pipeline.is_supported(),
        "pool_size": settings.pool_size,
        "max_overflow": settings.max_overflow,
        "pool_timeout": settings.pool_timeout_s,
        "connect_args": {
            # libpq waits this long for a server that accepts but never answers.
            "connect_timeout": max(1, int(settings.connect_timeout_s)),
            "application_name": "memory-pg",
            # statement_timeout, prepared statements: what the pooler (if any) allows.
            **pooling.connect_args(pooler, statement_timeout_ms=settings.statement_timeout_ms),
        },
    }


def gate_places(settings: StoreSettings) -> int:
    """How many calls of a store may hold a pooled connection at once (its pool's size)."""
    return settings.pool_size + settings.max_overflow


def read_state(conn: Connection) -> tuple[str | None, str | None]:
    """The schema revision of the database and the embedding model it records
    (``(None, None)`` where memory-pg was never migrated)."""
    revision = schema.current_revision(conn)
    if revision is None:
        return None, None
    row = conn.execute(setup.read_setting(setup.EMBEDDING_SETTING)).first()
    return revision, (str(row[0]["model"]) if row else None)


def needs_migration(revision: str | None, auto_migrate: bool) -> bool:
    """True when the schema is behind and may be migrated now.

    Raises:
        SchemaNotReady: it is behind and ``auto_migrate`` is off.
    """
    if revision == schema.head_revision():
        return False
    if not auto_migrate:
        raise SchemaNotReady(
            f"database schema is at {revision or 'nothing'}, this memory-pg needs "
            f"{schema.head_revision()}: run `memory-pg migrate` with this URL (or open it "
            "with auto_migrate=True, --auto-migrate or MEMORY_PG_AUTO_MIGRATE=1)"
        )
    return True


def pick_embedder(
    embedder: Embedder | None, embedding_model: str | None, recorded: str | None
) -> Embedder:
    """The store's embedder: the given one, else the named model (``embedding_model=``,
    else ``MEMORY_PG_EMBEDDING_MODEL``, as the CLI reads it), else the recorded one,
    else the default (loading a model blocks: the async store calls this in a thread)."""
    if embedder is not None:
        return embedder
    name = embedding_model or embedding_model_from_env() or recorded or resolve_model_name(None)
    return get_embedder(resolve_model_name(name))


def redact_url(url: str) -> str:
    """A URL safe to print: the password is masked."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<unparseable url>"


def read_urls(urls: object) -> tuple[str, ...]:
    """A store's ``read_urls``: the given ones, else ``MEMORY_PG_READ_URLS`` (URLs
    separated by commas or spaces), each checked as a database URL is.

    Raises:
        ConfigurationError: one of them cannot name a PostgreSQL server.
    """
    if urls is None:
        urls = os.environ.get("MEMORY_PG_READ_URLS", "").replace(",", " ").split()
    if isinstance(urls, str):
        urls = [urls]
    found: tuple[object, ...] = tuple(urls)  # type: ignore[arg-type]
    for url in found:
        if not isinstance(url, str) or not url.strip():
            raise ConfigurationError(f"a read URL must be a PostgreSQL URL, got {url!r}")
        check_url(url)
    return found  # type: ignore[return-value]


def env_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """A store's keyword arguments completed from ``MEMORY_PG_*`` environment variables."""
    pooler = os.environ.get("MEMORY_PG_POOLER")
    if pooler and "settings" not in kwargs:
        kwargs["settings"] = StoreSettings(pooler=pooler)
    kwargs.setdefault("embedding_model", os.environ.get("MEMORY_PG_EMBEDDING_MODEL"))
    kwargs.setdefault("home", os.environ.get("MEMORY_PG_HOME"))
    kwargs.setdefault("user_id", os.environ.get("MEMORY_PG_USER_ID"))
    return kwargs


__all__ = [
    "Target",
    "check_url",
    "engine_options",
    "env_kwargs",
    "locate",
    "needs_migration",
    "pick_embedder",
    "read_state",
    "read_urls",
    "redact_url",
]
