"""Revision 0003 (row-level security): down and up again on a populated database, rows intact."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from alembic import command
from sqlalchemy import create_engine

from memory_pg import schema
from tests.integration._security_support import USER_TABLES, login_role, row_counts


def _policies(raw: psycopg.Connection[Any]) -> set[tuple[str, str]]:
    # The tables of 0003; memory_pg_tokens (0006) has its own test (tests/service/test_tokens.py).
    rows = raw.execute(
        "SELECT tablename, policyname FROM pg_policies WHERE tablename = ANY(%s)",
        (list(USER_TABLES),),
    ).fetchall()
    return {(r[0], r[1]) for r in rows}


def _rls_flags(raw: psycopg.Connection[Any]) -> set[tuple[bool, bool]]:
    rows = raw.execute(
        "SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = ANY(%s)",
        (list(USER_TABLES),),
    ).fetchall()
    return {(r[0], r[1]) for r in rows}


def _visible_as_app(raw: psycopg.Connection[Any], tenant: str | None) -> int:
    info = raw.info
    with login_role(raw, "memory_pg_app") as (name, password):
        with psycopg.connect(
            host=info.host, port=info.port, dbname=info.dbname, user=name, password=password
        ) as conn:
            if tenant is not None:
                conn.execute("SELECT set_config('memory_pg.user_id', %s, true)", (tenant,))
            return int(conn.execute("SELECT count(*) FROM memory_pg_memories").fetchone()[0])  # type: ignore[index]


def test_0003_round_trips_on_a_populated_database(make_store, raw, db_url):
    store = make_store()  # unbound: writes two users
    for user in ("alice", "bob"):
        store.add_memories([f"{user} fact {i}" for i in range(3)], user_id=user)
    before = row_counts(raw)
    expected_policies = {
        (t, p) for t in USER_TABLES for p in ("memory_pg_tenant", "memory_pg_maintenance")
    }
    assert _policies(raw) == expected_policies
    assert _rls_flags(raw) == {(True, True)}
    assert _visible_as_app(raw, "alice") == 3

    engine = create_engine(db_url)
    try:
        schema.downgrade(engine, "0002")
        assert row_counts(raw) == before
        assert _policies(raw) == set()
        assert _rls_flags(raw) == {(False, False)}
        # Without 0003 the group role has no grants at all: nothing leaks, it is refused.
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            _visible_as_app(raw, "alice")

        schema.upgrade(engine)
    finally:
        engine.dispose()
    assert row_counts(raw) == before
    assert _policies(raw) == expected_policies
    assert _rls_flags(raw) == {(True, True)}
    assert _visible_as_app(raw, None) == 0
    assert _visible_as_app(raw, "bob") == 3
    assert store.search("fact", top_k=10, user_id="alice")[0]["text"].startswith("alice fact")


def test_the_offline_sql_of_0003_is_what_a_dba_would_run():
    text = schema.offline_sql("0002:0003")
    assert "%%" not in text  # PL/pgSQL blocks carry no placeholders to escape
    for table in USER_TABLES:
        assert f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY" in text
        assert f"CREATE POLICY memory_pg_tenant ON {table}" in text
    assert "CREATE ROLE" in text and "NOLOGIN" in text


def test_an_unknown_manage_roles_mode_is_refused_before_anything_changes(raw, db_url):
    engine = create_engine(db_url)
    try:
        schema.downgrade(engine, "0002")
        cfg = schema.alembic_config()
        cfg.attributes["manage_roles"] = "sometimes"
        with engine.connect() as conn:
            cfg.attributes["connection"] = conn
            with pytest.raises(ValueError, match="manage_roles"):
                command.upgrade(cfg, "head")
            conn.rollback()
            assert schema.current_revision(conn) == "0002"
        assert _policies(raw) == set()
    finally:
        engine.dispose()


def test_the_downgrade_drops_no_role_it_did_not_create(raw, db_url):
    # The application role may write memory_pg_settings; a planted entry must not make
    # the DBA's downgrade drop somebody else's role.
    with login_role(raw, None) as (bystander, _):
        raw.execute(
            "UPDATE memory_pg_settings SET value = value || to_jsonb(%s::text) "
            "WHERE key = 'roles_created'",
            (bystander,),
        )
        engine = create_engine(db_url)
        try:
            schema.downgrade(engine, "0002")
            schema.upgrade(engine)
        finally:
            engine.dispose()
        exists = raw.execute("SELECT count(*) FROM pg_roles WHERE rolname = %s", (bystander,))
        assert exists.fetchone() == (1,)
