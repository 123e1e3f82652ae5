"""Through a real PgBouncer in transaction mode (the Debian package), started by each test.

PgBouncer hands a server connection to another client after every transaction.
psycopg prepares a statement it has run five times on "its" connection, so with
prepared statements on, clients collide on each other's statement names.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from sqlalchemy import text

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.config import StoreSettings
from memory_pg.errors import ConfigurationError, DatabaseError, QueryTimeout
from memory_pg.jobs import forget as forget_job
from memory_pg.jobs.reembed import reembed
from memory_pg.store import MemoryStore
from tests.conftest import PgServer
from tests.integration._pgbouncer import Bouncer, run_pgbouncer
from tests.integration._security_support import login_role
from tests.integration.test_reembed import MustNotEmbed

USERS = [f"user{i}" for i in range(6)]
ROUNDS = 8  # per thread: enough for psycopg to prepare (its threshold is 5 runs)


@pytest.fixture
def recorded(make_store: Callable[..., MemoryStore]) -> None:
    """The owner records the embedding model first (the app role may not write settings)."""
    make_store(user_id="owner")


@pytest.fixture
def app_role(raw: psycopg.Connection[Any], recorded: None) -> Iterator[tuple[str, str]]:
    """A login role of ``memory_pg_app``: row-level security applies to it."""
    with login_role(raw, "memory_pg_app") as role:
        yield role


def _opened(stores: list[Any], store: Any) -> Any:
    stores.append(store)
    return store


def _work(store: MemoryStore, user: str, errors: list[BaseException]) -> None:
    try:
        for k in range(ROUNDS):
            store.add_memory(f"{user} keeps note number {k}", user_id=user)
            found = store.search("note number", top_k=50, user_id=user)
            assert found, "a search found nothing of the user's own notes"
            assert {m["text"].split()[0] for m in found} == {user}
    except BaseException as exc:  # reported by the main thread
        errors.append(exc)


def test_threads_of_many_users_through_pgbouncer(
    postgresql: psycopg.Connection[Any],
    pg_server: PgServer,
    app_role: tuple[str, str],
    embedder: Any,
) -> None:
    role, password = app_role
    dbname = postgresql.info.dbname
    with run_pgbouncer(pg_server, {role: password}, pool_size=2) as bouncer:
        # The setting travels in the URL, as in MEMORY_PG_DATABASE_URL.
        url = bouncer.url(dbname, role, password) + "&pooler=transaction"
        store = MemoryStore(url, embedder=embedder)
        try:
            assert store.pooler == "transaction"
            errors: list[BaseException] = []
            threads = [threading.Thread(target=_work, args=(store, user, errors)) for user in USERS]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert errors == []
            for user in USERS:
                texts = {m["text"] for m in store.search("note", top_k=100, user_id=user)}
                assert texts == {f"{user} keeps note number {k}" for k in range(ROUNDS)}
        finally:
            store.close()


def _alternate(make: Callable[[], MemoryStore]) -> None:
    """Two stores (two clients) take turns on PgBouncer's one server connection."""
    first, second = make(), make()
    try:
        for k in range(8):
            first.add_memory(f"alice note {k}", user_id="alice")
            first.search("note", user_id="alice")
        for k in range(8):
            # Statements of another shape first: psycopg numbers its names per client.
            second.stats(user_id="bob")
            second.search("note", user_id="bob")
            second.add_memory(f"bob note {k}", user_id="bob")
    finally:
        first.close()
        second.close()


@pytest.fixture
def one_server_connection(pg_server: PgServer, recorded: None) -> Iterator[Bouncer]:
    """PgBouncer with one server connection, accepting ``options`` (as many are set up)."""
    users = {pg_server.user: pg_server.password or ""}
    with run_pgbouncer(pg_server, users, pool_size=1, ignore_options=True) as bouncer:
        yield bouncer


def test_prepared_statements_collide_when_left_on(
    postgresql: psycopg.Connection[Any],
    pg_server: PgServer,
    one_server_connection: Bouncer,
    embedder: Any,
) -> None:
    # What the store did before the setting existed: the failure the setting avoids.
    url = one_server_connection.url(postgresql.info.dbname, pg_server.user, pg_server.password)
    settings = StoreSettings(pooler="none")
    with pytest.raises(DatabaseError, match="prepared statement"):
        _alternate(lambda: MemoryStore(url, embedder=embedder, settings=settings))


@pytest.mark.parametrize("pooler", ["transaction", None])
def test_no_prepared_statements_behind_the_pooler(
    postgresql: psycopg.Connection[Any],
    pg_server: PgServer,
    one_server_connection: Bouncer,
    embedder: Any,
    pooler: str | None,
) -> None:
    # None: the default ("auto") sees the pooler and prepares nothing on its connections.
    url = one_server_connection.url(postgresql.info.dbname, pg_server.user, pg_server.password)
    settings = StoreSettings(pooler=pooler)
    _alternate(lambda: MemoryStore(url, embedder=embedder, settings=settings))
    check = MemoryStore(url, embedder=embedder, settings=settings)
    try:
        assert len(check.search("note", top_k=50, user_id="alice")) == 8
        assert len(check.search("note", top_k=50, user_id="bob")) == 8
    finally:
        check.close()


def test_async_store_through_pgbouncer(
    postgresql: psycopg.Connection[Any],
    pg_server: PgServer,
    app_role: tuple[str, str],
    embedder: Any,
) -> None:
    role, password = app_role
    with run_pgbouncer(pg_server, {role: password}, pool_size=1) as bouncer:
        url = bouncer.url(postgresql.info.dbname, role, password) + "&pooler=transaction"

        async def run() -> None:
            async with AsyncMemoryStore(url, embedder=embedder) as store:

                async def work(user: str) -> None:
                    for k in range(ROUNDS):
                        await store.add_memory(f"{user} keeps note number {k}", user_id=user)
                        found = await store.search("note number", top_k=50, user_id=user)
                        assert {m["text"].split()[0] for m in found} == {user}

                await asyncio.gather(*(work(user) for user in USERS[:4]))

        asyncio.run(run())


def test_jobs_that_keep_session_state_refuse_a_transaction_pooler(
    db_url: str, embedder: Any
) -> None:
    store = MemoryStore(db_url + "&pooler=transaction", embedder=embedder)
    try:
        with pytest.raises(ConfigurationError, match="session lock"):
            forget_job.forget(store.engine)
        # reembed sets a session statement_timeout around its index build.
        with pytest.raises(ConfigurationError, match=r"`reembed`.*statement_timeout"):
            reembed(store.engine, MustNotEmbed())
        with store.engine.connect() as conn:
            columns = conn.execute(
                text(
                    "SELECT column_name FROM information_schema.columns "
                    "WHERE table_name = 'memory_pg_memories'"
                )
            ).scalars()
            assert "embedding_next" not in set(columns)
    finally:
        store.close()


def test_a_pooler_setting_the_url_contradicts_is_refused(db_url: str, embedder: Any) -> None:
    with pytest.raises(ConfigurationError, match="pooler"):
        MemoryStore(
            db_url + "&pooler=transaction", embedder=embedder, settings=StoreSettings(pooler="none")
        )
    with pytest.raises(ConfigurationError, match="pooler"):
        MemoryStore(db_url + "&pooler=sometimes", embedder=embedder)


def test_statement_timeout_holds_behind_pgbouncer(
    postgresql: psycopg.Connection[Any],
    pg_server: PgServer,
    raw: psycopg.Connection[Any],
    recorded: None,
    embedder: Any,
) -> None:
    # PgBouncer refuses the `options` startup parameter that sets the timeout on a
    # direct connection: here the store sets it in each transaction.
    users = {pg_server.user: pg_server.password or ""}
    with run_pgbouncer(pg_server, users) as bouncer:
        url = bouncer.url(postgresql.info.dbname, pg_server.user, pg_server.password)
        settings = StoreSettings(pooler="transaction", statement_timeout_ms=300)
        store = MemoryStore(url, embedder=embedder, settings=settings)
        info = raw.info
        locker = psycopg.connect(
            host=info.host,
            port=info.port,
            dbname=info.dbname,
            user=info.user,
            password=info.password,
        )
        try:
            store.add_memory("already there", user_id="alice")
            locker.execute("LOCK TABLE memory_pg_memories IN ACCESS EXCLUSIVE MODE")
            # A bound, not a measure: without a timeout the write would wait for ever.
            release = threading.Timer(30, locker.rollback)
            release.start()
            try:
                with pytest.raises(QueryTimeout):
                    store.add_memory("waits behind a lock", user_id="alice")
            finally:
                release.cancel()
                locker.rollback()
            assert [m["text"] for m in store.search("there", user_id="alice")] == ["already there"]
        finally:
            locker.close()
            store.close()


def test_without_pgbouncer_the_tests_skip_except_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from tests.integration import _pgbouncer

    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install pgbouncer"):
        _pgbouncer.pgbouncer_binary()
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="CI must run"):
        _pgbouncer.pgbouncer_binary()
