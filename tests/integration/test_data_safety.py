"""Data safety: erasing a user leaves nothing behind; export then import restores everything."""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
from psycopg import sql

from memory_pg.store import MemoryStore
from tests.integration._security_support import extra_database

SECRET = "alice-secret-7f3a"


def _tables_with_user_id(raw: psycopg.Connection[Any]) -> list[str]:
    rows = raw.execute(
        "SELECT table_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND column_name = 'user_id' ORDER BY 1"
    ).fetchall()
    return [r[0] for r in rows]


def _rows_of(raw: psycopg.Connection[Any], table: str, user: str) -> int:
    stmt = sql.SQL("SELECT count(*) FROM {} WHERE user_id = %s").format(sql.Identifier(table))
    return int(raw.execute(stmt, (user,)).fetchone()[0])  # type: ignore[index]


def _mentions(raw: psycopg.Connection[Any], needle: str) -> list[str]:
    """Tables where any row, as text, still contains ``needle``."""
    tables = raw.execute(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = current_schema() AND table_name LIKE 'memory\\_pg\\_%'"
    ).fetchall()
    found = []
    for (table,) in tables:
        stmt = sql.SQL("SELECT count(*) FROM {} t WHERE strpos(t::text, %s) > 0").format(
            sql.Identifier(table)
        )
        if raw.execute(stmt, (needle,)).fetchone()[0]:  # type: ignore[index]
            found.append(table)
    return found


def _populate(store: MemoryStore, user: str) -> list[str]:
    ids = [
        store.add_memory(
            f"{user}: {SECRET} likes tea", "user_profile", {"k": SECRET}, user_id=user
        ),
        store.add_memory(f"{user} chose PostgreSQL", "key_decision", topic="db", user_id=user),
        store.add_memory(f"{user} must write docs", "todo", user_id=user),
    ]
    store.search("tea", user_id=user)  # touches access counts
    return ids


def test_erasing_a_user_leaves_nothing_in_any_table(make_store, raw):
    store = make_store()  # unbound: writes and erases two users
    _populate(store, "alice")
    bob_ids = _populate(store, "bob")
    raw.execute(
        "INSERT INTO memory_pg_dialogue_buffer (user_id, role, content) VALUES (%s, 'user', %s)",
        ("alice", f"turn that mentions {SECRET}"),
    )
    tables = _tables_with_user_id(raw)
    assert {"memory_pg_memories", "memory_pg_history", "memory_pg_dialogue_buffer"} <= set(tables)
    assert all(_rows_of(raw, t, "alice") for t in ("memory_pg_memories", "memory_pg_history"))

    assert store.clear_user_memory("alice") == 3

    assert {t: _rows_of(raw, t, "alice") for t in tables} == dict.fromkeys(tables, 0)
    # Bob's secret copy is his own: only his rows may still hold the string.
    store.clear_user_memory("bob")
    assert _mentions(raw, SECRET) == []
    assert _mentions(raw, "alice") == []
    assert all(store.get(i, user_id="bob") is None for i in bob_ids)


def test_deleting_one_memory_leaves_no_trace_of_it(store, raw):
    keep = store.add_memory("keep this one")
    gone = store.add_memory(f"forget {SECRET}")
    assert store.delete_memory(gone)
    assert _mentions(raw, gone) == []
    assert _mentions(raw, SECRET) == []
    assert store.get(keep) is not None


_COLUMNS = (
    "id, user_id, memory_type, text, metadata, topic, importance, created_at, updated_at, "
    "event_time, last_accessed_at, access_count, valid_from, superseded_at, superseded_by, "
    "expires_at, content_hash, embedding_model, embedding::text, search_tsv::text"
)


def _snapshot(conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
    return conn.execute(
        sql.SQL("SELECT {} FROM memory_pg_memories ORDER BY id").format(sql.SQL(_COLUMNS))
    ).fetchall()


def test_export_then_import_restores_everything_in_a_fresh_database(
    store, raw, pg_server, pg_template, embedder
):
    ids = _populate(store, "alice")
    store.add_memory(
        "renew the certificate",
        "todo",
        {"nested": {"list": [1, 2.5, None, "三"]}},
        importance=0.9,
        event_time=datetime(2024, 2, 29, 12, 30, tzinfo=timezone(timedelta(hours=8))),
        expires_at=datetime(2031, 1, 1, tzinfo=timezone.utc),
    )
    # A replaced decision keeps its validity interval through the round trip.
    raw.execute(
        "UPDATE memory_pg_memories SET superseded_at = now() - interval '1 day', "
        "superseded_by = %s WHERE id = %s",
        (ids[2], ids[1]),
    )
    before = _snapshot(raw)
    dump = io.StringIO()
    assert store.export_user_memory(dump) == 4

    with extra_database(raw, pg_template.template_dbname) as fresh:
        with MemoryStore(pg_server.url(fresh), user_id="alice", embedder=embedder) as target:
            assert target.import_user_memory(io.StringIO(dump.getvalue())) == 4
            # Importing the same file twice adds nothing.
            assert target.import_user_memory(io.StringIO(dump.getvalue())) == 0
        info = raw.info
        with psycopg.connect(
            host=info.host, port=info.port, dbname=fresh, user=info.user, password=info.password
        ) as conn:
            after = _snapshot(conn)
            history = conn.execute(
                "SELECT event, count(*) FROM memory_pg_history GROUP BY event"
            ).fetchall()
    assert after == before
    assert history == [("imported", 4)]
