"""Erase: nothing of the user remains in any table of the schema; others are untouched."""

from __future__ import annotations

from psycopg import sql

from memory_pg.jobs.forget import forget

SECRET = "Alice's secret allergy is peanuts"


def _tables(raw):
    rows = raw.execute(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' "
        "AND table_name LIKE 'memory\\_pg\\_%' AND table_name <> 'memory_pg_alembic_version'"
    )
    return [r[0] for r in rows]


def _traces(raw, needle):
    """Rows of any memory-pg table whose text form mentions ``needle``."""
    found = {}
    for table in _tables(raw):
        query = sql.SQL("SELECT count(*) FROM {} t WHERE t::text LIKE %s").format(
            sql.Identifier(table)
        )
        n = raw.execute(query, ("%" + needle + "%",)).fetchone()[0]
        if n:
            found[table] = n
    return found


def test_erase_leaves_nothing_of_the_user_anywhere(store, make_store, raw, db_url):
    from sqlalchemy import create_engine

    assert {"memory_pg_memories", "memory_pg_dialogue_buffer", "memory_pg_history"} <= set(
        _tables(raw)
    )
    bob = make_store(user_id="bob")
    kept = bob.add_memory("Bob likes tea")
    one = store.add_memory(SECRET, "user_profile", topic="health")
    store.add_memory("Alice's allergy is peanuts and shellfish", "user_profile", topic="health")
    store.add_memory("short-lived note", importance=0.1)
    raw.execute(
        "UPDATE memory_pg_memories SET created_at = now() - interval '120 days' "
        "WHERE text = 'short-lived note'"
    )
    engine = create_engine(db_url)
    try:
        forget(engine)  # leaves an 'expired' event behind
    finally:
        engine.dispose()
    raw.execute(
        "INSERT INTO memory_pg_dialogue_buffer (user_id, role, content) "
        "VALUES ('alice', 'user', %s), ('bob', 'user', 'hi')",
        (SECRET,),
    )
    assert _traces(raw, "alice") and store.history(one)

    assert store.clear_user_memory() == 2
    assert _traces(raw, "alice") == {}
    assert _traces(raw, "peanuts") == {}
    assert bob.get(kept)["text"] == "Bob likes tea"
    assert (
        raw.execute(
            "SELECT count(*) FROM memory_pg_dialogue_buffer WHERE user_id = 'bob'"
        ).fetchone()[0]
        == 1
    )


def test_delete_one_memory_erases_its_history_only(store):
    a = store.add_memory("first")
    b = store.add_memory("second")
    assert store.delete_memory(a)
    assert store.history(a) == []
    assert [e["event"] for e in store.history(b)] == ["added"]
