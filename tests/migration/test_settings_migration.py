"""Revision 0005: the app role reads the settings (the recorded model) but cannot change them.

Tested as non-superuser login roles in ``memory_pg_app`` / ``memory_pg_maintenance``,
as a service and its cron jobs would connect.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb
from sqlalchemy import create_engine

from memory_pg import schema
from memory_pg.errors import EmbeddingModelMismatch
from memory_pg.store import MemoryStore
from tests.integration._security_support import login_role, url_as


def _connect(raw: psycopg.Connection[Any], name: str, password: str) -> psycopg.Connection[Any]:
    info = raw.info
    return psycopg.connect(
        host=info.host,
        port=info.port,
        dbname=info.dbname,
        user=name,
        password=password,
        autocommit=True,
    )


def _recorded(raw: psycopg.Connection[Any]) -> Any:
    row = raw.execute("SELECT value FROM memory_pg_settings WHERE key = 'embedding'").fetchone()
    return None if row is None else row[0]


@pytest.fixture(params=["memory_pg_app", "memory_pg_maintenance"])
def group_login(raw: psycopg.Connection[Any], request: Any) -> Iterator[tuple[str, str]]:
    with login_role(raw, request.param) as login:
        yield login


def test_the_roles_cannot_write_the_recorded_model(raw, group_login):
    name, password = group_login
    raw.execute(
        "INSERT INTO memory_pg_settings (key, value) VALUES ('embedding', %s)",
        (Jsonb({"model": "sentence-transformers/all-MiniLM-L6-v2", "dimension": 384}),),
    )
    before = _recorded(raw)
    with _connect(raw, name, password) as conn:
        assert conn.execute("SELECT count(*) FROM memory_pg_settings").fetchone()[0] >= 1
        for statement, params in (
            ("UPDATE memory_pg_settings SET value = %s WHERE key = 'embedding'", "x"),
            ("INSERT INTO memory_pg_settings (key, value) VALUES ('other', %s)", "x"),
            ("DELETE FROM memory_pg_settings WHERE key = %s", "embedding"),
        ):
            value = Jsonb({"model": "some-org/evil-model", "dimension": 384})
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement, (value if params == "x" else params,))
        # The recording function never replaces a recorded model.
        got = conn.execute(
            "SELECT memory_pg_record_embedding_v1('some-org/evil-model', 384)"
        ).fetchone()[0]
        assert got == before
    assert _recorded(raw) == before


def test_the_app_role_opens_a_new_database_and_records_its_model(raw, db_url, embedder):
    assert _recorded(raw) is None  # a freshly migrated database records nothing yet
    with login_role(raw, "memory_pg_app") as (name, password):
        url = url_as(db_url, name, password)
        with MemoryStore(url, user_id="alice", embedder=embedder) as store:
            store.add_memory("Alice prefers PostgreSQL")
            assert store.search("PostgreSQL")[0]["text"] == "Alice prefers PostgreSQL"
        assert _recorded(raw) == {"model": embedder.model_name, "dimension": embedder.dimension}
        # Opened again, and by another of its stores: the record is read, not written.
        with MemoryStore(url, user_id="bob", embedder=embedder) as again:
            assert again.embedding.model == embedder.model_name
        with _connect(raw, name, password) as conn:
            with pytest.raises(psycopg.errors.InvalidParameterValue, match="384-d"):
                conn.execute("SELECT memory_pg_record_embedding_v1('other', 512)")


def test_a_store_of_another_model_is_refused_not_recorded(raw, db_url, embedder):
    raw.execute(
        "INSERT INTO memory_pg_settings (key, value) VALUES ('embedding', %s)",
        (Jsonb({"model": "some-org/other-384", "dimension": 384}),),
    )
    with login_role(raw, "memory_pg_app") as (name, password):
        with pytest.raises(EmbeddingModelMismatch):
            MemoryStore(url_as(db_url, name, password), user_id="alice", embedder=embedder)
    assert _recorded(raw)["model"] == "some-org/other-384"


def _privileges(raw: psycopg.Connection[Any]) -> set[tuple[str, str]]:
    rows = raw.execute(
        "SELECT r, p FROM unnest(ARRAY['memory_pg_app', 'memory_pg_maintenance']) r, "
        "unnest(ARRAY['SELECT', 'INSERT', 'UPDATE']) p "
        "WHERE has_table_privilege(r, 'memory_pg_settings', p)"
    ).fetchall()
    return {(r[0], r[1]) for r in rows}


def _function_exists(raw: psycopg.Connection[Any]) -> bool:
    row = raw.execute(
        "SELECT count(*) FROM pg_proc WHERE proname = 'memory_pg_record_embedding_v1'"
    ).fetchone()
    return bool(row[0])


def test_0005_downgrade_restores_the_old_grants_and_upgrade_removes_them(raw, db_url):
    read_only = {("memory_pg_app", "SELECT"), ("memory_pg_maintenance", "SELECT")}
    assert _privileges(raw) == read_only and _function_exists(raw)
    engine = create_engine(db_url)
    try:
        schema.downgrade(engine, "0004")
        assert _privileges(raw) == {
            (r, p)
            for r in ("memory_pg_app", "memory_pg_maintenance")
            for p in ("SELECT", "INSERT", "UPDATE")
        }
        assert not _function_exists(raw)
        schema.upgrade(engine)
    finally:
        engine.dispose()
    assert _privileges(raw) == read_only and _function_exists(raw)
    definer = raw.execute(
        "SELECT prosecdef, proconfig, has_function_privilege('public', p.oid, 'EXECUTE') "
        "FROM pg_proc p WHERE proname = 'memory_pg_record_embedding_v1'"
    ).fetchone()
    assert definer[0] is True and definer[2] is False
    assert any(c.startswith("search_path=") and "pg_temp" in c for c in definer[1])


def test_the_offline_sql_of_0005_is_what_a_dba_would_run():
    text = schema.offline_sql("0004:0005")
    assert "%%" not in text
    assert "SECURITY DEFINER" in text
    assert "REVOKE INSERT, UPDATE ON memory_pg_settings" in text


def test_an_operator_created_in_the_schema_never_runs_as_the_owner(raw, db_url):
    # Someone who may create objects in the schema adds "=" for (oid, regclass): an
    # exact match where pg_catalog's needs a cast. 0005's function compared a column
    # of oids with a regclass, and would have run it as the owner; since 0010 it names
    # pg_catalog's operators only.
    raw.execute("CREATE TABLE trap_calls (who text)")
    raw.execute("GRANT INSERT ON trap_calls TO PUBLIC")
    raw.execute(
        "CREATE FUNCTION trap_eq(oid, regclass) RETURNS boolean LANGUAGE plpgsql AS $$ "
        "BEGIN INSERT INTO trap_calls VALUES (current_user); RETURN $1 = $2::oid; END $$"
    )
    raw.execute("CREATE OPERATOR = (LEFTARG = oid, RIGHTARG = regclass, FUNCTION = trap_eq)")
    # And a quote_ident(name) (pg_catalog has only (text)) for the statement that pins
    # the function's search_path when a migration runs: it must not be the one called.
    raw.execute("CREATE FUNCTION quote_ident(name) RETURNS text LANGUAGE sql AS 'SELECT ''trap'''")
    engine = create_engine(db_url)

    def pinned() -> list[str]:
        return raw.execute(
            "SELECT proconfig FROM pg_proc WHERE proname = 'memory_pg_record_embedding_v1'"
        ).fetchone()[0]

    def calls_after_opening() -> list[str]:
        raw.execute("DELETE FROM trap_calls")
        with login_role(raw, "memory_pg_app") as (name, password):
            with _connect(raw, name, password) as conn:
                recorded = conn.execute(
                    "SELECT memory_pg_record_embedding_v1("
                    "'sentence-transformers/all-MiniLM-L6-v2', 384)"
                ).fetchone()[0]
                assert recorded["dimension"] == 384
        return [row[0] for row in raw.execute("SELECT who FROM trap_calls")]

    try:
        assert calls_after_opening() == []
        schema.downgrade(engine, "0009")
        assert calls_after_opening() != []  # 0005's body: the trap ran, as the owner
        schema.upgrade(engine)
        assert calls_after_opening() == []
        assert pinned() == ["search_path=public, pg_temp"]
    finally:
        engine.dispose()
