"""Tenant isolation in the database: through the application role, one user never reaches another.

The stores here log in as roles made for the test (members of ``memory_pg_app`` or
``memory_pg_maintenance``), not as the superuser that owns the tables, so
row-level security is what keeps users apart, not only the store's WHERE clauses.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import psycopg
import pytest
from psycopg import sql
from sqlalchemy import create_engine, text

from memory_pg.errors import AccessDenied, RoleRequired, TenantViolation
from memory_pg.plans import write
from memory_pg.plans.protocol import one, translate_errors
from memory_pg.sql import memories as sql_memories
from memory_pg.sql import search as sql_search
from memory_pg.store import MemoryStore
from memory_pg.text.query import analyse
from tests.integration._security_support import login_role, row_counts

SECRET = "Bob's bank PIN is 4321"


def _psycopg_url(sa_url: str) -> str:
    return sa_url.replace("postgresql+psycopg://", "postgresql://", 1)


@pytest.fixture
def app_stores(app_url: str, embedder: Any) -> Iterator[dict[str, MemoryStore]]:
    """Stores of alice and bob, both logged in as the application role; bob has a secret."""
    stores = {
        user: MemoryStore(app_url, user_id=user, embedder=embedder) for user in ("alice", "bob")
    }
    stores["bob"].add_memory(SECRET, "user_profile", {"secret": True, "owner": "bob"})
    stores["bob"].add_memory("Bob decided to use MySQL", "key_decision", topic="database")
    stores["alice"].add_memory("Alice prefers PostgreSQL", "key_decision", {"owner": "alice"})
    yield stores
    for store in stores.values():
        store.close()


def _bob_ids(raw: psycopg.Connection[Any]) -> list[str]:
    rows = raw.execute("SELECT id::text FROM memory_pg_memories WHERE user_id = 'bob'").fetchall()
    return [r[0] for r in rows]


def test_the_application_role_does_not_own_the_tables(raw, app_url):
    owners = raw.execute(
        "SELECT relname, pg_get_userbyid(relowner), relrowsecurity, relforcerowsecurity "
        "FROM pg_class WHERE relname = ANY(%s)",
        (["memory_pg_memories", "memory_pg_history", "memory_pg_dialogue_buffer"],),
    ).fetchall()
    assert len(owners) == 3
    for _, owner, enabled, forced in owners:
        assert owner != "memory_pg_app" and enabled and forced


def test_alice_cannot_read_change_or_delete_bobs_memories(app_stores, raw):
    alice = app_stores["alice"]
    bob_ids = _bob_ids(raw)
    assert len(bob_ids) == 2
    found = alice.search("bank PIN", top_k=50)
    assert [r["text"] for r in found] == ["Alice prefers PostgreSQL"]
    assert alice.search("PIN", metadata_filter={"secret": True}) == []
    assert alice.search("PIN", metadata_filter={"owner": "bob"}) == []
    assert all(alice.get(i) is None for i in bob_ids)
    assert all(alice.history(i) == [] for i in bob_ids)
    assert not any(alice.delete_memory(i) for i in bob_ids)
    assert alice.clear_user_memory() == 1
    assert sorted(_bob_ids(raw)) == sorted(bob_ids)
    assert app_stores["bob"].search("bank PIN", top_k=1)[0]["text"] == SECRET


@pytest.mark.parametrize(
    "crafted",
    ["b' OR '1'='1", "%", "*", "_ob", "bob' --"],
)
def test_a_crafted_user_id_is_just_another_tenant(app_stores, app_url, embedder, raw, crafted):
    with MemoryStore(app_url, user_id=crafted, embedder=embedder) as mallory:
        assert mallory.search("bank PIN", top_k=50) == []
        assert mallory.list_memories() == []
        assert mallory.clear_user_memory() == 0
        mallory.add_memory("mallory was here")
        assert [m["text"] for m in mallory.list_memories()] == ["mallory was here"]
    owners = raw.execute(
        "SELECT user_id FROM memory_pg_memories WHERE text = 'mallory was here'"
    ).fetchall()
    assert owners == [(crafted,)]
    assert len(_bob_ids(raw)) == 2


def test_raw_sql_as_the_application_role_sees_one_tenant(app_stores, app_url, raw):
    with psycopg.connect(_psycopg_url(app_url)) as conn:
        assert conn.execute("SELECT count(*) FROM memory_pg_memories").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM memory_pg_history").fetchone() == (0,)
        conn.execute("SELECT set_config('memory_pg.user_id', 'alice', true)")
        texts = conn.execute("SELECT text FROM memory_pg_memories").fetchall()
        assert texts == [("Alice prefers PostgreSQL",)]
        updated = conn.execute("UPDATE memory_pg_memories SET text = 'pwned' WHERE user_id = 'bob'")
        deleted = conn.execute("DELETE FROM memory_pg_history WHERE user_id = 'bob'")
        assert (updated.rowcount, deleted.rowcount) == (0, 0)
        # Moving one's own row to another tenant is refused too (WITH CHECK).
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE memory_pg_memories SET user_id = 'bob'")
        conn.rollback()
        conn.execute("SELECT set_config('memory_pg.user_id', 'alice', true)")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute(
                "INSERT INTO memory_pg_history (user_id, memory_id, event) "
                "VALUES ('bob', gen_random_uuid(), 'added')"
            )
        conn.rollback()
        # Switching row security off is not the application's to do.
        conn.execute("SET row_security = off")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT count(*) FROM memory_pg_memories")
        conn.rollback()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("ALTER TABLE memory_pg_memories DISABLE ROW LEVEL SECURITY")
        conn.rollback()
    assert (
        raw.execute("SELECT count(*) FROM memory_pg_memories WHERE text = 'pwned'").fetchone()[0]
        == 0
    )
    assert row_counts(raw)["memory_pg_history"] == 3


def test_a_write_for_another_tenant_becomes_a_typed_error(app_stores, raw):
    # Defence in depth: even a statement that names bob, run in alice's transaction,
    # is stopped by the database, and the store says so with a typed error.
    alice = app_stores["alice"]
    prepared = write.prepare(alice.settings, "alice", ["planted by alice"])
    prepared.user_id = "bob"  # past the store's own refusal (TenantMismatch)
    rows = write.new_rows(prepared, alice.embedder.embed_documents(prepared.texts), alice.embedder)
    before = row_counts(raw)
    with pytest.raises(TenantViolation):
        alice.run_plan(one(sql_memories.insert_memories(rows)), "alice")
    assert row_counts(raw) == before
    assert issubclass(TenantViolation, AccessDenied)


def test_a_missing_privilege_becomes_access_denied(app_url, app_stores):
    engine = create_engine(app_url)
    try:
        with pytest.raises(AccessDenied), translate_errors(), engine.begin() as conn:
            conn.execute(text("TRUNCATE memory_pg_memories"))
    finally:
        engine.dispose()


def test_stats_of_all_users_need_the_maintenance_role(
    app_stores, app_url, maintenance_url, embedder
):
    app_view = MemoryStore(app_url, embedder=embedder)
    with app_view, MemoryStore(maintenance_url, embedder=embedder) as maintenance:
        with pytest.raises(RoleRequired, match="memory_pg_maintenance"):
            app_view.stats()  # it would count 0: row-level security shows it nobody
        assert app_view.stats(user_id="bob")["memories"] == 2
        assert maintenance.stats()["memories"] == 3
        assert maintenance.stats(user_id="bob")["memories"] == 2


def test_the_maintenance_role_sees_and_erases_every_user(app_stores, maintenance_url, raw):
    with psycopg.connect(_psycopg_url(maintenance_url)) as conn:
        users = conn.execute("SELECT DISTINCT user_id FROM memory_pg_memories ORDER BY 1")
        assert users.fetchall() == [("alice",), ("bob",)]
        conn.execute("DELETE FROM memory_pg_history WHERE user_id = 'bob'")
        conn.commit()
    assert (
        raw.execute("SELECT count(*) FROM memory_pg_history WHERE user_id = 'bob'").fetchone()[0]
        == 0
    )


def test_a_table_owner_that_is_not_superuser_is_still_filtered(raw, app_stores):
    # FORCE ROW LEVEL SECURITY: connecting as the owner is no way around the policy.
    with login_role(raw, None) as (owner, password):
        raw.execute(
            sql.SQL("ALTER TABLE memory_pg_memories OWNER TO {}").format(sql.Identifier(owner))
        )
        try:
            info = raw.info
            with psycopg.connect(
                host=info.host, port=info.port, dbname=info.dbname, user=owner, password=password
            ) as conn:
                assert conn.execute("SELECT count(*) FROM memory_pg_memories").fetchone() == (0,)
                conn.execute("SELECT set_config('memory_pg.user_id', 'bob', true)")
                assert conn.execute("SELECT count(*) FROM memory_pg_memories").fetchone() == (2,)
        finally:
            raw.execute("ALTER TABLE memory_pg_memories OWNER TO CURRENT_USER")


def test_a_reused_search_statement_never_carries_the_previous_user(
    make_store: Any, raw: psycopg.Connection[Any]
) -> None:
    # Searches of one shape share one statement; the user, vector and words are values
    # of each run. The database owner's stores: only the WHERE clauses keep users apart.
    alice, bob = make_store(user_id="alice"), make_store(user_id="bob")
    alice.add_memory("Alice prefers PostgreSQL for the database", "key_decision")
    bob.add_memory("Bob prefers MySQL for the database", "key_decision")
    sql_search.build_search.cache_clear()

    first = alice.search("database preference", top_k=5)
    built = sql_search.build_search.cache_info()
    second = bob.search("database preference", top_k=5)
    # A question for an attribute ("which database") has a statement of its own shape.
    third = alice.search("the database", top_k=5)

    assert [(h["user_id"], h["text"]) for h in first] == [
        ("alice", "Alice prefers PostgreSQL for the database")
    ]
    assert [(h["user_id"], h["text"]) for h in second] == [
        ("bob", "Bob prefers MySQL for the database")
    ]
    assert [h["user_id"] for h in third] == ["alice"]
    # The uses written after marked each user's own rows only.
    alice.flush_uses()
    bob.flush_uses()
    uses = dict(
        raw.execute(
            "SELECT user_id, access_count FROM memory_pg_memories ORDER BY user_id"
        ).fetchall()
    )
    assert uses == {"alice": 2, "bob": 1}
    # And the statement was built once, then reused.
    after = sql_search.build_search.cache_info()
    assert after.misses == built.misses
    assert after.hits == built.hits + 2


def test_search_values_never_name_a_column() -> None:
    # A value named after a column (``user_id``) would become a SET column of the
    # touch's UPDATE: SQLAlchemy reads execution values that way for an UPDATE.
    import numpy as np

    filters = sql_search.SearchFilters(
        memory_types=("fact",),
        since=datetime(2020, 1, 1, tzinfo=timezone.utc),
        until=datetime(2030, 1, 1, tzinfo=timezone.utc),
        metadata={"a": 1},
        as_of=datetime(2025, 1, 1, tzinfo=timezone.utc),
        min_similarity=0.1,
        min_lexical=0.1,
    )
    _, values = sql_search.search_statement(
        "alice", analyse("tea 茶"), np.zeros(3), top_k=5, filters=filters, touch=True
    )
    assert not set(values) & set(sql_memories.memories.c.keys())


def test_the_application_role_writes_the_batched_uses_of_its_own_user_only(
    app_url: str, embedder: Any, raw: psycopg.Connection[Any]
) -> None:
    """The uses of one store's searches of two users, written in one transaction: each
    user's under that user's tenant, so row-level security lets them through."""
    store = MemoryStore(app_url, embedder=embedder)
    try:
        store.add_memory("Alice prefers PostgreSQL", "key_decision", user_id="alice")
        store.add_memory("Bob prefers MySQL", "key_decision", user_id="bob")
        store.search("database preference", user_id="alice")
        store.search("database preference", user_id="bob")
        store.search("database preference", user_id="bob")
        assert store.flush_uses() == 2  # raises if the role could not write them
    finally:
        store.close()
    uses = dict(raw.execute("SELECT user_id, access_count FROM memory_pg_memories").fetchall())
    assert uses == {"alice": 1, "bob": 2}
