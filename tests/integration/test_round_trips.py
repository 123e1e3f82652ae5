"""A light user's search is one network exchange (issue 18, item 2).

Counted on the client side from libpq's protocol trace: ``BEGIN``, the tenant and
HNSW settings, the search statement and ``COMMIT`` go out together and the
client waits for the server once. Before: five exchanges (the pool's pre-ping,
``BEGIN``, the settings, the statement, ``COMMIT``). The results are the ones the
statement-by-statement driver returns on the same data, and the tenant stays
inside its transaction when users interleave on one pooled connection.
"""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from sqlalchemy import text

from memory_pg import exchange as exchange_module
from memory_pg.async_store import AsyncMemoryStore
from memory_pg.config import StoreSettings
from memory_pg.plans import read
from memory_pg.sql.search import SearchFilters
from memory_pg.store import MemoryStore
from tests.conftest import PgServer
from tests.integration._exchanges import traced
from tests.integration._pgbouncer import run_pgbouncer

NOW = datetime(2026, 6, 1, tzinfo=UTC)

#: Parts of a result that follow the clock (the time of the statement).
CLOCKED = ("recency", "score")

NOTES = {
    "alice": [
        "Alice prefers PostgreSQL for the database",
        "Alice deploys on Fridays",
        "The staging database of alice runs PostgreSQL 16",
    ],
    "bob": [
        "Bob prefers MySQL for the database",
        "Bob never deploys on Fridays",
    ],
}


def _fill(store: MemoryStore) -> None:
    for user, notes in NOTES.items():
        for note in notes:
            store.add_memory(note, "key_decision", user_id=user)


def _statement_kinds(exchange: Any) -> list[str]:
    kinds = []
    for statement in exchange.statements():
        body = statement.strip().strip('"').lstrip('" ')
        kinds.append(body.split()[0].rstrip('"') if body else "")
    return kinds


def test_a_search_is_one_network_exchange(store: MemoryStore) -> None:
    store.add_memory("The production database is PostgreSQL 16")
    with traced(store.engine) as seen:
        for _ in range(3):
            assert store.search("database", top_k=1)[0]["text"].startswith("The production")
    # Three searches on one pooled connection: three exchanges, no pre-ping between.
    assert len(seen.exchanges) == 3
    for exchange in seen.exchanges:
        assert _statement_kinds(exchange) == ["BEGIN", "SELECT", "SELECT", "WITH", "COMMIT"]
        tenant = [body for kind, body in exchange.sent if kind == "Bind"][1]
        assert "'alice'" in tenant and f"'{store.ef_search}'" in tenant
        assert [kind for kind, _ in exchange.sent].count("Sync") == 1


def test_reads_of_one_statement_are_one_network_exchange(store: MemoryStore) -> None:
    memory_id = store.add_memory("The production database is PostgreSQL 16")
    with traced(store.engine) as seen:
        assert store.get(memory_id) is not None
        assert len(store.list_memories()) == 1
        assert len(store.history(memory_id)) == 1
        assert store.stats()["memories"] == 1
    assert len(seen.exchanges) == 4
    for exchange in seen.exchanges:
        assert _statement_kinds(exchange)[0] == "BEGIN"
        assert _statement_kinds(exchange)[-1] == "COMMIT"


def test_a_write_takes_its_locks_in_one_exchange_user_lock_first(store: MemoryStore) -> None:
    store.add_memory("The production database is PostgreSQL 16")  # the model is recorded
    with traced(store.engine) as seen:
        store.add_memory("Deploys run on Fridays", "key_decision")
        store.add_memory("The staging database is PostgreSQL 17", "key_decision")
    # The second write: on a connection that has run one, whose statements are prepared
    # (psycopg prepares a statement on its first run there, a round trip of its own
    # outside a pipeline).
    first_commit = next(i for i, e in enumerate(seen.exchanges) if "COMMIT" in e.statements())
    second = seen.exchanges[first_commit + 1 :]
    sent = [s for exchange in second for s in exchange.statements()]
    locks = [s for s in sent if "pg_advisory_xact_lock" in s]
    # The user's shared lock (against an erase), then the type's, in one statement.
    assert len(locks) == 1
    shared, exclusive = (locks[0].index(f) for f in ("_lock_shared(", "_xact_lock(hash"))
    assert shared < exclusive
    # BEGIN, the tenant, the plan mode and the model read go in the first exchange; then
    # the locks, the candidates, the insert, the entities it names, the model read
    # again, COMMIT (a lock per exchange made it eight).
    assert len(second) == 7


async def test_an_async_search_is_one_network_exchange(db_url: str, embedder: Any) -> None:
    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
        await store.add_memory("The production database is PostgreSQL 16")
        assert store.engine is not None
        await store.engine.dispose()
        with traced(store.engine.sync_engine, dispose=False) as seen:
            for _ in range(3):
                assert (await store.search("database", top_k=1))[0]["text"].startswith("The")
            await store.engine.dispose()
    assert len(seen.exchanges) == 3
    for exchange in seen.exchanges:
        assert _statement_kinds(exchange) == ["BEGIN", "SELECT", "SELECT", "WITH", "COMMIT"]


def test_pipelined_results_are_the_statement_by_statement_ones(make_store: Any) -> None:
    store = make_store()  # no bound user: user_id= per call
    _fill(store)

    def plan(user: str, query: str) -> Any:
        vector = store.embedder.embed_query(query)
        return read.plan_search(user, query, vector, 5, SearchFilters(), False, now=NOW)

    for user, query in [("alice", "database"), ("bob", "deploys on Fridays"), ("alice", "x")]:
        pipelined = store.run_plan(plan(user, query), user, ef_search=store.ef_search)
        with store.engine.begin() as conn:  # the caller's transaction: one by one
            one_by_one = store.run_plan(plan(user, query), user, conn, ef_search=store.ef_search)
        # The same rows in the same order with the same parts of their score; recency
        # (and the score it is part of) follow the clock, which moved between the runs.
        assert [hit["id"] for hit in pipelined] == [hit["id"] for hit in one_by_one]
        for a, b in zip(pipelined, one_by_one, strict=True):
            assert {k: v for k, v in a.items() if k not in CLOCKED} == {
                k: v for k, v in b.items() if k not in CLOCKED
            }
            assert all(a[k] == pytest.approx(b[k], rel=1e-6) for k in CLOCKED)
        assert {hit["user_id"] for hit in pipelined} <= {user}


def test_interleaved_users_keep_their_tenant_inside_their_transaction(
    app_url: str, embedder: Any, make_store: Any
) -> None:
    make_store(user_id="owner")  # records the model (the app role may not write settings)
    store = MemoryStore(app_url, embedder=embedder)  # row-level security applies
    try:
        _fill(store)
        errors: list[BaseException] = []

        def searches(user: str) -> None:
            try:
                for _ in range(8):  # past psycopg's prepare threshold (5 runs)
                    found = store.search("database Fridays", top_k=10, user_id=user)
                    assert found and {hit["user_id"] for hit in found} == {user}
                    assert {hit["text"] for hit in found} <= set(NOTES[user])
            except BaseException as exc:  # reported by the test thread
                errors.append(exc)

        for _ in range(3):  # one after the other on one pooled connection
            searches("alice")
            searches("bob")
        threads = [threading.Thread(target=searches, args=(u,)) for u in ("alice", "bob") * 3]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        # A pooled connection comes back with no tenant and not in autocommit.
        with store.engine.connect() as conn:
            tenant = conn.execute(text("SELECT current_setting('memory_pg.user_id', true)"))
            assert tenant.scalar() in (None, "")
            driver = conn.connection.driver_connection
            assert isinstance(driver, psycopg.Connection) and driver.autocommit is False
    finally:
        store.close()


async def test_concurrent_async_users_keep_their_tenant(
    app_url: str, embedder: Any, make_store: Any
) -> None:
    make_store(user_id="owner")
    async with AsyncMemoryStore(app_url, embedder=embedder) as store:
        for user, notes in NOTES.items():
            for note in notes:
                await store.add_memory(note, "key_decision", user_id=user)

        async def search(user: str) -> set[str]:
            found = await store.search("database Fridays", top_k=10, user_id=user)
            return {hit["user_id"] for hit in found}

        users = ["alice", "bob"] * 12
        seen = await asyncio.gather(*(search(u) for u in users))
    assert seen == [{u} for u in users]


def test_a_killed_connection_is_replaced_for_the_async_store(
    db_url: str, embedder: Any, raw: psycopg.Connection[Any]
) -> None:
    async def scenario() -> None:
        async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
            await store.add_memory("kept")
            for _ in range(3):
                raw.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND application_name = 'memory-pg'"
                )
                assert (await store.search("kept", top_k=1))[0]["text"] == "kept"

    asyncio.run(scenario())


def test_a_connection_idle_for_long_is_pinged_not_replaced(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.add_memory("kept")
    monkeypatch.setattr(exchange_module, "PING_AFTER_IDLE_S", 0.0)  # every checkout "idle for long"
    with traced(store.engine) as seen:
        for _ in range(3):
            assert store.search("kept", top_k=1)[0]["text"] == "kept"
    # One connection; its second and third checkouts pinged it (``;``), and kept it.
    (conn,) = seen.connections
    assert [_statement_kinds(e) for e in conn] == [
        ["BEGIN", "SELECT", "SELECT", "WITH", "COMMIT"],
        [";"],
        ["BEGIN", "SELECT", "SELECT", "WITH", "COMMIT"],
        [";"],
        ["BEGIN", "SELECT", "SELECT", "WITH", "COMMIT"],
    ]


async def test_an_async_connection_idle_for_long_is_pinged_not_replaced(
    db_url: str, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with AsyncMemoryStore(db_url, user_id="alice", embedder=embedder) as store:
        await store.add_memory("kept")
        monkeypatch.setattr(exchange_module, "PING_AFTER_IDLE_S", 0.0)
        assert store.engine is not None
        await store.engine.dispose()
        with traced(store.engine.sync_engine, dispose=False) as seen:
            for _ in range(3):
                assert (await store.search("kept", top_k=1))[0]["text"] == "kept"
            await store.engine.dispose()
    (conn,) = seen.connections
    assert [_statement_kinds(e) for e in conn].count([";"]) == 2


def test_through_pgbouncer_in_transaction_mode_a_search_is_one_exchange(
    postgresql: psycopg.Connection[Any], pg_server: PgServer, embedder: Any, make_store: Any
) -> None:
    _fill(make_store())  # directly, as the owner (records the model too)
    users = {pg_server.user: pg_server.password or ""}
    # One server connection: two clients' transactions take turns on it.
    with run_pgbouncer(pg_server, users, pool_size=1, ignore_options=True) as bouncer:
        url = bouncer.url(postgresql.info.dbname, pg_server.user, pg_server.password)
        settings = StoreSettings(pooler="transaction")
        alice = MemoryStore(url, user_id="alice", embedder=embedder, settings=settings)
        bob = MemoryStore(url, user_id="bob", embedder=embedder, settings=settings)
        try:
            with traced(alice.engine) as seen:
                for _ in range(8):  # past psycopg's prepare threshold: nothing is prepared
                    assert {h["user_id"] for h in alice.search("database Fridays")} == {"alice"}
                    assert {h["user_id"] for h in bob.search("database Fridays")} == {"bob"}
        finally:
            alice.close()
            bob.close()
    assert len(seen.exchanges) == 8
    for exchange in seen.exchanges:
        # Only the tenant before the search: with no prepared plan, each is planned anew.
        assert _statement_kinds(exchange) == ["BEGIN", "SELECT", "WITH", "COMMIT"]
        # No named (server-side) statement: PgBouncer would hand it to the other client.
        assert all(body.startswith(' "" ') for kind, body in exchange.sent if kind == "Parse")
