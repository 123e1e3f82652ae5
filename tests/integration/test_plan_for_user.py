"""A heavy user's search is planned for that user, not by the plan of the average one.

psycopg prepares the search statement once it has run five times on a pooled
connection, and PostgreSQL may then reuse one generic plan for every user: made
for the average user, it reads a heavy user's every row by the ``user_id`` b-tree
where a plan of their own walks the HNSW index. A search now counts (up to
``CUSTOM_PLAN_MIN_ROWS``) the user's rows in its own network exchange and, for a
heavy user, has the transaction plan the statement for them
(``plan_cache_mode = force_custom_plan``), and a light user's reuses the generic
plan (``force_generic_plan``), however cheap the heavy user's plans looked to the
planner. What each search got is read from the connection's
``pg_prepared_statements``: the generic and the custom plans of the search statement.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import sql
from sqlalchemy import text

from memory_pg.async_store import AsyncMemoryStore
from memory_pg.plans import read
from memory_pg.sql import setup
from memory_pg.sql.search import SearchFilters
from memory_pg.store import MemoryStore
from tests.integration._exchanges import traced

HEAVY = 12  # memories of the heavy user; the threshold is lowered to this for the test


@pytest.fixture
def generic_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    """A user holding ``HEAVY`` memories counts as heavy."""
    monkeypatch.setattr(setup, "CUSTOM_PLAN_MIN_ROWS", HEAVY)


@pytest.fixture
def server_mode(raw: psycopg.Connection[Any]) -> Iterator[None]:
    """This database plans every statement anew (a DBA's choice)."""
    dbname = sql.Identifier(raw.info.dbname)
    raw.execute(sql.SQL("ALTER DATABASE {} SET plan_cache_mode = force_custom_plan").format(dbname))
    yield
    raw.execute(sql.SQL("ALTER DATABASE {} RESET plan_cache_mode").format(dbname))


def _notes(user: str, n: int) -> list[dict[str, Any]]:
    return [
        {"text": f"{user} note {i}: the deploy runs on server {i}", "memory_type": "todo"}
        for i in range(n)
    ]


_PLANS = text(
    "SELECT generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements "
    "WHERE statement LIKE 'WITH%' AND statement LIKE '%memory_pg_memories%' "
    "ORDER BY length(statement) DESC LIMIT 1"
)


def _plans(store: MemoryStore, statement: Any = _PLANS) -> tuple[int, int]:
    """Generic and custom plans of the search statement (or another) on the store's one
    connection (read in a transaction that commits: psycopg forgets its prepared
    statements on a ROLLBACK)."""
    with store.engine.begin() as conn:
        row = conn.execute(statement).one()
    return int(row.generic), int(row.custom)


def test_a_heavy_users_search_gets_its_own_plan_where_light_ones_share_one(
    generic_plans: None, make_store: Any
) -> None:
    store: MemoryStore = make_store()
    store.add_memories(_notes("ann", 3), user_id="ann")
    store.add_memories(_notes("hal", HEAVY), user_id="hal")

    for _ in range(6):  # a light user: psycopg prepares the statement, then reuses it
        assert {h["user_id"] for h in store.search("deploy server", 5, user_id="ann")} == {"ann"}
    generic, custom = _plans(store)
    assert (generic, custom) == (6, 0)  # prepared at the first run, one plan for all six

    for _ in range(3):
        hits = store.search("deploy server", 5, user_id="hal")
        assert len(hits) == 5 and {h["user_id"] for h in hits} == {"hal"}
    assert _plans(store) == (generic, custom + 3)  # each planned for hal

    store.search("deploy server", 5, user_id="ann")
    assert _plans(store) == (generic + 1, custom + 3)  # and ann's reuse the shared one


def test_the_async_store_plans_a_heavy_users_search_for_them(
    generic_plans: None, db_url: str, embedder: Any
) -> None:
    async def scenario() -> tuple[int, int, int, int]:
        async with AsyncMemoryStore(db_url, embedder=embedder) as store:
            await store.add_memories(_notes("ann", 3), user_id="ann")
            await store.add_memories(_notes("hal", HEAVY), user_id="hal")
            for _ in range(6):
                await store.search("deploy server", 5, user_id="ann")
            assert store.engine is not None
            async with store.engine.begin() as conn:
                before = (await conn.execute(_PLANS)).one()
            hits = await store.search("deploy server", 5, user_id="hal")
            assert {h["user_id"] for h in hits} == {"hal"}
            async with store.engine.begin() as conn:
                after = (await conn.execute(_PLANS)).one()
        return before.generic, before.custom, after.generic, after.custom

    generic, custom, generic_after, custom_after = asyncio.run(scenario())
    assert (generic, custom) == (6, 0)
    assert (generic_after, custom_after) == (generic, custom + 1)


def _mode_after_search(store: MemoryStore, user: str) -> str:
    """``plan_cache_mode`` in the caller's transaction after a search ran in it."""
    with store.engine.connect() as conn, conn.begin():
        plan = read.plan_search(user, "deploy", None, 3, SearchFilters(), False)
        store.run_plan(plan, user, conn, ef_search=store.ef_search)
        return str(conn.execute(text("SHOW plan_cache_mode")).scalar_one())


def test_the_plan_mode_lasts_only_for_the_search_transaction(
    generic_plans: None, make_store: Any
) -> None:
    store: MemoryStore = make_store()
    store.add_memories(_notes("ann", 3), user_id="ann")
    store.add_memories(_notes("hal", HEAVY), user_id="hal")
    assert _mode_after_search(store, "ann") == "force_generic_plan"
    assert _mode_after_search(store, "hal") == "force_custom_plan"
    with store.engine.connect() as conn:
        assert conn.execute(text("SHOW plan_cache_mode")).scalar_one() == "auto"


def test_a_servers_own_plan_mode_is_kept_for_light_users(
    generic_plans: None, server_mode: None, make_store: Any
) -> None:
    store: MemoryStore = make_store()
    store.add_memories(_notes("ann", 3), user_id="ann")
    assert _mode_after_search(store, "ann") == "force_custom_plan"
    for _ in range(6):
        store.search("deploy server", 5, user_id="ann")
    generic, custom = _plans(store)  # the server's custom plans, never a generic one
    assert generic == 0 and custom >= 1


_CANDIDATE_PLANS = text(
    "SELECT generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements "
    "WHERE statement LIKE 'SELECT q.i, c.id%'"
)


def _candidate_plans(store: MemoryStore) -> tuple[int, int]:
    """Generic and custom plans of a write's supersession-candidates statement."""
    return _plans(store, _CANDIDATE_PLANS)


def test_a_heavy_users_write_looks_for_what_it_replaces_with_its_own_plan(
    generic_plans: None, make_store: Any
) -> None:
    """A write finds the memories it may replace by a nearest-neighbour query of the
    same shape as a search's: planned for the average user, it compared each new
    memory with every one of a heavy user's memories of its type (a heavy user's
    write of two memories 20-31 ms p50 against 10-11 ms on its own plan, measured
    beside 300 light users)."""
    store: MemoryStore = make_store()
    store.add_memories(_notes("hal", HEAVY), user_id="hal")
    for i in range(6):  # a light user's writes: the statement is prepared, planned once
        store.add_memory(f"ann moved the standup to {i} pm", "todo", user_id="ann")
    generic, custom = _candidate_plans(store)
    assert generic >= 1 and custom == 0  # hal's first write, before hal was heavy, too

    new = [
        store.add_memory(f"hal renews the tls certificate of host {i}", "todo", user_id="hal")
        for i in range(3)
    ]
    assert _candidate_plans(store) == (generic, custom + 3)  # each planned for hal
    assert {store.get(memory_id, user_id="hal")["user_id"] for memory_id in new} == {"hal"}
    assert len(store.list_memories(user_id="hal", limit=100)) == HEAVY + 3

    store.add_memory("ann books the train to the offsite", "todo", user_id="ann")
    assert _candidate_plans(store) == (generic + 1, custom + 3)  # ann's reuse the shared one


def test_a_write_in_the_callers_transaction_leaves_its_plan_mode_alone(
    generic_plans: None, make_store: Any
) -> None:
    store: MemoryStore = make_store()
    store.add_memories(_notes("hal", HEAVY), user_id="hal")
    with store.engine.connect() as conn, conn.begin():
        store.add_memory("hal rotates the api keys", "todo", user_id="hal", conn=conn)
        assert conn.execute(text("SHOW plan_cache_mode")).scalar_one() == "auto"
        assert conn.execute(text("SHOW hnsw.iterative_scan")).scalar_one() == "off"
    assert len(store.list_memories(user_id="hal", limit=100)) == HEAVY + 1


def test_a_write_looks_for_what_it_replaces_with_the_searchs_hnsw_settings(
    make_store: Any,
) -> None:
    # Planned for a heavy user, the lookup may walk the HNSW index with filters (user,
    # type, scope): without the iterative scan it could return fewer than k of them.
    store: MemoryStore = make_store()
    # Read on the wire: the first statements go to psycopg directly (memory_pg.exchange).
    with traced(store.engine) as seen:
        store.add_memory("hal renews the certificates", "todo", user_id="hal")
    sent = [s for exchange in seen.exchanges for s in exchange.statements()]
    assert any("hnsw.iterative_scan" in s and "hnsw.ef_search" in s for s in sent)
    assert any("plan_cache_mode" in s for s in sent)
