"""A real PgBouncer (the Debian package's binary) in front of the test server, for one test."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import PgServer

#: The port in the socket's name (``.s.PGSQL.<port>``); nothing listens on TCP.
PORT = 6432


def pgbouncer_binary() -> str:
    """The pgbouncer executable, or skip (fail where ``CI`` is set: CI installs it)."""
    found = shutil.which("pgbouncer") or shutil.which("pgbouncer", path="/usr/sbin:/usr/bin")
    if found:
        return found
    reason = "pgbouncer is not installed (Debian: apt-get install pgbouncer)"
    if os.environ.get("CI"):
        pytest.fail(reason + "; CI must run the PgBouncer tests (.ci/run installs it)")
    pytest.skip(reason)


@dataclass(frozen=True)
class Bouncer:
    """A running PgBouncer: its socket folder and log."""

    socket_dir: Path
    log: Path

    def url(self, dbname: str, user: str, password: str | None = None) -> str:
        """A SQLAlchemy URL of ``dbname`` through this PgBouncer."""
        auth = user + (":" + password if password else "")
        return f"postgresql+psycopg://{auth}@/{dbname}?host={self.socket_dir}&port={PORT}"


def _run_as(server: PgServer) -> str | None:
    """PgBouncer refuses to run as root: run it as the owner of the server's socket
    folder (``pgserver`` for the embedded server as root), which may enter it."""
    if os.geteuid() != 0:
        return None
    import pwd

    if server.host.startswith("/"):
        owner = pwd.getpwuid(Path(server.host).stat().st_uid).pw_name
        if owner != "root":
            return owner
    return "nobody"


@contextlib.contextmanager
def run_pgbouncer(
    server: PgServer,
    users: dict[str, str],
    *,
    pool_size: int = 2,
    ignore_options: bool = False,
) -> Iterator[Bouncer]:
    """Start PgBouncer in transaction mode in front of ``server``; stop it at the end.

    ``users``: login name -> password (PgBouncer logs in to the server with it).
    ``pool_size``: server connections per database and user, few so that clients
    share them. ``ignore_options``: accept (and drop) the ``options`` startup
    parameter, as many deployments do; by default PgBouncer refuses it.
    """
    binary = pgbouncer_binary()
    folder = Path(tempfile.mkdtemp(prefix="memory-pg-bouncer-"))
    userlist = "".join(f'"{name}" "{pw}"\n' for name, pw in users.items())
    (folder / "userlist.txt").write_text(userlist)
    lines = [
        "[databases]",
        f"* = host={server.host} port={server.port}",
        "[pgbouncer]",
        "listen_addr =",
        f"listen_port = {PORT}",
        f"unix_socket_dir = {folder}",
        "auth_type = trust",
        f"auth_file = {folder / 'userlist.txt'}",
        "pool_mode = transaction",
        f"default_pool_size = {pool_size}",
        "max_client_conn = 200",
        f"pidfile = {folder / 'pgbouncer.pid'}",
    ]
    if ignore_options:
        lines.append("ignore_startup_parameters = options")
    ini = folder / "pgbouncer.ini"
    ini.write_text("\n".join(lines) + "\n")
    command = [binary, str(ini)]
    user = _run_as(server)
    if user is not None:
        command[1:1] = ["-u", user]
        for path in (folder, *folder.iterdir()):
            shutil.chown(path, user)
    log = folder / "pgbouncer.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        socket = folder / f".s.PGSQL.{PORT}"
        for _ in range(200):  # up to 10 s on a busy machine
            if socket.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        if not socket.exists():
            raise RuntimeError("pgbouncer did not start:\n" + log.read_text(errors="replace"))
        yield Bouncer(folder, log)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)
