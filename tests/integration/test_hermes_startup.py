"""The Hermes provider as a new process meets it: recall before the model is loaded, and
failures the user is told about (database down, schema not migrated, bad user id, bad
tool arguments). Driven through Hermes' own MemoryManager, plugin loader and CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from psycopg import sql

memory_manager = pytest.importorskip(
    "agent.memory_manager",
    reason="hermes-agent is not installed (pip install 'memory-pg[hermes]')",
)

from memory_pg import _cli_hermes  # noqa: E402
from memory_pg.errors import InvalidUserId  # noqa: E402
from memory_pg.integrations.hermes import MemoryPgProvider  # noqa: E402
from tests.integration._security_support import database_closed  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FRESH = Path(__file__).with_name("hermes_fresh.py")
#: Nothing listens on the discard port: the connection is refused at once.
DOWN_URL = "postgresql://memory_pg@127.0.0.1:9/memory_pg"
HANG_GUARD_S = 600  # a guard against a hung child, not a measurement


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No database, user or LLM from the host's environment."""
    for name in list(os.environ):
        if name.startswith(("MEMORY_PG_", "OPENAI_")) or name == "DATABASE_URL":
            monkeypatch.delenv(name)


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env.update(extra)
    return env


class GatedEmbedder:
    """The real model, whose query embeddings wait until the test opens the gate:
    it stands for a model still loading, for as long as the test needs."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.gate = threading.Event()

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)

    def embed_documents(self, texts: Any) -> np.ndarray[Any, Any]:
        return self.inner.embed_documents(texts)  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> np.ndarray[Any, Any]:
        self.gate.wait()
        return self.inner.embed_query(text)  # type: ignore[no-any-return]


@pytest.fixture
def loading_model(embedder: Any) -> Iterator[GatedEmbedder]:
    gated = GatedEmbedder(embedder)
    yield gated
    gated.gate.set()


def manager_with(provider: MemoryPgProvider, **init: Any) -> Any:
    manager = memory_manager.MemoryManager()  # Hermes' own 8 s prefetch budget
    manager.add_provider(provider)
    manager.initialize_all("session-1", platform="cli", **init)
    return manager


def test_first_prefetch_of_a_new_process_recalls(make_store, db_url: str) -> None:
    make_store().add_memory(
        "We decided to use PostgreSQL as the database", "key_decision", user_id="alice"
    )
    done = subprocess.run(
        [sys.executable, str(FRESH), "alice", "Which database did we decide to use?"],
        cwd=ROOT,
        env=child_env(MEMORY_PG_DATABASE_URL=db_url),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "PostgreSQL" in result["context"], done.stderr[-3000:]
    assert result["warnings"] == []


def test_recall_does_not_wait_for_the_model(make_store, loading_model: GatedEmbedder) -> None:
    store = make_store(embedder=loading_model)
    store.add_memory("我们决定使用 PostgreSQL 作为数据库", "key_decision", user_id="alice")
    provider = MemoryPgProvider(store)
    manager = manager_with(provider, user_id="alice")

    assert "PostgreSQL" in manager.prefetch_all("数据库选型")
    assert not provider.model_ready
    found = json.loads(manager.handle_tool_call("memory_pg_search", {"query": "数据库"}))
    assert found["full_text_only"] is True
    assert "PostgreSQL" in found["results"][0]["text"]

    loading_model.gate.set()
    assert provider.wait_for_model(timeout=HANG_GUARD_S)
    found = json.loads(manager.handle_tool_call("memory_pg_search", {"query": "数据库"}))
    assert "full_text_only" not in found
    assert "PostgreSQL" in found["results"][0]["text"]


def test_queued_recall_carries_the_topic_to_a_follow_up(
    make_store, loading_model: GatedEmbedder
) -> None:
    store = make_store(embedder=loading_model)
    store.add_memory("We decided to use PostgreSQL as the database", "key_decision", user_id="u")
    manager = manager_with(MemoryPgProvider(store), user_id="u")
    assert manager.prefetch_all("ok, do that", session_id="s") == ""

    manager.queue_prefetch_all("Which database did we decide on?", session_id="s")
    assert manager.flush_pending(timeout=HANG_GUARD_S)
    assert "PostgreSQL" in manager.prefetch_all("ok, do that", session_id="s")


def test_database_down_is_told_to_the_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_PG_DATABASE_URL", DOWN_URL)
    warnings: list[str] = []
    provider = MemoryPgProvider()
    manager = manager_with(provider, user_id="alice", warning_callback=warnings.append)

    [warning] = warnings
    assert "memory-pg is off" in warning and "DatabaseUnavailable" in warning
    assert not provider.is_available()
    assert manager.prefetch_all("database") == ""
    refused = json.loads(manager.handle_tool_call("memory_pg_search", {"query": "database"}))
    assert refused["error_type"] == "DatabaseUnavailable"
    assert "DatabaseUnavailable" in refused["error"]


def test_unmigrated_schema_says_to_migrate(
    monkeypatch: pytest.MonkeyPatch, raw: Any, pg_server: Any
) -> None:
    name = raw.info.dbname + "_bare"
    raw.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        monkeypatch.setenv("MEMORY_PG_DATABASE_URL", pg_server.url(name))
        warnings: list[str] = []
        provider = MemoryPgProvider()
        manager_with(provider, user_id="alice", warning_callback=warnings.append)
        [warning] = warnings
        assert "SchemaNotReady" in warning and "memory-pg migrate" in warning
        assert not provider.is_available()
    finally:
        raw.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def test_memory_status_says_why_it_is_unavailable(tmp_path: Path, db_url: str) -> None:
    _cli_hermes.install(tmp_path)
    (tmp_path / "config.yaml").write_text("memory:\n  provider: memory_pg\n", encoding="utf-8")
    status = [sys.executable, "-c", "from hermes_cli.main import main; main()", "memory", "status"]

    def run(url: str) -> str:
        env = child_env(HERMES_HOME=str(tmp_path), MEMORY_PG_DATABASE_URL=url)
        done = subprocess.run(
            status, env=env, capture_output=True, text=True, timeout=HANG_GUARD_S, check=False
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    down = run(DOWN_URL)
    assert "not available ✗" in down and "DatabaseUnavailable" in down
    up = run(db_url)
    assert "available ✓" in up and "ready (schema" in up


@pytest.mark.parametrize("bad", ["   ", "x" * 300, "alice\nbob"])
def test_a_bad_user_id_is_refused_at_initialize(make_store, bad: str) -> None:
    store = make_store()
    provider = MemoryPgProvider(store)
    warnings: list[str] = []
    with pytest.raises(InvalidUserId):
        provider.initialize("session-1", user_id=bad, warning_callback=warnings.append)
    [warning] = warnings
    assert "bad user id" in warning
    refused = json.loads(provider.handle_tool_call("memory_pg_add", {"text": "a fact"}))
    assert refused["error_type"] == "InvalidUserId"
    assert provider.prefetch("anything") == ""
    assert store.stats()["memories"] == 0


def test_tool_argument_errors_are_typed_and_write_nothing(make_store) -> None:
    store = make_store()
    manager = manager_with(MemoryPgProvider(store), user_id="alice")
    refusals = [
        ("memory_pg_search", {"query": "database", "top_k": "abc"}, "top_k"),
        ("memory_pg_search", {"query": "database", "top_k": 0}, "top_k"),
        ("memory_pg_search", {"query": "database", "top_k": True}, "top_k"),
        ("memory_pg_search", {}, "query"),
        ("memory_pg_add", {"text": "We use PostgreSQL", "memory_type": "dialogue"}, "memory_type"),
        ("memory_pg_add", {"text": 42}, "text"),
        ("memory_pg_add", {"text": "We use PostgreSQL", "topic": ["db"]}, "topic"),
        ("memory_pg_forget", {"memory_id": 42}, "memory_id"),
        ("memory_pg_forget", {"memory_id": "not-an-id"}, "memory id"),
    ]
    for tool, args, word in refusals:
        refused = json.loads(manager.handle_tool_call(tool, args))
        assert refused["error_type"] == "InvalidArgument", (tool, args, refused)
        assert word in refused["error"], (tool, args, refused)
    assert store.list_memories(user_id="alice") == []
    quoted = json.loads(manager.handle_tool_call("memory_pg_search", {"query": "db", "top_k": "3"}))
    assert quoted["results"] == []


def test_backup_paths_name_the_embedded_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("MEMORY_PG_HOME", str(tmp_path / "home"))
    assert MemoryPgProvider().backup_paths() == [str((tmp_path / "home").resolve())]
    monkeypatch.setenv("MEMORY_PG_DATABASE_URL", DOWN_URL)
    assert MemoryPgProvider().backup_paths() == []


def test_a_turn_that_cannot_be_saved_is_told_to_the_user(make_store, postgresql, pg_server):
    store = make_store()
    warnings: list[str] = []
    provider = MemoryPgProvider(store, compact_threshold=100)
    manager = manager_with(provider, user_id="alice", warning_callback=warnings.append)
    with database_closed(pg_server, postgresql.info.dbname):
        manager.sync_all("We decided to use PostgreSQL", "Noted.", session_id="session-1")
        assert manager.flush_pending(timeout=HANG_GUARD_S)
    [warning] = warnings
    assert "could not save this turn" in warning and "DatabaseUnavailable" in warning
