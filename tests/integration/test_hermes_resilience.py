"""The Hermes provider under what a long-running Hermes meets: long replies, a database
host that stalls, incomplete LLM settings, and ``hermes memory status``/``setup``.

Driven through Hermes' own MemoryManager and CLI, as in ``test_hermes_startup.py``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

memory_manager = pytest.importorskip(
    "agent.memory_manager",
    reason="hermes-agent is not installed (pip install 'memory-pg[hermes]')",
)

from memory_pg import _cli_hermes  # noqa: E402
from memory_pg.integrations.hermes import MemoryPgProvider  # noqa: E402
from memory_pg.store import MemoryStore  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DOWN_URL = "postgresql://memory_pg@127.0.0.1:9/memory_pg"
HANG_GUARD_S = 120  # a guard against a hung call, not a measurement
LONG_REPLY = "Here is the migration plan, step by step. " * 250  # over 8,000 characters


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No database, user or LLM from the host's environment."""
    for name in list(os.environ):
        if name.startswith(("MEMORY_PG_", "OPENAI_")) or name == "DATABASE_URL":
            monkeypatch.delenv(name)


class FreezingProxy:
    """TCP on 127.0.0.1 to the test server; ``frozen`` drops every byte both ways, as a
    database host that hangs (or a link that silently loses packets) does."""

    def __init__(self, pg_server: Any) -> None:
        self.upstream = pg_server
        self.frozen = False
        self.links: list[socket.socket] = []
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = int(self.listener.getsockname()[1])
        self.lock = threading.Lock()
        self.closed = False
        self.accepting = threading.Thread(target=self._accept, daemon=True)
        self.accepting.start()

    def url(self, dbname: str) -> str:
        auth = self.upstream.user + (":" + self.upstream.password if self.upstream.password else "")
        return f"postgresql+psycopg://{auth}@127.0.0.1:{self.port}/{dbname}"

    def _connect_upstream(self) -> socket.socket:
        host, port = self.upstream.host, self.upstream.port
        if host.startswith("/"):
            conn = socket.socket(socket.AF_UNIX)
            conn.connect(f"{host}/.s.PGSQL.{port}")
            return conn
        return socket.create_connection((host, port))

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.listener.accept()
                with self.lock:
                    if self.closed:
                        client.close()
                        return
                    server = self._connect_upstream()
                    self.links += [client, server]
                for a, b in ((client, server), (server, client)):
                    threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, a: socket.socket, b: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := a.recv(65536):
                if not self.frozen:
                    b.sendall(data)
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            with contextlib.suppress(OSError):
                self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
            self.listener.close()
            for s in self.links:  # ends the calls still waiting on a frozen link
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()
        self.accepting.join(HANG_GUARD_S)


@pytest.fixture
def proxy(pg_server: Any) -> Iterator[FreezingProxy]:
    frozen = FreezingProxy(pg_server)
    yield frozen
    frozen.close()


@pytest.fixture
def proxied_store(proxy: FreezingProxy, postgresql: Any, embedder: Any) -> Iterator[Any]:
    store = MemoryStore(proxy.url(postgresql.info.dbname), embedder=embedder)
    yield store
    proxy.close()
    store.close()


def manager_with(provider: MemoryPgProvider, **init: Any) -> Any:
    manager = memory_manager.MemoryManager()  # Hermes' own 8 s prefetch budget
    manager.add_provider(provider)
    manager.initialize_all("session-1", platform="cli", **init)
    return manager


def in_thread(call: Any) -> dict[str, Any]:
    """Run ``call`` under a guard: what it returned, or nothing if it hung."""
    outcome: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: outcome.update(value=call()), daemon=True)
    thread.start()
    thread.join(HANG_GUARD_S)
    return outcome


def test_a_long_assistant_reply_is_buffered_whole(make_store):
    store = make_store()
    warnings: list[str] = []
    provider = MemoryPgProvider(store, compact_threshold=100)
    manager = manager_with(provider, user_id="alice", warning_callback=warnings.append)
    manager.sync_all("Plan the migration", LONG_REPLY, session_id="session-1")
    assert manager.flush_pending(timeout=HANG_GUARD_S)
    turns = store.pending_turns(user_id="alice")
    replies = [t["content"] for t in turns if t["role"] == "assistant"]
    assert len(replies) == 2 and " ".join(replies) == LONG_REPLY.strip()
    assert warnings == []


def test_a_stalled_database_host_costs_one_turn_its_recall(make_store, proxy, proxied_store):
    make_store().add_memory("We decided to use PostgreSQL", "key_decision", user_id="alice")
    warnings: list[str] = []
    provider = MemoryPgProvider(proxied_store)
    manager = manager_with(provider, user_id="alice", warning_callback=warnings.append)
    assert provider.wait_for_model(HANG_GUARD_S)
    assert "PostgreSQL" in manager.prefetch_all("database choice")

    proxy.frozen = True
    try:
        outcome = in_thread(lambda: manager.prefetch_all("database choice"))
    finally:
        proxy.frozen = False
    assert outcome == {"value": ""}
    [warning] = warnings
    assert "recall took over" in warning
    # The host answers again: the next turn recalls, not skipped behind the stuck call.
    assert "PostgreSQL" in manager.prefetch_all("database choice")


def test_shutdown_returns_while_the_database_host_stalls(make_store, proxy, proxied_store):
    warnings: list[str] = []
    provider = MemoryPgProvider(proxied_store, compact_threshold=100)
    manager = manager_with(provider, user_id="alice", warning_callback=warnings.append)
    manager.sync_all("下周要完成支付模块", "好", session_id="session-1")
    assert manager.flush_pending(timeout=HANG_GUARD_S)

    proxy.frozen = True
    try:
        outcome = in_thread(manager.shutdown_all)
    finally:
        proxy.frozen = False
    assert outcome == {"value": None}
    assert any("stay buffered" in w for w in warnings)
    assert len(make_store().pending_turns(user_id="alice")) == 2  # kept for the next session


@pytest.mark.skipif(not hasattr(socket, "TCP_USER_TIMEOUT"), reason="Linux socket options")
def test_the_provider_store_links_carry_keepalives(monkeypatch, proxy, postgresql):
    monkeypatch.setenv("MEMORY_PG_DATABASE_URL", proxy.url(postgresql.info.dbname))
    provider = MemoryPgProvider()
    manager = manager_with(provider, user_id="alice")
    try:
        assert provider.is_available()
        with provider._store.engine.connect() as conn:
            fd = conn.connection.dbapi_connection.pgconn.socket
            with socket.socket(fileno=os.dup(fd)) as link:
                assert link.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
                assert link.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 10
                assert link.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == 20000
    finally:
        manager.shutdown_all()


def test_llm_settings_with_no_endpoint_fall_back_to_offline(monkeypatch, make_store, db_url):
    monkeypatch.setenv("MEMORY_PG_DATABASE_URL", db_url)
    monkeypatch.setenv("MEMORY_PG_LLM_MODEL", "deepseek-chat")  # key and URL forgotten
    warnings: list[str] = []
    provider = MemoryPgProvider(compact_threshold=2)
    manager = manager_with(provider, user_id="alice", warning_callback=warnings.append)
    try:
        [warning] = warnings
        assert "compacts offline" in warning and "MEMORY_PG_LLM_API_KEY" in warning
        assert provider.is_available()
        manager.sync_all("我们决定使用 PostgreSQL 作为数据库", "好", session_id="session-1")
        assert manager.flush_pending(timeout=HANG_GUARD_S)
    finally:
        manager.shutdown_all()
    [memory] = make_store().list_memories(user_id="alice")
    assert memory["memory_type"] == "key_decision"
    assert memory["metadata"]["compaction"] == "offline"


def test_memory_status_lists_the_user_agent_and_llm_settings(tmp_path: Path) -> None:
    _cli_hermes.install(tmp_path)
    (tmp_path / "config.yaml").write_text("memory:\n  provider: memory_pg\n", encoding="utf-8")
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(ROOT),
        HF_HUB_OFFLINE="1",
        HERMES_HOME=str(tmp_path),
        MEMORY_PG_DATABASE_URL=DOWN_URL,
        MEMORY_PG_LLM_MODEL="qwen-plus",
    )
    status = [sys.executable, "-c", "from hermes_cli.main import main; main()", "memory", "status"]
    done = subprocess.run(
        status, env=env, capture_output=True, text=True, timeout=HANG_GUARD_S, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "not available ✗" in done.stdout
    for name in (
        "MEMORY_PG_USER_ID",
        "MEMORY_PG_AGENT_ID",
        "MEMORY_PG_LLM_BASE_URL",
        "MEMORY_PG_LLM_API_KEY",
    ):
        assert f"✗ {name}" in done.stdout
    assert "✓ MEMORY_PG_LLM_MODEL" in done.stdout
